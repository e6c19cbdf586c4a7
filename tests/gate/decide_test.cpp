// gate::undecided: which time verdicts lie near their threshold, so that `ab` and `stack`
// measure both sides again before they judge (gate.max_extra_runs).
#include "gate/decide.hpp"

#include <gtest/gtest.h>

#include "gate/gate.hpp"

namespace coldgate::gate {
namespace {

using namespace coldgate::results;

Metric ms(std::vector<double> cold, std::vector<double> warm = {}) { return {"ms", cold, warm}; }

StageResult stage(std::vector<std::pair<std::string, Metric>> metrics) {
  StageResult s;
  s.name = "s";
  s.runs = 3;
  for (auto& [name, m] : metrics) s.metrics.emplace_back(name, m);
  return s;
}

// compare()'s verdict of one metric, and undecided() on it.
struct Judged {
  MetricVerdict verdict;
  bool undecided = false;
};

Judged judge(const std::string& name, const Metric& head, const Metric& base,
             const config::Gate& g = {}) {
  Results h;
  Results b;
  h.stages.push_back(stage({{name, head}}));
  b.stages.push_back(stage({{name, base}}));
  Thresholds t;
  t.defaults = g;
  GateResult r = compare(h, b, "base.json", t);
  EXPECT_EQ(r.metrics.size(), 1u);
  if (r.metrics.empty()) return {};
  return {r.metrics.front(), undecided(r.metrics.front(), head, base, g)};
}

// Defaults: max_ratio 10, warn_ratio 2, min_delta 20 ms: the band is 5× … 20×.
TEST(Decide, ARatioBetweenHalfAndTwiceMaxRatioIsUndecided) {
  EXPECT_TRUE(judge("wall_ms", ms({50, 50, 50}), ms({10, 10, 10})).undecided);    // 5×: slower
  EXPECT_FALSE(judge("wall_ms", ms({49, 49, 49}), ms({10, 10, 10})).undecided);   // 4.9×
  Judged r12 = judge("wall_ms", ms({120, 120, 120}), ms({10, 10, 10}));
  EXPECT_EQ(r12.verdict.verdict, Verdict::regression);  // the regression a few runs may undo
  EXPECT_TRUE(r12.undecided);
  EXPECT_TRUE(judge("wall_ms", ms({200, 200, 200}), ms({10, 10, 10})).undecided);  // 20×
  Judged r201 = judge("wall_ms", ms({201, 201, 201}), ms({10, 10, 10}));
  EXPECT_EQ(r201.verdict.verdict, Verdict::regression);
  EXPECT_FALSE(r201.undecided);  // past 2 × max_ratio with the ranges apart: decided
}

TEST(Decide, OverlappingRangesPastWarnRatioAreUndecided) {
  // 30× but one base run as slow as head's fastest: "slower, the ranges overlap".
  Judged far = judge("db_exec_ms", ms({300, 300, 320}), ms({10, 10, 300}));
  EXPECT_EQ(far.verdict.verdict, Verdict::slower);
  EXPECT_TRUE(far.undecided);
  // 3× (under max_ratio / 2), overlapping: undecided; apart: decided.
  EXPECT_TRUE(judge("wall_ms", ms({60, 90, 90}), ms({30, 30, 60})).undecided);
  EXPECT_FALSE(judge("wall_ms", ms({90, 90, 90}), ms({30, 30, 31})).undecided);
  // Overlapping under warn_ratio: decided (same).
  EXPECT_FALSE(judge("wall_ms", ms({45, 45, 45}), ms({30, 30, 60})).undecided);
}

TEST(Decide, HeadMustBeSlowerByHalfTheFloor) {
  // 5× of a few ms: 4 ms more, under half of min_delta 20 ms — no regression within reach.
  EXPECT_FALSE(judge("db_exec_ms", ms({5, 5, 5}), ms({1, 1, 1})).undecided);
  config::Gate low;
  low.min_delta = std::chrono::milliseconds(8);
  EXPECT_TRUE(judge("db_exec_ms", ms({5, 5, 5}), ms({1, 1, 1}), low).undecided);
  // Faster is never undecided: a faster head cannot become a regression.
  config::Gate tight;
  tight.max_ratio = 1.5;
  tight.warn_ratio = 1.2;
  tight.min_delta = std::chrono::milliseconds(0);
  EXPECT_FALSE(judge("wall_ms", ms({90, 90, 90}), ms({100, 100, 100}), tight).undecided);
  EXPECT_TRUE(judge("wall_ms", ms({100, 100, 100}), ms({100, 100, 100}), tight).undecided);
}

TEST(Decide, OnlyTimeMetricsWithColdSamplesAndARatio) {
  // A count never: its figures repeat exactly, more runs change nothing.
  Metric q{"count", {50, 50, 50}, {}};
  Metric q0{"count", {10, 10, 10}, {}};
  Judged count = judge("db_queries", q, q0);
  EXPECT_EQ(count.verdict.ratio, 5.0);
  EXPECT_FALSE(count.undecided);
  Metric rss{"bytes", {50 << 20, 50 << 20}, {}};
  Metric rss0{"bytes", {10 << 20, 10 << 20}, {}};
  EXPECT_FALSE(judge("peak_rss_bytes", rss, rss0).undecided);
  // Warm samples only: extra cold runs would not add to what is judged.
  EXPECT_FALSE(judge("wall_ms", ms({}, {50, 50}), ms({}, {10, 10})).undecided);
  // A base median of 0 has no ratio.
  EXPECT_FALSE(judge("db_jit_ms", ms({50, 50, 50}), ms({0, 0, 0})).undecided);
  // One side only.
  MetricVerdict added{"s", "wall_ms", "ms", Verdict::added, std::nullopt, 50.0, std::nullopt, ""};
  EXPECT_FALSE(undecided(added, ms({50}), ms({}), {}));
}

TEST(Decide, UndecidedMetricsOfAStagePair) {
  StageResult head = stage({{"wall_ms", ms({100, 100, 100})},
                            {"query_ms", ms({11, 11, 11})},
                            {"db_queries", Metric{"count", {50, 50, 50}, {}}}});
  StageResult base = stage({{"wall_ms", ms({10, 10, 10})},
                            {"query_ms", ms({10, 10, 10})},
                            {"db_queries", Metric{"count", {10, 10, 10}, {}}}});
  EXPECT_EQ(undecided_metrics(head, base, {}), std::vector<std::string>{"wall_ms"});
  // gate.metrics chooses what is gated, and so what can be undecided.
  config::Gate only;
  only.metrics = {"query_ms", "db_queries"};
  EXPECT_TRUE(undecided_metrics(head, base, only).empty());
  // A failed side: nothing to decide.
  StageResult failed = head;
  failed.error = "cold run 2/3: exit status 1";
  EXPECT_TRUE(undecided_metrics(failed, base, {}).empty());
  EXPECT_TRUE(undecided_metrics(head, failed, {}).empty());
  // A bad sample is the whole run's gate's to report, not an extra run's reason.
  StageResult bad = head;
  bad.metrics[0].second.cold[0] = -1;
  EXPECT_TRUE(undecided_metrics(bad, base, {}).empty());
}

}  // namespace
}  // namespace coldgate::gate
