// What a reviewer reads of the statements and diffs in report.md, from the new users' trials
// (a NestJS + TypeORM application): queryids only where they differ, Why cells cut after a word,
// statements that print alike told apart, a rewritten list query as one row per statement, one
// figure for blocks per call, and a snapshot diff of whole article bodies kept short.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "report/markdown_tables.hpp"
#include "report/report.hpp"
#include "results/results.hpp"

namespace coldgate::report {
namespace {

using namespace coldgate::results;
using namespace coldgate::report::tables;

StatementSide side(std::string queryid, double calls, double blocks_per_call) {
  StatementSide s;
  s.queryid = std::move(queryid);
  s.calls = calls;
  s.rows_per_call = 1;
  s.blocks_per_call = blocks_per_call;
  s.plan_ms_per_call = 0.1;
  s.exec_ms_per_call = 0.2;
  return s;
}

StatementVerdict verdict(std::string query, std::optional<StatementSide> base,
                         std::optional<StatementSide> head, Verdict v, std::string reason) {
  StatementVerdict out;
  out.stage = "articles";
  out.query = std::move(query);
  out.base = std::move(base);
  out.head = std::move(head);
  out.verdict = v;
  out.reason = std::move(reason);
  return out;
}

// Head results of one stage `articles` whose gate holds `statements`.
Results with_statements(std::vector<StatementVerdict> statements) {
  Results r;
  r.title = "coldgate";
  StageResult s;
  s.name = "articles";
  s.kind = StageKind::command;
  r.stages.push_back(s);
  GateResult g;
  g.statements = std::move(statements);
  r.gate = g;
  return r;
}

std::string report(const Results& r) {
  Markdown md = markdown(r, nullptr);
  EXPECT_FALSE(md.cut);
  return md.report;
}




constexpr std::string_view k_statements = "| Statement | Calls per run |";
constexpr std::string_view k_changes = "| Stage | Metric | Before | After | Change | Why |";

TEST(ReportStatements, TheQueryidFoldListsOnlyIdsThatDiffer) {
  // The same id on both sides (one database's copy, or a statement on catalogs) and another
  // statement whose ids differ.
  StatementVerdict same_id = verdict("select * from tag where id = $1", side("42", 10, 3),
                                     side("42", 30, 3), Verdict::same, "30 calls per run");
  StatementVerdict other = verdict("select * from article where slug = $1", side("1", 1, 3),
                                   side("2", 5, 3), Verdict::same, "5 calls per run");
  std::string md = report(with_statements({same_id, other}));
  ASSERT_NE(md.find("queryids (they differ between the two databases)"), std::string::npos) << md;
  EXPECT_NE(md.find("base `1` · head `2`"), std::string::npos) << md;
  EXPECT_EQ(md.find("`42`"), std::string::npos) << md;
  md = report(with_statements({same_id}));
  EXPECT_EQ(md.find("queryids"), std::string::npos) << md;
}

TEST(ReportStatements, WhyCellsAreCutAfterAWholeWordWithAnEllipsis) {
  std::string reason;
  while (reason.size() < 460) reason += "alpha beta gamma delta ";
  reason.pop_back();
  std::string md = report(with_statements(
      {verdict("select 1 from article", side("1", 1, 3), side("2", 50, 3), Verdict::regression,
               reason)}));
  auto rows = table(md, k_changes);
  ASSERT_EQ(rows.size(), 1u) << md;
  const std::string& why = rows[0].at(5);
  ASSERT_TRUE(why.ends_with(" …")) << why;
  const std::string kept = why.substr(0, why.size() - std::string(" …").size());
  ASSERT_EQ(reason.rfind(kept, 0), 0u) << why;
  EXPECT_EQ(reason.at(kept.size()), ' ') << "cut inside a word: " << why;
  EXPECT_LE(kept.size(), 300u);
  EXPECT_GE(kept.size(), 250u);
}

TEST(ReportStatements, StatementsThatWouldPrintAlikeAreToldApart) {
  // TypeORM's three article queries: one select list and join, another WHERE / ORDER BY.
  const std::string from =
      "SELECT \"article\".\"id\" AS \"article_id\", \"article\".\"slug\" AS \"article_slug\", "
      "\"article\".\"title\" AS \"article_title\", \"author\".\"id\" AS \"author_id\" FROM "
      "\"article\" \"article\" LEFT JOIN \"user\" \"author\" ON "
      "\"author\".\"id\"=\"article\".\"authorId\" ";
  const std::vector<std::string> texts = {
      from + "WHERE \"article\".\"slug\" = $1",
      from + "ORDER BY \"article\".\"createdAt\" DESC LIMIT $1",
      from + "WHERE \"author\".\"username\" = $1 ORDER BY \"article\".\"createdAt\" DESC"};
  std::vector<StatementVerdict> statements;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    statements.push_back(verdict(texts[i], side(fmt::format("{}", i), 1, 3),
                                 side(fmt::format("{}", i + 10), 20, 3), Verdict::same,
                                 "20 calls per run"));
  }
  std::string md = report(with_statements(statements));
  auto rows = table(md, k_statements);
  ASSERT_EQ(rows.size(), 3u) << md;
  std::set<std::string> shown;
  for (const auto& row : rows) {
    shown.insert(row[0]);
    EXPECT_LE(row[0].size(), 180u) << row[0];
  }
  EXPECT_EQ(shown.size(), 3u) << md;
  EXPECT_NE(rows[0][0].find("\"article\".\"slug\" = $1"), std::string::npos) << rows[0][0];
  EXPECT_NE(rows[1][0].find("DESC LIMIT $1"), std::string::npos) << rows[1][0];
  EXPECT_NE(rows[2][0].find("\"author\".\"username\" = $1"), std::string::npos) << rows[2][0];
  // The queryid fold names each as its row does.
  for (const auto& row : rows) EXPECT_NE(md.find("- " + row[0] + ": base"), std::string::npos);
}

TEST(ReportStatements, ANewStatementInPlaceOfAGoneOneOnTheSameTablesIsOneRewrittenRow) {
  // A list query's column lists changed: seven statements each new with another text, each of
  // the old texts gone; and one statement that is new for real, on another table.
  std::vector<StatementVerdict> statements;
  for (int i = 0; i < 7; ++i) {
    const std::string where = fmt::format(" FROM \"article\" \"a\" WHERE \"a\".\"k{}\" = $1", i);
    statements.push_back(verdict("SELECT \"a\".\"id\", \"a\".\"title\"" + where, std::nullopt,
                                 side(fmt::format("n{}", i), 2, 4), Verdict::added,
                                 "new statement: runs 2 times per run"));
    statements.push_back(verdict("SELECT \"a\".\"id\", \"a\".\"title\", \"a\".\"body\"" + where,
                                 side(fmt::format("g{}", i), 2, 6), std::nullopt, Verdict::removed,
                                 "no longer run (base ran it 2 times per run)"));
  }
  statements.push_back(verdict("SELECT count(*) FROM \"tag\" WHERE \"tag\".\"name\" = $1",
                               std::nullopt, side("t", 1, 2), Verdict::added,
                               "new statement: runs 1 time per run"));
  std::string md = report(with_statements(statements));
  auto rows = table(md, k_statements);
  ASSERT_EQ(rows.size(), 8u) << md;
  for (int i = 0; i < 7; ++i) {
    const auto& row = rows[static_cast<std::size_t>(i)];
    EXPECT_EQ(row[4], "🔁 rewritten") << md;
    EXPECT_NE(row[0].find(fmt::format("\"k{}\"", i)), std::string::npos) << row[0];
    EXPECT_NE(row[5].find("replaces `SELECT \"a\".\"id\", \"a\".\"title\", \"a\".\"body\" FROM"),
              std::string::npos)
        << row[5];
    EXPECT_EQ(row[1], "2");
    EXPECT_EQ(row[2], "6 → 4");
  }
  EXPECT_EQ(rows[7][4], "🆕 new");
  EXPECT_EQ(md.find("➖ gone"), std::string::npos) << md;
}

TEST(ReportStatements, BlocksPerCallAreTheFigureTheGateJudged) {
  // The plans' execution read 3 → 253 blocks per call; pg_stat_statements, planning's catalog
  // reads included, 8 → 254. The gate judged the plans': every cell shows those, and the Why
  // does not quote the others.
  StatementSide base = side("1", 1, 8);
  base.execution_blocks_per_call = 3;
  StatementSide head = side("2", 1, 254);
  head.execution_blocks_per_call = 253;
  std::string md = report(with_statements({verdict(
      "select name from item where id = $1", base, head, Verdict::regression,
      "reads 253 blocks per call instead of 3 in its plan's execution (84×, +250 ≥ "
      "min_blocks_delta 100): an index it used is not used any more, or each call reads more "
      "rows; pg_stat_statements' blocks per call 8 → 254 count planning's catalog reads too (a "
      "fresh backend's first plan over a table), so the plans' execution is judged")}));
  auto changes = table(md, k_changes);
  ASSERT_EQ(changes.size(), 1u) << md;
  EXPECT_EQ(changes[0][2], "1 call · 3 blocks/call");
  EXPECT_EQ(changes[0][3], "1 call · 253 blocks/call");
  EXPECT_EQ(changes[0][5].find("pg\\_stat\\_statements"), std::string::npos) << changes[0][5];
  EXPECT_NE(changes[0][5].find("reads 253 blocks per call instead of 3"), std::string::npos);
  auto statements = table(md, k_statements);
  ASSERT_EQ(statements.size(), 1u) << md;
  EXPECT_EQ(statements[0][2], "3 → 253");
  EXPECT_EQ(md.find("254"), std::string::npos) << md;
  EXPECT_NE(md.find("Blocks are those of the captured plan's execution"), std::string::npos);
}

TEST(ReportStatements, ASnapshotDiffOfLongValuesIsShortAndNamesTheWholeDiff) {
  // A page of 300 articles whose bodies (5,000 characters each) all changed.
  const std::string body(5000, 'x');
  std::string diff =
      "600 paths differ: 300 changed, 300 added, 0 removed\n  /articles/0/body: \"xx…\" → "
      "\"yy…\"\n\n--- snapshots/articles.json\n+++ coldgate-out/snapshots/articles.json.new\n"
      "@@ -1,900 +1,900 @@\n";
  for (int i = 0; i < 300; ++i) {
    diff += fmt::format("-      \"body\": \"{}\",\n", body);
    diff += fmt::format("+      \"body\": \"é{}\",\n", body);
    diff += fmt::format("       \"id\": {},\n", i);
  }
  diff += "… diff cut at 200 lines; full diff: coldgate-out/snapshots/articles.json.new.diff\n";
  Results r = with_statements({});
  r.gate.reset();
  r.stages[0].snapshot =
      SnapshotResult{SnapshotStatus::changed, "snapshots/articles.json",
                     "coldgate-out/snapshots/articles.json.new", "ab", "snapshot changed", diff};
  std::string md = report(r);
  const std::size_t open = md.find("<details><summary>articles: diff of");
  ASSERT_NE(open, std::string::npos) << md.substr(0, 3000);
  const std::size_t close = md.find("</details>", open);
  const std::string block = md.substr(open, close - open);
  EXPECT_LE(block.size(), 5'500u);
  for (const auto& line : lines_of(block)) EXPECT_LE(line.size(), 420u) << line.substr(0, 100);
  EXPECT_NE(block.find("(5,000 characters)"), std::string::npos) << block.substr(0, 2000);
  EXPECT_NE(block.find("(5,001 characters)"), std::string::npos) << "é counts as one";
  EXPECT_NE(block.find(" more lines here; the whole diff: "
                       "coldgate-out/snapshots/articles.json.new.diff\n"),
            std::string::npos)
      << block.substr(block.size() - 500);
  EXPECT_LE(md.size(), 8'000u);
}

}  // namespace
}  // namespace coldgate::report
