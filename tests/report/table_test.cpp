#include "report/table.hpp"

#include <gtest/gtest.h>

namespace coldgate::report {
namespace {

using namespace coldgate::results;

TEST(Table, FormatsValuesWithUnits) {
  EXPECT_EQ(format_value(0.4213, "ms"), "0.42 ms");
  EXPECT_EQ(format_value(812.26, "ms"), "812.3 ms");
  EXPECT_EQ(format_value(1911, "ms"), "1.91 s");
  EXPECT_EQ(format_value(512, "bytes"), "512 B");
  EXPECT_EQ(format_value(14.1 * 1024 * 1024, "bytes"), "14.1 MiB");
  EXPECT_EQ(format_value(1404, "count"), "1,404");
  EXPECT_EQ(format_value(1234567, ""), "1,234,567");
  EXPECT_EQ(format_value(2.5, "widgets"), "2.50 widgets");
}

TEST(Table, FormatsRatios) {
  EXPECT_EQ(format_ratio(10.4), "10.4×");
  EXPECT_EQ(format_ratio(2.3125), "2.31×");
  EXPECT_EQ(format_ratio(0.41), "0.41×");
  EXPECT_EQ(format_ratio(123.4), "123×");
}

TEST(Table, SamplesAreMedianAndRangeUnlessTheRangeSaysNothing) {
  EXPECT_EQ(format_samples({100, 90, 110}, "ms"), "100.0 ms (90.0 ms – 110.0 ms)");
  EXPECT_EQ(format_samples({1404, 1404}, "count"), "1,404");
  EXPECT_EQ(format_samples({1000.1, 1000.2}, "ms"), "1.00 s");
  EXPECT_EQ(format_samples({400}, "ms"), "400.0 ms");
  EXPECT_EQ(format_samples({}, "ms"), "—");
  EXPECT_EQ(format_samples({}, "ms", 12), "12.0 ms");
  EXPECT_EQ(format_samples({10, 30}, "ms", 25), "25.0 ms (10.0 ms – 30.0 ms)");
}

StageResult stage(const std::string& name, std::vector<double> wall) {
  StageResult s;
  s.name = name;
  s.metric("wall_ms", "ms") = {"ms", std::move(wall), {}};
  return s;
}

std::vector<std::string> texts(const std::vector<TableRow>& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows) out.push_back(row.text);
  return out;
}

// Head "s" regressed and sped up, "t" gained and lost a metric, "u" is gone, "v" failed, "w"
// changed its snapshot, "x" is new, "same" did not change.
struct BaseAndHead {
  Results base;
  Results head;
};

BaseAndHead mixed_run() {
  BaseAndHead run;
  run.base.stages.push_back(stage("s", {100, 90, 110}));
  run.base.stages.push_back(stage("same", {10, 11}));
  Results& r = run.head;
  r.stages.push_back(stage("s", {1040, 1000, 1100}));
  r.stages.back().metric("cpu_ms", "ms") = {"ms", {50}, {}};
  r.stages.back().metric("rows", "count") = {"count", {7}, {}};
  r.stages.push_back(stage("t", {5}));
  StageResult v;
  v.name = "v";
  v.error = "boom\nsecond line";
  r.stages.push_back(v);
  StageResult w = stage("w", {1});
  w.snapshot = SnapshotResult{SnapshotStatus::changed,
                              "snapshots/w.json",
                              "",
                              "",
                              "snapshot changed: 2 paths "
                              "differ (2 changed, 0 added, 0 removed)",
                              ""};
  r.stages.push_back(w);
  r.stages.push_back(stage("x", {9}));
  r.stages.push_back(stage("same", {10, 12}));
  r.stages.back().metric("rows", "count") = {"count", {3, 3}, {}};
  r.gate = GateResult{};
  r.gate->metrics = {{"s", "wall_ms", "ms", Verdict::regression, 100, 1040, 10.4, "10.4× ≥ max_ratio 10"},
                     {"s", "cpu_ms", "ms", Verdict::faster, 200, 50, 0.25, ""},
                     {"t", "wall_ms", "ms", Verdict::added, std::nullopt, 5, std::nullopt, ""},
                     {"t", "query_ms", "ms", Verdict::removed, 3, std::nullopt, std::nullopt, ""},
                     {"w", "wall_ms", "ms", Verdict::same, 1, 1, 1, ""},
                     {"x", "wall_ms", "ms", Verdict::added, std::nullopt, 9, std::nullopt, ""},
                     {"same", "wall_ms", "ms", Verdict::same, 10.5, 11, 1.05, ""},
                     {"u", "wall_ms", "ms", Verdict::removed, 7, std::nullopt, std::nullopt, ""}};
  r.gate->stages_new = {"x"};
  r.gate->stages_removed = {"u"};
  return run;
}

TEST(Table, ChangesComeMostUrgentFirstWithTheirReason) {
  BaseAndHead run = mixed_run();
  Comparison c(run.head, &run.base);
  MetricsTable t = changes_table(c);
  EXPECT_EQ(t.header,
            "| Stage | Metric | Before | After | Change | Why |\n|---|---|---:|---:|---|---|\n");
  EXPECT_EQ(texts(t.rows),
            (std::vector<std::string>{
                "| s | wall_ms | 100.0 ms (90.0 ms – 110.0 ms) | 1.04 s (1.00 s – 1.10 s) | 🔴 "
                "10.4× regression | 10.4× ≥ max_ratio 10 |\n",
                "| s | cpu_ms | 200.0 ms | 50.0 ms | 🟢 0.25× faster | — |\n",
                "| v | — | — | — | ❌ failed | boom — second line |\n",
                "| w | snapshot | — | — | ❌ changed | snapshot changed: 2 paths differ (2 changed, "
                "0 added, 0 removed) |\n",
                "| t | wall_ms | — | 5.00 ms | 🆕 new | no base sample |\n",
                "| t | query_ms | 3.00 ms | — | ➖ removed | no head sample |\n",
                "| x | wall_ms | — | 9.00 ms | 🆕 new stage | not in the base |\n",
                "| u | wall_ms | 7.00 ms | — | ➖ removed stage | not in head |\n"}));
  std::vector<int> ranks;
  for (const auto& row : t.rows) ranks.push_back(row.rank);
  EXPECT_EQ(ranks, (std::vector<int>{0, 2, 0, 0, 2, 2, 2, 2}));
  EXPECT_NE(t.legend, "");
}

TEST(Table, NothingChangedNoTable) {
  BaseAndHead run = mixed_run();
  Results r;
  r.stages.push_back(run.head.stages.back());
  r.gate = GateResult{};
  r.gate->metrics = {{"same", "wall_ms", "ms", Verdict::same, 10.5, 11, 1.05, ""}};
  Comparison c(r, nullptr);
  EXPECT_TRUE(changes_table(c).rows.empty());
  EXPECT_EQ(changes_table(c).header, "");
  EXPECT_FALSE(c.changed("same"));
  EXPECT_EQ(texts(unchanged_table(c).rows),
            (std::vector<std::string>{"| same | wall_ms 10.5 ms → 11.0 ms |\n"}));
}

TEST(Table, UnchangedStagesFoldAndUngatedMetricsGoPerStage) {
  BaseAndHead run = mixed_run();
  Comparison c(run.head, &run.base);
  EXPECT_EQ(texts(unchanged_table(c).rows),
            (std::vector<std::string>{"| same | wall_ms 10.5 ms → 11.0 ms |\n"}));
  // w's wall_ms is `same` in a changed stage; s's and same's rows are not gated.
  EXPECT_EQ(texts(more_metrics(c)),
            (std::vector<std::string>{
                "\n<details><summary>s: 1 metric</summary>\n\n- rows: — → 7 (not gated)\n\n"
                "</details>\n",
                "\n<details><summary>w: 1 metric</summary>\n\n- wall_ms: 1.00 ms → 1.00 ms "
                "(1.00×, same)\n\n</details>\n",
                "\n<details><summary>same: 1 metric</summary>\n\n- rows: — → 3 (not "
                "gated)\n\n</details>\n"}));
}

TEST(Table, WithoutAGateTimesInTheTableTheRestPerStage) {
  Results r;
  r.stages.push_back(stage("a|b", {400}));
  r.stages.back().metric("wall_ms", "ms").warm = {300, 310};
  r.stages.back().metric("rows", "count") = {"count", {7, 7}, {1}};
  StageResult failed;
  failed.name = "crash";
  failed.error = "boom";
  r.stages.push_back(failed);
  MetricsTable t = head_table(r);
  EXPECT_EQ(t.header,
            "| Stage | Metric | Cold median (min – max) | Warm median (min – max) |\n"
            "|---|---|---:|---:|\n");
  EXPECT_EQ(texts(t.rows), (std::vector<std::string>{
                               "| a\\|b | wall_ms | 400.0 ms | 305.0 ms (300.0 ms – 310.0 ms) |\n",
                               "| crash | — | ❌ failed | — |\n"}));
  Comparison c(r, nullptr);
  EXPECT_EQ(texts(changes_table(c).rows),
            (std::vector<std::string>{"| crash | — | ❌ failed | boom |\n"}));
  EXPECT_EQ(changes_table(c).legend, "");
  EXPECT_TRUE(unchanged_table(c).rows.empty());
  EXPECT_EQ(texts(more_metrics(c)),
            (std::vector<std::string>{"\n<details><summary>a|b: 1 metric</summary>\n\n- rows: 7, "
                                      "warm 1\n\n</details>\n"}));
}


TEST(Table, AStatementLineElidesTheListsThatMakeAnOrmsStatementsLookAlike) {
  // Short statements stay whole, on one line.
  EXPECT_EQ(statement_line("SELECT id\n  FROM realms\tWHERE id = $1", 100), "SELECT id FROM realms WHERE id = $1");
  const std::string list = R"(SELECT "boards_topic"."id", "boards_topic"."subject", "boards_topic"."board_id", )"
                           R"("boards_topic"."starter_id" FROM "boards_topic" )";
  EXPECT_EQ(statement_line(list + R"(WHERE "boards_topic"."board_id" = $1 ORDER BY "boards_topic"."id")", 100),
            R"(SELECT … FROM "boards_topic" WHERE "boards_topic"."board_id" = $1 ORDER BY "boards_topic"."id")");
  // A short select list stays: a page's count and its rows read the same joins, and only the
  // select list tells them apart.
  const std::string joins = R"( FROM "articles_article" INNER JOIN "profiles_profile" ON )"
                            R"(("articles_article"."author_id" = "profiles_profile"."id") WHERE )"
                            R"("profiles_profile"."user_id" = $1)";
  EXPECT_EQ(statement_line(R"(SELECT COUNT(*) AS "__count")" + joins, 60),
            R"(SELECT COUNT(*) AS "__count" FROM "articles_article" INNER J …)");
  EXPECT_EQ(statement_line(R"(SELECT "articles_article"."id", "articles_article"."slug", )"
                           R"("articles_article"."title", "articles_article"."body")" + joins, 60),
            R"(SELECT … FROM "articles_article" INNER JOIN "profiles_prof …)");
  // A FROM inside a subquery or a quoted name is not the select list's end.
  EXPECT_EQ(statement_line(R"(SELECT (SELECT count(*) FROM post p WHERE p.topic_id = t.id) AS n, "from x", t.subject, )"
                           R"(t.board_id, t.starter_id, t.views FROM topic t WHERE t.board_id = $1)", 100),
            "SELECT … FROM topic t WHERE t.board_id = $1");
  EXPECT_EQ(statement_line(R"(INSERT INTO "boards_post" ("message", "topic_id", "created_at", "created_by_id", )"
                           R"("updated_at") VALUES ($1, $2, $3, $4, now()) RETURNING "boards_post"."id")", 100),
            R"(INSERT INTO "boards_post" (…) VALUES (…) RETURNING "boards_post"."id")");
  // What is still too long is cut, at a character boundary.
  EXPECT_EQ(statement_line(list + "WHERE " + std::string(200, 'x'), 40), R"(SELECT … FROM "boards_topic" WHERE xxx …)");
  EXPECT_EQ(statement_line("UPDATE t SET a = 'é" + std::string(120, 'b') + "'", 19), "UPDATE t SET a = ' …");
}

}  // namespace
}  // namespace coldgate::report
