#include "measure/diagnose.hpp"

#include <gtest/gtest.h>

#include <map>

#include "measure/profile.hpp"

#include "measure/trial.hpp"
#include "report/remedies.hpp"
#include "results/growth.hpp"

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

Diagnosis finding_in(const std::string& stage, DiagnosisKind kind) {
  return {stage, kind, "…", {}, "", ""};
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
  EXPECT_EQ(d[0].kind, results::DiagnosisKind::jit_dominates);
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
  EXPECT_EQ(d[0].kind, results::DiagnosisKind::repeated_query);
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

// A count per page request and a paging query repeat too, but a per-row fix (a join, eager
// loading) does not apply to them: only the lookup by a key is called an N+1.
TEST(Diagnose, RepeatedQueryTellsAnNPlusOneFromOtherRepetition) {
  Results r;
  r.stages.push_back(stage(
      "pages", StageKind::command,
      {statement("1", "SELECT COUNT(*) AS \"__count\" FROM \"catalog_book\"", 30, 3),
       statement("2", "SELECT * FROM \"catalog_book\" ORDER BY title LIMIT $1 OFFSET $2", 30, 6),
       statement("3", "SELECT * FROM \"catalog_language\" WHERE \"catalog_language\".\"id\" = $1",
                 300, 15),
       statement("4", "SELECT * FROM author WHERE id IN ($1, $2, $3)", 30, 3)}));
  auto d = diagnose(r, analyzed());
  ASSERT_EQ(d.size(), 4u);
  std::map<std::string, std::string> shape;
  for (const auto& x : d) {
    ASSERT_EQ(x.kind, results::DiagnosisKind::repeated_query);
    shape[x.queryid] = x.facts.at("shape");
  }
  EXPECT_EQ(shape, (std::map<std::string, std::string>{
                       {"1", "same_text"}, {"2", "fixed_loop"}, {"3", "per_row"}, {"4", "per_row"}}));
  EXPECT_EQ(d[0].message,
            "statement 1 `SELECT COUNT(*) AS \"__count\" FROM \"catalog_book\"` ran 30 times per "
            "cold run (3.00 ms in all, ≥ repeated_threshold 20) — repeated with the same text, so "
            "not an N+1: each call reads what the first read unless the data changed between "
            "them — run it once and reuse the result (if the stage makes one request per call, "
            "give it `requests:` with their number); that saves about 2.90 ms of server time per "
            "run, plus 29 round trips");
  EXPECT_EQ(d[1].message,
            "statement 2 `SELECT * FROM \"catalog_book\" ORDER BY title LIMIT $1 OFFSET $2` ran 30 "
            "times per cold run (6.00 ms in all, ≥ repeated_threshold 20) — repeated, but none of "
            "its parameters is a key it looks up (`= $n`, `IN ($n, …)`), so likely not an N+1: "
            "batch the calls into one query (if the stage makes one request per call, give it "
            "`requests:` with their number); that saves about 5.80 ms of server time per run, "
            "plus 29 round trips");
  EXPECT_NE(d[2].message.find("ran 300 times per cold run (15.0 ms in all, ≥ repeated_threshold "
                              "20) — an N+1: load all of them with one query"),
            std::string::npos)
      << d[2].message;
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
  EXPECT_EQ(d[0].kind, results::DiagnosisKind::never_analyzed);
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
  // Four executions of one statement per run: three plans a prepared statement would save.
  StageResult heavy = stage(
      "plan-heavy", StageKind::sql,
      {statement("8", "select * from information_schema.columns where table_name = $1", 4, 12.4,
                 0, 52.9)});
  heavy.metric("db_plan_ms", "ms") = {"ms", {52.9, 51.0, 60.2}, {}};
  heavy.metric("db_exec_ms", "ms") = {"ms", {12.4, 12.0, 13.1}, {}};
  r.stages.push_back(heavy);
  // Thirty tiny statements (an N+1): 6 ms of planning in all, 0.2 ms each — not planning's cost.
  StageResult many = stage("n-plus-one", StageKind::command, {});
  many.metric("db_plan_ms", "ms") = {"ms", {6.1, 5.9}, {}};
  many.metric("db_exec_ms", "ms") = {"ms", {1.2, 1.1}, {}};
  many.metric("db_queries", "count") = {"count", {30, 30}, {}};
  r.stages.push_back(many);
  // One statement run once in a fresh backend on a loaded machine (figures of a real cold run):
  // its one plan loaded the catalog caches, and there is no second plan to save.
  StageResult once = stage("once", StageKind::command,
                           {statement("9", "select count(*) from item", 1, 0.05, 0, 6.53)});
  once.metric("db_plan_ms", "ms") = {"ms", {6.53, 6.21}, {}};
  once.metric("db_exec_ms", "ms") = {"ms", {0.05, 0.05}, {}};
  once.metric("db_queries", "count") = {"count", {1, 1}, {}};
  r.stages.push_back(once);
  // Twice a run, but the second plan is cheap: the 6.5 ms is still the first plan's.
  StageResult twice = stage("twice", StageKind::command,
                            {statement("10", "select count(*) from item", 2, 0.1, 0, 6.6)});
  twice.metric("db_plan_ms", "ms") = {"ms", {6.6, 6.6}, {}};
  twice.metric("db_exec_ms", "ms") = {"ms", {0.1, 0.1}, {}};
  twice.metric("db_queries", "count") = {"count", {2, 2}, {}};
  r.stages.push_back(twice);
  auto d = diagnose(r, analyzed());
  std::string found;
  for (const auto& x : d) found += "\n  " + x.stage + ": " + x.message;
  ASSERT_EQ(d.size(), 1u) << found;
  EXPECT_EQ(d[0].stage, "plan-heavy");
  EXPECT_EQ(d[0].kind, results::DiagnosisKind::planning_exceeds_execution);
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


// ---- missing_index and misestimate ----

// Actual plans from PostgreSQL 15: EXPLAIN (ANALYZE, BUFFERS, VERBOSE, TIMING OFF, FORMAT JSON)'s
// "Plan" object, as auto_explain logs it, over
//   "Comments" (id int primary key, "articleId" int, body text, created_at timestamptz):
//       150,000 rows, 1,705 pages, no index on "articleId";
//   articles (id int primary key, title text): 2,000 rows;
//   tiny (k int): 2,000 rows in 9 pages; wide (id int, k int, pad text): 1,000 rows, 31 pages;
//   corr (id int primary key, a int, b int, pad text): 100,000 rows, a = b = id % 100;
//   other (id int primary key, v text): 100,000 rows;
// all analyzed, max_parallel_workers_per_gather = 0.
// select c.id, c.body from "Comments" c where c."articleId" = 42
const char* const k_seq_scan = R"json(
{"Node Type":"Seq Scan","Parallel Aware":false,"Async Capable":false,"Relation Name":"Comments",
"Schema":"public","Alias":"c","Startup Cost":0,"Total Cost":3580,"Plan Rows":75,
"Plan Width":45,"Actual Rows":75,"Actual Loops":1,"Output":["id","body"],"Filter":"(c.\"articleId\" = 42)",
"Rows Removed by Filter":149925,"Shared Hit Blocks":1705,"Shared Read Blocks":0,
"Shared Dirtied Blocks":0,"Shared Written Blocks":0,"Local Hit Blocks":0,"Local Read Blocks":0,
"Local Dirtied Blocks":0,"Local Written Blocks":0,"Temp Read Blocks":0,"Temp Written Blocks":0,
"I/O Read Time":0,"I/O Write Time":0,"Temp I/O Read Time":0,"Temp I/O Write Time":0})json";
const char* const k_seq_scan_range = R"json(
{"Node Type":"Seq Scan","Parallel Aware":false,"Async Capable":false,"Relation Name":"Comments",
"Schema":"public","Alias":"c","Startup Cost":0,"Total Cost":5080,"Plan Rows":75,
"Plan Width":57,"Actual Rows":75,"Actual Loops":1,"Output":["id","\"articleId\"",
"body","created_at"],"Filter":"((c.id > 10) AND (c.\"articleId\" = 42) AND (c.created_at > (now() - '1 day'::interval)))",
"Rows Removed by Filter":149925,"Shared Hit Blocks":1705,"Shared Read Blocks":0,
"Shared Dirtied Blocks":0,"Shared Written Blocks":0,"Local Hit Blocks":0,"Local Read Blocks":0,
"Local Dirtied Blocks":0,"Local Written Blocks":0,"Temp Read Blocks":0,"Temp Written Blocks":0,
"I/O Read Time":0,"I/O Write Time":0,"Temp I/O Read Time":0,"Temp I/O Write Time":0})json";
const char* const k_index_scan_filter = R"json(
{"Node Type":"Index Scan","Parallel Aware":false,"Async Capable":false,"Scan Direction":"Forward",
"Index Name":"Comments_pkey","Relation Name":"Comments","Schema":"public","Alias":"c",
"Startup Cost":0.42,"Total Cost":5945.7,"Plan Rows":70,"Plan Width":57,"Actual Rows":70,
"Actual Loops":1,"Output":["id","\"articleId\"","body","created_at"],"Index Cond":"(c.id < 140000)",
"Rows Removed by Index Recheck":0,"Filter":"(c.\"articleId\" = 5)","Rows Removed by Filter":139929,
"Shared Hit Blocks":1976,"Shared Read Blocks":0,"Shared Dirtied Blocks":0,"Shared Written Blocks":0,
"Local Hit Blocks":0,"Local Read Blocks":0,"Local Dirtied Blocks":0,"Local Written Blocks":0,
"Temp Read Blocks":0,"Temp Written Blocks":0,"I/O Read Time":0,"I/O Write Time":0,
"Temp I/O Read Time":0,"Temp I/O Write Time":0})json";
const char* const k_nested_loop_join_filter = R"json(
{"Node Type":"Nested Loop","Parallel Aware":false,"Async Capable":false,"Join Type":"Left",
"Startup Cost":0.28,"Total Cost":14295.33,"Plan Rows":225,"Plan Width":46,"Actual Rows":225,
"Actual Loops":1,"Output":["a.title","c.body"],"Inner Unique":false,"Join Filter":"(c.\"articleId\" = a.id)",
"Rows Removed by Join Filter":449775,"Shared Hit Blocks":1708,"Shared Read Blocks":0,
"Shared Dirtied Blocks":0,"Shared Written Blocks":0,"Local Hit Blocks":0,"Local Read Blocks":0,
"Local Dirtied Blocks":0,"Local Written Blocks":0,"Temp Read Blocks":2126,"Temp Written Blocks":1063,
"I/O Read Time":0,"I/O Write Time":0,"Temp I/O Read Time":2.661,"Temp I/O Write Time":4.327,
"Plans":[{"Node Type":"Index Scan","Parent Relationship":"Outer","Parallel Aware":false,
"Async Capable":false,"Scan Direction":"Forward","Index Name":"articles_pkey",
"Relation Name":"articles","Schema":"public","Alias":"a","Startup Cost":0.28,
"Total Cost":8.33,"Plan Rows":3,"Plan Width":9,"Actual Rows":3,"Actual Loops":1,
"Output":["a.id","a.title"],"Index Cond":"(a.id < 4)","Rows Removed by Index Recheck":0,
"Shared Hit Blocks":3,"Shared Read Blocks":0,"Shared Dirtied Blocks":0,"Shared Written Blocks":0,
"Local Hit Blocks":0,"Local Read Blocks":0,"Local Dirtied Blocks":0,"Local Written Blocks":0,
"Temp Read Blocks":0,"Temp Written Blocks":0,"I/O Read Time":0,"I/O Write Time":0,
"Temp I/O Read Time":0,"Temp I/O Write Time":0},{"Node Type":"Materialize","Parent Relationship":"Inner",
"Parallel Aware":false,"Async Capable":false,"Startup Cost":0,"Total Cost":5274,
"Plan Rows":150000,"Plan Width":45,"Actual Rows":150000,"Actual Loops":3,"Output":["c.body",
"c.\"articleId\""],"Shared Hit Blocks":1705,"Shared Read Blocks":0,"Shared Dirtied Blocks":0,
"Shared Written Blocks":0,"Local Hit Blocks":0,"Local Read Blocks":0,"Local Dirtied Blocks":0,
"Local Written Blocks":0,"Temp Read Blocks":2126,"Temp Written Blocks":1063,
"I/O Read Time":0,"I/O Write Time":0,"Temp I/O Read Time":2.661,"Temp I/O Write Time":4.327,
"Plans":[{"Node Type":"Seq Scan","Parent Relationship":"Outer","Parallel Aware":false,
"Async Capable":false,"Relation Name":"Comments","Schema":"public","Alias":"c",
"Startup Cost":0,"Total Cost":3205,"Plan Rows":150000,"Plan Width":45,"Actual Rows":150000,
"Actual Loops":1,"Output":["c.body","c.\"articleId\""],"Shared Hit Blocks":1705,
"Shared Read Blocks":0,"Shared Dirtied Blocks":0,"Shared Written Blocks":0,"Local Hit Blocks":0,
"Local Read Blocks":0,"Local Dirtied Blocks":0,"Local Written Blocks":0,"Temp Read Blocks":0,
"Temp Written Blocks":0,"I/O Read Time":0,"I/O Write Time":0,"Temp I/O Read Time":0,
"Temp I/O Write Time":0}]}]})json";
const char* const k_tiny_table = R"json(
{"Node Type":"Seq Scan","Parallel Aware":false,"Async Capable":false,"Relation Name":"tiny",
"Schema":"public","Alias":"tiny","Startup Cost":0,"Total Cost":34,"Plan Rows":1,
"Plan Width":4,"Actual Rows":1,"Actual Loops":1,"Output":["k"],"Filter":"(tiny.k = 7)",
"Rows Removed by Filter":1999,"Shared Hit Blocks":9,"Shared Read Blocks":0,"Shared Dirtied Blocks":0,
"Shared Written Blocks":0,"Local Hit Blocks":0,"Local Read Blocks":0,"Local Dirtied Blocks":0,
"Local Written Blocks":0,"Temp Read Blocks":0,"Temp Written Blocks":0,"I/O Read Time":0,
"I/O Write Time":0,"Temp I/O Read Time":0,"Temp I/O Write Time":0})json";
const char* const k_999_removed = R"json(
{"Node Type":"Seq Scan","Parallel Aware":false,"Async Capable":false,"Relation Name":"wide",
"Schema":"public","Alias":"wide","Startup Cost":0,"Total Cost":43.5,"Plan Rows":1,
"Plan Width":4,"Actual Rows":1,"Actual Loops":1,"Output":["id"],"Filter":"(wide.k = 1)",
"Rows Removed by Filter":999,"Shared Hit Blocks":31,"Shared Read Blocks":0,"Shared Dirtied Blocks":0,
"Shared Written Blocks":0,"Local Hit Blocks":0,"Local Read Blocks":0,"Local Dirtied Blocks":0,
"Local Written Blocks":0,"Temp Read Blocks":0,"Temp Written Blocks":0,"I/O Read Time":0,
"I/O Write Time":0,"Temp I/O Read Time":0,"Temp I/O Write Time":0})json";
const char* const k_primary_key_lookup = R"json(
{"Node Type":"Index Scan","Parallel Aware":false,"Async Capable":false,"Scan Direction":"Forward",
"Index Name":"Comments_pkey","Relation Name":"Comments","Schema":"public","Alias":"c",
"Startup Cost":0.42,"Total Cost":8.44,"Plan Rows":1,"Plan Width":57,"Actual Rows":1,
"Actual Loops":1,"Output":["id","\"articleId\"","body","created_at"],"Index Cond":"(c.id = 5)",
"Rows Removed by Index Recheck":0,"Shared Hit Blocks":4,"Shared Read Blocks":0,
"Shared Dirtied Blocks":0,"Shared Written Blocks":0,"Local Hit Blocks":0,"Local Read Blocks":0,
"Local Dirtied Blocks":0,"Local Written Blocks":0,"Temp Read Blocks":0,"Temp Written Blocks":0,
"I/O Read Time":0,"I/O Write Time":0,"Temp I/O Read Time":0,"Temp I/O Write Time":0})json";
const char* const k_correlated_join = R"json(
{"Node Type":"Nested Loop","Parallel Aware":false,"Async Capable":false,"Join Type":"Inner",
"Startup Cost":0.29,"Total Cost":2124.1,"Plan Rows":10,"Plan Width":20,"Actual Rows":1000,
"Actual Loops":1,"Output":["c.id","c.a","c.b","c.pad","o.id","o.v"],"Inner Unique":true,
"Shared Hit Blocks":3541,"Shared Read Blocks":0,"Shared Dirtied Blocks":0,"Shared Written Blocks":0,
"Local Hit Blocks":0,"Local Read Blocks":0,"Local Dirtied Blocks":0,"Local Written Blocks":0,
"Temp Read Blocks":0,"Temp Written Blocks":0,"I/O Read Time":0,"I/O Write Time":0,
"Temp I/O Read Time":0,"Temp I/O Write Time":0,"Plans":[{"Node Type":"Seq Scan",
"Parent Relationship":"Outer","Parallel Aware":false,"Async Capable":false,"Relation Name":"corr",
"Schema":"public","Alias":"c","Startup Cost":0,"Total Cost":2041,"Plan Rows":10,
"Plan Width":14,"Actual Rows":1000,"Actual Loops":1,"Output":["c.id","c.a","c.b",
"c.pad"],"Filter":"((c.a = 1) AND (c.b = 1))","Rows Removed by Filter":99000,
"Shared Hit Blocks":541,"Shared Read Blocks":0,"Shared Dirtied Blocks":0,"Shared Written Blocks":0,
"Local Hit Blocks":0,"Local Read Blocks":0,"Local Dirtied Blocks":0,"Local Written Blocks":0,
"Temp Read Blocks":0,"Temp Written Blocks":0,"I/O Read Time":0,"I/O Write Time":0,
"Temp I/O Read Time":0,"Temp I/O Write Time":0},{"Node Type":"Index Scan","Parent Relationship":"Inner",
"Parallel Aware":false,"Async Capable":false,"Scan Direction":"Forward","Index Name":"other_pkey",
"Relation Name":"other","Schema":"public","Alias":"o","Startup Cost":0.29,"Total Cost":8.31,
"Plan Rows":1,"Plan Width":6,"Actual Rows":1,"Actual Loops":1000,"Output":["o.id",
"o.v"],"Index Cond":"(o.id = c.id)","Rows Removed by Index Recheck":0,"Shared Hit Blocks":3000,
"Shared Read Blocks":0,"Shared Dirtied Blocks":0,"Shared Written Blocks":0,"Local Hit Blocks":0,
"Local Read Blocks":0,"Local Dirtied Blocks":0,"Local Written Blocks":0,"Temp Read Blocks":0,
"Temp Written Blocks":0,"I/O Read Time":0,"I/O Write Time":0,"Temp I/O Read Time":0,
"Temp I/O Write Time":0}]})json";
const char* const k_hash_join = R"json(
{"Node Type":"Hash Join","Parallel Aware":false,"Async Capable":false,"Join Type":"Inner",
"Startup Cost":8.38,"Total Cost":3607.96,"Plan Rows":225,"Plan Width":46,"Actual Rows":225,
"Actual Loops":1,"Output":["a.title","c.body"],"Inner Unique":true,"Hash Cond":"(c.\"articleId\" = a.id)",
"Shared Hit Blocks":1708,"Shared Read Blocks":0,"Shared Dirtied Blocks":0,"Shared Written Blocks":0,
"Local Hit Blocks":0,"Local Read Blocks":0,"Local Dirtied Blocks":0,"Local Written Blocks":0,
"Temp Read Blocks":0,"Temp Written Blocks":0,"I/O Read Time":0,"I/O Write Time":0,
"Temp I/O Read Time":0,"Temp I/O Write Time":0,"Plans":[{"Node Type":"Seq Scan",
"Parent Relationship":"Outer","Parallel Aware":false,"Async Capable":false,"Relation Name":"Comments",
"Schema":"public","Alias":"c","Startup Cost":0,"Total Cost":3205,"Plan Rows":150000,
"Plan Width":45,"Actual Rows":150000,"Actual Loops":1,"Output":["c.id","c.\"articleId\"",
"c.body","c.created_at"],"Shared Hit Blocks":1705,"Shared Read Blocks":0,"Shared Dirtied Blocks":0,
"Shared Written Blocks":0,"Local Hit Blocks":0,"Local Read Blocks":0,"Local Dirtied Blocks":0,
"Local Written Blocks":0,"Temp Read Blocks":0,"Temp Written Blocks":0,"I/O Read Time":0,
"I/O Write Time":0,"Temp I/O Read Time":0,"Temp I/O Write Time":0},{"Node Type":"Hash",
"Parent Relationship":"Inner","Parallel Aware":false,"Async Capable":false,"Startup Cost":8.34,
"Total Cost":8.34,"Plan Rows":3,"Plan Width":9,"Actual Rows":3,"Actual Loops":1,
"Output":["a.title","a.id"],"Hash Buckets":1024,"Original Hash Buckets":1024,
"Hash Batches":1,"Original Hash Batches":1,"Peak Memory Usage":9,"Shared Hit Blocks":3,
"Shared Read Blocks":0,"Shared Dirtied Blocks":0,"Shared Written Blocks":0,"Local Hit Blocks":0,
"Local Read Blocks":0,"Local Dirtied Blocks":0,"Local Written Blocks":0,"Temp Read Blocks":0,
"Temp Written Blocks":0,"I/O Read Time":0,"I/O Write Time":0,"Temp I/O Read Time":0,
"Temp I/O Write Time":0,"Plans":[{"Node Type":"Index Scan","Parent Relationship":"Outer",
"Parallel Aware":false,"Async Capable":false,"Scan Direction":"Forward","Index Name":"articles_pkey",
"Relation Name":"articles","Schema":"public","Alias":"a","Startup Cost":0.28,
"Total Cost":8.34,"Plan Rows":3,"Plan Width":9,"Actual Rows":3,"Actual Loops":1,
"Output":["a.title","a.id"],"Index Cond":"((a.id >= 10) AND (a.id <= 12))","Rows Removed by Index Recheck":0,
"Shared Hit Blocks":3,"Shared Read Blocks":0,"Shared Dirtied Blocks":0,"Shared Written Blocks":0,
"Local Hit Blocks":0,"Local Read Blocks":0,"Local Dirtied Blocks":0,"Local Written Blocks":0,
"Temp Read Blocks":0,"Temp Written Blocks":0,"I/O Read Time":0,"I/O Write Time":0,
"Temp I/O Read Time":0,"Temp I/O Write Time":0}]}]})json";

QueryStats planned(const std::string& id, const std::string& text, const char* plan) {
  QueryStats q = statement(id, text, 1, 25);
  q.plan = StatementPlan{25, "", plan};
  return q;
}

std::vector<Diagnosis> of_kind(const std::vector<Diagnosis>& all, DiagnosisKind kind) {
  std::vector<Diagnosis> out;
  for (const auto& d : all) {
    if (d.kind == kind) out.push_back(d);
  }
  return out;
}

std::vector<Diagnosis> diagnosed(const char* plan, DiagnosisKind kind,
                                 StageKind stage_kind = StageKind::command) {
  Results r;
  r.stages.push_back(stage("page", stage_kind, {planned("-77", "select … where x = $1", plan)}));
  return of_kind(diagnose(r, analyzed()), kind);
}

// Sequelize's orchestra with its instruments at the first scale: both tables are a few pages,
// so both are filtered Seq Scans, the primary key's lookup included (hand-made from a
// PostgreSQL 15 plan's shape). What grows is the scan that discards the most rows.
const char* const k_two_small_scans = R"json(
{"Node Type":"Hash Join","Join Type":"Left","Actual Rows":10,"Actual Loops":1,
"Hash Cond":"(orchestra.id = instruments.\"orchestraId\")","Shared Hit Blocks":2,
"Plans":[{"Node Type":"Seq Scan","Parent Relationship":"Outer","Relation Name":"orchestras",
"Schema":"public","Alias":"orchestra","Actual Rows":1,"Actual Loops":1,"Filter":"(orchestra.id = 1)",
"Rows Removed by Filter":9,"Shared Hit Blocks":1},
{"Node Type":"Hash","Parent Relationship":"Inner","Actual Rows":10,"Actual Loops":1,"Shared Hit Blocks":1,
"Plans":[{"Node Type":"Seq Scan","Parent Relationship":"Outer","Relation Name":"instruments",
"Schema":"public","Alias":"instruments","Actual Rows":10,"Actual Loops":1,
"Filter":"(instruments.\"orchestraId\" = 1)","Rows Removed by Filter":90,"Shared Hit Blocks":1}]}]})json";

TEST(Diagnose, ScanGrowsNamesTheScanThatDiscardsTheMostRows) {
  Results r;
  r.stages.push_back(stage("orchestra", StageKind::command,
                           {planned("-5", "SELECT … FROM \"orchestras\" AS \"orchestra\" LEFT OUTER JOIN …",
                                    k_two_small_scans)}));
  const std::vector<double> scales{1, 4, 16};
  StatementGrowth g;
  g.query = r.stages[0].queries[0].query;
  g.calls = fit_growth(scales, {1, 1, 1}, std::nullopt);
  g.rows_per_call = fit_growth(scales, {10, 10, 10}, std::nullopt);
  g.blocks_per_call = fit_growth(scales, {2, 5, 17}, std::nullopt);
  r.stages[0].growth = StageGrowth{};
  r.stages[0].growth->scales = scales;
  r.stages[0].growth->statements.push_back(g);
  auto d = of_kind(diagnose(r, analyzed()), results::DiagnosisKind::scan_grows);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].facts.at("table"), "public.instruments");
  EXPECT_EQ(d[0].facts.at("index"), "CREATE INDEX ON public.instruments (\"orchestraId\")");
  // A trial would measure at the first scale, where the scan is still cheap: none is promised.
  EXPECT_EQ(d[0].message.find("--try"), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].message.find("compare the growth (`coldgate ab`)"), std::string::npos) << d[0].message;
}

TEST(Diagnose, MissingIndexOnASeqScanThatFiltersOutNearlyEverything) {
  auto d = diagnosed(k_seq_scan, results::DiagnosisKind::missing_index);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].stage, "page");
  EXPECT_EQ(d[0].queryid, "-77");
  EXPECT_EQ(d[0].facts.at("table"), "public.Comments");
  EXPECT_EQ(d[0].facts.at("columns"), "articleId");
  EXPECT_EQ(d[0].facts.at("index"), "CREATE INDEX ON public.\"Comments\" (\"articleId\")");
  EXPECT_EQ(d[0].data.at("rows_removed_per_loop"), 149925);
  EXPECT_EQ(d[0].data.at("rows_per_loop"), 75);
  EXPECT_EQ(d[0].data.at("blocks_per_loop"), 1705);
  EXPECT_EQ(d[0].message,
            "Seq Scan on public.Comments c removes 149,925 rows per execution through its filter "
            "to return 75, reading 1,705 blocks, for statement -77 `select … where x = $1` — an "
            "index on public.Comments (articleId) would find them: try `CREATE INDEX ON "
            "public.\"Comments\" (\"articleId\")` (`--try` measures it in a copy of the "
            "database)");
  EXPECT_EQ(d[0].message.find('\n'), std::string::npos);
}

TEST(Diagnose, MissingIndexTakesEqualityColumnsThenOneRange) {
  // ((c.id > 10) AND (c."articleId" = 42) AND (c.created_at > (now() - '1 day'::interval)))
  auto d = diagnosed(k_seq_scan_range, results::DiagnosisKind::missing_index);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].facts.at("columns"), "articleId, id");
  EXPECT_EQ(d[0].facts.at("index"), "CREATE INDEX ON public.\"Comments\" (\"articleId\", id)");
  // An index scan on the primary key whose filter does the work: enable_seqscan = off,
  // where c.id < 140000 and c."articleId" = 5.
  d = diagnosed(k_index_scan_filter, results::DiagnosisKind::missing_index);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].facts.at("index"), "CREATE INDEX ON public.\"Comments\" (\"articleId\", id)");
  EXPECT_NE(d[0].message.find("Index Scan using Comments_pkey on public.Comments c removes "
                              "139,929 rows"),
            std::string::npos)
      << d[0].message;
}

TEST(Diagnose, MissingIndexOnTheInnerSideOfANestedLoopThroughItsJoinFilter) {
  // enable_hashjoin = enable_mergejoin = off: select a.title, c.body from articles a left join
  // "Comments" c on c."articleId" = a.id where a.id < 4 — 3 loops over a materialized seq scan.
  auto d = diagnosed(k_nested_loop_join_filter, results::DiagnosisKind::missing_index);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].facts.at("table"), "public.Comments");
  EXPECT_EQ(d[0].facts.at("columns"), "articleId");  // not a.id: the outer side's
  EXPECT_NE(d[0].message.find("removes 449,775 rows per execution through its join filter to "
                              "return 225"),
            std::string::npos)
      << d[0].message;
}

TEST(Diagnose, NoMissingIndexOnSmallTablesSelectiveLookupsOrFewRemovedRows) {
  EXPECT_TRUE(diagnosed(k_tiny_table, results::DiagnosisKind::missing_index).empty());  // 1,999 removed, 9 blocks
  EXPECT_TRUE(diagnosed(k_999_removed, results::DiagnosisKind::missing_index).empty());  // 31 blocks, 999 removed
  EXPECT_TRUE(diagnosed(k_primary_key_lookup, results::DiagnosisKind::missing_index).empty());
  EXPECT_TRUE(diagnosed(k_hash_join, results::DiagnosisKind::missing_index).empty());  // no filter removes rows
  // 99,000 removed for 1,000 returned: 99×, a job for a sequential scan.
  EXPECT_TRUE(diagnosed(k_correlated_join, results::DiagnosisKind::missing_index).empty());
}

TEST(Diagnose, MissingIndexOncePerStageTableAndColumns) {
  Results r;
  r.stages.push_back(stage("page", StageKind::command,
                           {planned("1", "select a", k_seq_scan), planned("2", "select b", k_seq_scan),
                            planned("3", "select c", k_seq_scan_range)}));
  r.stages.push_back(stage("other", StageKind::command, {planned("1", "select a", k_seq_scan)}));
  auto d = of_kind(diagnose(r, analyzed()), results::DiagnosisKind::missing_index);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].queryid, "1");  // the costliest statement names it
  EXPECT_EQ(d[1].facts.at("columns"), "articleId, id");
  EXPECT_EQ(d[2].stage, "other");
  // No plan, or one that is not a plan: nothing, and no error.
  QueryStats broken = planned("9", "select", "{\"no\": 1}");
  r.stages = {stage("x", StageKind::sql, {broken, statement("8", "select 1", 1, 1)})};
  EXPECT_TRUE(diagnose(r, analyzed()).empty());
}

TEST(Diagnose, MisestimateOfCorrelatedColumnsFeedingAJoin) {
  // select * from corr c join other o on o.id = c.id where c.a = 1 and c.b = 1: the planner
  // multiplies the selectivities of a and b (1% each) and expects 10 rows; 1,000 come.
  auto d = diagnosed(k_correlated_join, results::DiagnosisKind::misestimate);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].facts.at("table"), "public.corr");
  EXPECT_EQ(d[0].facts.at("columns"), "a, b");
  EXPECT_EQ(d[0].facts.at("statistics"),
            "CREATE STATISTICS public.corr_a_b_stats ON a, b FROM public.corr");
  EXPECT_EQ(d[0].data.at("plan_rows"), 10);
  EXPECT_EQ(d[0].data.at("actual_rows"), 1000);
  EXPECT_EQ(d[0].message,
            "Seq Scan on public.corr c was estimated at 10 rows and returned 1,000 per loop (100× "
            "more), feeding a Nested Loop, for statement -77 `select … where x = $1` — the join "
            "was planned for the wrong row count: ANALYZE public.corr; if the statistics are "
            "fresh, the columns a, b are correlated: try `CREATE STATISTICS public.corr_a_b_stats "
            "ON a, b FROM public.corr` then ANALYZE (`--try` measures both in a copy of the "
            "database)");
}

TEST(Diagnose, NoMisestimateWithoutAJoinOrWithGoodEstimates) {
  EXPECT_TRUE(diagnosed(k_seq_scan, results::DiagnosisKind::misestimate).empty());  // 75 for 75, and no join
  EXPECT_TRUE(diagnosed(k_hash_join, results::DiagnosisKind::misestimate).empty());
  EXPECT_TRUE(diagnosed(k_nested_loop_join_filter, results::DiagnosisKind::misestimate).empty());
  // The scan estimated at 1 row: 99 returned is under 100×, 100 is not.
  auto with_rows = [](const char* actual) {
    std::string plan = k_correlated_join;
    auto set = [&](const std::string& from, const std::string& to) {
      std::size_t at = plan.find(from);
      ASSERT_NE(at, std::string::npos) << from;
      plan.replace(at, from.size(), to);
    };
    set("\"Total Cost\":2041,\"Plan Rows\":10,", "\"Total Cost\":2041,\"Plan Rows\":1,");
    set("\"Plan Width\":14,\"Actual Rows\":1000,",
        std::string("\"Plan Width\":14,\"Actual Rows\":") + actual + ",");
    return plan;
  };
  EXPECT_TRUE(diagnosed(with_rows("99").c_str(), results::DiagnosisKind::misestimate).empty());
  EXPECT_EQ(diagnosed(with_rows("100").c_str(), results::DiagnosisKind::misestimate).size(), 1u);
}

// select count(*) from book b join book a on a.id = b.author where b.id < 30 (PostgreSQL 15):
// the merge join stops reading a's index once b's 30 rows are done, so a's 30 actual rows for
// 20,000 estimated are where the join stopped, not a wrong estimate. A Limit does the same.
TEST(Diagnose, NoMisestimateWhereTheConsumerStoppedReadingEarly) {
  const std::string merge =
      R"J({"Node Type":"Aggregate","Plan Rows":1,"Actual Rows":1,"Actual Loops":1,"Plans":[
      {"Node Type":"Merge Join","Parent Relationship":"Outer","Join Type":"Inner","Plan Rows":29,
       "Actual Rows":29,"Actual Loops":1,"Merge Cond":"(a.id = b.author)","Plans":[
        {"Node Type":"Index Only Scan","Parent Relationship":"Outer","Index Name":"book_pkey",
         "Relation Name":"book","Schema":"public","Alias":"a","Plan Rows":20000,
         "Actual Rows":30,"Actual Loops":1,"Shared Hit Blocks":3},
        {"Node Type":"Sort","Parent Relationship":"Inner","Plan Rows":29,"Actual Rows":29,
         "Actual Loops":1,"Plans":[
          {"Node Type":"Index Scan","Parent Relationship":"Outer","Index Name":"book_pkey",
           "Relation Name":"book","Schema":"public","Alias":"b","Plan Rows":29,"Actual Rows":29,
           "Actual Loops":1,"Index Cond":"(b.id < 30)"}]}]}]})J";
  EXPECT_TRUE(diagnosed(merge.c_str(), results::DiagnosisKind::misestimate).empty());
  const std::string limited =
      R"J({"Node Type":"Limit","Plan Rows":10,"Actual Rows":10,"Actual Loops":1,"Plans":[
      {"Node Type":"Hash Join","Parent Relationship":"Outer","Join Type":"Inner",
       "Plan Rows":10,"Actual Rows":10,"Actual Loops":1,"Hash Cond":"(o.id = c.id)","Plans":[
        {"Node Type":"Seq Scan","Parent Relationship":"Outer","Relation Name":"other",
         "Schema":"public","Alias":"o","Plan Rows":200000,"Actual Rows":40,"Actual Loops":1},
        {"Node Type":"Hash","Parent Relationship":"Inner","Plan Rows":1000,"Actual Rows":1000,
         "Actual Loops":1,"Plans":[
          {"Node Type":"Seq Scan","Parent Relationship":"Outer","Relation Name":"corr",
           "Schema":"public","Alias":"c","Plan Rows":1000,"Actual Rows":1000,
           "Actual Loops":1}]}]}]})J";
  EXPECT_TRUE(diagnosed(limited.c_str(), results::DiagnosisKind::misestimate).empty());
}

TEST(Diagnose, ConditionColumnsOfOneAlias) {
  auto c = condition_columns("((c.\"articleId\" = 42) AND (c.created_at > (now() - '1 "
                             "day'::interval)) AND (lower(c.email) = 'x'::text))",
                             "c", false);
  EXPECT_EQ(c.equality, std::vector<std::string>{"\"articleId\""});
  EXPECT_EQ(c.range, std::vector<std::string>{"created_at"});
  // An IN list, a cast of a varchar column, a parameter; the other alias's column left out.
  c = condition_columns("((o.id = ANY ('{1,2,3}'::integer[])) AND ((o.code)::text = $1) AND "
                        "(o.n <= c.n))",
                        "o", false);
  EXPECT_EQ(c.equality, (std::vector<std::string>{"id", "code"}));
  EXPECT_EQ(c.range, std::vector<std::string>{"n"});
  // OR: no one index serves it; unqualified columns only when allowed.
  EXPECT_TRUE(condition_columns("((t.a = 1) OR (t.b = 2))", "t", true).equality.empty());
  EXPECT_EQ(condition_columns("(k = 7)", "tiny", true).equality, std::vector<std::string>{"k"});
  EXPECT_TRUE(condition_columns("(k = 7)", "tiny", false).equality.empty());
  EXPECT_TRUE(condition_columns("(((", "t", true).equality.empty());
  EXPECT_EQ(condition_columns("(\"My \"\"T\"\"\".x = 1)", "My \"T\"", false).equality,
            std::vector<std::string>{"x"});
}

TEST(Diagnose, IdentifiersQuotedAsQuoteIdentQuotesThem) {
  EXPECT_EQ(quote_identifier("comments"), "comments");
  EXPECT_EQ(quote_identifier("article_id2"), "article_id2");
  EXPECT_EQ(quote_identifier("Comments"), "\"Comments\"");
  EXPECT_EQ(quote_identifier("order"), "\"order\"");
  EXPECT_EQ(quote_identifier("user"), "\"user\"");
  EXPECT_EQ(quote_identifier("2fa"), "\"2fa\"");
  EXPECT_EQ(quote_identifier("a\"b"), "\"a\"\"b\"");
}

TEST(Diagnose, PlanDiagnosesGiveTheirRemediesToTheTrial) {
  auto index = diagnosed(k_seq_scan, results::DiagnosisKind::missing_index);
  auto estimate = diagnosed(k_correlated_join, results::DiagnosisKind::misestimate);
  std::vector<Diagnosis> all = {index[0], index[0], estimate[0], finding_in("page", results::DiagnosisKind::never_analyzed)};
  config::Stage s;
  s.name = "page";
  s.command = {"./page"};
  auto v = remedies_for(s, all, {"public.articles"});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].name, "ANALYZE");  // one ANALYZE: the never-analyzed tables and the misestimated
  EXPECT_EQ(v[0].analyze, (std::vector<std::string>{"public.articles", "public.corr"}));
  EXPECT_TRUE(v[0].copy_sql.empty());
  EXPECT_EQ(v[1].name, "CREATE INDEX ON public.\"Comments\" (\"articleId\")");
  EXPECT_EQ(v[1].copy_sql, std::vector<std::string>{v[1].name});
  EXPECT_TRUE(v[1].analyze.empty());
  EXPECT_EQ(v[2].name, "CREATE STATISTICS public.corr_a_b_stats ON a, b FROM public.corr");
  EXPECT_EQ(v[2].copy_sql, std::vector<std::string>{v[2].name});
  EXPECT_EQ(v[2].analyze, std::vector<std::string>{"public.corr"});
}

TEST(Diagnose, TheIndexRemedyShowsBlocksPerCallAndIsRecommendedWhenFasterAndIdentical) {
  auto variant = [](const std::string& name, std::vector<double> wall, double blocks,
                    bool identical) {
    Remedy r;
    r.stage = "page";
    r.remedy = name;
    r.kind = remedy_kind_of(name, {}, false);
    r.metrics.emplace_back("wall_ms", Metric{"ms", std::move(wall), {}});
    r.snapshot_identical = identical;
    if (!identical) r.first_difference = "/rows/0";
    r.statement_blocks_per_call["1f2e3d4c5b6a7988"] = blocks;
    return r;
  };
  const std::string index = "CREATE INDEX ON public.\"Comments\" (\"articleId\")";
  std::vector<Remedy> trial = {variant("as is", {210, 205, 220}, 1705, true),
                               variant(index, {21, 20, 22}, 4, true)};
  EXPECT_EQ(report::recommendation(trial, StageKind::command),
            "`CREATE INDEX ON public.\"Comments\" (\"articleId\")`: 210.0 ms → 21.0 ms (10.0× "
            "faster), blocks per call 1,705 → 4, snapshot identical — add `CREATE INDEX ON "
            "public.\"Comments\" (\"articleId\")` to the schema's migrations (CONCURRENTLY on a "
            "live table)");
  std::string table = report::remedies_table(trial, StageKind::command);
  EXPECT_NE(table.find(" · blocks per call 1,705 → 4 | 21.0 ms (20.0 ms–22.0 ms) |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| as is | 210.0 ms"), std::string::npos) << table;
  // Faster but not the same rows: never recommended.
  trial[1] = variant(index, {21, 20, 22}, 4, false);
  EXPECT_EQ(report::recommendation(trial, StageKind::command).rfind("No remedy", 0), 0u);
}

// Data scales decide over the text: calls that follow the data are one per row, calls that do
// not are a fixed loop, whatever the statement looks like.
TEST(Diagnose, RepeatedQueryShapeFollowsTheCallsGrowthWhenScalesMeasuredIt) {
  Results r;
  r.stages.push_back(stage("app", StageKind::command,
                           {statement("1", "SELECT * FROM tag WHERE article_id = $1", 25, 2.5),
                            statement("2", "SELECT COUNT(*) FROM tag", 24, 2.4)}));
  const std::vector<double> scales{1, 4, 16};
  StatementGrowth constant;
  constant.query = r.stages[0].queries[0].query;
  constant.calls = fit_growth(scales, {25, 25, 25}, std::nullopt);
  StatementGrowth linear;
  linear.query = r.stages[0].queries[1].query;
  linear.calls = fit_growth(scales, {24, 96, 384}, std::nullopt);
  r.stages[0].growth = StageGrowth{};
  r.stages[0].growth->scales = scales;
  r.stages[0].growth->statements = {constant, linear};
  auto d = of_kind(diagnose(r, analyzed()), results::DiagnosisKind::repeated_query);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].facts.at("shape"), "fixed_loop");
  EXPECT_NE(d[0].message.find("its calls stay constant with the data (25 → 25 → 25 per run) — "
                              "repeated in a fixed loop, so not an N+1 over rows: batch the calls"),
            std::string::npos)
      << d[0].message;
  EXPECT_EQ(d[1].facts.at("shape"), "per_row");
  EXPECT_NE(d[1].message.find("its calls grow linearly with the data (24 → 96 → 384 per run): an "
                              "N+1 that grows — load all of them with one query"),
            std::string::npos)
      << d[1].message;
}

// TypeORM's findOne({slug}) with its eager relations: every column under an alias, two joins on
// long aliases, the slug compared last. Its text runs past the statement table's cut before the
// WHERE; the statement is still a lookup by key, called once per article with another slug.
std::string typeorm_find_one() {
  std::string columns;
  for (const char* c : {"id", "slug", "title", "description", "body", "created", "updated",
                        "tagList", "favoriteCount", "authorId"}) {
    columns += std::string(columns.empty() ? "" : ", ") + "\"ArticleEntity\".\"" + c +
               "\" AS \"ArticleEntity_" + c + "\"";
  }
  for (const char* c : {"id", "username", "email", "bio", "image", "password"}) {
    columns += std::string(", \"ArticleEntity__author\".\"") + c +
               "\" AS \"ArticleEntity__author_" + c + "\"";
  }
  for (const char* c : {"id", "body", "articleId"}) {
    columns += std::string(", \"ArticleEntity__comments\".\"") + c +
               "\" AS \"ArticleEntity__comments_" + c + "\"";
  }
  return "SELECT " + columns +
         " FROM \"article\" \"ArticleEntity\" LEFT JOIN \"user\" \"ArticleEntity__author\" ON "
         "\"ArticleEntity__author\".\"id\"=\"ArticleEntity\".\"authorId\" LEFT JOIN \"comment\" "
         "\"ArticleEntity__comments\" ON \"ArticleEntity__comments\".\"articleId\"="
         "\"ArticleEntity\".\"id\" WHERE \"ArticleEntity\".\"slug\" = $1 LIMIT $2";
}

// The shape is read from the whole text, kept when the text is shortened (as the runner and the
// probe shorten it) and summed into the statement table: not from the cut text, which shows no
// parameter and read as "the same text every call".
TEST(Diagnose, RepeatedQueryShapeFromTheWholeTextWhenTheStoredTextIsCutBeforeItsWhere) {
  db::StatementStats whole;
  whole.queryid = 4242;
  whole.query = typeorm_find_one();
  whole.calls = 20;
  whole.exec_ms = 4;
  ASSERT_GT(whole.query.size(), 1000u) << "as long as TypeORM's";
  db::StatementStats shortened_before = whole;
  shorten_keeping_id(shortened_before);  // the runner's and the probe's way
  ASSERT_EQ(shortened_before.query.find('$'), std::string::npos)
      << "the stored text must be cut before its parameters: " << shortened_before.query;
  for (const auto& stats : {whole, shortened_before}) {
    Results r;
    r.stages.push_back(stage("articles", StageKind::command, statement_table({{stats}})));
    ASSERT_EQ(r.stages[0].queries[0].query.find('$'), std::string::npos);
    auto d = of_kind(diagnose(r, analyzed()), results::DiagnosisKind::repeated_query);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].facts.at("shape"), "per_row") << d[0].message;
    EXPECT_NE(d[0].message.find("— an N+1: load all of them with one query"), std::string::npos)
        << d[0].message;
  }
  // Results read from a file carry no parameters: a cut text with none in sight is not called
  // the same text.
  Results r;
  r.stages.push_back(stage("articles", StageKind::command,
                           {statement("4242", shortened_before.query, 20, 4)}));
  auto d = of_kind(diagnose(r, analyzed()), results::DiagnosisKind::repeated_query);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].facts.at("shape"), "fixed_loop");
  EXPECT_NE(d[0].message.find("its text is cut before its parameters"), std::string::npos)
      << d[0].message;
}

// A stage that loads 20 article pages calls each page's statements 20 times: that is its own
// loop, not an N+1. With `requests: 20` the calls are judged per request — one per request is
// no finding; 25 per request (a lookup per comment of each page) is the N+1.
TEST(Diagnose, RepeatedQueryPerRequestForAStageOfManyRequests) {
  Results r;
  r.stages.push_back(stage(
      "article-pages", StageKind::command,
      {statement("1", "SELECT * FROM article WHERE slug = $1", 20, 4),
       statement("2", "SELECT COUNT(*) FROM tag", 20, 2),
       statement("3", "SELECT * FROM \"user\" WHERE id = $1", 500, 25)}));
  config::Config c = analyzed();
  config::Stage pages;
  pages.name = "article-pages";
  pages.requests = 20;
  c.stages.push_back(pages);
  auto d = of_kind(diagnose(r, c), results::DiagnosisKind::repeated_query);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].queryid, "3");
  EXPECT_EQ(d[0].facts.at("shape"), "per_row");
  EXPECT_EQ(d[0].data.at("calls_per_request"), 25);
  EXPECT_EQ(d[0].data.at("requests"), 20);
  EXPECT_EQ(d[0].message,
            "statement 3 `SELECT * FROM \"user\" WHERE id = $1` ran 25 times per request (500 per "
            "cold run of 20 requests, 25.0 ms in all, ≥ repeated_threshold 20 per request) — an "
            "N+1: load all of them with one query (a join, `= ANY($1)` with an array of the "
            "keys, or the ORM's eager loading); that saves about 24.0 ms of server time per run, "
            "plus 480 round trips");
  // Without `requests:`, the stage's own loop reads as repetition.
  EXPECT_EQ(of_kind(diagnose(r, analyzed()), results::DiagnosisKind::repeated_query).size(), 3u);
  // Fewer lookups per request than the threshold: no N+1 on CI's data unless they grow with it.
  r.stages[0].queries[2].calls = 200;
  EXPECT_TRUE(of_kind(diagnose(r, c), results::DiagnosisKind::repeated_query).empty());
}

}  // namespace
}  // namespace coldgate::measure
