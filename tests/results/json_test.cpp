#include "results/json.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::report {
namespace {

using namespace coldgate::results;

Results sample() {
  Results r;
  r.tool_version = "0.1.0";
  r.started_at = "2026-11-30T01:00:00Z";
  r.finished_at = "2026-11-30T01:00:09Z";
  r.config = "config/demo.yaml";
  r.title = "Start-up";
  r.git = {"0123abcd", "feature-1", "", {}};
  r.environment = {"vm", 2, "AMD EPYC", "Linux 6.1", "Debian GNU/Linux 12 (bookworm)", "local",
                   "15.8", 150008, {{"jit", "on"}, {"shared_buffers", "128MB"}}};
  r.setup = {{"sql", "sql demo/schema.sql", 812.5}};
  StageResult s;
  s.name = "config-load";
  s.kind = StageKind::sql;
  s.cold_mode = ColdMode::restart;
  s.runs = 2;
  s.warm = 1;
  s.metric("wall_ms", "ms") = {"ms", {812.25, 790}, {120.5, 118}};
  s.metric("jit_functions", "count") = {"count", {1404}, {}};
  s.explain = Explain{12.5, 1911, 455863.21, true, 1404, 0, 0, 0, 0, 0, "coldgate-out/explain/config-load.json"};
  s.metric("planning_ms", "ms") = {"ms", {12.5}, {}};
  s.metric("execution_ms", "ms") = {"ms", {1911}, {}};
  s.snapshot = SnapshotResult{SnapshotStatus::changed, "snapshots/config-load.json", "snapshots/config-load.json.new",
                              "ab12", "snapshot changed: 1 path", "diff text"};
  r.stages.push_back(s);
  StageResult f;
  f.name = "broken";
  f.kind = StageKind::command;
  f.cold_mode = ColdMode::process;
  f.runs = 3;
  f.error = "cold run 1/3: exit status 2";
  r.stages.push_back(f);
  r.obsolete_snapshots = {"snapshots/old.json"};
  return r;
}

TEST(ResultsJson, HasTheSchemaAndEveryRawSample) {
  auto doc = nlohmann::json::parse(to_json(sample()));
  EXPECT_EQ(doc["schema"], "coldgate-results/1");
  EXPECT_EQ(doc["environment"]["postgres"]["version_num"], 150008);
  EXPECT_EQ(doc["environment"]["postgres"]["settings"]["jit"], "on");
  EXPECT_EQ(doc["git"]["base"], nullptr);
  auto& st = doc["stages"][0];
  EXPECT_EQ(st["metrics"]["wall_ms"], nlohmann::json::parse(
                                          R"({"unit":"ms","cold":[812.25,790],"warm":[120.5,118]})"));
  EXPECT_EQ(st["snapshot"]["status"], "changed");
  EXPECT_EQ(st["explain"]["total_cost"], 455863.21);
  EXPECT_EQ(doc["stages"][1]["error"], "cold run 1/3: exit status 2");
  EXPECT_EQ(doc["stages"][1]["snapshot"], nullptr);
}

TEST(ResultsJson, RoundTrips) {
  Results r = from_json(to_json(sample()), "r.json");
  EXPECT_EQ(to_json(r), to_json(sample()).replace(0, 0, ""));
  ASSERT_EQ(r.stages.size(), 2u);
  EXPECT_EQ(r.stages[0].find("wall_ms")->warm, (std::vector<double>{120.5, 118}));
  ASSERT_TRUE(r.stages[0].explain);
  EXPECT_EQ(r.stages[0].explain->execution_ms, 1911);
  EXPECT_EQ(r.stages[0].explain->jit_functions, 1404);
  EXPECT_EQ(r.stages[1].error, "cold run 1/3: exit status 2");
  ASSERT_TRUE(r.stages[0].snapshot);
  EXPECT_EQ(r.stages[0].snapshot->diff, "diff text");
}

TEST(ResultsJson, EverySnapshotStatusHasItsName) {
  const std::pair<SnapshotStatus, std::string_view> names[] = {
      {SnapshotStatus::match, "match"},           {SnapshotStatus::changed, "changed"},
      {SnapshotStatus::missing, "missing"},       {SnapshotStatus::malformed, "malformed"},
      {SnapshotStatus::nondeterministic, "nondeterministic"},
      {SnapshotStatus::updated, "updated"},       {SnapshotStatus::rearranged, "rearranged"}};
  for (const auto& [status, name] : names) {
    Results r = sample();
    r.stages[0].snapshot->status = status;
    EXPECT_EQ(nlohmann::json::parse(to_json(r))["stages"][0]["snapshot"]["status"], name);
    EXPECT_EQ(from_json(to_json(r), "r.json").stages[0].snapshot->status, status) << name;
  }
  EXPECT_FALSE(passes(SnapshotStatus::rearranged));  // the file is not byte-identical
}

TEST(ResultsJson, ARunThatStoppedRoundTripsWithWhyAndItsWarnings) {
  Results r = sample();
  r.stages.clear();
  r.stopped = Stopped{1, results::StopPhase::setup, "psql db/dump.sql", "db/dump.sql:12",
                      "psql -f db/dump.sql failed (exit status 3):\npsql:db/dump.sql:12: ERROR:  x",
                      {"config-load", "broken"}};
  r.warnings = {"after setup the stages' database coldgate has no tables, but …"};
  auto doc = nlohmann::json::parse(to_json(r));
  EXPECT_EQ(doc["stopped"], nlohmann::json::parse(R"({"exit_code": 1, "phase": "setup",
      "step": "psql db/dump.sql", "where": "db/dump.sql:12",
      "error": "psql -f db/dump.sql failed (exit status 3):\npsql:db/dump.sql:12: ERROR:  x",
      "not_run": ["config-load", "broken"]})"));
  EXPECT_EQ(doc["warnings"], nlohmann::json::array({r.warnings[0]}));
  Results back = from_json(to_json(r), "r.json");
  EXPECT_EQ(to_json(back), to_json(r));
  ASSERT_TRUE(back.stopped);
  EXPECT_EQ(back.stopped->step, "psql db/dump.sql");
  EXPECT_EQ(back.stopped->not_run, (std::vector<std::string>{"config-load", "broken"}));
  EXPECT_EQ(back.warnings, r.warnings);
  // A stop with no step and no place: null members, read back as empty.
  r.stopped = Stopped{130, results::StopPhase::server, "", "", "interrupted by SIGINT", {}};
  doc = nlohmann::json::parse(to_json(r));
  EXPECT_EQ(doc["stopped"]["step"], nullptr);
  EXPECT_EQ(doc["stopped"]["where"], nullptr);
  back = from_json(to_json(r), "r.json");
  EXPECT_EQ(back.stopped->exit_code, 130);
  EXPECT_EQ(back.stopped->where, "");
  // A complete run has neither member, as results of earlier versions.
  doc = nlohmann::json::parse(to_json(sample()));
  EXPECT_FALSE(doc.contains("stopped"));
  EXPECT_FALSE(doc.contains("warnings"));
  EXPECT_FALSE(from_json(to_json(sample()), "r.json").stopped);
  // Every phase by its name; a name no phase has is an error naming the member.
  for (auto phase : {StopPhase::usage, StopPhase::config, StopPhase::server, StopPhase::build, StopPhase::setup,
                     StopPhase::migrate, StopPhase::stages, StopPhase::scales, StopPhase::remedies,
                     StopPhase::teardown}) {
    EXPECT_EQ(stop_phase_from(to_string(phase)), phase) << to_string(phase);
  }
  r.stopped = Stopped{1, StopPhase::build, "", "", "make failed", {}};
  doc = nlohmann::json::parse(to_json(r));
  EXPECT_EQ(doc["stopped"]["phase"], "build");
  doc["stopped"]["phase"] = "compile";
  try {
    from_json(doc.dump(), "r.json");
    FAIL() << "accepted an unknown phase";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.message(), "r.json: stopped.phase is \"compile\" (expected usage, config, server, build, setup, "
                           "migrate, stages, scales, remedies or teardown)");
  }
}

// A gate against the history store: base_source history and the history block with its
// commits and one series per stage, a missing median and a stage head did not measure.
Results with_history() {
  Results r = sample();
  GateResult g;
  g.baseline = "git:coldgate-history";
  g.base_git = {"e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d", "main", "", {}};
  g.base_source = BaseSource::history;
  r.gate = g;
  HistoryTrend h;
  h.store = "git:coldgate-history";
  h.asked = 5;
  h.commits = {
      {"a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "load: cache realms \"fast\"",
       "2026-11-28T09:00:00Z"},
      {"b2c3d4e5f60718293a4b5c6d7e8f901234567890", "docs: <b>x</b> @team", "2026-11-29T09:00:00Z"},
      {"e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d", "", "2026-11-30T09:00:00Z"}};
  h.series = {{"config-load", "wall_ms", "ms", {801.5, std::nullopt, 790}, 812.25},
              {"broken", "wall_ms", "ms", {20, 21, 22.125}, std::nullopt}};
  r.history = h;
  return r;
}

TEST(ResultsJson, AHistoryBaselineRoundTripsWithItsCommitsAndTrend) {
  Results r = with_history();
  auto doc = nlohmann::json::parse(to_json(r));
  EXPECT_EQ(doc["gate"]["base_source"], "history");
  EXPECT_EQ(doc["history"], nlohmann::json::parse(R"({
      "store": "git:coldgate-history", "asked": 5,
      "commits": [
        {"commit": "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
         "subject": "load: cache realms \"fast\"", "date": "2026-11-28T09:00:00Z"},
        {"commit": "b2c3d4e5f60718293a4b5c6d7e8f901234567890",
         "subject": "docs: <b>x</b> @team", "date": "2026-11-29T09:00:00Z"},
        {"commit": "e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d", "subject": "",
         "date": "2026-11-30T09:00:00Z"}],
      "series": [
        {"stage": "config-load", "metric": "wall_ms", "unit": "ms",
         "medians": [801.5, null, 790], "head": 812.25},
        {"stage": "broken", "metric": "wall_ms", "unit": "ms",
         "medians": [20, 21, 22.125], "head": null}]})"));
  Results back = from_json(to_json(r), "r.json");
  EXPECT_EQ(to_json(back), to_json(r));
  ASSERT_TRUE(back.gate);
  EXPECT_EQ(back.gate->base_source, BaseSource::history);
  ASSERT_TRUE(back.history);
  EXPECT_EQ(back.history->store, "git:coldgate-history");
  EXPECT_EQ(back.history->asked, 5);
  ASSERT_EQ(back.history->commits.size(), 3u);
  EXPECT_EQ(back.history->commits[1].subject, "docs: <b>x</b> @team");
  EXPECT_EQ(back.history->commits[2].date, "2026-11-30T09:00:00Z");
  ASSERT_EQ(back.history->series.size(), 2u);
  EXPECT_EQ(back.history->series[0].medians,
            (std::vector<std::optional<double>>{801.5, std::nullopt, 790}));
  EXPECT_EQ(back.history->series[0].head, 812.25);
  EXPECT_FALSE(back.history->series[1].head);
  // Results without a history baseline have no member, and read back without one.
  EXPECT_FALSE(nlohmann::json::parse(to_json(sample())).contains("history"));
  EXPECT_FALSE(from_json(to_json(sample()), "r.json").history);
}

TEST(ResultsJson, AHistoryBlockSkipsUnknownMembersAndNamesAWrongOne) {
  auto doc = nlohmann::ordered_json::parse(to_json(with_history()));
  doc["history"]["from_a_newer_coldgate"] = {1, 2};
  doc["history"]["series"][0]["spread"] = "wide";
  doc["history"]["commits"][0]["author"] = "someone";
  Results back = from_json(doc.dump(), "r.json");
  EXPECT_EQ(to_json(back), to_json(with_history()));

  auto rejected = [](nlohmann::ordered_json bad) {
    try {
      from_json(bad.dump(), "head.json");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage);
      return e.message();
    }
    return std::string("accepted");
  };
  auto base = nlohmann::ordered_json::parse(to_json(with_history()));
  auto bad = base;
  bad["history"]["series"][0]["medians"][2] = "790";
  EXPECT_EQ(rejected(bad),
            "head.json: history.series[0].medians[2] is \"790\", not a number or null");
  bad = base;
  bad["history"]["asked"] = 2.5;
  EXPECT_EQ(rejected(bad), "head.json: history.asked is 2.5, not a whole number of records");
  bad = base;
  bad["history"]["asked"] = -1;
  EXPECT_EQ(rejected(bad), "head.json: history.asked is -1, not a whole number of records");
  bad = base;
  bad["history"]["commits"][1]["subject"] = nullptr;
  EXPECT_EQ(rejected(bad), "head.json: history.commits[1].subject is null, not a string");
  bad = base;
  bad["history"]["commits"] = "a1b2c3d";
  EXPECT_EQ(rejected(bad), "head.json: history.commits is \"a1b2c3d\", not an array");
  bad = base;
  bad["history"]["series"][1].erase("head");
  EXPECT_EQ(rejected(bad), "head.json: history.series[1] has no \"head\"");
  bad = base;
  bad["history"]["series"][1]["medians"].erase(0);
  EXPECT_EQ(rejected(bad),
            "head.json: history.series[1].medians has 2 values for 3 commits (one per "
            "history.commits entry, null where missing)");
  bad = base;
  bad["history"] = 5;
  EXPECT_EQ(rejected(bad), "head.json: history is 5, not an object");
  bad = base;
  bad["gate"]["base_source"] = "memory";
  EXPECT_EQ(rejected(bad),
            "head.json: gate.base_source is \"memory\" (expected file, interleaved, cache or "
            "history)");
  bad = base;
  bad["gate"]["head_source"] = "cached";
  EXPECT_EQ(rejected(bad),
            "head.json: gate.head_source is \"cached\" (expected measured or cache)");
}

// gate.head_source says whether head came from the cache (a stack's commit measured by an
// earlier run), apart from base_source; results written before it read as measured.
TEST(ResultsJson, HeadSourceIsWrittenAndItsAbsenceReadsAsMeasured) {
  Results r = with_history();
  auto doc = nlohmann::ordered_json::parse(to_json(r));
  EXPECT_EQ(doc["gate"]["head_source"], "measured");
  r.gate->head_cached = true;
  r.gate->base_source = BaseSource::interleaved;
  doc = nlohmann::ordered_json::parse(to_json(r));
  EXPECT_EQ(doc["gate"]["head_source"], "cache");
  EXPECT_EQ(doc["gate"]["base_source"], "interleaved");
  Results back = from_json(doc.dump(), "head.json");
  EXPECT_TRUE(back.gate->head_cached);
  EXPECT_EQ(back.gate->base_source, BaseSource::interleaved);
  doc["gate"].erase("head_source");
  EXPECT_FALSE(from_json(doc.dump(), "head.json").gate->head_cached);
}

// The fuzz seed of a results file with a history baseline reads with its block (the seeds'
// properties themselves are fuzz_results' own, replayed by ctest FuzzCorpus.results).
TEST(ResultsJson, TheHistoryFuzzSeedReadsWithItsBlock) {
  const auto corpus = testing::source_dir() / "tests/fuzz/corpus/results";
  Results seeded = from_json(testing::slurp(corpus / "history.json"), "history.json");
  ASSERT_TRUE(seeded.history);
  ASSERT_TRUE(seeded.gate);
  EXPECT_EQ(seeded.gate->base_source, BaseSource::history);
  EXPECT_EQ(seeded.history->series.at(0).medians,
            (std::vector<std::optional<double>>{12.1, std::nullopt, 12.25}));
}

TEST(ResultsJson, RejectsOtherFilesWithTheirName) {
  for (const char* bad : {"", "{", "[]", R"({"schema":"other/1"})",
                          R"({"schema":"coldgate-results/1","tool":{}})"}) {
    try {
      from_json(bad, "base.json");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage);
      EXPECT_EQ(e.where(), "base.json");
    }
  }
}

TEST(ResultsJson, NonNumericSampleNamesStageMetricAndPosition) {
  std::string text = to_json(sample());
  auto at = text.find("812.25");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 6, "null");
  try {
    from_json(text, "head.json");
    FAIL() << "accepted a null sample";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.message(), "head.json: stage 'config-load' metric wall_ms: cold sample 1 is null, "
                           "not a number (NaN and infinity are written as null)");
  }
}

// How a statement uses its parameters is written by name and read back; a statement measured
// before it was recorded has no member and reads back unset.
TEST(ResultsJson, AStatementsParameterUseRoundTripsAndIsAbsentWhenUnset) {
  Results r = sample();
  QueryStats lookup;
  lookup.queryid = "1";
  lookup.query = "SELECT * FROM t WHERE id = $1";
  lookup.parameters = util::ParameterUse::lookup;
  QueryStats other = lookup;
  other.queryid = "2";
  other.query = "SELECT * FROM t LIMIT $1";
  other.parameters = util::ParameterUse::other;
  QueryStats unset = lookup;
  unset.queryid = "3";
  unset.parameters.reset();
  r.stages[0].queries = {lookup, other, unset};
  const std::string text = to_json(r);
  auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["stages"][0]["queries"][0]["parameters"], "lookup");
  EXPECT_EQ(doc["stages"][0]["queries"][1]["parameters"], "other");
  EXPECT_FALSE(doc["stages"][0]["queries"][2].contains("parameters"));
  Results back = from_json(text, "r.json");
  ASSERT_EQ(back.stages[0].queries.size(), 3u);
  EXPECT_EQ(back.stages[0].queries[0].parameters, util::ParameterUse::lookup);
  EXPECT_EQ(back.stages[0].queries[1].parameters, util::ParameterUse::other);
  EXPECT_FALSE(back.stages[0].queries[2].parameters);
  EXPECT_EQ(to_json(back), text);
  std::string bad = text;
  bad.replace(bad.find("\"lookup\""), 8, "\"lookups\"");
  try {
    from_json(bad, "r.json");
    FAIL() << "accepted an unknown parameter use";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "r.json: stage 'config-load' queries[].parameters is \"lookups\" (expected none, "
                           "lookup or other)");
  }
}

// The blocks a statement's captured plan read per call, each side's, round-trip; a side without
// a plan has no member.
TEST(ResultsJson, AStatementSidesExecutionBlocksRoundTripAndAreAbsentWhenUnset) {
  Results r = sample();
  GateResult g;
  g.baseline = "base.json";
  StatementSide base{"11", 1, 1, 4.0, 0.01, 0.02};
  base.execution_blocks_per_call = 3;
  StatementSide head{"12", 1, 1, 260.0, 0.01, 0.9};
  head.execution_blocks_per_call = 253.5;
  g.statements.push_back({"config-load", "SELECT * FROM t WHERE id = $1", base, head, Verdict::regression,
                          "reads 253.5 blocks per call instead of 3"});
  StatementSide unplanned{"13", 2, 1, 4.0, 0.01, 0.02};
  g.statements.push_back({"config-load", "SELECT 1", unplanned, unplanned, Verdict::same, ""});
  r.gate = g;
  const std::string text = to_json(r);
  auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["gate"]["statements"][0]["base"]["execution_blocks_per_call"], 3);
  EXPECT_EQ(doc["gate"]["statements"][0]["head"]["execution_blocks_per_call"], 253.5);
  EXPECT_FALSE(doc["gate"]["statements"][1]["head"].contains("execution_blocks_per_call"));
  Results back = from_json(text, "r.json");
  ASSERT_TRUE(back.gate);
  ASSERT_EQ(back.gate->statements.size(), 2u);
  EXPECT_EQ(back.gate->statements[0].base->execution_blocks_per_call, 3);
  EXPECT_EQ(back.gate->statements[0].head->execution_blocks_per_call, 253.5);
  EXPECT_FALSE(back.gate->statements[1].head->execution_blocks_per_call);
  EXPECT_EQ(to_json(back), text);
}

// The migration's statements keep their blocks and WAL, its growth rows the blocks they were
// classed on and the class by name (a statement from a file without them reads back unset).
TEST(ResultsJson, TheMigrationsBlocksAndGrowthClassRoundTrip) {
  Results r = sample();
  Migration m;
  m.source = "sql_dir db/migrations";
  m.scales = {1, 4, 16};
  m.production_scale = 400;
  MigrationStatement index{"CREATE INDEX i ON orders (amount)", 1, 36.5, 424.0, 159169u};
  MigrationStatement old{"UPDATE t SET a = $1", 2, 0.5, std::nullopt, std::nullopt};
  m.statements = {index, old};
  MigrationGrowth g;
  g.what = "statement `CREATE INDEX i ON orders (amount)`";
  g.values_ms = {36.5, 124.5, std::nullopt};
  g.exponent = 1;
  g.growth = GrowthClass::linear;
  g.projected_ms = 10000;
  g.blocks = {424.0, 829.0, std::nullopt};
  g.counted = "its own";
  MigrationGrowth none;
  none.what = "wall time";
  none.values_ms = {1.0, 2.0, 3.0};
  m.growth = {g, none};
  r.migration = m;
  const std::string text = to_json(r);
  auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["migration"]["statements"][0]["blocks"], 424);
  EXPECT_EQ(doc["migration"]["statements"][0]["wal_bytes"], 159169);
  EXPECT_FALSE(doc["migration"]["statements"][1].contains("blocks"));
  EXPECT_EQ(doc["migration"]["growth"][0]["growth"], "linear");
  EXPECT_EQ(doc["migration"]["growth"][0]["blocks"], nlohmann::json::parse("[424, 829, null]"));
  EXPECT_EQ(doc["migration"]["growth"][1]["growth"], "");
  Results back = from_json(text, "r.json");
  ASSERT_TRUE(back.migration);
  ASSERT_EQ(back.migration->statements.size(), 2u);
  EXPECT_EQ(back.migration->statements[0].blocks, 424);
  EXPECT_EQ(back.migration->statements[0].wal_bytes, 159169u);
  EXPECT_FALSE(back.migration->statements[1].blocks);
  EXPECT_FALSE(back.migration->statements[1].wal_bytes);
  ASSERT_EQ(back.migration->growth.size(), 2u);
  EXPECT_TRUE(back.migration->growth[0].growth == GrowthClass::linear);
  EXPECT_EQ(back.migration->growth[0].counted, "its own");
  EXPECT_EQ(back.migration->growth[0].blocks, g.blocks);
  EXPECT_TRUE(back.migration->growth[1].growth == GrowthClass::none);
  EXPECT_EQ(to_json(back), text);
}

// A diagnosis' kind is written by its name and read back as the same kind; a name no diagnosis
// has is an error naming the member and the stage.
TEST(ResultsJson, ADiagnosisKindRoundTripsByNameAndAnUnknownOneIsNamed) {
  Results r = sample();
  Diagnosis d{"config-load", DiagnosisKind::missing_index, "Seq Scan on item — CREATE INDEX …", {{"rows_removed", 9000}}};
  d.facts = {{"table", "public.item"}, {"columns", "realm_id"}};
  r.diagnoses = {d, {"config-load", DiagnosisKind::planning_exceeds_execution, "planning …", {}}};
  const std::string text = to_json(r);
  auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["diagnoses"][0]["kind"], "missing_index");
  EXPECT_EQ(doc["diagnoses"][1]["kind"], "planning_exceeds_execution");
  Results back = from_json(text, "r.json");
  ASSERT_EQ(back.diagnoses.size(), 2u);
  EXPECT_EQ(back.diagnoses[0].kind, DiagnosisKind::missing_index);
  EXPECT_EQ(back.diagnoses[1].kind, DiagnosisKind::planning_exceeds_execution);
  EXPECT_EQ(to_json(back), text);
  for (auto kind : {DiagnosisKind::jit_dominates, DiagnosisKind::repeated_query, DiagnosisKind::never_analyzed,
                    DiagnosisKind::planning_exceeds_execution, DiagnosisKind::missing_index,
                    DiagnosisKind::misestimate, DiagnosisKind::scan_grows}) {
    EXPECT_EQ(diagnosis_kind_from(to_string(kind)), kind) << to_string(kind);
  }
  doc["diagnoses"][1]["kind"] = "slow_planning";
  try {
    from_json(doc.dump(), "r.json");
    FAIL() << "accepted an unknown diagnosis kind";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.message(), "r.json: diagnosis of stage 'config-load'.kind is \"slow_planning\" (expected "
                           "jit_dominates, repeated_query, never_analyzed, planning_exceeds_execution, "
                           "missing_index, misestimate or scan_grows)");
  }
}

}  // namespace
}  // namespace coldgate::report
