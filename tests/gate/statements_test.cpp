// Statement verdicts and diagnosis marks on hand-made results: the thresholds' edges, pairing by
// text across queryids, older results without block counts or text ids, the JSON round trip,
// and plan changes between plans a real PostgreSQL 15 gave (tests/gate/fixtures/plans: the
// "Plan" objects of EXPLAIN (ANALYZE, BUFFERS, VERBOSE, TIMING OFF, FORMAT JSON), which is what
// auto_explain logs, with and without the index each query needs).
#include <gtest/gtest.h>

#include "gate/gate.hpp"
#include "results/json.hpp"
#include "results/plan.hpp"
#include "support/support.hpp"

namespace coldgate::gate {
namespace {

using namespace coldgate::results;

QueryStats stmt(std::string id, std::string text, double calls, double blocks_per_call) {
  QueryStats q;
  q.queryid = std::move(id);
  q.query = text;
  q.text_id = "t" + std::to_string(std::hash<std::string>{}(text) % 100000);
  q.calls = calls;
  q.rows = calls;
  q.exec_ms = calls * 0.05;
  q.blocks_per_call = blocks_per_call;
  q.blocks = blocks_per_call * calls;
  return q;
}

StageResult stage(std::vector<QueryStats> queries) {
  StageResult s;
  s.name = "page";
  s.kind = StageKind::command;
  s.queries = std::move(queries);
  return s;
}

const StatementVerdict& of(const std::vector<StatementVerdict>& v, const std::string& text) {
  for (const auto& s : v) {
    if (s.query == text) return s;
  }
  static StatementVerdict none;
  ADD_FAILURE() << "no verdict for " << text;
  return none;
}

TEST(StatementVerdicts, PairedByTextAcrossQueryidsAndJudgedOnCounts) {
  config::Gate g;
  StageResult base = stage({stmt("-377094331132490252", "select * from coupon where code = $1", 1, 4),
                            stmt("11", "select name from author where id = $1", 100, 3),
                            stmt("12", "select title from book where isbn = $1", 1, 4),
                            stmt("13", "select 1 from gone", 3, 1),
                            stmt("14", "select 2 from gone_many", 12, 1)});
  StageResult head = stage({stmt("-5210114618935114403", "select * from coupon where code = $1", 1, 4),
                            stmt("21", "select name from author where id = $1", 100, 3),
                            stmt("22", "select title from book where isbn = $1", 1, 1937),
                            stmt("23", "select count(*) from review where book_id = $1", 40, 2),
                            stmt("24", "select 3 from new_few", 2, 1)});
  auto v = compare_statements(head, base, g);
  ASSERT_EQ(v.size(), 7u);
  // Regressions first.
  EXPECT_EQ(v[0].verdict, Verdict::regression);
  EXPECT_EQ(v[1].verdict, Verdict::regression);

  const auto& coupon = of(v, "select * from coupon where code = $1");
  EXPECT_EQ(coupon.verdict, Verdict::same);
  EXPECT_FALSE(coupon.changed());
  EXPECT_EQ(coupon.base->queryid, "-377094331132490252");
  EXPECT_EQ(coupon.head->queryid, "-5210114618935114403");

  const auto& isbn = of(v, "select title from book where isbn = $1");
  EXPECT_EQ(isbn.verdict, Verdict::regression);
  EXPECT_NE(isbn.reason.find("reads 1,937 blocks per call instead of 4 (484×"), std::string::npos)
      << isbn.reason;

  const auto& review = of(v, "select count(*) from review where book_id = $1");
  EXPECT_EQ(review.verdict, Verdict::regression);
  EXPECT_FALSE(review.base);
  EXPECT_EQ(review.reason, "new statement: runs 40 times per run (≥ min_query_delta 10)");

  EXPECT_EQ(of(v, "select 3 from new_few").verdict, Verdict::added);
  EXPECT_EQ(of(v, "select 1 from gone").verdict, Verdict::removed);
  EXPECT_EQ(of(v, "select 2 from gone_many").verdict, Verdict::faster);
  EXPECT_EQ(of(v, "select name from author where id = $1").verdict, Verdict::same);

  Results r;
  r.stages.push_back(head);
  r.gate = GateResult{};
  r.gate->statements = v;
  EXPECT_FALSE(passed(r));
  EXPECT_NE(verdict(r).find("page statement `select title from book where isbn = $1` blocks per "
                            "call 4 → 1,937"),
            std::string::npos)
      << verdict(r);
  EXPECT_NE(verdict(r).find("page statement `select count(*) from review where book_id = $1` "
                            "new, 40 calls per run"),
            std::string::npos)
      << verdict(r);
}

// Eager loading: a join takes the place of the list query and most per-row lookups (figures of
// a Django catalog page requested 15 times a run, before and after select_related). The join is
// new and runs ≥ min_query_delta times, yet the stage runs 180 statements fewer: the fix of an
// N+1, not one. The other way round it is one.
TEST(StatementVerdicts, ANewStatementInPlaceOfOthersIsAddedAndGatesOnlyWhenTheStageRunsMore) {
  config::Gate g;
  const std::string list = "select id, title, author_id from book order by title";
  const std::string lookup = "select id, name from author where id = $1";
  const std::string join =
      "select book.id, book.title, author.id, author.name from book inner join author on "
      "author.id = book.author_id order by book.title";
  const std::string session = "select session_data from django_session where session_key = $1";
  StageResult lazy = stage({stmt("1", list, 15, 2), stmt("2", lookup, 211, 3), stmt("3", session, 15, 2)});
  StageResult eager = stage({stmt("4", join, 15, 4), stmt("5", lookup, 31, 3), stmt("6", session, 15, 2)});

  auto fixed = compare_statements(eager, lazy, g);
  ASSERT_EQ(fixed.size(), 4u);
  const auto& added = of(fixed, join);
  EXPECT_EQ(added.verdict, Verdict::added);
  EXPECT_EQ(added.reason,
            "new statement: runs 15 times per run, in place of others: the stage runs 180 "
            "statements fewer per run; fell: `select id, name from author where id = $1` (211 → "
            "31), `select id, title, author_id from book order by title` (15 → 0)");
  EXPECT_EQ(of(fixed, lookup).verdict, Verdict::faster);
  EXPECT_EQ(of(fixed, list).verdict, Verdict::faster);
  EXPECT_EQ(of(fixed, session).verdict, Verdict::same);
  Results r;
  r.stages.push_back(eager);
  r.gate = GateResult{};
  r.gate->statements = fixed;
  EXPECT_TRUE(passed(r)) << verdict(r);

  auto undone = compare_statements(lazy, eager, g);
  EXPECT_EQ(of(undone, list).verdict, Verdict::regression);
  EXPECT_EQ(of(undone, list).reason, "new statement: runs 15 times per run (≥ min_query_delta 10)");
  EXPECT_EQ(of(undone, lookup).verdict, Verdict::regression);
  EXPECT_EQ(of(undone, join).verdict, Verdict::faster);

  // The edge is the stage's min_query_delta statements more: 9 more is in place of others, 10
  // more is a new N+1. A long text that fell is cut at 60 characters.
  const std::string long_text = "select " + std::string(70, 'x') + " from t where id = $1";
  const std::string cut = "`select " + std::string(53, 'x') + "…` (12 → 0)";
  auto with_more = [&](double more) {
    return compare_statements(stage({stmt("7", "select 2 from new", 12 + more, 1)}),
                              stage({stmt("9", long_text, 12, 1)}), g);
  };
  EXPECT_EQ(of(with_more(9), "select 2 from new").verdict, Verdict::added);
  EXPECT_EQ(of(with_more(9), "select 2 from new").reason,
            "new statement: runs 21 times per run, in place of others: the stage runs 9 statements "
            "more per run, under min_query_delta 10; fell: " + cut);
  EXPECT_EQ(of(with_more(0), "select 2 from new").reason,
            "new statement: runs 12 times per run, in place of others: the stage runs as many "
            "statements per run; fell: " + cut);
  EXPECT_EQ(of(with_more(10), "select 2 from new").verdict, Verdict::regression);
}

TEST(StatementVerdicts, ThresholdEdges) {
  config::Gate g;
  auto one = [&](double bc, double bb, double hc, double hb) {
    auto v = compare_statements(stage({stmt("2", "q", hc, hb)}), stage({stmt("1", "q", bc, bb)}), g);
    EXPECT_EQ(v.size(), 1u);
    return v.front();
  };
  // Calls: 2× and +10 both needed.
  EXPECT_EQ(one(10, 4, 20, 4).verdict, Verdict::regression);
  EXPECT_EQ(one(10, 4, 19, 4).verdict, Verdict::same);
  EXPECT_EQ(one(20, 4, 35, 4).verdict, Verdict::same);  // +15 but 1.75×
  EXPECT_NE(one(20, 4, 35, 4).reason.find("1.75× is under max_query_ratio 2"), std::string::npos)
      << one(20, 4, 35, 4).reason;
  EXPECT_EQ(one(5, 4, 14, 4).verdict, Verdict::same);  // 2.8× but +9
  EXPECT_NE(one(5, 4, 14, 4).reason.find("+9 is under min_query_delta 10"), std::string::npos)
      << one(5, 4, 14, 4).reason;
  EXPECT_EQ(one(20, 4, 10, 4).verdict, Verdict::faster);
  // Blocks per call: 10× and +100 both needed; a few index pages never count.
  EXPECT_EQ(one(1, 4, 1, 104).verdict, Verdict::regression);
  EXPECT_EQ(one(1, 4, 1, 103).verdict, Verdict::same);
  EXPECT_NE(one(1, 4, 1, 103).reason.find("+99 is under min_blocks_delta 100"), std::string::npos)
      << one(1, 4, 1, 103).reason;
  EXPECT_EQ(one(1, 200, 1, 1999).verdict, Verdict::same);
  EXPECT_NE(one(1, 200, 1, 1999).reason.find("under max_blocks_ratio 10"), std::string::npos);
  EXPECT_EQ(one(1, 3, 1, 5).verdict, Verdict::same);
  EXPECT_EQ(one(1, 1000, 1, 4).verdict, Verdict::faster);
  // Off per config.
  g.statements = false;
  EXPECT_TRUE(compare_statements(stage({stmt("2", "q", 40, 4)}), stage({stmt("1", "q", 1, 4)}), g)
                  .empty());
}

TEST(StatementVerdicts, OlderResultsPairByTextAndJudgeNoBlocksTheyLack) {
  config::Gate g;
  QueryStats old = stmt("1", "select title from book where isbn = $1", 1, 4);
  old.text_id.clear();
  old.blocks_per_call.reset();
  old.blocks.reset();
  auto v = compare_statements(stage({stmt("2", "select title from book where isbn = $1", 1, 1937)}),
                              stage({old}), g);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::same) << v[0].reason;
  EXPECT_FALSE(v[0].base->blocks_per_call);
  // No profile on one side: no statement verdicts at all (not all "new").
  EXPECT_TRUE(compare_statements(stage({stmt("2", "q", 40, 4)}), stage({}), g).empty());
}

TEST(StatementVerdicts, GateResultRoundTripsThroughResultsJson) {
  config::Gate g;
  Results r;
  r.tool_version = "0";
  StageResult head = stage({stmt("2", "q", 40, 1937), stmt("3", "new", 12, 1)});
  r.stages.push_back(head);
  r.gate = GateResult{};
  r.gate->statements = compare_statements(head, stage({stmt("1", "q", 1, 4), stmt("4", "old", 1, 1)}), g);
  std::string text = to_json(r);
  Results back = from_json(text, "results.json");
  ASSERT_TRUE(back.gate);
  ASSERT_EQ(back.gate->statements.size(), r.gate->statements.size());
  EXPECT_EQ(to_json(back), text);
  EXPECT_EQ(back.stages[0].queries[0].text_id, head.queries[0].text_id);
  EXPECT_EQ(back.stages[0].queries[0].blocks_per_call, 1937);
}

TEST(DiagnosisMarks, NewGoneAndAlsoInBaseByTextNotQueryid) {
  Results base, head;
  base.stages.push_back(stage({stmt("1", "select a from t where id = $1", 100, 3)}));
  head.stages.push_back(stage({stmt("9", "select a from t where id = $1", 100, 3),
                               stmt("8", "select b from u where id = $1", 40, 3)}));
  base.stages.push_back(stage({}));
  base.stages.back().name = "fixed";
  head.stages.push_back(base.stages.back());
  base.diagnoses = {{"page", results::DiagnosisKind::repeated_query, "a", {}, "1", "select a from t where id = $1", DiagnosisChange::none},
                    {"fixed", results::DiagnosisKind::never_analyzed, "n", {}, "", "", DiagnosisChange::none}};
  head.diagnoses = {{"page", results::DiagnosisKind::repeated_query, "a", {}, "9", "select a from t where id = $1", DiagnosisChange::none},
                    {"page", results::DiagnosisKind::repeated_query, "b", {}, "8", "select b from u where id = $1", DiagnosisChange::none}};
  mark_diagnoses(head, base);
  ASSERT_EQ(head.diagnoses.size(), 3u);
  EXPECT_EQ(head.diagnoses[0].change, DiagnosisChange::also_in_base);
  EXPECT_EQ(head.diagnoses[1].change, DiagnosisChange::added);
  EXPECT_EQ(head.diagnoses[2].change, DiagnosisChange::gone);
  EXPECT_EQ(head.diagnoses[2].stage, "fixed");
  // Idempotent, and a base's own "gone" entries are not carried on.
  mark_diagnoses(head, base);
  EXPECT_EQ(head.diagnoses.size(), 3u);
  Results next = head;
  next.diagnoses.pop_back();
  next.diagnoses[0].change = DiagnosisChange::none;
  mark_diagnoses(next, head);
  ASSERT_EQ(next.diagnoses.size(), 2u);
  EXPECT_EQ(next.diagnoses[0].change, DiagnosisChange::also_in_base);
  EXPECT_EQ(next.diagnoses[1].change, DiagnosisChange::also_in_base);
}

// An N+1 base had at 20 calls per run and head at 320: the pull request made it worse, and
// folding it under "also in base" would hide it. Growth under the stage's count thresholds
// (max_query_ratio, min_query_delta) is not "worse".
TEST(DiagnosisMarks, WorseWhenItsCallsGrewPastTheStagesCountThresholds) {
  Results base, head;
  base.stages.push_back(stage({stmt("1", "select a from t where id = $1", 20, 3),
                               stmt("2", "select b from u where id = $1", 20, 3),
                               stmt("3", "select c from v where id = $1", 30, 3)}));
  head.stages.push_back(stage({stmt("1", "select a from t where id = $1", 320, 3),
                               stmt("2", "select b from u where id = $1", 39, 3),
                               stmt("3", "select c from v where id = $1", 39, 3)}));
  auto diagnosis = [](const std::string& id, const std::string& text, double calls) {
    return Diagnosis{"page", results::DiagnosisKind::repeated_query, "m", {{"calls", calls}}, id, text, DiagnosisChange::none};
  };
  base.diagnoses = {diagnosis("1", "select a from t where id = $1", 20),
                    diagnosis("2", "select b from u where id = $1", 20),
                    diagnosis("3", "select c from v where id = $1", 30)};
  head.diagnoses = {diagnosis("1", "select a from t where id = $1", 320),
                    diagnosis("2", "select b from u where id = $1", 39),
                    diagnosis("3", "select c from v where id = $1", 39)};
  mark_diagnoses(head, base);
  ASSERT_EQ(head.diagnoses.size(), 3u);
  EXPECT_EQ(head.diagnoses[0].change, DiagnosisChange::worse);
  EXPECT_EQ(head.diagnoses[0].data.at("base_calls"), 20);
  EXPECT_EQ(head.diagnoses[1].change, DiagnosisChange::also_in_base) << "39 / 20 is under max_query_ratio 2";
  EXPECT_EQ(head.diagnoses[2].change, DiagnosisChange::also_in_base) << "9 more is under min_query_delta 10";
  EXPECT_EQ(head.diagnoses[1].data.count("base_calls"), 0u);
  // The stage's own gate decides: a looser ratio for this stage folds the 16× growth too.
  Thresholds loose;
  loose.stages["page"].max_query_ratio = 20;
  mark_diagnoses(head, base, loose);
  EXPECT_EQ(head.diagnoses[0].change, DiagnosisChange::also_in_base);
}

// An index finding is about a table and its columns; each side's diagnose gives it to the first
// statement of the stage that met it, which need not be the same statement on both sides. The
// same index missing on both sides is "also in base", never "new" on one statement and "gone"
// on another.
TEST(DiagnosisMarks, MissingIndexPairedByTableAndColumnsWhicheverStatementCarriesIt) {
  const std::string feed = "select * from article where \"authorId\" = ANY ($1)";
  const std::string profile = "select count(*) from article where \"authorId\" = $1";
  Results base, head;
  base.stages.push_back(stage({stmt("1", feed, 1, 900), stmt("2", profile, 1, 900)}));
  head.stages.push_back(stage({stmt("7", feed, 1, 900), stmt("8", profile, 1, 900)}));
  auto on = [](DiagnosisKind kind, const std::string& id, const std::string& text,
               const std::string& table, const std::string& columns) {
    Diagnosis d{"page", kind, "m", {}, id, text, DiagnosisChange::none};
    d.facts = {{"table", table}, {"columns", columns}};
    return d;
  };
  base.diagnoses = {on(results::DiagnosisKind::missing_index, "1", feed, "public.article", "authorId"),
                    on(results::DiagnosisKind::misestimate, "2", profile, "public.article", "authorId"),
                    on(results::DiagnosisKind::missing_index, "1", feed, "public.comment", "articleId")};
  head.diagnoses = {on(results::DiagnosisKind::missing_index, "8", profile, "public.article", "authorId"),
                    on(results::DiagnosisKind::misestimate, "7", feed, "public.article", "authorId"),
                    on(results::DiagnosisKind::missing_index, "8", profile, "public.article", "slug")};
  mark_diagnoses(head, base);
  ASSERT_EQ(head.diagnoses.size(), 4u);
  EXPECT_EQ(head.diagnoses[0].change, DiagnosisChange::also_in_base);
  EXPECT_EQ(head.diagnoses[1].change, DiagnosisChange::also_in_base);
  EXPECT_EQ(head.diagnoses[2].change, DiagnosisChange::added) << "another column";
  EXPECT_EQ(head.diagnoses[3].change, DiagnosisChange::gone);
  EXPECT_EQ(head.diagnoses[3].facts.at("table"), "public.comment");
}

// --- plan changes ---------------------------------------------------------------------------

// A captured plan from tests/gate/fixtures/plans/<name>.json.
StatementPlan plan_of(const std::string& name) {
  StatementPlan p;
  p.json = testing::slurp(testing::source_dir() / "tests/gate/fixtures/plans" / (name + ".json"));
  p.shape_id = plan_shape_id(plan_nodes(p.json, name));
  p.duration_ms = 1;
  return p;
}

QueryStats with_plan(QueryStats q, const std::string& plan) {
  q.plan = plan_of(plan);
  return q;
}

std::string change_between(const std::string& base, const std::string& head) {
  return plan_change(plan_nodes(plan_of(base).json, base), plan_nodes(plan_of(head).json, head));
}

const std::string k_comments = "select * from \"Comments\" where \"articleId\" = $1";

TEST(PlanChange, AnIndexScanThatBecameASeqScanIsNamedWithTheRowsItRemoved) {
  config::Gate g;
  auto v = compare_statements(
      stage({with_plan(stmt("2", k_comments, 1, 956), "comments_seq_scan")}),
      stage({with_plan(stmt("1", k_comments, 1, 6), "comments_index_scan")}), g);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].plan_change,
            "Index Scan using comments_article_id on public.Comments → Seq Scan on "
            "public.Comments (149,997 rows removed by filter)");
  EXPECT_EQ(v[0].base->plan_shape_id, plan_of("comments_index_scan").shape_id);
  EXPECT_EQ(v[0].head->plan_shape_id, plan_of("comments_seq_scan").shape_id);
  EXPECT_NE(v[0].base->plan_shape_id, v[0].head->plan_shape_id);
  // The blocks decide the verdict (956 − 6 ≥ min_blocks_delta 100 and ≥ 10×), not the plan.
  EXPECT_EQ(v[0].verdict, Verdict::regression) << v[0].reason;
}

TEST(PlanChange, AloneItIsShownNotGated) {
  config::Gate g;
  // A bitmap scan of the partitions that became sequential scans: the calls are the same, the
  // execution's blocks under max_blocks_ratio (110 → 545, 4.95×).
  auto v = compare_statements(
      stage({with_plan(stmt("2", k_comments, 1, 545), "partitions_seq")}),
      stage({with_plan(stmt("1", k_comments, 1, 110), "partitions_bitmap")}), g);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::same) << v[0].reason;
  EXPECT_EQ(v[0].reason, "blocks per call 110 → 545 in its plan's execution: 4.95× is under "
                         "max_blocks_ratio 10");
  EXPECT_FALSE(v[0].plan_change.empty());
  EXPECT_TRUE(v[0].changed());  // listed in "Statements that changed"
  Results r;
  r.stages.push_back(stage({}));
  r.gate = GateResult{};
  r.gate->statements = v;
  EXPECT_TRUE(passed(r));
  // And it survives results.json.
  Results back = from_json(to_json(r), "results.json");
  ASSERT_TRUE(back.gate);
  ASSERT_EQ(back.gate->statements.size(), 1u);
  EXPECT_EQ(back.gate->statements[0].plan_change, v[0].plan_change);
  EXPECT_EQ(back.gate->statements[0].head->plan_shape_id, v[0].head->plan_shape_id);
}

// What the helper's Django blog showed: a pull request that deletes one query before the page's
// join. The join now plans first in its backend and pays the catalog reads (pg_stat_statements
// counts planning's blocks, track_planning): 11 → 259 per call, with the same plan reading 6.
TEST(PlanChange, BlocksAreJudgedOnThePlansExecutionNotOnPlanningsCatalogReads) {
  config::Gate g;
  auto v = compare_statements(stage({with_plan(stmt("2", k_comments, 1, 259), "comments_index_scan")}),
                              stage({with_plan(stmt("1", k_comments, 1, 11), "comments_index_scan")}), g);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::same) << v[0].reason;
  EXPECT_EQ(v[0].reason, "pg_stat_statements' blocks per call 11 → 259 count planning's catalog "
                         "reads too (a fresh backend's first plan over a table), so the plans' "
                         "execution is judged");
  // The figures stay pg_stat_statements' in the verdict's sides (the report's columns).
  EXPECT_EQ(v[0].base->blocks_per_call, 11);
  EXPECT_EQ(v[0].head->blocks_per_call, 259);

  // The same figures without plans (an external server): pg_stat_statements' are all there is.
  auto no_plans = compare_statements(stage({stmt("2", k_comments, 1, 259)}),
                                     stage({stmt("1", k_comments, 1, 11)}), g);
  ASSERT_EQ(no_plans.size(), 1u);
  EXPECT_EQ(no_plans[0].verdict, Verdict::regression);
  EXPECT_EQ(no_plans[0].reason.rfind("reads 259 blocks per call instead of 11 (23.5×, +248 ≥ "
                                     "min_blocks_delta 100)", 0), 0u)
      << no_plans[0].reason;

  // The same plan on both sides with no catalog reads to tell apart: said once, the plan's.
  auto quiet = compare_statements(stage({with_plan(stmt("2", k_comments, 1, 7), "comments_index_scan")}),
                                  stage({with_plan(stmt("1", k_comments, 1, 7), "comments_index_scan")}), g);
  ASSERT_EQ(quiet.size(), 1u);
  EXPECT_EQ(quiet[0].reason, "1 call per run, 6 blocks per call in its plan's execution, on both sides");

  // A regression judged on the plans' figures (6 → 956) while the table shows
  // pg_stat_statements' (8 → 958): the reason names both, so the reader can tell them apart.
  auto lost_index =
      compare_statements(stage({with_plan(stmt("2", k_comments, 1, 958), "comments_seq_scan")}),
                         stage({with_plan(stmt("1", k_comments, 1, 8), "comments_index_scan")}), g);
  ASSERT_EQ(lost_index.size(), 1u);
  EXPECT_EQ(lost_index[0].verdict, Verdict::regression) << lost_index[0].reason;
  EXPECT_NE(lost_index[0].reason.find(" in its plan's execution"), std::string::npos)
      << lost_index[0].reason;
  EXPECT_NE(lost_index[0].reason.find("; pg_stat_statements' blocks per call 8 → 958 count "
                                      "planning's catalog reads too"),
            std::string::npos)
      << lost_index[0].reason;

  // A plan without buffer figures (EXPLAIN without BUFFERS) leaves pg_stat_statements' to judge.
  StatementPlan bare;
  bare.json = R"({"Node Type": "Index Scan", "Relation Name": "Comments"})";
  bare.shape_id = plan_shape_id(plan_nodes(bare.json, "bare"));
  EXPECT_EQ(execution_blocks(bare.json), std::nullopt);
  EXPECT_EQ(execution_blocks(plan_of("comments_index_scan").json), 6);
  EXPECT_EQ(execution_blocks("not json"), std::nullopt);
  QueryStats b = stmt("1", k_comments, 1, 11), h = stmt("2", k_comments, 1, 259);
  b.plan = bare;
  h.plan = bare;
  auto bare_plans = compare_statements(stage({h}), stage({b}), g);
  ASSERT_EQ(bare_plans.size(), 1u);
  EXPECT_EQ(bare_plans[0].verdict, Verdict::regression) << bare_plans[0].reason;
}

TEST(PlanChange, TheSameShapeOrOneSideWithoutAPlanIsNoChange) {
  config::Gate g;
  auto same = compare_statements(
      stage({with_plan(stmt("2", k_comments, 1, 6), "comments_index_scan")}),
      stage({with_plan(stmt("1", k_comments, 1, 6), "comments_index_scan")}), g);
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(same[0].plan_change, "");
  EXPECT_FALSE(same[0].changed());
  EXPECT_EQ(same[0].base->plan_shape_id, same[0].head->plan_shape_id);
  EXPECT_FALSE(same[0].head->plan_shape_id.empty());

  // Base measured without plans (an external server, an older coldgate).
  auto half = compare_statements(
      stage({with_plan(stmt("2", k_comments, 1, 6), "comments_seq_scan")}),
      stage({stmt("1", k_comments, 1, 6)}), g);
  ASSERT_EQ(half.size(), 1u);
  EXPECT_EQ(half[0].plan_change, "");
  EXPECT_EQ(half[0].base->plan_shape_id, "");
  EXPECT_FALSE(half[0].head->plan_shape_id.empty());
  EXPECT_FALSE(half[0].changed());
  auto other_half = compare_statements(
      stage({stmt("2", k_comments, 1, 6)}),
      stage({with_plan(stmt("1", k_comments, 1, 6), "comments_index_scan")}), g);
  ASSERT_EQ(other_half.size(), 1u);
  EXPECT_EQ(other_half[0].plan_change, "");
}

TEST(PlanChange, JoinsNameTheLostAndNewNodesScansFirst) {
  // Nested Loop over two index scans → the same join over a sequential scan of each table
  // (no usable index): the Nested Loop is on both sides, so it is not named.
  EXPECT_EQ(change_between("join_index_scans", "join_nested_loop_filter"),
            "Index Scan using Articles_pkey on public.Articles a, Index Scan using "
            "comments_article_id on public.Comments c → Seq Scan on public.Comments c, Seq Scan "
            "on public.Articles a (49,981 rows removed by filter), Materialize");
  // Hash Join → Nested Loop: the join's own rows removed by its join filter are named too.
  EXPECT_EQ(change_between("join_hash_seq_scan", "join_nested_loop_filter"),
            "Index Scan using Articles_pkey on public.Articles a, Hash Join, Hash → Seq Scan on "
            "public.Articles a (49,981 rows removed by filter), Nested Loop (2,849,430 rows "
            "removed by join filter), Materialize");
}

TEST(PlanChange, ManyNodesAreCutToAFewOnEachSide) {
  // Five partitions: bitmap scans over each partition's index → a sequential scan of each.
  std::string c = change_between("partitions_bitmap", "partitions_seq");
  EXPECT_EQ(c,
            "Bitmap Heap Scan on public.events_1, Bitmap Index Scan using events_1_account_idx, "
            "Bitmap Heap Scan on public.events_2, … 7 more → Seq Scan on public.events_1 (19,979 "
            "rows removed by filter), Seq Scan on public.events_2 (19,980 rows removed by "
            "filter), Seq Scan on public.events_3 (19,980 rows removed by filter), … 2 more");
  EXPECT_EQ(c.find('\n'), std::string::npos);
  // The way back names the seq scans lost and the bitmap scans new, without removed rows.
  EXPECT_EQ(change_between("partitions_seq", "partitions_bitmap").substr(0, 60),
            "Seq Scan on public.events_1, Seq Scan on public.events_2, Se");
}

TEST(PlanChange, RowsRemovedCountEveryLoop) {
  // A hand-made inner side of a nested loop run 19 times, each loop removing 1,000 rows.
  auto nodes = [](const char* inner) {
    return plan_nodes(std::string(R"({"Node Type":"Nested Loop","Join Type":"Inner",)"
                                  R"("Actual Rows":1,"Actual Loops":1,"Plans":[)") +
                          inner + "]}",
                      "plan");
  };
  auto base = nodes(R"({"Node Type":"Index Scan","Index Name":"t_k","Relation Name":"t",)"
                    R"("Schema":"public","Alias":"t","Actual Rows":1,"Actual Loops":19})");
  auto head = nodes(R"({"Node Type":"Seq Scan","Relation Name":"t","Schema":"public",)"
                    R"("Alias":"t","Actual Rows":1,"Actual Loops":19,)"
                    R"("Rows Removed by Filter":1000})");
  EXPECT_EQ(plan_change(base, head),
            "Index Scan using t_k on public.t → Seq Scan on public.t (19,000 rows removed by "
            "filter)");
  EXPECT_EQ(plan_change(base, base), "");
  // Only added or only dropped nodes, and the same nodes in another join order.
  auto sorted = plan_nodes(R"({"Node Type":"Sort","Plans":[{"Node Type":"Seq Scan",)"
                           R"("Relation Name":"t","Schema":"public"}]})",
                           "plan");
  auto bare = plan_nodes(R"({"Node Type":"Seq Scan","Relation Name":"t","Schema":"public"})", "plan");
  EXPECT_EQ(plan_change(bare, sorted), "added Sort");
  EXPECT_EQ(plan_change(sorted, bare), "dropped Sort");
  auto ab = plan_nodes(R"({"Node Type":"Hash Join","Join Type":"Inner","Plans":[)"
                       R"({"Node Type":"Seq Scan","Relation Name":"a","Schema":"public"},)"
                       R"({"Node Type":"Hash","Plans":[{"Node Type":"Seq Scan",)"
                       R"("Relation Name":"b","Schema":"public"}]}]})",
                       "plan");
  auto ba = plan_nodes(R"({"Node Type":"Hash Join","Join Type":"Inner","Plans":[)"
                       R"({"Node Type":"Seq Scan","Relation Name":"b","Schema":"public"},)"
                       R"({"Node Type":"Hash","Plans":[{"Node Type":"Seq Scan",)"
                       R"("Relation Name":"a","Schema":"public"}]}]})",
                       "plan");
  EXPECT_EQ(plan_change(ab, ba), "join order public.a, public.b → public.b, public.a");
}

TEST(PlanChange, AnUnreadablePlanInAResultsFileIsShownNotThrown) {
  config::Gate g;
  QueryStats b = with_plan(stmt("1", k_comments, 1, 6), "comments_index_scan");
  QueryStats h = stmt("2", k_comments, 1, 6);
  h.plan = StatementPlan{1, "0123456789abcdef", "{\"no\": \"node type\"}"};
  auto v = compare_statements(stage({h}), stage({b}), g);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].plan_change.rfind("shape " + b.plan->shape_id + " → 0123456789abcdef (a plan is "
                                   "not readable: head plan: ",
                                   0),
            0u)
      << v[0].plan_change;
}

}  // namespace
}  // namespace coldgate::gate
