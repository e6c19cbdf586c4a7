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

TEST(Table, FormatsRatios) {
  EXPECT_EQ(format_ratio(10.4), "10.4×");
  EXPECT_EQ(format_ratio(2.3125), "2.31×");
  EXPECT_EQ(format_ratio(0.41), "0.41×");
  EXPECT_EQ(format_ratio(123.4), "123×");
}

StageResult stage(const std::string& name, std::vector<double> wall) {
  StageResult s;
  s.name = name;
  s.metric("wall_ms", "ms") = {"ms", std::move(wall), {}};
  return s;
}

TEST(Table, WithoutBaselineColdAndWarmColumns) {
  Results r;
  r.stages.push_back(stage("a|b", {400}));
  r.stages.back().metric("wall_ms", "ms").warm = {300, 310};
  StageResult failed;
  failed.name = "crash";
  failed.error = "boom";
  r.stages.push_back(failed);
  MetricsTable t = metrics_table(r, nullptr);
  EXPECT_EQ(t.header,
            "| Stage | Metric | Cold median (min – max) | Warm median (min – max) |\n"
            "|---|---|---:|---:|\n");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].text, "| a\\|b | wall_ms | 400.0 ms | 305.0 ms (300.0 ms – 310.0 ms) |\n");
  EXPECT_EQ(t.rows[1].text, "| crash | — | failed | — |\n");
  EXPECT_EQ(t.legend, "");
}

TEST(Table, WithBaselineMarksEachVerdict) {
  Results base;
  base.stages.push_back(stage("s", {100, 90, 110}));
  Results r;
  r.stages.push_back(stage("s", {1040, 1000, 1100}));
  r.stages.back().metric("cpu_ms", "ms") = {"ms", {50}, {}};
  r.stages.back().metric("rows", "count") = {"count", {7}, {}};
  r.stages.push_back(stage("t", {5}));
  r.gate = GateResult{};
  r.gate->metrics = {{"s", "wall_ms", "ms", "regression", 100, 1040, 10.4, ""},
                     {"s", "cpu_ms", "ms", "faster", 200, 50, 0.25, ""},
                     {"t", "wall_ms", "ms", "new", std::nullopt, 5, std::nullopt, ""},
                     {"t", "query_ms", "ms", "removed", 3, std::nullopt, std::nullopt, ""},
                     {"u", "wall_ms", "ms", "removed", 7, std::nullopt, std::nullopt, ""}};
  r.gate->stages_removed = {"u"};
  MetricsTable t = metrics_table(r, &base);
  EXPECT_EQ(t.header, "| Stage | Metric | Before | After | Change |\n|---|---|---:|---:|---|\n");
  std::vector<std::string> rows;
  for (const auto& row : t.rows) rows.push_back(row.text);
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "| s | wall_ms | 100.0 ms (90.0 ms – 110.0 ms) | 1.04 s (1.00 s – 1.10 s) | "
                      "🔴 10.4× regression |\n",
                      "| s | cpu_ms | 200.0 ms | 50.0 ms | 🟢 0.25× faster |\n",
                      "| s | rows | — | 7 | — |\n", "| t | wall_ms | — | 5.00 ms | new |\n",
                      "| t | query_ms | 3.00 ms | — | removed |\n",
                      "| u | wall_ms | 7.00 ms | — | removed |\n"}));
  EXPECT_EQ(t.rows[0].rank, 0);
  EXPECT_EQ(t.rows[1].rank, 2);
  EXPECT_EQ(t.rows[2].rank, 3);
}

}  // namespace
}  // namespace coldgate::report
