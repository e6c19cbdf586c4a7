#include "measure/trial.hpp"

#include <gtest/gtest.h>

#include "report/remedies.hpp"

namespace coldgate::measure {
namespace {

using namespace coldgate::results;

TEST(Trial, TheOrderIsRoundRobinSoDriftHitsEveryVariantAlike) {
  EXPECT_EQ(trial_order(3, 2), (std::vector<std::size_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(trial_order(1, 3), (std::vector<std::size_t>{0, 0, 0}));
  EXPECT_TRUE(trial_order(4, 0).empty());
}

Diagnosis finding(const std::string& stage, const std::string& kind) {
  return {stage, kind, "…", {}, "", ""};
}

TEST(Trial, RemediesComeFromTheStagesOwnDiagnosesThenItsOwnList) {
  config::Stage sql;
  sql.name = "load";
  sql.query = "select 1";
  sql.remedies.push_back({"more work_mem", {{"work_mem", "64MB"}}, {}});
  std::vector<Diagnosis> d = {finding("load", "jit_dominates"), finding("load", "never_analyzed"),
                              finding("load", "repeated_query"), finding("other", "jit_dominates")};
  auto v = remedies_for(sql, d, {"public.item"});
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].name, "jit = off");
  EXPECT_EQ(v[0].settings, (std::map<std::string, std::string>{{"jit", "off"}}));
  EXPECT_EQ(v[1].name, "JIT without inlining and optimization");
  EXPECT_EQ(v[1].settings, (std::map<std::string, std::string>{
                               {"jit_inline_above_cost", "-1"}, {"jit_optimize_above_cost", "-1"}}));
  EXPECT_EQ(v[2].name, "prepared statement");
  EXPECT_TRUE(v[2].prepared);
  EXPECT_EQ(v[3].name, "ANALYZE");
  EXPECT_EQ(v[3].analyze, std::vector<std::string>{"public.item"});
  EXPECT_EQ(v[4].name, "more work_mem");  // repeated_query has none: it is a code change

  config::Stage app;
  app.name = "app";
  app.command = {"./app"};
  auto c = remedies_for(app, {finding("app", "jit_dominates")}, {});
  ASSERT_EQ(c.size(), 2u);  // no prepared statement for an application
  EXPECT_TRUE(remedies_for(app, {finding("app", "repeated_query")}, {}).empty());
}

Remedy variant(const std::string& name, std::vector<double> wall, std::optional<bool> identical,
               std::map<std::string, std::string> settings = {}) {
  Remedy r;
  r.stage = "s";
  r.remedy = name;
  r.settings = std::move(settings);
  r.metrics.emplace_back("wall_ms", Metric{"ms", std::move(wall), {}});
  r.snapshot_identical = identical;
  if (identical && !*identical) r.first_difference = "/pi";
  return r;
}

TEST(Trial, TheFastestIdenticalRemedyIsRecommendedNeverOneThatChangesTheResult) {
  std::vector<Remedy> trial = {variant("as is", {4850, 4900, 4870}, true),
                               variant("fewer float digits", {300, 310, 305}, false,
                                       {{"extra_float_digits", "0"}}),
                               variant("jit = off", {580, 590, 575}, true, {{"jit", "off"}}),
                               variant("JIT without inlining and optimization",
                                       {1400, 1450, 1420}, true,
                                       {{"jit_inline_above_cost", "-1"},
                                        {"jit_optimize_above_cost", "-1"}})};
  EXPECT_EQ(report::recommendation(trial, StageKind::sql),
            "`jit = off`: 4.87 s → 580.0 ms (8.40× faster), snapshot identical — add `settings: "
            "{jit: \"off\"}` to the stage (or `SET LOCAL jit = off;` in front of the query)");
  std::string table = report::remedies_table(trial, StageKind::sql);
  EXPECT_NE(table.find("| as is | 4.87 s (4.85 s–4.90 s) | — | — | reference |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| fewer float digits | 305.0 ms (300.0 ms–310.0 ms) | — | 16.0× faster | "
                       "differs at /pi |"),
            std::string::npos)
      << table;

  // Nothing clearly faster (within 10%), or only a remedy that changes the result.
  std::vector<Remedy> none = {variant("as is", {100}, true), variant("jit = off", {95}, true),
                              variant("float", {10}, false)};
  EXPECT_EQ(report::recommendation(none, StageKind::sql),
            "No remedy was more than 10% faster than as is, with every run apart from as is's "
            "and an identical snapshot.");
  // 1.34× by the medians, but the runs overlap: noise, not a remedy.
  std::vector<Remedy> overlap = {variant("as is", {42.4, 69.0, 69.7}, true),
                                 variant("ANALYZE", {44.1, 51.5, 75.6}, true)};
  EXPECT_EQ(report::recommendation(overlap, StageKind::sql).rfind("No remedy", 0), 0u);

  // An application whose start-up is most of its wall time: the index's 45× on the server is
  // inside the wall time's noise, but no run is slower; the server's time decides, and shows.
  auto profiled = [](Remedy r, std::vector<double> plan, std::vector<double> exec) {
    r.metrics.emplace_back("db_plan_ms", Metric{"ms", std::move(plan), {}});
    r.metrics.emplace_back("db_exec_ms", Metric{"ms", std::move(exec), {}});
    return r;
  };
  std::vector<Remedy> app = {
      profiled(variant("as is", {1340, 1260, 1390}, true), {2, 2, 2}, {214, 216, 218}),
      profiled(variant("CREATE INDEX ON public.book (author)", {1120, 1230, 1300}, true),
               {2, 2, 2}, {2.8, 2.8, 2.9})};
  EXPECT_EQ(report::recommendation(app, StageKind::command),
            "`CREATE INDEX ON public.book (author)`: 1.34 s → 1.23 s (1.09× faster), server time "
            "218.0 ms → 4.80 ms (45.4× faster), snapshot identical — add `CREATE INDEX ON "
            "public.book (author)` to the schema's migrations (CONCURRENTLY on a live table)");
  std::string app_table = report::remedies_table(app, StageKind::command);
  EXPECT_NE(app_table.find("| Remedy | Cold wall | Server time | JIT | vs as is | Snapshot |"),
            std::string::npos)
      << app_table;
  EXPECT_NE(app_table.find("| 1.23 s (1.12 s–1.30 s) | 4.80 ms (4.80 ms–4.90 ms) |"),
            std::string::npos)
      << app_table;
  // A server gain bought with a slower wall time is not a remedy.
  app[1] = profiled(variant("CREATE INDEX ON public.book (author)", {1400, 1450, 1420}, true),
                    {2, 2, 2}, {2.8, 2.8, 2.9});
  EXPECT_EQ(report::recommendation(app, StageKind::command).rfind("No remedy", 0), 0u);

  // Without a snapshot a remedy is named with the caveat.
  std::vector<Remedy> blind = {variant("as is", {100}, std::nullopt),
                               variant("jit = off", {20}, std::nullopt, {{"jit", "off"}})};
  EXPECT_NE(report::recommendation(blind, StageKind::command)
                .find("no snapshot to prove it loads the same data — in the application, run "
                      "`SET LOCAL jit = off;` right before the statement, in a transaction of its "
                      "own (`settings: {jit: \"off\"}` on the stage measures it so)"),
            std::string::npos);
}

TEST(Trial, APreparedStatementIsJudgedByItsColdRunsLikeTheOthers) {
  // Its second execution (warm) skips process start and connecting: never against as is's cold.
  Remedy p = variant("prepared statement", {5000, 5010}, true);
  p.metrics.front().second.warm = {40, 41};
  p.second_execution = true;
  EXPECT_EQ(*p.median_of("wall_ms"), 5005);
  std::vector<Remedy> trial = {variant("as is", {4990, 5000}, true), p};
  EXPECT_EQ(report::recommendation(trial, StageKind::sql).rfind("No remedy", 0), 0u);
  std::string table = report::remedies_table(trial, StageKind::sql);
  EXPECT_NE(table.find("| prepared statement | 5.00 s (5.00 s–5.01 s) |"), std::string::npos)
      << table;
}

}  // namespace
}  // namespace coldgate::measure
