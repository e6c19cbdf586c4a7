#include "measure/diagnose.hpp"

#include <gtest/gtest.h>

namespace coldgate::measure {
namespace {

using namespace coldgate::results;

QueryStats statement(const std::string& id, const std::string& text, double calls,
                     double exec_ms, double jit_ms = 0, double plan_ms = 0) {
  QueryStats q;
  q.queryid = id;
  q.query = text;
  q.calls = calls;
  q.exec_ms = exec_ms;
  q.jit_ms = jit_ms;
  q.jit_functions = jit_ms > 0 ? 1090 : 0;
  q.plan_ms = plan_ms;
  return q;
}

StageResult stage(const std::string& name, StageKind kind, std::vector<QueryStats> queries) {
  StageResult s;
  s.name = name;
  s.kind = kind;
  s.queries = std::move(queries);
  return s;
}

config::Config analyzed() {
  config::Config c;
  c.setup.push_back({config::SetupStep::Kind::analyze, {}, {}, {}, {}});
  return c;
}

TEST(Diagnose, JitDominatesOneStatementOfAnApplicationWithItsOwnFix) {
  Results r;
  QueryStats big = statement("-4711", "select json_build_object($1, …", 1, 7100, 6600);
  big.total_cost = 690123.4;
  StageResult app = stage("app", StageKind::command,
                          {big, statement("12", "select id from accounts", 1, 0.3)});
  app.explain = Explain{};
  app.explain->jit_above_cost = 100000;
  r.stages.push_back(app);
  auto d = diagnose(r, analyzed());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, "jit_dominates");
  EXPECT_EQ(d[0].queryid, "-4711");
  EXPECT_EQ(d[0].query, "select json_build_object($1, …");
  EXPECT_EQ(d[0].message,
            "JIT compiled 1,090 functions in 6.60 s per run for statement -4711 `select "
            "json_build_object($1, …`, whose execution took 7.10 s; cost estimate 690,123 "
            "(jit_above_cost 100,000) — run `SET LOCAL jit = off;` right before that statement, "
            "in a transaction of its own (the setting ends with the transaction, so the pooled "
            "connection keeps JIT for everything else), or measure the stage with `settings: "
            "{jit: \"off\"}`");
  EXPECT_EQ(d[0].data.at("db_jit_ms"), 6600);
  EXPECT_EQ(d[0].data.at("total_cost"), 690123.4);
}

TEST(Diagnose, JitOnASqlStageSuggestsTheStageSetting) {
  Results r;
  r.stages.push_back(stage("q", StageKind::sql, {statement("7", "select 1", 1, 1911, 1406)}));
  auto d = diagnose(r, analyzed());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("set `settings: {jit: \"off\"}` on this stage"), std::string::npos)
      << d[0].message;
}

TEST(Diagnose, JitAtHalfOrBelowTheFloorIsNoFinding) {
  Results r;
  r.stages.push_back(stage("half", StageKind::sql, {statement("1", "select 1", 1, 200, 100)}));
  r.stages.push_back(stage("tiny", StageKind::sql, {statement("2", "select 2", 1, 0.8, 0.7)}));
  EXPECT_TRUE(diagnose(r, analyzed()).empty());
}

TEST(Diagnose, RepeatedQueryFromTheStageThreshold) {
  Results r;
  r.stages.push_back(stage("app", StageKind::command,
                           {statement("5", "select * from characters where account_id = $1", 50,
                                      12.5),
                            statement("6", "BEGIN", 50, 0.1),
                            statement("8", "select 1", 19, 0.1)}));
  auto d = diagnose(r, analyzed());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, "repeated_query");
  EXPECT_EQ(d[0].queryid, "5");
  EXPECT_EQ(d[0].message,
            "statement 5 `select * from characters where account_id = $1` ran 50 times per cold "
            "run (12.5 ms in all, ≥ repeated_threshold 20) — an N+1: load all of them with one "
            "query (a join, `= ANY($1)` with an array of the keys, or the ORM's eager loading); "
            "that saves about 12.2 ms of server time per run, plus 49 round trips");
  EXPECT_DOUBLE_EQ(d[0].data.at("estimated_saving_ms"), 49 * 12.5 / 50);
  config::Config loose = analyzed();
  config::Stage s;
  s.name = "app";
  s.repeated_threshold = 60;
  loose.stages.push_back(s);
  EXPECT_TRUE(diagnose(r, loose).empty());
}

TEST(Diagnose, NeverAnalyzedOnlyWhenSetupDoesNotAnalyze) {
  Results r;
  StageResult s = stage("load", StageKind::command, {});
  s.explain = Explain{};
  s.explain->never_analyzed = {"public.a", "public.b", "public.c", "public.d",
                               "public.e", "public.f", "public.g"};
  r.stages.push_back(s);
  EXPECT_TRUE(diagnose(r, analyzed()).empty());
  auto d = diagnose(r, config::Config{});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, "never_analyzed");
  EXPECT_EQ(d[0].message,
            "7 tables this stage's statements read were never analyzed (public.a, public.b, "
            "public.c, public.d, public.e, … 2 more): their plans rest on default statistics — "
            "add `- analyze: true` to setup:");
  EXPECT_EQ(d[0].data.at("tables"), 7);
}

TEST(Diagnose, PlanningOnTheMediansWithAFloorNotOnAnOutlier) {
  Results r;
  // One cold run planned for 4.5 ms (a fresh backend), the warm repetitions in 0.1 ms: the
  // warm medians say planning is cheap.
  StageResult outlier = stage("lookup", StageKind::sql, {});
  outlier.metric("db_plan_ms", "ms") = {"ms", {4.5, 0.3, 0.3}, {0.1, 0.1, 0.1}};
  outlier.metric("db_exec_ms", "ms") = {"ms", {0.4, 0.4, 0.4}, {0.4, 0.4, 0.4}};
  r.stages.push_back(outlier);
  StageResult heavy = stage("plan-heavy", StageKind::sql, {});
  heavy.metric("db_plan_ms", "ms") = {"ms", {52.9, 51.0, 60.2}, {}};
  heavy.metric("db_exec_ms", "ms") = {"ms", {12.4, 12.0, 13.1}, {}};
  r.stages.push_back(heavy);
  // Thirty tiny statements (an N+1): 6 ms of planning in all, 0.2 ms each — not planning's cost.
  StageResult many = stage("n-plus-one", StageKind::command, {});
  many.metric("db_plan_ms", "ms") = {"ms", {6.1, 5.9}, {}};
  many.metric("db_exec_ms", "ms") = {"ms", {1.2, 1.1}, {}};
  many.metric("db_queries", "count") = {"count", {30, 30}, {}};
  r.stages.push_back(many);
  auto d = diagnose(r, analyzed());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].stage, "plan-heavy");
  EXPECT_EQ(d[0].kind, "planning_exceeds_execution");
  EXPECT_EQ(d[0].message,
            "planning took 52.9 ms per run, more than the 12.4 ms execution (medians of the cold "
            "runs) — every execution plans again: a prepared statement (or the driver's "
            "statement cache) plans once");
}

TEST(Diagnose, FailedStagesAreSkipped) {
  Results r;
  StageResult failed = stage("failed", StageKind::sql, {statement("1", "select 1", 50, 1911, 1406)});
  failed.error = "cold run 1/2: exit status 1";
  r.stages.push_back(failed);
  EXPECT_TRUE(diagnose(r, config::Config{}).empty());
}

}  // namespace
}  // namespace coldgate::measure
