#include "gate/gate.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "results/json.hpp"
#include "support/golden.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::gate {
namespace {

using namespace coldgate::results;

Results two_stages() {
  Results r;
  StageResult a;
  a.name = "config-load-jit";
  a.snapshot = SnapshotResult{SnapshotStatus::match, "snapshots/a.json", "", "", "", ""};
  r.stages.push_back(a);
  StageResult b;
  b.name = "config|load";
  b.snapshot = SnapshotResult{SnapshotStatus::changed, "snapshots/b.json", "snapshots/b.json.new", "", "", ""};
  r.stages.push_back(b);
  return r;
}

TEST(Gate, VerdictCountsFailuresAndPasses) {
  Results r = two_stages();
  EXPECT_EQ(verdict(r), "failed: 1 snapshot changed (config|load)");
  EXPECT_FALSE(passed(r));

  r.stages[1].snapshot->status = SnapshotStatus::rearranged;
  EXPECT_EQ(verdict(r), "failed: 1 snapshot rearranged (config|load)");
  EXPECT_FALSE(passed(r));
  r.stages[1].snapshot->status = SnapshotStatus::match;
  EXPECT_EQ(verdict(r), "passed: 2 stages, 2 snapshots match");
  EXPECT_TRUE(passed(r));
  r.stages[1].snapshot->status = SnapshotStatus::updated;
  EXPECT_EQ(verdict(r), "passed: 2 stages, 1 snapshot match, 1 updated");
  EXPECT_TRUE(passed(r));
  r.stages[0].error = "cold run 1/3: exit status 1";
  r.stages[0].snapshot.reset();
  EXPECT_EQ(verdict(r), "failed: 1 stage failed (config-load-jit)");
  EXPECT_FALSE(passed(r));
}

Results fixture(const std::string& name) {
  auto path = testing::source_dir() / "tests/gate/fixtures" / name;
  return results::from_json(testing::slurp(path), name);
}

// One line per verdict: what the golden file tests/gate/fixtures/expected-gate.txt holds
// (COLDGATE_UPDATE_GOLDEN=1 rewrites it, support/golden.hpp; review the diff).
std::string lines(const GateResult& g) {
  std::string out;
  auto num = [](const std::optional<double>& v) { return v ? fmt::format("{:.10g}", *v) : "-"; };
  for (const auto& m : g.metrics) {
    out +=
        fmt::format("{} {} {}: {} → {} ({}) {}\n", m.stage, m.metric, to_string(m.verdict), num(m.base_median),
                    num(m.head_median), m.ratio ? fmt::format("{:.3g}", *m.ratio) : "-", m.reason);
  }
  for (const auto& s : g.stages_new) out += "new stage " + s + "\n";
  for (const auto& s : g.stages_removed) out += "removed stage " + s + "\n";
  for (const auto& d : g.environment_differences) out += "environment " + d + "\n";
  return out;
}

Metric ms(std::vector<double> cold, std::vector<double> warm = {}) {
  return {"ms", cold, warm};
}

// A result with one stage holding one metric.
Results one(const std::string& metric, Metric m, const std::string& stage = "s") {
  Results r;
  StageResult s;
  s.name = stage;
  s.metrics.emplace_back(metric, std::move(m));
  r.stages.push_back(s);
  return r;
}

MetricVerdict single_verdict(const Results& head, const Results& base, const Thresholds& t = {}) {
  GateResult g = compare(head, base, "base.json", t);
  EXPECT_EQ(g.metrics.size(), 1u) << lines(g);
  return g.metrics.empty() ? MetricVerdict{} : g.metrics.front();
}

TEST(Gate, ARunThatStoppedFailsWithWhyAsItsVerdict) {
  Results r;
  StageResult measured;
  measured.name = "first";
  r.stages.push_back(measured);  // measured before the server was lost: still not a pass
  r.stopped = Stopped{1, results::StopPhase::setup, "sql schema.sql", "schema.sql:12:3",
                      "SQLSTATE 42703: column \"nam\" does not exist", {"items", "other"}};
  EXPECT_FALSE(passed(r));
  EXPECT_EQ(verdict(r), "failed: setup step sql schema.sql at schema.sql:12:3: SQLSTATE 42703: "
                        "column \"nam\" does not exist; 2 stages not run");
  // The first line of a stderr tail and its last stating line, as for a failed stage.
  r.stopped = Stopped{1, results::StopPhase::setup, "command sh seed.sh", "coldgate.yaml:5:5",
                      "setup command `sh seed.sh` failed (exit status 1):\nloading\nno seeds here",
                      {"items"}};
  EXPECT_EQ(verdict(r), "failed: setup step command sh seed.sh at coldgate.yaml:5:5: setup "
                        "command `sh seed.sh` failed (exit status 1): no seeds here; 1 stage not run");
  r.stopped = Stopped{1, results::StopPhase::build, "", "build (head 5d6e7f8a9b0c)", "`make` failed (exit status 2)", {}};
  EXPECT_EQ(verdict(r), "failed: build (head 5d6e7f8a9b0c): `make` failed (exit status 2)");
  r.stopped = Stopped{2, results::StopPhase::config, "", "coldgate.yaml:3:10",
                      "setup[0].sql: file not found: schema.sql", {"items"}};
  EXPECT_EQ(verdict(r), "config error at coldgate.yaml:3:10: setup[0].sql: file not found: "
                        "schema.sql; 1 stage not run");
  r.stopped = Stopped{2, results::StopPhase::usage, "", "--stage", "no stage 'x' in coldgate.yaml", {}};
  EXPECT_EQ(verdict(r), "usage error at --stage: no stage 'x' in coldgate.yaml");
  r.stopped = Stopped{3, results::StopPhase::server, "", "database", "cannot start PostgreSQL", {"items"}};
  EXPECT_EQ(verdict(r), "infrastructure error at database: cannot start PostgreSQL; 1 stage not run");
  r.stopped = Stopped{130, results::StopPhase::setup, "psql dump.sql", "", "interrupted by SIGINT", {"items"}};
  EXPECT_EQ(verdict(r), "interrupted by SIGINT during setup step psql dump.sql; 1 stage not run");
  r.stopped = Stopped{130, results::StopPhase::server, "", "", "interrupted by SIGTERM", {"items"}};
  EXPECT_EQ(verdict(r), "interrupted by SIGTERM while the server started; 1 stage not run");
  r.stopped = Stopped{130, results::StopPhase::stages, "", "", "interrupted by SIGINT", {"items", "other"}};
  EXPECT_EQ(verdict(r), "interrupted by SIGINT during stage items; 2 stages not run");
  r.stopped = Stopped{130, results::StopPhase::stages, "", "", "interrupted by SIGINT", {}};
  EXPECT_EQ(verdict(r), "interrupted by SIGINT during stages");
  // The stage the interrupt left partial is its place; the next one is the first not run.
  r.stopped = Stopped{130, results::StopPhase::stages, "", "stage first, after cold run 2 of 5",
                      "interrupted by SIGINT", {"second"}};
  EXPECT_EQ(verdict(r), "interrupted by SIGINT during stage first, after cold run 2 of 5; 1 stage not run");
}

TEST(GateCompare, FixturesGiveTheGoldenVerdicts) {
  Results head = fixture("head.json");
  head.gate = compare(head, fixture("base.json"), "base.json", {});
  testing::expect_golden(testing::source_dir() / "tests/gate/fixtures/expected-gate.txt",
                         lines(*head.gate));
  EXPECT_EQ(verdict(head),
            "failed: 1 stage failed (broken), 4 regressions (config-load wall_ms 10.4×, jit "
            "jit_total_ms from 0, single wall_ms 13.3×, memory peak_rss_bytes 12.0×), 1 snapshot "
            "changed (config-load)");
  EXPECT_FALSE(passed(head));
  EXPECT_EQ(head.gate->base_git.commit, "1111111111111111111111111111111111111111");
  // The gate block survives results.json.
  Results again = results::from_json(results::to_json(head), "again.json");
  ASSERT_TRUE(again.gate);
  EXPECT_EQ(lines(*again.gate), lines(*head.gate));
}

TEST(GateCompare, TenTimesSlowerIsARegressionOnlyWithTheDeltaAndApartRanges) {
  auto v =
      single_verdict(one("wall_ms", ms({1000, 1040, 1080})), one("wall_ms", ms({95, 100, 105})));
  EXPECT_EQ(v.verdict, Verdict::regression);
  EXPECT_DOUBLE_EQ(*v.ratio, 10.4);
  EXPECT_EQ(v.reason, "10.4× ≥ max_ratio 10, +940.0 ms ≥ min_delta 20.0 ms, ranges apart");
  // Just below the ratio: slower.
  EXPECT_EQ(single_verdict(one("wall_ms", ms({990})), one("wall_ms", ms({100}))).verdict, Verdict::slower);
  // 12× but only +11 ms: noise under the floor, same.
  v = single_verdict(one("wall_ms", ms({12})), one("wall_ms", ms({1})));
  EXPECT_EQ(v.verdict, Verdict::same);
  EXPECT_EQ(v.reason, "12.0×, but the difference of 11.0 ms is under min_delta 20.0 ms");
  // Overlapping ranges: the head's fastest run is not slower than the base's slowest.
  v = single_verdict(one("wall_ms", ms({1500, 1500, 1500})), one("wall_ms", ms({100, 100, 2000})));
  EXPECT_EQ(v.verdict, Verdict::slower);
  EXPECT_EQ(v.reason,
            "15.0× but the ranges overlap (fastest head run 1.50 s ≤ slowest base run 2.00 s)");
}

TEST(GateCompare, WarnRatioGivesSlowerAndFasterElseSame) {
  EXPECT_EQ(single_verdict(one("wall_ms", ms({200})), one("wall_ms", ms({100}))).verdict, Verdict::slower);
  EXPECT_EQ(single_verdict(one("wall_ms", ms({199})), one("wall_ms", ms({100}))).verdict, Verdict::same);
  EXPECT_EQ(single_verdict(one("wall_ms", ms({50})), one("wall_ms", ms({100}))).verdict, Verdict::faster);
  EXPECT_EQ(single_verdict(one("wall_ms", ms({51})), one("wall_ms", ms({100}))).verdict, Verdict::same);
  // A hundred times faster is just faster.
  EXPECT_EQ(single_verdict(one("wall_ms", ms({1})), one("wall_ms", ms({100}))).verdict, Verdict::faster);
}

TEST(GateCompare, ZeroBaseMedianHasNoRatioAndNeverDividesByZero) {
  auto v = single_verdict(one("jit_total_ms", ms({0, 0})), one("jit_total_ms", ms({0, 0})));
  EXPECT_EQ(v.verdict, Verdict::same);
  EXPECT_FALSE(v.ratio);
  v = single_verdict(one("connect_ms", ms({0.4, 0.5})), one("connect_ms", ms({0, 0})));
  EXPECT_EQ(v.verdict, Verdict::same);  // infinitely slower, but far below min_delta
  EXPECT_EQ(v.reason, "from 0 to 0.45 ms, but the difference of 0.45 ms is under min_delta 20.0 ms");
  EXPECT_FALSE(v.ratio);
  v = single_verdict(one("jit_total_ms", ms({700, 710})), one("jit_total_ms", ms({0, 0})));
  EXPECT_EQ(v.verdict, Verdict::regression);
  EXPECT_FALSE(v.ratio);
  EXPECT_EQ(v.reason, "from 0 to 705.0 ms ≥ max_ratio 10, +705.0 ms ≥ min_delta 20.0 ms, ranges apart");
  // Head at 0 from a positive base: faster, once past the floor.
  EXPECT_EQ(single_verdict(one("wall_ms", ms({0})), one("wall_ms", ms({50}))).verdict, Verdict::faster);
  EXPECT_EQ(single_verdict(one("wall_ms", ms({0})), one("wall_ms", ms({5}))).verdict, Verdict::same);
}

TEST(GateCompare, SubMillisecondMediansNeverRegress) {
  auto v = single_verdict(one("decode_ms", ms({0.05, 0.06, 0.04})),
                          one("decode_ms", ms({0.001, 0.002, 0.001})));
  EXPECT_EQ(v.verdict, Verdict::same);
  EXPECT_NEAR(*v.ratio, 50, 1e-9);
}

// The noise of ten A/A runs of a sub-millisecond stage: ratios past warn_ratio both ways, but
// differences under min_delta, so neither a badge nor an annotation.
TEST(GateCompare, TheNoiseFloorHoldsForSlowerAndFasterToo) {
  auto v = single_verdict(one("query_ms", ms({3.1, 3.4, 3.9})), one("query_ms", ms({1.1, 1.22, 1.3})));
  EXPECT_EQ(v.verdict, Verdict::same);
  EXPECT_NEAR(*v.ratio, 3.40 / 1.22, 1e-9);
  EXPECT_EQ(v.reason, "2.79×, but the difference of 2.18 ms is under min_delta 20.0 ms");
  EXPECT_EQ(single_verdict(one("execution_ms", ms({0.16})), one("execution_ms", ms({0.40})))
                .verdict,
            Verdict::same);
  // Bytes have their own floor (min_delta_bytes, 16 MiB by default).
  EXPECT_EQ(single_verdict(one("peak_rss_bytes", {"bytes", {30e6}, {}}),
                           one("peak_rss_bytes", {"bytes", {10e6}, {}}))
                .verdict,
            Verdict::slower);
  EXPECT_EQ(single_verdict(one("peak_rss_bytes", {"bytes", {3e6}, {}}),
                           one("peak_rss_bytes", {"bytes", {1e6}, {}}))
                .verdict,
            Verdict::same);
  // Counts have no floor: twice the JIT functions is slower when gated.
  config::Gate g;
  g.metrics = {"jit_functions"};
  Thresholds t;
  t.defaults = g;
  EXPECT_EQ(single_verdict(one("jit_functions", {"count", {20}, {}}),
                           one("jit_functions", {"count", {10}, {}}), t)
                .verdict,
            Verdict::slower);
}

TEST(GateCompare, ColdSamplesDecideAndWarmOnesOnlyWithoutCold) {
  // Warm repetitions ten times slower, cold ones unchanged: the cold median decides.
  auto v = single_verdict(one("query_ms", ms({11, 10, 12}, {300, 350, 400})),
                          one("query_ms", ms({10, 11, 12}, {3, 3.5, 4})));
  EXPECT_EQ(v.verdict, Verdict::same);
  EXPECT_DOUBLE_EQ(*v.base_median, 11);
  // A metric with warm samples only is gated on them.
  v = single_verdict(one("warm_only_ms", ms({}, {300, 350, 400})),
                     one("warm_only_ms", ms({}, {3, 3.5, 4})));
  EXPECT_EQ(v.verdict, Verdict::regression);
}

TEST(GateCompare, MemoryUsesMinDeltaBytesAndPerStageOverrides) {
  const double mib = 1024 * 1024;
  Results head = one("peak_rss_bytes", {"bytes", {11 * mib}, {}});
  Results base = one("peak_rss_bytes", {"bytes", {1 * mib}, {}});
  auto v = single_verdict(head, base);
  EXPECT_EQ(v.verdict, Verdict::same);
  EXPECT_EQ(v.reason, "11.0×, but the difference of 10.0 MiB is under min_delta 16.0 MiB");
  Thresholds t;
  t.stages["s"].min_delta_bytes = 8ull << 20;
  EXPECT_EQ(single_verdict(head, base, t).verdict, Verdict::regression);
  // Another stage keeps the defaults.
  t.stages.clear();
  t.stages["other"].min_delta_bytes = 1;
  EXPECT_EQ(single_verdict(head, base, t).verdict, Verdict::same);
}

TEST(GateCompare, GateMetricsChoosesWhatIsGated) {
  Results head = one("wall_ms", ms({1000}));
  head.stages[0].metrics.emplace_back("rows", Metric{"count", {50}, {}});
  Results base = one("wall_ms", ms({10}));
  base.stages[0].metrics.emplace_back("rows", Metric{"count", {1}, {}});
  Thresholds t;
  t.defaults.metrics = {"rows"};
  auto v = single_verdict(head, base, t);
  EXPECT_EQ(v.metric, "rows");
  EXPECT_EQ(v.verdict, Verdict::regression);  // counts have no absolute floor
  EXPECT_TRUE(is_gated(config::Gate{}, "jit_total_ms"));
  EXPECT_TRUE(is_gated(config::Gate{}, "peak_rss_bytes"));
  EXPECT_FALSE(is_gated(config::Gate{}, "result_bytes"));
  EXPECT_FALSE(is_gated(config::Gate{}, "rows"));
}

TEST(GateCompare, MissingStagesAndOneSidedMetricsAreNewOrRemoved) {
  Results head = one("wall_ms", ms({5}), "added");
  Results base = one("wall_ms", ms({5}), "gone");
  GateResult g = compare(head, base, "base.json", {});
  EXPECT_EQ(lines(g),
            "added wall_ms new: - → 5 (-) stage not in the baseline\n"
            "gone wall_ms removed: 5 → - (-) stage not in the head results\n"
            "new stage added\nremoved stage gone\n");
  // A metric on one side only.
  head = one("cache_ms", ms({2}));
  base = one("old_ms", ms({3}));
  g = compare(head, base, "base.json", {});
  EXPECT_EQ(lines(g),
            "s cache_ms new: - → 2 (-) metric not in the baseline\n"
            "s old_ms removed: 3 → - (-) metric not in the head results\n");
  // Empty sample lists count as absent.
  EXPECT_TRUE(compare(one("wall_ms", ms({})), one("wall_ms", ms({})), "b", {}).metrics.empty());
}

TEST(GateCompare, FailedStagesFailTheGateWhateverTheMetrics) {
  Results head = one("wall_ms", ms({5}));
  head.stages[0].error = "cold run 1/1: exit status 1";
  Results base = one("wall_ms", ms({5}));
  head.gate = compare(head, base, "base.json", {});
  EXPECT_TRUE(head.gate->metrics.empty());
  EXPECT_FALSE(passed(head));
  // A stage that failed in the baseline has no baseline to compare with.
  Results ok = one("wall_ms", ms({500}));
  base.stages[0].error = "timeout";
  auto v = single_verdict(ok, base);
  EXPECT_EQ(v.verdict, Verdict::added);
  EXPECT_EQ(v.reason, "stage failed in the baseline");
}

TEST(GateCompare, BadSamplesAreUsageErrorsNamingFileStageAndMetric) {
  auto message = [](Results head, Results base) -> std::string {
    try {
      compare(head, base, "base.json", {});
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage);
      return e.message();
    }
    return "no error";
  };
  Results good = one("wall_ms", ms({5}));
  EXPECT_EQ(message(good, one("wall_ms", ms({5, std::nan("")}))),
            "base.json: stage 's', metric wall_ms: cold sample 2 is nan (not a finite number)");
  EXPECT_EQ(message(one("wall_ms", ms({1}, {std::numeric_limits<double>::infinity()})), good),
            "head results: stage 's', metric wall_ms: warm sample 1 is inf (not a finite number)");
  EXPECT_EQ(message(good, one("peak_rss_bytes", {"bytes", {-1}, {}})),
            "base.json: stage 's', metric peak_rss_bytes: cold sample 1 is -1 (a time or size "
            "cannot be negative)");
  // A command's own metric may be negative.
  EXPECT_EQ(message(good, one("balance", {"eur", {-1}, {}})), "no error");
}

TEST(GateCompare, BadFixturesFailWithClearMessages) {
  auto error = [](const std::string& name) -> std::string {
    try {
      check_samples(fixture(name), name);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage) << name;
      return e.message();
    }
    return "no error";
  };
  EXPECT_EQ(error("negative.json"),
            "negative.json: stage 'steady', metric query_ms: warm sample 2 is -3.5 (a time or size "
            "cannot be negative)");
  EXPECT_EQ(error("wrong-schema.json"),
            "wrong-schema.json: not a coldgate-results/1 file (its \"schema\" member differs)");
  EXPECT_EQ(error("not-json.json"),
            "not-json.json: not valid JSON (expected a coldgate results file)");
  // JSON has no NaN (writers print it as null); null and 1e999 stop results::from_json already.
  EXPECT_EQ(error("null-sample.json"),
            "null-sample.json: stage 'steady' metric wall_ms: cold sample 1 is null, not a number "
            "(NaN and infinity are written as null)");
  EXPECT_EQ(error("infinite.json"),
            "infinite.json: not valid JSON (expected a coldgate results file)");
}

TEST(GateCompare, EnvironmentDifferencesAreRecordedAndCanBeAnError) {
  Results head = one("wall_ms", ms({5}));
  Results base = one("wall_ms", ms({5}));
  base.environment = {"a", 2, "Intel Xeon", "Linux 6.1", "Debian", "local", "15.8", 150008, {}};
  head.environment = {"b", 4, "AMD EPYC", "Linux 6.5", "Debian", "container", "16.1", 160001, {}};
  GateResult g = compare(head, base, "base.json", {});
  EXPECT_EQ(
      g.environment_differences,
      (std::vector<std::string>{"postgres major version: 15 → 16", "provider: local → container",
                                "cpu_model: Intel Xeon → AMD EPYC", "cpus: 2 → 4 (info)",
                                "kernel: Linux 6.1 → Linux 6.5 (info)"}));
  Thresholds strict;
  strict.defaults.require_same_environment = true;
  try {
    compare(head, base, "base.json", strict);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_EQ(e.message(),
              "base.json: measured in another environment (postgres major version: 15 → 16; "
              "provider: local → container; cpu_model: Intel Xeon → AMD EPYC) and "
              "gate.require_same_environment is true; compare results from matching runners");
  }
  // Informational differences alone are no error; a minor version shows as info.
  head.environment = base.environment;
  head.environment.host = "c";
  head.environment.postgres_version = "15.9";
  head.environment.postgres_version_num = 150009;
  g = compare(head, base, "base.json", strict);
  EXPECT_EQ(g.environment_differences,
            std::vector<std::string>{"postgres version: 15.8 → 15.9 (info)"});
}

TEST(Gate, VerdictWithAGateSaysNoRegressionAndCountsSlower) {
  Results head = one("wall_ms", ms({300}));
  head.gate = compare(head, one("wall_ms", ms({100})), "base.json", {});
  EXPECT_EQ(verdict(head), "passed: 1 stage, 0 snapshots match, no regression (1 slower)");
  EXPECT_TRUE(passed(head));
}

// A pull request that adds the index four lookups on article lacked: their plans read 6,412
// blocks per call before (a sequential scan; pg_stat_statements says 6,415 with planning's
// catalog reads) and 10–53 after, and base's missing_index is gone. The verdict says so.
TEST(Gate, VerdictOfAFasterPullRequestSaysWhatImproved) {
  auto stage_of = [](const std::vector<double>& execution_blocks, double catalog) {
    StageResult s;
    s.name = "articles";
    s.kind = StageKind::command;
    for (std::size_t i = 0; i < execution_blocks.size(); ++i) {
      QueryStats q;
      q.queryid = fmt::format("{}{}", catalog, i);
      q.query = fmt::format("select * from article where \"authorId\" = $1 and k{} = $2", i);
      q.text_id = fmt::format("{:016}", i);
      q.calls = 20;
      q.rows = 20;
      q.exec_ms = 20;
      q.blocks_per_call = execution_blocks[i] + catalog;
      q.blocks = *q.blocks_per_call * q.calls;
      q.plan = StatementPlan{1, fmt::format("shape{}", execution_blocks[i] > 1000),
                             fmt::format(R"({{"Node Type": "Seq Scan", "Relation Name": "article", )"
                                         R"("Shared Hit Blocks": {}, "Shared Read Blocks": 0}})",
                                         execution_blocks[i])};
      s.queries.push_back(q);
    }
    return s;
  };
  Results base;
  base.stages.push_back(stage_of({6412, 6412, 6412, 6412}, 3));
  Diagnosis index{"articles", results::DiagnosisKind::missing_index, "Seq Scan on article …", {}, "30",
                  "select * from article where \"authorId\" = $1 and k0 = $2"};
  index.facts = {{"table", "article"}, {"columns", "\"authorId\""}};
  base.diagnoses.push_back(index);
  Results head;
  head.stages.push_back(stage_of({10, 21, 34, 53}, 9));
  head.gate = compare(head, base, "base.json", {});
  mark_diagnoses(head, base);
  EXPECT_TRUE(passed(head));
  EXPECT_EQ(verdict(head),
            "passed: 1 stage, 0 snapshots match, no regression — 4 statements faster: blocks per "
            "call 6,412 → 10–53; missing index on article (\"authorId\") fixed");
  // Nothing better: the verdict says no more than before.
  Results same;
  same.stages.push_back(stage_of({10, 21, 34, 53}, 9));
  same.gate = compare(same, head, "base.json", {});
  EXPECT_EQ(verdict(same), "passed: 1 stage, 0 snapshots match, no regression");
}

}  // namespace
}  // namespace coldgate::gate

namespace coldgate::gate {
namespace {

// A stage measured with `cold: process` on one side and `cold: restart` on the other is not
// silently gated: the difference is in the gate block, and an error under
// require_same_environment. A changed setting is recorded but is the change under test.
TEST(GateCompare, HowEachSideWasMeasuredIsComparedAndRecorded) {
  Results head = one("wall_ms", ms({100, 101}));
  Results base = one("wall_ms", ms({100, 102}));
  head.stages[0].kind = base.stages[0].kind = StageKind::sql;
  head.stages[0].cold_mode = ColdMode::restart;
  base.stages[0].cold_mode = ColdMode::process;
  head.stages[0].runs = 2;
  base.stages[0].runs = 5;
  head.stages[0].warm = base.stages[0].warm = 0;
  head.stages[0].settings = {{"jit", "off"}};
  Thresholds t;
  t.stages["s"].max_ratio = 4;
  GateResult g = compare(head, base, "base.json", t);
  ASSERT_EQ(g.measurement_differences.size(), 3u);
  EXPECT_EQ(g.measurement_differences[0].field, "cold");
  EXPECT_EQ(g.measurement_differences[0].base, "process");
  EXPECT_EQ(g.measurement_differences[0].head, "restart");
  EXPECT_EQ(g.measurement_differences[1].field, "runs");
  EXPECT_EQ(g.measurement_differences[2].field, "settings.jit");
  EXPECT_EQ(g.measurement_differences[2].base, "");
  EXPECT_EQ(g.measurement_differences[2].head, "off");
  // The thresholds used are recorded: the shared gate, and the stage whose own gate differs.
  EXPECT_EQ(g.thresholds.max_ratio, 10);
  EXPECT_EQ(g.thresholds.min_delta_ms, 20);
  ASSERT_EQ(g.stage_thresholds.count("s"), 1u);
  EXPECT_EQ(g.stage_thresholds.at("s").max_ratio, 4);
  // Both survive results.json.
  head.gate = g;
  Results again = results::from_json(results::to_json(head), "again.json");
  ASSERT_TRUE(again.gate);
  EXPECT_EQ(again.gate->measurement_differences.size(), 3u);
  EXPECT_EQ(again.gate->measurement_differences[0].head, "restart");
  EXPECT_EQ(again.gate->stage_thresholds.at("s").max_ratio, 4);
  EXPECT_EQ(again.stages[0].settings, (std::map<std::string, std::string>{{"jit", "off"}}));

  t.defaults.require_same_environment = true;
  try {
    compare(head, base, "base.json", t);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_NE(e.message().find("stage s cold: process → restart; stage s runs: 5 → 2"),
              std::string::npos)
        << e.message();
    EXPECT_EQ(e.message().find("settings.jit"), std::string::npos) << e.message();
  }
  // Only a setting differs: recorded, and no error even when the environment must match.
  head.stages[0].cold_mode = ColdMode::process;
  head.stages[0].runs = 5;
  EXPECT_EQ(compare(head, base, "base.json", t).measurement_differences.size(), 1u);
}

}  // namespace
}  // namespace coldgate::gate
