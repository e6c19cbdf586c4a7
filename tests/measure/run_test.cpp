// `coldgate run` end to end: the real binary, a real PostgreSQL from the local provider.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "results/json.hpp"
#include "support/support.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

using testing::TempDir;
using testing::run_coldgate;
using testing::slurp;

// A project folder with a config, a small table, and helpers to run and read results.
struct RunTest : ::testing::Test {
  void config(const std::string& stages, const std::string& defaults = "{ runs: 2, warm: 1 }") {
    dir.write("schema.sql",
              "CREATE TABLE item (id int PRIMARY KEY, name text, price numeric);\n"
              "INSERT INTO item SELECT g, 'item ' || g, g * 1.5 FROM generate_series(1, 50) g;\n");
    dir.write("coldgate.yaml", "version: 1\n"
                               "database: { provider: local }\n"
                               "setup: [ { sql: schema.sql }, { analyze: true } ]\n"
                               "defaults: " + defaults + "\n"
                               "stages:\n" + stages);
  }
  testing::RunResult run(std::vector<std::string> args = {}, std::vector<std::string> env = {}) {
    args.insert(args.begin(), "run");
    env.push_back("CI=");
    env.push_back("GITHUB_ACTIONS=");
    return run_coldgate(args, dir.path(), "", env);
  }
  // `coldgate accept` in local mode whatever CI says (the suite itself may run with CI=true).
  int accept(std::vector<std::string> stages = {}) {
    stages.insert(stages.begin(), "accept");
    return run_coldgate(stages, dir.path(), "", {"CI="}).exit_code;
  }
  Results results() {
    return results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  }
  const StageResult& stage(const Results& r, const std::string& name) {
    for (const auto& s : r.stages) {
      if (s.name == name) return s;
    }
    ADD_FAILURE() << "no stage " << name;
    static StageResult none;
    return none;
  }
  TempDir dir;
};

TEST_F(RunTest, SqlStageMeasuresEveryColdRunInItsOwnProcessAndSnapshotsTheDocument) {
  config("  - name: items\n"
         "    query: select json_agg(json_build_object('id', id, 'name', name)) from item where id <= $1\n"
         "    params: [3]\n"
         "    decode: json\n"
         "    runs: 3\n"
         "    warm: 2\n"
         "    snapshot: { path: snapshots/items.json }\n");
  auto first = run();
  EXPECT_EQ(first.exit_code, 1) << first.err;  // no committed snapshot yet
  EXPECT_NE(first.out.find("| items | snapshot | ❌ missing | snapshot missing"), std::string::npos)
      << first.out;
  EXPECT_EQ(slurp(dir / "snapshots/items.json.new"),
            "[\n  {\n    \"id\": 1,\n    \"name\": \"item 1\"\n  },\n  {\n    \"id\": 2,\n"
            "    \"name\": \"item 2\"\n  },\n  {\n    \"id\": 3,\n    \"name\": \"item 3\"\n  }\n]\n");
  ASSERT_EQ(accept(), 0);

  auto second = run();
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("**passed: 1 stage, 1 snapshot match**"), std::string::npos) << second.out;
  Results r = results();
  const StageResult& s = stage(r, "items");
  EXPECT_EQ(s.kind, StageKind::sql);
  ASSERT_TRUE(s.snapshot);
  EXPECT_EQ(s.snapshot->status, SnapshotStatus::match);
  for (const char* name : {"wall_ms", "cpu_ms", "peak_rss_bytes", "connect_ms", "query_ms",
                           "decode_ms", "result_bytes", "rows"}) {
    const Metric* m = s.find(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->cold.size(), 3u) << name;
    for (double v : m->cold) EXPECT_GT(v, 0) << name;
  }
  // Warm repetitions: 2 per cold run, kept apart from the cold samples.
  EXPECT_EQ(s.find("query_ms")->warm.size(), 6u);
  EXPECT_EQ(s.find("wall_ms")->warm.size(), 6u);
  EXPECT_TRUE(s.find("connect_ms")->warm.empty());
  EXPECT_TRUE(s.find("peak_rss_bytes")->warm.empty());
  // A cold run is a whole process: its wall time covers connecting and the query.
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_GT(s.find("wall_ms")->cold[i],
              s.find("connect_ms")->cold[i] + s.find("query_ms")->cold[i]);
  }
  EXPECT_EQ(s.find("rows")->cold[0], 1);
  // The json_agg text PostgreSQL sends: `[{"id" : 1, "name" : "item 1"}, \n {…}, \n {…}]`.
  EXPECT_EQ(s.find("result_bytes")->cold[0], 93);
  // The server-side profile of every measured run, cold and warm apart: the stage's one query
  // (the probe's BEGIN, settings and COMMIT left out), planned and executed, no JIT (tiny cost).
  EXPECT_EQ(s.find("db_queries")->cold, (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(s.find("db_queries")->warm, (std::vector<double>{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(s.find("db_rows")->cold, (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(s.find("db_exec_ms")->cold.size(), 3u);
  EXPECT_GT(s.find("db_exec_ms")->cold[0], 0);
  EXPECT_GT(s.find("db_plan_ms")->cold[0], 0);
  EXPECT_EQ(s.find("db_jit_functions")->cold, (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(s.find("execution_ms"), nullptr);  // no extra EXPLAIN ANALYZE run any more
  ASSERT_EQ(s.queries.size(), 1u);
  EXPECT_EQ(s.queries[0].query,
            "select json_agg(json_build_object($2, id, $3, name)) from item where id <= $1");
  EXPECT_EQ(s.queries[0].calls, 1);
  ASSERT_TRUE(s.queries[0].total_cost);
  // The plan-only EXPLAIN: the estimate, and a plan that was not executed.
  ASSERT_TRUE(s.explain);
  EXPECT_FALSE(s.explain->jit);
  EXPECT_GT(s.explain->total_cost, 0);
  EXPECT_EQ(*s.queries[0].total_cost, s.explain->total_cost);
  EXPECT_EQ(slurp(dir / s.explain->plan_file).find("\"Execution Time\""), std::string::npos);
  EXPECT_NE(slurp(dir / s.explain->plan_file).find("\"Total Cost\""), std::string::npos);
  // Environment block.
  EXPECT_EQ(r.environment.provider, "local");
  EXPECT_GE(r.environment.postgres_version_num, 100000);
  EXPECT_GT(r.environment.cpus, 0);
  EXPECT_FALSE(r.environment.kernel.empty());
  ASSERT_EQ(r.setup.size(), 2u);
  EXPECT_EQ(r.setup[0].label, "sql schema.sql");
}

// The warm repetition sleeps for as long as it has been since `coldgate run` was started here,
// so it lasts longer than anything the cold run's clock (from the probe's spawn, which comes
// later) can have counted by then; had the warm repetition been in the cold figure, the cold
// figure would be the longer. The first query on a connection (the cold repetition) does not
// sleep. So the comparison decides the claim whatever the machine's load. How much a cold run
// adds to its query is bench/provider_times.sh's figure, against psql.
TEST_F(RunTest, ColdWallTimeEndsWithTheColdRepetitionNotTheWarmOnes) {
  const double started_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  config(fmt::format("  - name: sleepy\n"
                     "    query: select pg_sleep(case when current_setting('coldgate_test.warm', "
                     "true) is null then 0 else extract(epoch from clock_timestamp()) - {:.6f} "
                     "end), set_config('coldgate_test.warm', 'yes', false)\n"
                     "    runs: 1\n"
                     "    warm: 1\n",
                     started_s));
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Results res = results();
  const StageResult& s = res.stages[0];
  double cold = s.find("wall_ms")->cold.at(0);
  double query = s.find("query_ms")->cold.at(0);
  double connect = s.find("connect_ms")->cold.at(0);
  EXPECT_GT(cold, query + connect);  // a whole process: it covers connecting and the query
  const auto& warm = s.find("wall_ms")->warm;
  ASSERT_EQ(warm.size(), 1u);
  EXPECT_LT(cold, warm[0]) << "cold wall_ms includes the warm repetition";
}

TEST_F(RunTest, ChangedDataFailsWithThePathLevelDiffAndAcceptMakesItPass) {
  config("  - name: items\n"
         "    query: select json_agg(json_build_object('id', id, 'price', price)) from item\n"
         "    decode: json\n"
         "    runs: 1\n"
         "    warm: 0\n"
         "    snapshot: { path: snapshots/items.json }\n");
  ASSERT_EQ(run().exit_code, 1);
  ASSERT_EQ(accept(), 0);
  ASSERT_EQ(run().exit_code, 0);

  // One value of one data row changes.
  std::string schema = slurp(dir / "schema.sql");
  schema += "UPDATE item SET price = 999.25 WHERE id = 7;\n";
  dir.write("schema.sql", schema);
  auto changed = run();
  EXPECT_EQ(changed.exit_code, 1);
  EXPECT_NE(changed.out.find("**failed: 1 snapshot changed (items)**"), std::string::npos)
      << changed.out;
  EXPECT_NE(changed.out.find("/6/price: 10.5 → 999.25"), std::string::npos) << changed.out;
  EXPECT_NE(changed.out.find("-    \"price\": 10.5\n+    \"price\": 999.25\n"), std::string::npos)
      << changed.out;
  EXPECT_EQ(results().stages[0].snapshot->status, SnapshotStatus::changed);

  ASSERT_EQ(accept({"items"}), 0);
  auto accepted = run();
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out;
}

TEST_F(RunTest, CiModeLeavesSnapshotsAloneAndPutsCandidatesInTheOutFolder) {
  config("  - name: one\n"
         "    query: select json_build_object('n', 1)\n"
         "    decode: json\n"
         "    snapshot: { path: snapshots/one.json }\n");
  auto r = run({"--ci"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir / "snapshots"));
  EXPECT_EQ(slurp(dir / "coldgate-out/snapshots/snapshots/one.json"), "{\n  \"n\": 1\n}\n");
  EXPECT_EQ(run({"--ci", "--update-snapshots"}).exit_code, 2);
}

TEST_F(RunTest, UpdateSnapshotsWritesThemAndPasses) {
  config("  - name: one\n"
         "    query: select json_build_object('n', 2)\n"
         "    decode: json\n"
         "    snapshot: { path: snapshots/one.json }\n");
  auto r = run({"--update-snapshots"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("1 updated"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(dir / "snapshots/one.json"), "{\n  \"n\": 2\n}\n");
  EXPECT_EQ(run().exit_code, 0);
}

TEST_F(RunTest, AFailedStageQuotesTheExceptionAboveALongListNotOnlyTheListsEnd) {
  // A real Python exception whose message goes on over twelve lines, as Django's "… is not a
  // registered tag library. Must be one of:" and its libraries: stderr's last eight lines are
  // names only, the cause is above them.
  dir.write("view.py", "raise LookupError('no tag library x. Must be one of:\\n' +\n"
                       "                  '\\n'.join('lib%02d' % i for i in range(12)))\n");
  config("  - name: view\n"
         "    command: [/usr/bin/python3, view.py]\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(stage(results(), "view").error,
            "cold run 1/2: exit status 1; stderr ends:\n"
            "LookupError: no tag library x. Must be one of:\n"
            "[… 4 lines …]\n"
            "lib04\nlib05\nlib06\nlib07\nlib08\nlib09\nlib10\nlib11");
  // The one-line summary (terminal, table, junit.xml) is the exception, not "lib11".
  EXPECT_NE(r.err.find("view: failed: cold run 1/2: exit status 1; stderr ends: LookupError: no "
                       "tag library x. Must be one of:"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("| view | — | ❌ failed | cold run 1/2: exit status 1; stderr ends: "
                       "LookupError: no tag library x. Must be one of: |"),
            std::string::npos)
      << r.out;
}

TEST_F(RunTest, CrashingStageFailsWithItsStderrTailAndTheOthersStillRun) {
  config("  - name: crash\n"
         "    command: [sh, -c, 'echo about to crash >&2; kill -SEGV $$']\n"
         "  - name: fine\n"
         "    command: [true]\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1);
  Results res = results();
  EXPECT_EQ(stage(res, "crash").error,
            "cold run 1/2: killed by SIGSEGV; stderr ends:\nabout to crash");
  EXPECT_FALSE(stage(res, "fine").failed());
  EXPECT_EQ(stage(res, "fine").find("wall_ms")->cold.size(), 2u);
  EXPECT_NE(r.out.find("**failed: 1 stage failed (crash)**"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| crash | — | ❌ failed | cold run 1/2: killed by SIGSEGV; stderr ends: about to crash |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("<summary>crash: error</summary>\n\n```\ncold run 1/2: killed by SIGSEGV; "
                       "stderr ends:\nabout to crash\n```\n"),
            std::string::npos)
      << r.out;
  // The terminal line and junit.xml's message name the cause too, not only "stderr ends:".
  EXPECT_NE(r.err.find("crash: failed: cold run 1/2: killed by SIGSEGV; stderr ends: about to "
                       "crash"),
            std::string::npos)
      << r.err;
  EXPECT_NE(slurp(dir / "coldgate-out/junit.xml")
                .find("message=\"cold run 1/2: killed by SIGSEGV; stderr ends: about to crash\""),
            std::string::npos);
}

TEST_F(RunTest, TimeoutKillsTheWholeProcessGroup) {
  // The stage starts a helper that ignores SIGTERM and records its pid, then waits forever. A
  // loaded machine may reach the timeout before the helper has written its pid: then the
  // timeout is longer the next time (0.5 s, 2 s, 8 s), each attempt held to the same message.
  pid_t pid = 0;
  for (int ms : {500, 2000, 8000}) {
    std::filesystem::remove(dir / "helper.pid");
    config("  - name: hang\n"
           "    command: [sh, -c, 'sh -c \"trap \\\"\\\" TERM; echo $$ > helper.pid.new; "
           "mv helper.pid.new helper.pid; exec sleep 300\" & wait']\n"
           "    timeout: " + std::to_string(ms) + "ms\n");
    auto r = run();
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(results().stages[0].error,
              "cold run 1/2: timed out after " + std::to_string(ms) +
                  " ms; its process group was killed");
    std::ifstream in(dir / "helper.pid");
    if (in >> pid) break;
  }
  ASSERT_GT(pid, 0) << "the helper had not started within an 8 s timeout";
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(RunTest, CommandStageThatLoadsDifferentDocumentsIsNondeterministic) {
  config("  - name: clock\n"
         "    command: [sh, -c, 'echo \"{\\\"stable\\\": 1, \\\"run\\\": $COLDGATE_RUN}\"']\n"
         "    runs: 3\n"
         "    snapshot: { from: stdout, path: snapshots/clock.json }\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1);
  Results res = results();
  const auto& snap = *res.stages[0].snapshot;
  EXPECT_EQ(snap.status, SnapshotStatus::nondeterministic);
  EXPECT_EQ(snap.message, "cold runs 1 and 2 loaded different documents: first difference at /run "
                          "(1 path differs)");
  EXPECT_NE(r.out.find("**failed: 1 snapshot nondeterministic (clock)**"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "snapshots/clock.json.new"));
}

TEST_F(RunTest, CommandStageMetricsAndSnapshotFile) {
  dir.write("client.sh",
            "set -e\n"
            "mkdir -p out\n"
            "psql -XAtq -c \"select json_build_object('items', count(*)) from item\" > out/doc.json\n"
            "echo '{\"metric\":\"allocated_bytes\",\"value\":4096,\"unit\":\"bytes\"}' >> \"$COLDGATE_METRICS\"\n"
            "echo '{\"metric\":\"parse_ms\",\"value\":1.5,\"unit\":\"ms\",\"phase\":\"warm\"}' >> \"$COLDGATE_METRICS\"\n");
  config("  - name: client\n"
         "    command: [sh, client.sh]\n"
         "    snapshot: { from: out/doc.json, path: snapshots/client.json }\n");
  auto r = run({"--update-snapshots"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(slurp(dir / "snapshots/client.json"), "{\n  \"items\": 50\n}\n");
  Results res = results();
  const StageResult& s = res.stages[0];
  EXPECT_EQ(s.find("allocated_bytes")->unit, "bytes");
  EXPECT_EQ(s.find("allocated_bytes")->cold, (std::vector<double>{4096, 4096}));
  EXPECT_EQ(s.find("parse_ms")->warm, (std::vector<double>{1.5, 1.5}));
  // Not a time: in the stage's <details>, not in the table.
  EXPECT_NE(r.out.find("<summary>client: 2 metrics</summary>\n\n- db_queries: 1\n- "
                       "allocated_bytes: 4.0 KiB\n"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| client | parse_ms | — | 1.50 ms |"), std::string::npos) << r.out;
}

TEST_F(RunTest, MalformedMetricsLineFailsTheStageNamingTheLine) {
  config("  - name: metrics\n"
         "    command: [sh, -c, 'echo \"{\\\"metric\\\":\\\"a\\\",\\\"value\\\":1}\" >> \"$COLDGATE_METRICS\"; "
         "echo \"{\\\"metric\\\":\\\"b\\\",\\\"vaule\\\":2}\" >> \"$COLDGATE_METRICS\"']\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(results().stages[0].error,
            "cold run 1/2: $COLDGATE_METRICS line 2: unknown member \"vaule\": "
            "{\"metric\":\"b\",\"vaule\":2} (expected {\"metric\": NAME, \"value\": NUMBER, "
            "\"unit\": UNIT}, one object per line)");
}

TEST_F(RunTest, SqlErrorNamesTheFileLineAndColumn) {
  dir.write("bad.sql", "-- the item list\nselect id,\n       nme\n  from item\n");
  config("  - name: bad\n"
         "    sql: bad.sql\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(results().stages[0].error,
            "cold run 1/2: bad.sql:3:8: SQLSTATE 42703: column \"nme\" does not exist\n"
            "HINT:  Perhaps you meant to reference the column \"item.name\".");
}

TEST_F(RunTest, ParamsAreBoundNeverSplicedAndSettingsAreLocalToTheTransaction) {
  config("  - name: params\n"
         "    query: select json_build_object('p', $1::text, 'work_mem', current_setting('work_mem'))\n"
         "    params: [\"x'); drop table item; --\"]\n"
         "    settings: { work_mem: 7MB }\n"
         "    decode: json\n"
         "    warm: 2\n"
         "    snapshot: { path: snapshots/p.json }\n"
         "  - name: count\n"
         "    query: select json_build_object('items', count(*), 'work_mem', current_setting('work_mem')) from item\n"
         "    decode: json\n"
         "    snapshot: { path: snapshots/count.json }\n");
  auto r = run({"--update-snapshots"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(slurp(dir / "snapshots/p.json"),
            "{\n  \"p\": \"x'); drop table item; --\",\n  \"work_mem\": \"7MB\"\n}\n");
  EXPECT_EQ(slurp(dir / "snapshots/count.json"), "{\n  \"items\": 50,\n  \"work_mem\": \"4MB\"\n}\n");
}

// `ordered: [""]` keeps the root array in the query's order; without it the array is sorted.
TEST_F(RunTest, OrderedRootKeepsTheQueryOrder) {
  config("  - name: kept\n"
         "    query: select json_agg(id order by id desc) from item where id <= 3\n"
         "    decode: json\n"
         "    snapshot: { path: snapshots/kept.json, ordered: [''] }\n"
         "  - name: sorted\n"
         "    query: select json_agg(id order by id desc) from item where id <= 3\n"
         "    decode: json\n"
         "    snapshot: { path: snapshots/sorted.json }\n",
         "{ runs: 1, warm: 0 }");
  auto r = run({"--update-snapshots"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(slurp(dir / "snapshots/kept.json"), "[\n  3,\n  2,\n  1\n]\n");
  EXPECT_EQ(slurp(dir / "snapshots/sorted.json"), "[\n  1,\n  2,\n  3\n]\n");
}

// Without decode, a SQL stage's snapshot is its rows typed as to_json types them (PostgreSQL
// docs, "JSON Functions"): numbers exact from the server's text (NaN and Infinity as strings),
// booleans, json and jsonb as documents, NULL as null, a domain as its base type; everything
// else as its text.
TEST_F(RunTest, RowsAreSnapshotWithJsonTypesFromTheColumnTypes) {
  dir.write("schema.sql", "CREATE DOMAIN qty AS int CHECK (VALUE >= 0);\n");
  dir.write("coldgate.yaml",
            "version: 1\n"
            "database: { provider: local }\n"
            "setup: [ { sql: schema.sql } ]\n"
            "defaults: { runs: 1, warm: 0 }\n"
            "stages:\n"
            "  - name: typed\n"
            "    query: >-\n"
            "      select 347::bigint as count, 2::int2 as small, 3::int4 as normal,\n"
            "      1.50::numeric as price, 12345678901234567890.123::numeric as exact,\n"
            "      0.1::float8 as f8, 1e100::float8 as huge, 1.5::float4 as f4,\n"
            "      'NaN'::numeric as nan, '-Infinity'::float8 as neg_inf,\n"
            "      true as yes, false as no, null::int as nothing, 5::qty as stock,\n"
            "      '{\"b\": [2, 1], \"a\": null}'::json as doc, '[1, {\"x\": 1.0}]'::jsonb as docb,\n"
            "      'null'::jsonb as json_null, 'say \"hi\"' as words, date '2024-01-02' as day,\n"
            "      array[1, 2] as list, 42::oid as object_id, interval '36 hours' as wait\n"
            "    snapshot: { path: snapshots/typed.json }\n"
            "  - name: same-name\n"
            "    query: select 1 as a, 2 as b, 3 as a\n"
            "    snapshot: { path: snapshots/same-name.json }\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(slurp(dir / "snapshots/typed.json.new"),
            "[\n"
            "  {\n"
            "    \"count\": 347,\n"
            "    \"day\": \"2024-01-02\",\n"
            "    \"doc\": {\n"
            "      \"a\": null,\n"
            "      \"b\": [\n"
            "        1,\n"
            "        2\n"
            "      ]\n"
            "    },\n"
            "    \"docb\": [\n"
            "      1,\n"
            "      {\n"
            "        \"x\": 1\n"
            "      }\n"
            "    ],\n"
            "    \"exact\": 12345678901234567890.123,\n"
            "    \"f4\": 1.5,\n"
            "    \"f8\": 0.1,\n"
            "    \"huge\": 1e100,\n"
            "    \"json_null\": null,\n"
            "    \"list\": \"{1,2}\",\n"
            "    \"nan\": \"NaN\",\n"
            "    \"neg_inf\": \"-Infinity\",\n"
            "    \"no\": false,\n"
            "    \"normal\": 3,\n"
            "    \"nothing\": null,\n"
            "    \"object_id\": \"42\",\n"
            "    \"price\": 1.5,\n"
            "    \"small\": 2,\n"
            "    \"stock\": 5,\n"
            "    \"wait\": \"36:00:00\",\n"
            "    \"words\": \"say \\\"hi\\\"\",\n"
            "    \"yes\": true\n"
            "  }\n"
            "]\n");
  Results res = results();
  EXPECT_EQ(stage(res, "typed").error, "");
  EXPECT_EQ(stage(res, "same-name").error,
            "cold run 1/1: stage same-name: columns 1 and 3 are both named 'a', and each row of "
            "the snapshot is one object keyed by column name; name them apart (AS …)");
  EXPECT_FALSE(std::filesystem::exists(dir / "snapshots/same-name.json.new"));
}

// Changing a snapshot rule reorders the committed file's arrays but not its content: the run
// says so (no diff of moved lines), fails as the file is not byte-identical, and accept rewrites
// it. A value that changed as well is shown as the one change it is.
TEST_F(RunTest, ChangedSnapshotRulesAreRearrangedNotMalformed) {
  auto stage = [](const std::string& rules, const std::string& price) {
    return "  - name: items\n"
           "    query: select json_agg(json_build_object('id', id, 'sku', 'sku-' || (100 - id), "
           "'price', case when id = 7 then " + price + " else price end)) from item\n"
           "    decode: json\n"
           "    snapshot: { path: snapshots/items.json" + rules + " }\n";
  };
  config(stage("", "price"), "{ runs: 1, warm: 0 }");
  ASSERT_EQ(run({"--update-snapshots"}).exit_code, 0);
  const std::string by_id = slurp(dir / "snapshots/items.json");

  config(stage(", identity: [sku]", "price"), "{ runs: 1, warm: 0 }");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("❌ **failed: 1 snapshot rearranged (items)**"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| items | snapshot | ❌ rearranged | snapshot rearranged: "
                       "snapshots/items.json is arranged under changed rules, content identical: "
                       "run coldgate accept items to rewrite it |"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("malformed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("<details><summary>items: diff of"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("coldgate: failed: 1 snapshot rearranged (items); results in "),
            std::string::npos)
      << r.err;
  EXPECT_NE(slurp(dir / "coldgate-out/junit.xml")
                .find("<failure type=\"snapshot rearranged\" message=\"snapshot rearranged: "
                      "snapshots/items.json is arranged under changed rules, content identical: "
                      "run coldgate accept items to rewrite it\">"),
            std::string::npos)
      << slurp(dir / "coldgate-out/junit.xml");
  EXPECT_EQ(results().stages[0].snapshot->status, SnapshotStatus::rearranged);
  EXPECT_FALSE(std::filesystem::exists(dir / "snapshots/items.json.new.diff"));
  EXPECT_EQ(slurp(dir / "snapshots/items.json"), by_id);
  ASSERT_EQ(accept(), 0);
  EXPECT_NE(slurp(dir / "snapshots/items.json"), by_id);
  EXPECT_EQ(run().exit_code, 0);

  // Back to sorting by id, with item 7's price changed: one path, the committed file read under
  // the current rules.
  config(stage("", "99"), "{ runs: 1, warm: 0 }");
  auto changed = run();
  EXPECT_EQ(changed.exit_code, 1);
  EXPECT_NE(changed.out.find("| items | snapshot | ❌ changed | snapshot changed: 1 path "
                             "differs (1 changed, 0 added, 0 removed) once snapshots/items.json, "
                             "arranged under other rules, is arranged under the current ones; "
                             "review snapshots/items.json.new"),
            std::string::npos)
      << changed.out;
  EXPECT_NE(changed.out.find("  /6/price: 10.5 → 99\n"), std::string::npos) << changed.out;
}

// Rows without an `id` column are sorted by their text: one renamed item moves six rows. The
// report's diff says why and which column would pair them as `identity:`.
TEST_F(RunTest, ADiffOfRowsSortedByTextNamesAnIdentity) {
  auto stage = [](const std::string& name) {
    return "  - name: rows\n"
           "    query: select 'sku-' || id as sku, " + name + " as name from item\n"
           "    snapshot: { path: snapshots/rows.json }\n";
  };
  config(stage("name"), "{ runs: 1, warm: 0 }");
  ASSERT_EQ(run({"--update-snapshots"}).exit_code, 0);
  config(stage("case when id = 5 then 'zz' else name end"), "{ runs: 1, warm: 0 }");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("| rows | snapshot | ❌ changed | snapshot changed: 12 paths differ (12 "
                       "changed, 0 added, 0 removed); review snapshots/rows.json.new"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(root): an array of objects without `$id` or `id`, sorted by their text, "
                       "so a changed value can move elements: 12 paths differ. `identity: [$id, "
                       "id, sku]` with member `sku` would pair them (present and unique in all 50 "
                       "elements).\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(results().stages[0].snapshot->diff.find("`identity: [$id, id, sku]`"),
            std::string::npos);
}

// Diff headers name the snapshot relative to the git repository, wherever coldgate runs from
// (the config's folder when there is no repository): no runner's absolute path in report.md,
// results.json or the .new.diff file.
TEST_F(RunTest, DiffHeadersAreRepositoryRelative) {
  auto project = [&](const std::string& n, const std::string& path) {
    dir.write("app/schema.sql", "CREATE TABLE t (n int);\n");
    dir.write("app/coldgate.yaml", "version: 1\n"
                                   "database: { provider: local }\n"
                                   "setup: [ { sql: schema.sql } ]\n"
                                   "defaults: { runs: 1, warm: 0 }\n"
                                   "stages:\n"
                                   "  - name: one\n"
                                   "    query: select json_build_object('n', " + n + ")\n"
                                   "    decode: json\n"
                                   "    snapshot: { path: " + path + " }\n");
  };
  auto run_in = [&](const std::filesystem::path& cwd, const std::string& config) {
    return run_coldgate({"run", "-c", config}, cwd, "", {"CI=", "GITHUB_ACTIONS="});
  };
  auto headers = [](const std::string& text) {
    auto at = text.find("--- ");
    return at == std::string::npos ? std::string("(none)")
                                   : text.substr(at, text.find("@@", at) - at);
  };

  // A git repository holding app/: paths from its root, though coldgate runs in app/.
  ASSERT_EQ(std::system(("git init -q " + dir.path().string()).c_str()), 0);
  project("1", "../snapshots/one.json");
  ASSERT_EQ(run_coldgate({"run", "-c", "coldgate.yaml", "--update-snapshots"}, dir / "app", "",
                         {"CI="}).exit_code, 0);
  project("2", "../snapshots/one.json");
  auto r = run_in(dir / "app", "coldgate.yaml");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string expected = "--- snapshots/one.json\n+++ snapshots/one.json.new\n";
  EXPECT_EQ(headers(slurp(dir / "snapshots/one.json.new.diff")), expected);
  EXPECT_EQ(headers(r.out), expected) << r.out;
  Results res = results::from_json(slurp(dir / "app/coldgate-out/results.json"), "results.json");
  EXPECT_EQ(headers(res.stages[0].snapshot->diff), expected);

  // No repository: paths from the config's folder, though coldgate runs above it.
  std::filesystem::remove_all(dir / ".git");
  std::filesystem::remove_all(dir / "snapshots");
  project("1", "snapshots/one.json");
  ASSERT_EQ(run_coldgate({"run", "-c", "app/coldgate.yaml", "--update-snapshots"}, dir.path(), "",
                         {"CI="}).exit_code, 0);
  project("2", "snapshots/one.json");
  r = run_in(dir.path(), "app/coldgate.yaml");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(headers(slurp(dir / "app/snapshots/one.json.new.diff")), expected);
  EXPECT_EQ(headers(r.out), expected) << r.out;
}

TEST_F(RunTest, JitBlockIsReadWhenJitFires) {
  config("  - name: jit\n"
         "    query: select sum(price * id) from item\n"
         "    settings: { jit: 'on', jit_above_cost: '0', jit_inline_above_cost: '0', "
         "jit_optimize_above_cost: '0' }\n"
         "    runs: 1\n");
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Results res = results();
  const StageResult& s = res.stages[0];
  ASSERT_TRUE(s.explain);
  EXPECT_TRUE(s.explain->jit);
  EXPECT_GT(s.find("db_jit_functions")->cold[0], 0);
  EXPECT_GT(s.find("db_jit_ms")->cold[0], 0);
  EXPECT_NE(r.out.find("| jit | db_jit_ms |"), std::string::npos) << r.out;
  // JIT on 50 rows costs more than the execution it speeds up: the diagnosis says so.
  ASSERT_FALSE(res.diagnoses.empty());
  EXPECT_EQ(res.diagnoses[0].stage, "jit");
  EXPECT_EQ(res.diagnoses[0].kind, results::DiagnosisKind::jit_dominates);
  EXPECT_EQ(s.explain->jit_above_cost, 0);
  EXPECT_TRUE(s.explain->never_analyzed.empty());  // setup has `analyze: true`
}

TEST_F(RunTest, ColdRestartRestartsTheServerBeforeEveryColdRun) {
  config("  - name: restarted\n"
         "    command: [sh, -c, 'psql -XAtq -c \"select pg_postmaster_start_time()\" >> starts.txt']\n"
         "    cold: restart\n"
         "    runs: 3\n"
         "  - name: same-server\n"
         "    command: [sh, -c, 'psql -XAtq -c \"select pg_postmaster_start_time()\" >> same.txt']\n"
         "    runs: 2\n");
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto lines = [&](const char* file) {
    std::istringstream in(slurp(dir / file));
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  };
  // Three cold runs, each on a server started for it; the unmeasured plan run after them is
  // not timed, so it takes the last run's server as it is (a plan's shape and rows do not
  // depend on the cache).
  auto starts = lines("starts.txt");
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(std::set<std::string>(starts.begin(), starts.begin() + 3).size(), 3u);
  EXPECT_EQ(starts[3], starts[2]);
  auto same = lines("same.txt");
  ASSERT_EQ(same.size(), 3u);  // two runs and the plan run
  EXPECT_EQ(same[0], same[1]);
  EXPECT_EQ(same[1], same[2]);
}

// A command's stderr is bytes, not text: what is not UTF-8 becomes U+FFFD in the results and
// the report, and the results are written (they once failed the run with a JSON library error).
TEST_F(RunTest, StderrThatIsNotUtf8IsKeptAsReplacementCharactersAndTheResultsAreWritten) {
  config("  - name: latin\n"
         "    command: [sh, -c, 'printf \"caf\\351 \\377 failed\\n\" >&2; exit 1']\n",
         "{ runs: 1, warm: 0 }");
  auto r = run();
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("latin: failed"), std::string::npos) << r.err;
  Results res = results();
  const StageResult& s = stage(res, "latin");
  EXPECT_NE(s.error.find("caf\xEF\xBF\xBD \xEF\xBF\xBD failed"), std::string::npos) << s.error;
  EXPECT_NE(slurp(dir / "coldgate-out/report.md").find("caf\xEF\xBF\xBD"), std::string::npos);
}

TEST_F(RunTest, UnknownStageGetsAHint) {
  config("  - name: items-load\n"
         "    command: [true]\n");
  auto r = run({"--stage", "items-lod"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("coldgate: error: --stage: no stage 'items-lod' in coldgate.yaml (did you "
                       "mean 'items-load'?)"),
            std::string::npos)
      << r.err;
}

TEST_F(RunTest, GithubActionsGetsGroupsAndPlainProgressLines) {
  config("  - name: quick\n"
         "    command: [true]\n");
  auto r = run_coldgate({"run"}, dir.path(), "", {"CI=true", "GITHUB_ACTIONS=true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("::group::[1/1] quick\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("coldgate: [1/1] quick: cold run 2/2: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("::endgroup::\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
}

// The lines of `file` ("name=value" each) as a map.
std::map<std::string, std::string> seen(const std::filesystem::path& file) {
  std::map<std::string, std::string> out;
  std::istringstream in(slurp(file));
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

TEST_F(RunTest, EnvMappingReachesSetupCommandsAndCommandStagesExpandedForTheRunsServer) {
  dir.write("schema.sql", "CREATE TABLE item (id int);\n");
  // What the program sees, written to the file it is given.
  dir.write("seen.sh",
            "for v in DEV_DB_HOST DEV_DB_PORT DB_URL MODE PRICE PGPORT PGPASSWORD PGUSER "
            "PGDATABASE; do echo \"$v=$(printenv $v)\"; done > \"$1\"\n");
  dir.write("coldgate.yaml",
            "version: 1\n"
            "database: { provider: local, name: shop }\n"
            "env: { DEV_DB_HOST: '${PGHOST}', DEV_DB_PORT: '${PGPORT}', DB_URL: "
            "'${JDBC_DATABASE_URL}', MODE: setup, PRICE: '$${PRICE}' }\n"
            "setup: [ { sql: schema.sql }, { command: [sh, seen.sh, setup.txt] } ]\n"
            "defaults: { runs: 1, warm: 0 }\n"
            "stages:\n"
            "  - name: app\n"
            "    command: [sh, seen.sh, stage.txt]\n"
            "    env: { MODE: stage, PGDATABASE: postgres }\n");
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto setup = seen(dir / "setup.txt");
  const std::string port = setup["PGPORT"];
  const std::string password = setup["PGPASSWORD"];
  EXPECT_EQ(password.size(), 24u);  // the local server's random one
  const std::string jdbc =
      "jdbc:postgresql://127.0.0.1:" + port + "/shop?user=postgres&password=" + password;
  EXPECT_EQ(setup, (std::map<std::string, std::string>{{"DEV_DB_HOST", "127.0.0.1"},
                                                       {"DEV_DB_PORT", port},
                                                       {"DB_URL", jdbc},
                                                       {"MODE", "setup"},
                                                       {"PRICE", "${PRICE}"},
                                                       {"PGPORT", port},
                                                       {"PGPASSWORD", password},
                                                       {"PGUSER", "postgres"},
                                                       {"PGDATABASE", "shop"}}));
  // The stage's own env: on top; coldgate's PG* names may be overridden too. The facts stay the
  // server's.
  EXPECT_EQ(seen(dir / "stage.txt"),
            (std::map<std::string, std::string>{{"DEV_DB_HOST", "127.0.0.1"},
                                                {"DEV_DB_PORT", port},
                                                {"DB_URL", jdbc},
                                                {"MODE", "stage"},
                                                {"PRICE", "${PRICE}"},
                                                {"PGPORT", port},
                                                {"PGPASSWORD", password},
                                                {"PGUSER", "postgres"},
                                                {"PGDATABASE", "postgres"}}));
}

TEST_F(RunTest, LogLinesBeforeAStdoutDocumentAreNamedWithTheFix) {
  // An ORM that logs its SQL to stdout before the program prints the document.
  dir.write("feed.sh",
            "echo 'Executing (default): SELECT \"id\", \"name\", \"price\" FROM \"item\" AS "
            "\"item\" WHERE \"item\".\"id\" <= 3;'\n"
            "psql -XAtq -c 'select json_agg(id order by id) from item where id <= 3'\n");
  dir.write("feed-info.sh",
            "echo; echo '[INFO] connected'\n"
            "psql -XAtq -c 'select json_agg(id order by id) from item where id <= 3'\n");
  config("  - name: feed\n"
         "    command: [sh, feed.sh]\n"
         "    snapshot: true\n"
         "  - name: feed-info\n"
         "    command: [sh, feed-info.sh]\n"
         "    snapshot: true\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1);
  Results res = results();
  const std::string fix =
      " comes before the document — send the ORM's log to stderr (Sequelize: logging: "
      "console.error; Django: LOGGING handlers to stderr) or write the snapshot to a file "
      "(snapshot.from)";
  EXPECT_EQ(stage(res, "feed").error,
            "cold run 1/2: stage 'feed': stdout is not JSON: line 1 \"Executing (default): SELECT "
            "\"id\", \"name\", \"price\" FROM \"item\" AS \"item\" WHERE \"i…\"" + fix);
  // A log line that starts like JSON: the document parses from a later line on.
  EXPECT_EQ(stage(res, "feed-info").error,
            "cold run 1/2: stage 'feed-info': stdout is not JSON: line 2 \"[INFO] connected\"" +
                fix);
}

}  // namespace
}  // namespace coldgate::measure
