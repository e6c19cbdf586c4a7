#include "report/github.hpp"

#include <gtest/gtest.h>

namespace coldgate::report {
namespace {

using namespace coldgate::results;

TEST(Github, EscapesDataAndPropertiesAsTheRunnerExpects) {
  EXPECT_EQ(escape_command_data("50% done\r\n::set-env name=x::y"),
            "50%25 done%0D%0A::set-env name=x::y");
  EXPECT_EQ(escape_command_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
}

TEST(Github, AnnotatesRegressionsSlowerMetricsSnapshotsAndFailures) {
  Results r;
  StageResult ok;
  ok.name = "config-load";
  ok.snapshot = SnapshotResult{SnapshotStatus::changed,
                               "snapshots/a,b:c.json",
                               "snapshots/a,b:c.json.new",
                               "",
                               "snapshot changed: 1 path differs\nsecond line",
                               ""};
  r.stages.push_back(ok);
  StageResult bad;
  bad.name = "crash";
  bad.error = "killed by SIGSEGV; stderr ends:\n100% broken";
  r.stages.push_back(bad);
  r.gate = GateResult{};
  r.gate->metrics.push_back(
      {"config-load", "wall_ms", "ms", Verdict::regression, 240, 2496, 10.4, "10.4× ≥ max_ratio 10"});
  r.gate->metrics.push_back({"config-load", "cpu_ms", "ms", Verdict::slower, 100, 250, 2.5, ""});
  r.gate->metrics.push_back({"config-load", "peak_rss_bytes", "bytes", Verdict::same, 1, 1, 1, ""});
  r.gate->environment_differences = {"postgres_version: 15.8 → 16.1"};
  EXPECT_EQ(
      annotations(r),
      "::error title=coldgate%3A stage failed::crash: killed by SIGSEGV; stderr ends:%0A100%25 "
      "broken\n"
      "::error title=coldgate%3A regression::config-load wall_ms: regression 10.4× (240.0 ms → "
      "2.50 s): 10.4× ≥ max_ratio 10\n"
      "::warning title=coldgate%3A slower::config-load cpu_ms: slower 2.50× (100.0 ms → 250.0 ms)\n"
      "::warning title=coldgate%3A environment differs from the baseline::postgres_version: "
      "15.8 → 16.1\n"
      "::error file=snapshots/a%2Cb%3Ac.json,title=coldgate%3A snapshot changed::config-load: "
      "snapshot changed: 1 path differs%0Asecond line (candidate: snapshots/a,b:c.json.new)\n");
}

TEST(Github, OnlyRegressionsAndSlowerMetricsAreAnnotated) {
  Results r;
  StageResult s;
  s.name = "fine";
  r.stages.push_back(s);
  r.gate = GateResult{};
  for (Verdict v : {Verdict::same, Verdict::faster, Verdict::added, Verdict::removed})
    r.gate->metrics.push_back({"fine", "wall_ms", "ms", v, 10, 10.5, 1.05, "within thresholds"});
  EXPECT_EQ(annotations(r), "");
  r.gate->metrics.push_back({"fine", "wall_ms", "ms", Verdict::slower, 10, 15, 1.5, ""});
  EXPECT_EQ(annotations(r),
            "::warning title=coldgate%3A slower::fine wall_ms: slower 1.50× (10.0 ms → 15.0 ms)\n");
}

TEST(Github, NothingToSayWhenAllIsWell) {
  Results r;
  StageResult s;
  s.name = "fine";
  s.snapshot = SnapshotResult{SnapshotStatus::match, "snapshots/f.json", "", "", "", ""};
  r.stages.push_back(s);
  EXPECT_EQ(annotations(r), "");
  EXPECT_NE(stop_commands_token(), stop_commands_token());
}

}  // namespace
}  // namespace coldgate::report
