// The growth fits (results::fit_growth, stage_growth) on counts whose growth is known, and the
// statement gate on growth classes (gate::compare_statements): constant → linear blocks per call
// (an index lost) and a new linear calls term (a new N+1) are regressions at any size of the
// figures at scale 1; the same classes are `same`.
#include "results/growth.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "gate/gate.hpp"

namespace coldgate::results {
namespace {

const std::vector<double> k_three = {1, 4, 16};

std::vector<std::optional<double>> of(std::vector<double> v) {
  return {v.begin(), v.end()};
}

TEST(GrowthClass, BandsOfTheExponent) {
  EXPECT_EQ(growth_class(-0.5), GrowthClass::constant);
  EXPECT_EQ(growth_class(0), GrowthClass::constant);
  EXPECT_EQ(growth_class(0.19), GrowthClass::constant);
  EXPECT_EQ(growth_class(0.2), GrowthClass::sublinear);
  EXPECT_EQ(growth_class(0.69), GrowthClass::sublinear);
  EXPECT_EQ(growth_class(0.7), GrowthClass::linear);
  EXPECT_EQ(growth_class(1.49), GrowthClass::linear);
  EXPECT_EQ(growth_class(1.5), GrowthClass::quadratic);
  EXPECT_EQ(growth_class(2.49), GrowthClass::quadratic);
  EXPECT_EQ(growth_class(2.5), GrowthClass::superquadratic);
}

// The order is the rank the gate compares; no fit is below every class.
TEST(GrowthClass, RankAndNamesRoundTrip) {
  EXPECT_LT(GrowthClass::none, GrowthClass::constant);
  EXPECT_LT(GrowthClass::constant, GrowthClass::sublinear);
  EXPECT_LT(GrowthClass::sublinear, GrowthClass::linear);
  EXPECT_LT(GrowthClass::linear, GrowthClass::quadratic);
  EXPECT_LT(GrowthClass::quadratic, GrowthClass::superquadratic);
  for (auto c : {GrowthClass::constant, GrowthClass::sublinear, GrowthClass::linear, GrowthClass::quadratic,
                 GrowthClass::superquadratic}) {
    EXPECT_EQ(growth_class_from(to_string(c)), c) << to_string(c);
  }
  EXPECT_EQ(to_string(GrowthClass::linear), "linear");
  EXPECT_EQ(to_string(GrowthClass::none), "");
  EXPECT_EQ(growth_class_from(""), std::nullopt);
  EXPECT_EQ(growth_class_from("bogus"), std::nullopt);
  EXPECT_EQ(growth_adverb(GrowthClass::quadratic), "quadratically");
}

TEST(GrowthFit, PowerLawsAreFittedExactly) {
  GrowthFit calls = fit_growth(k_three, of({24, 96, 384}), std::nullopt);
  ASSERT_TRUE(calls.exponent);
  EXPECT_NEAR(*calls.exponent, 1.0, 0.005);
  EXPECT_EQ(calls.growth, GrowthClass::linear);
  EXPECT_NEAR(calls.coefficient + calls.offset, 24, 0.5);
  EXPECT_FALSE(calls.projected);  // no production scale

  GrowthFit square = fit_growth(k_three, of({10, 160, 2560}), 100.0);
  ASSERT_TRUE(square.exponent);
  EXPECT_NEAR(*square.exponent, 2.0, 0.005);
  EXPECT_EQ(square.growth, GrowthClass::quadratic);
  ASSERT_TRUE(square.projected);
  EXPECT_NEAR(*square.projected, 10 * 100 * 100, 10 * 100 * 100 * 0.02);

  GrowthFit flat = fit_growth(k_three, of({7, 7, 7}), 100.0);
  EXPECT_EQ(flat.exponent, 0.0);
  EXPECT_EQ(flat.growth, GrowthClass::constant);
  EXPECT_EQ(flat.projected, 7.0);
}

// pg_stat_statements counts the catalog pages a fresh backend reads to plan a statement (some
// 60): a scan of 3 → 12 → 48 pages seen as 63 → 72 → 108 is still linear with three scales.
TEST(GrowthFit, AFixedPartDoesNotHideALinearTermWithThreeScales) {
  GrowthFit f = fit_growth(k_three, of({63, 72, 108}), std::nullopt);
  ASSERT_TRUE(f.exponent);
  EXPECT_NEAR(*f.exponent, 1.0, 0.01);
  EXPECT_EQ(f.growth, GrowthClass::linear);
  EXPECT_NEAR(f.offset, 60, 0.5);
  EXPECT_NEAR(f.coefficient, 3, 0.05);
}

TEST(GrowthFit, SmallSpreadsAreConstant) {
  // An index's depth: 2 → 3 → 3 blocks per call is within the slack of 2 blocks.
  EXPECT_EQ(fit_growth(k_three, of({2, 3, 3}), std::nullopt, 2).growth, GrowthClass::constant);
  // Within 10% of the largest count.
  EXPECT_EQ(fit_growth(k_three, of({100, 104, 109}), std::nullopt).growth, GrowthClass::constant);
  // A logarithm's steps (2 → 4 → 6 over 1 → 4 → 16) are slower than linear.
  EXPECT_EQ(fit_growth(k_three, of({2, 4, 6}), std::nullopt).growth, GrowthClass::sublinear);
  EXPECT_EQ(fit_growth(k_three, of({10, 20, 40}), std::nullopt).growth, GrowthClass::sublinear);  // √scale
}

TEST(GrowthFit, TwoScalesGiveTheRatiosExponent) {
  GrowthFit f = fit_growth({1, 4}, of({24, 96}), 10.0);
  ASSERT_TRUE(f.exponent);
  EXPECT_NEAR(*f.exponent, 1.0, 1e-9);
  EXPECT_EQ(f.offset, 0);
  ASSERT_TRUE(f.projected);
  EXPECT_NEAR(*f.projected, 240, 1e-6);
}

TEST(GrowthFit, MissingAndZeroCounts) {
  // Not measured at a scale: fitted over the others.
  GrowthFit f = fit_growth(k_three, {24.0, std::nullopt, 384.0}, std::nullopt);
  ASSERT_TRUE(f.exponent);
  EXPECT_NEAR(*f.exponent, 1.0, 1e-9);
  ASSERT_EQ(f.values.size(), 3u);
  EXPECT_FALSE(f.values[1]);
  // Every count 0: constant.
  EXPECT_EQ(fit_growth(k_three, of({0, 0, 0}), std::nullopt).growth, GrowthClass::constant);
  // One count above 0: no exponent, no class.
  GrowthFit one = fit_growth(k_three, of({0, 0, 5}), std::nullopt);
  EXPECT_FALSE(one.exponent);
  EXPECT_EQ(one.growth, GrowthClass::none);
  // One scale measured: nothing to fit.
  EXPECT_FALSE(fit_growth(k_three, {std::nullopt, 4.0, std::nullopt}, std::nullopt).exponent);
  EXPECT_EQ(growth_values(one), "0 → 0 → 5");
  EXPECT_EQ(growth_values(fit_growth(k_three, {1.0, std::nullopt, 3.0}, std::nullopt)), "1 → – → 3");
}

QueryStats query(const std::string& text, double calls, double rows, double blocks_per_call) {
  QueryStats q;
  q.queryid = std::to_string(std::hash<std::string>{}(text) % 100000);
  q.query = text;
  q.text_id = "id-" + text;
  q.calls = calls;
  q.rows = rows;
  q.exec_ms = calls * 0.1;
  q.blocks_per_call = blocks_per_call;
  q.blocks = blocks_per_call * calls;
  return q;
}

StageResult at_scale(double scale, bool index) {
  StageResult s;
  s.name = "page";
  s.metric("db_queries", "count").cold = {1 + 24 * scale};
  s.metric("wall_ms", "ms").cold = {100 * scale};
  // The per-realm statement: one call per realm (24 a scale), 4 rows each; its lookup reads 2
  // blocks with the index, the whole table (3 pages a scale) without.
  s.queries.push_back(query("select * from item where realm_id = $1", 24 * scale, 24 * scale * 4,
                            index ? 2 : 3 * scale));
  s.queries.push_back(query("select id from realm", 1, 24 * scale, 1 + scale));
  return s;
}

StageResult with_growth(bool index) {
  std::vector<StageResult> at;
  for (double x : k_three) at.push_back(at_scale(x, index));
  StageResult main = at[0];
  main.growth = stage_growth(k_three, {&at[0], &at[1], &at[2]}, std::nullopt);
  return main;
}

TEST(StageGrowth, PairsStatementsAcrossScalesAndFitsEach) {
  StageResult s = with_growth(false);
  ASSERT_TRUE(s.growth);
  EXPECT_EQ(s.growth->scales, k_three);
  EXPECT_EQ(s.growth->queries.growth, GrowthClass::linear);
  ASSERT_EQ(s.growth->statements.size(), 2u);
  const StatementGrowth& item = s.growth->statements[0];  // the costliest at scale 16
  EXPECT_EQ(item.query, "select * from item where realm_id = $1");
  EXPECT_EQ(item.text_id, "id-select * from item where realm_id = $1");
  EXPECT_EQ(growth_values(item.calls), "24 → 96 → 384");
  EXPECT_EQ(item.calls.growth, GrowthClass::linear);
  EXPECT_EQ(item.rows_per_call.growth, GrowthClass::constant);
  EXPECT_EQ(growth_values(item.blocks_per_call), "3 → 12 → 48");
  EXPECT_EQ(item.blocks_per_call.growth, GrowthClass::linear);
  EXPECT_EQ(s.growth->statements[1].calls.growth, GrowthClass::constant);
  EXPECT_EQ(s.growth->statements[1].rows_per_call.growth, GrowthClass::linear);

  StageResult indexed = with_growth(true);
  EXPECT_EQ(indexed.growth->statements[0].blocks_per_call.growth, GrowthClass::constant);
}

TEST(StageGrowth, AStatementMissingAtAScaleRanZeroTimesThere) {
  StageResult a = at_scale(1, true), b = at_scale(4, true), c = at_scale(16, true);
  c.queries.push_back(query("select 1 from audit", 3, 3, 1));
  StageGrowth g = stage_growth(k_three, {&a, &b, &c}, std::nullopt);
  auto it = std::find_if(g.statements.begin(), g.statements.end(),
                         [](const StatementGrowth& x) { return x.query == "select 1 from audit"; });
  ASSERT_NE(it, g.statements.end());
  EXPECT_EQ(growth_values(it->calls), "0 → 0 → 3");
  EXPECT_FALSE(it->rows_per_call.values[0]);  // no call, no rows per call
  // A scale not measured (its runs failed): nullopt everywhere.
  StageGrowth failed = stage_growth(k_three, {&a, nullptr, &c}, std::nullopt);
  EXPECT_FALSE(failed.queries.values[1]);
  EXPECT_EQ(failed.statements[0].calls.growth, GrowthClass::linear);
}

TEST(StageGrowth, TimesAreProjectedFromTheCountsNotFromTheirOwnNoise) {
  StageResult a = at_scale(1, false), b = at_scale(4, false), c = at_scale(16, false);
  // A statement run once whose time is noise (0.31 → 0.30 → 6.55 ms: a fit gives k = 4).
  for (auto [s, ms] : {std::pair{&a, 0.31}, {&b, 0.30}, {&c, 6.55}}) {
    QueryStats q = query("select * from settings", 1, 1, 1);
    q.exec_ms = ms;
    s->queries.push_back(q);
  }
  a.metric("wall_ms", "ms").cold = {1540};
  b.metric("wall_ms", "ms").cold = {941};
  c.metric("wall_ms", "ms").cold = {1140};
  StageGrowth g = stage_growth(k_three, {&a, &b, &c}, 100);
  auto find = [&](const std::string& text) {
    return *std::find_if(g.statements.begin(), g.statements.end(),
                         [&](const StatementGrowth& x) { return x.query == text; });
  };
  const StatementGrowth settings = find("select * from settings");
  ASSERT_TRUE(settings.time_ms.projected);
  EXPECT_NEAR(*settings.time_ms.projected, 6.55, 0.01);  // constant calls and blocks: its time at 16
  // The scan: 384 calls of 48 blocks at 16 (38.4 ms), 2,400 calls of 300 blocks at 100.
  const StatementGrowth item = find("select * from item where realm_id = $1");
  ASSERT_TRUE(item.time_ms.projected);
  EXPECT_NEAR(*item.time_ms.projected, 38.4 * (2400.0 * 300) / (384 * 48), 0.01 * 38.4 * 39);
  // realm: 1 call of 17 blocks at 16 (0.1 ms), 101 blocks at 100.
  const StatementGrowth realm = find("select id from realm");
  ASSERT_TRUE(realm.time_ms.projected);
  EXPECT_NEAR(*realm.time_ms.projected, 0.1 * 101 / 17, 0.01);
  // The stage: its wall time at 16 plus what the statements add from there (wall time falls
  // as statements grow here: no time per statement).
  ASSERT_TRUE(g.wall_ms.projected);
  EXPECT_NEAR(*g.wall_ms.projected,
              1140 + (*item.time_ms.projected - 38.4) + (*realm.time_ms.projected - 0.1) +
                  (*settings.time_ms.projected - 6.55),
              1e-6);
  // Round trips: 10 ms of wall time per statement (the N+1's 24 a scale) outweigh its database
  // time: 100 + 10 · statements at 16, plus 10 ms for each statement added by 100.
  a.metric("wall_ms", "ms").cold = {100 + 10 * 25.0};
  b.metric("wall_ms", "ms").cold = {100 + 10 * 97.0};
  c.metric("wall_ms", "ms").cold = {100 + 10 * 385.0};
  StageGrowth trips = stage_growth(k_three, {&a, &b, &c}, 100);
  ASSERT_TRUE(trips.wall_ms.projected && trips.queries.projected);
  EXPECT_NEAR(*trips.wall_ms.projected, 100 + 10 * 385.0 + 10 * (*trips.queries.projected - 385), 1e-6);
  EXPECT_NEAR(*trips.queries.projected, 2401, 2401 * 0.01);
  // Without production_scale nothing is projected.
  StageGrowth none = stage_growth(k_three, {&a, &b, &c}, std::nullopt);
  EXPECT_FALSE(none.wall_ms.projected);
  EXPECT_FALSE(none.statements[0].time_ms.projected);
}

// The gate: base with the index, head without. At scale 1 the lookup reads 3 blocks instead of
// 2, under every count threshold; its growth went constant → linear: a regression.
TEST(GrowthGate, ALostIndexIsARegressionThroughItsGrowthAlone) {
  StageResult base = with_growth(true), head = with_growth(false);
  config::Gate g;
  auto v = gate::compare_statements(head, base, g);
  ASSERT_FALSE(v.empty());
  const StatementVerdict& s = v[0];
  EXPECT_EQ(s.query, "select * from item where realm_id = $1");
  EXPECT_EQ(s.verdict, Verdict::regression) << s.reason;
  EXPECT_EQ(s.growth_change, "blocks per call: constant → linear");
  EXPECT_EQ(s.reason,
            "blocks per call grow linearly with the data (3 → 12 → 48) instead of staying constant "
            "(2 → 2 → 2) (gate.growth: fail); blocks per call 2 → 3: +1 is under "
            "min_blocks_delta 100");
  EXPECT_EQ(s.head->growth.at("blocks_per_call"), GrowthClass::linear);
  EXPECT_EQ(s.base->growth.at("blocks_per_call"), GrowthClass::constant);

  g.growth = config::GrowthGate::warn;
  v = gate::compare_statements(head, base, g);
  EXPECT_EQ(v[0].verdict, Verdict::slower) << v[0].reason;
  g.growth = config::GrowthGate::off;
  v = gate::compare_statements(head, base, g);
  EXPECT_EQ(v[0].verdict, Verdict::same) << v[0].reason;
  EXPECT_EQ(v[0].growth_change, "blocks per call: constant → linear");  // shown, not judged

  // The other way round: the index added makes it flat.
  v = gate::compare_statements(base, head, config::Gate{});
  EXPECT_EQ(v[0].verdict, Verdict::faster) << v[0].reason;
}

TEST(GrowthGate, ANewStatementWhoseCallsGrowIsANewNPlusOne) {
  StageResult base = with_growth(true);
  std::vector<StageResult> at;
  for (double x : k_three) {
    at.push_back(at_scale(x, true));
    // 2 calls at scale 1: under min_query_delta, but one per 12 realms.
    at.back().queries.push_back(query("select count(*) from review where realm_id = $1", 2 * x, 2 * x, 2));
  }
  StageResult head = at[0];
  head.growth = stage_growth(k_three, {&at[0], &at[1], &at[2]}, std::nullopt);
  auto v = gate::compare_statements(head, base, config::Gate{});
  auto it = std::find_if(v.begin(), v.end(), [](const StatementVerdict& s) { return !s.base; });
  ASSERT_NE(it, v.end());
  EXPECT_EQ(it->verdict, Verdict::regression) << it->reason;
  EXPECT_EQ(it->growth_change, "calls per run: new, linear");
  EXPECT_EQ(it->reason.rfind("new statement whose calls per run grow linearly with the data (2 → 8 → 32): "
                             "an N+1 that grows (gate.growth: fail); new statement, 2 calls per run",
                             0),
            0u)
      << it->reason;
}

TEST(GrowthGate, TheSameClassesAreSameAndOtherScalesAreNotCompared) {
  StageResult a = with_growth(false), b = with_growth(false);
  for (const auto& v : gate::compare_statements(a, b, config::Gate{})) {
    EXPECT_EQ(v.verdict, Verdict::same) << v.query << ": " << v.reason;
    EXPECT_EQ(v.growth_change, "") << v.query;
    EXPECT_FALSE(v.changed()) << v.query;
  }
  // Measured at other scales: other data, no growth verdict.
  StageResult base = with_growth(true);
  base.growth->scales = {1, 2, 4};
  for (const auto& v : gate::compare_statements(a, base, config::Gate{})) {
    EXPECT_EQ(v.growth_change, "") << v.query;
    EXPECT_NE(v.verdict, Verdict::regression) << v.query << ": " << v.reason;
  }
}

}  // namespace
}  // namespace coldgate::results
