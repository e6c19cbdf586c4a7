#include "report/table.hpp"

#include <gtest/gtest.h>

namespace coldgate::report {
namespace {

using namespace coldgate::measure;

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

Results two_stages() {
  Results r;
  r.title = "Start-up";
  StageResult jit;
  jit.name = "config-load-jit";
  jit.explain = Explain{};
  jit.explain->jit = true;
  jit.metric("wall_ms", "ms") = {"ms", {2400, 2380, 2520}, {2100}};
  jit.metric("execution_ms", "ms") = {"ms", {1911}, {}};
  jit.metric("jit_functions", "count") = {"count", {1404}, {}};
  jit.metric("jit_emission_ms", "ms") = {"ms", {242}, {}};
  jit.metric("jit_total_ms", "ms") = {"ms", {703}, {}};
  jit.snapshot = SnapshotResult{"match", "snapshots/a.json", "", "", "", ""};
  r.stages.push_back(jit);
  StageResult off;
  off.name = "config|load";
  off.explain = Explain{};
  off.metric("wall_ms", "ms") = {"ms", {400}, {}};
  off.metric("jit_total_ms", "ms") = {"ms", {0}, {}};
  off.snapshot = SnapshotResult{"changed", "snapshots/b.json", "snapshots/b.json.new", "", "snapshot changed: 1 path", "-a\n+b\n"};
  r.stages.push_back(off);
  return r;
}

TEST(Table, GoldenMarkdown) {
  EXPECT_EQ(run_markdown(two_stages()),
            "## Start-up\n\n"
            "**failed: 1 snapshot changed (config|load)**\n\n"
            "| Stage | Metric | Cold median (min – max) | Warm median (min – max) |\n"
            "|---|---|---:|---:|\n"
            "| config-load-jit | wall_ms | 2.40 s (2.38 s – 2.52 s) | 2.10 s |\n"
            "| config-load-jit | execution_ms | 1.91 s | — |\n"
            "| config-load-jit | jit_functions | 1,404 | — |\n"
            "| config-load-jit | jit_total_ms | 703.0 ms | — |\n"
            "| config\\|load | wall_ms | 400.0 ms | — |\n"
            "\n| Stage | Snapshot | Status |\n|---|---|---|\n"
            "| config-load-jit | `snapshots/a.json` | match |\n"
            "| config\\|load | `snapshots/b.json` | changed |\n"
            "\n### config\\|load: snapshot changed\n\nsnapshot changed: 1 path\n"
            "\n```diff\n-a\n+b\n```\n");
}

}  // namespace
}  // namespace coldgate::report
