#include "measure/explain.hpp"

#include <gtest/gtest.h>

#include "support/golden.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

// The shape PostgreSQL 15 prints (trimmed plan).
constexpr const char* k_pg15 = R"([
  {
    "Plan": {"Node Type": "Aggregate", "Startup Cost": 455863.2, "Total Cost": 455863.21},
    "Planning Time": 12.5,
    "Triggers": [],
    "JIT": {
      "Functions": 1404,
      "Options": {"Inlining": true, "Optimization": true, "Expressions": true, "Deforming": true},
      "Timing": {"Generation": 60.1, "Inlining": 20.2, "Optimization": 380.3, "Emission": 242.4,
                 "Total": 703.0}
    },
    "Execution Time": 1911.0
  }
])";

TEST(Explain, ReadsPlanningExecutionCostAndTheJitBlock) {
  Explain e = parse_explain(k_pg15, "t");
  EXPECT_DOUBLE_EQ(e.planning_ms, 12.5);
  EXPECT_DOUBLE_EQ(e.execution_ms, 1911.0);
  EXPECT_DOUBLE_EQ(e.total_cost, 455863.21);
  EXPECT_TRUE(e.jit);
  EXPECT_DOUBLE_EQ(e.jit_functions, 1404);
  EXPECT_DOUBLE_EQ(e.jit_generation_ms, 60.1);
  EXPECT_DOUBLE_EQ(e.jit_inlining_ms, 20.2);
  EXPECT_DOUBLE_EQ(e.jit_optimization_ms, 380.3);
  EXPECT_DOUBLE_EQ(e.jit_emission_ms, 242.4);
  EXPECT_DOUBLE_EQ(e.jit_total_ms, 703.0);
}

TEST(Explain, ReadsPostgres17GenerationObject) {
  Explain e = parse_explain(R"([{"Plan": {"Total Cost": 1}, "Planning Time": 1,
    "JIT": {"Functions": 3, "Timing": {"Generation": {"Deform": 0.1, "Total": 0.7},
    "Inlining": 0, "Optimization": 1, "Emission": 2, "Total": 3.7}}, "Execution Time": 9}])",
                            "t");
  EXPECT_DOUBLE_EQ(e.jit_generation_ms, 0.7);
  EXPECT_DOUBLE_EQ(e.jit_total_ms, 3.7);
}

TEST(Explain, NoJitBlockMeansZeros) {
  Explain e = parse_explain(R"([{"Plan": {"Total Cost": 4.5}, "Planning Time": 0.1, "Execution Time": 0.2}])", "t");
  EXPECT_FALSE(e.jit);
  EXPECT_EQ(e.jit_functions, 0);
  EXPECT_EQ(e.jit_total_ms, 0);
  EXPECT_DOUBLE_EQ(e.total_cost, 4.5);
}

TEST(Explain, PlanOnlyOutputHasTheEstimateAndNoTimes) {
  // EXPLAIN (FORMAT JSON) without ANALYZE: coldgate run's plan of a stage.
  Explain e = parse_explain(R"([{"Plan": {"Total Cost": 690123.5}}])", "t");
  EXPECT_DOUBLE_EQ(e.total_cost, 690123.5);
  EXPECT_EQ(e.planning_ms, 0);
  EXPECT_EQ(e.execution_ms, 0);
}

TEST(Explain, RejectsWhatIsNotExplainOutput) {
  // plan_text needs only the shape (it leaves out figures that are missing or not numbers).
  for (const std::string bad : {"", "{}", "[]", "[1]", R"([{"Plan": 1}])",
                                R"([{"Plan": {"Total Cost": "x"}, "Execution Time": 1}])",
                                R"([{"Plan": {"Total Cost": 1}, "Planning Time": 0.1}])"}) {
    for (bool text : {false, true}) {
      if (text && bad.find("Total Cost") != std::string::npos) continue;
      try {
        if (text) {
          plan_text(bad, "stage x: EXPLAIN");
        } else {
          parse_explain(bad, "stage x: EXPLAIN");
        }
        ADD_FAILURE() << bad << (text ? " (plan_text)" : "");
      } catch (const Error& e) {
        EXPECT_EQ(e.where(), "stage x: EXPLAIN");
        EXPECT_EQ(std::string(e.what()).rfind("unexpected EXPLAIN output: ", 0), 0u) << e.what();
      }
    }
  }
}

// Golden files: tests/measure/golden/<case>.json is what PostgreSQL 15 printed for
// EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) (plan_only: EXPLAIN (FORMAT JSON)); <case>.txt is
// plan_text of it, checked line by line against the server's text format of the same query
// (times aside). COLDGATE_UPDATE_GOLDEN=1 rewrites the .txt files (support/golden.hpp); review
// the diff.
void expect_golden_plan(const std::string& name) {
  const auto dir = testing::source_dir() / "tests/measure/golden";
  const std::string text = plan_text(testing::slurp(dir / (name + ".json")), name);
  testing::expect_golden(dir / (name + ".txt"), text);
}

TEST(PlanText, ASortOverAHashJoinOfAnIndexScanAndASeqScan) { expect_golden_plan("analyze_join"); }
TEST(PlanText, WorkersOfAParallelPlan) { expect_golden_plan("analyze_parallel"); }
TEST(PlanText, ASortThatSpillsToTempFiles) { expect_golden_plan("analyze_temp"); }
TEST(PlanText, AnInitPlan) { expect_golden_plan("analyze_initplan"); }
TEST(PlanText, NodesNeverExecuted) { expect_golden_plan("never_executed"); }
TEST(PlanText, APlanOnlyExplain) { expect_golden_plan("plan_only"); }

TEST(PlanText, TheSeqScanFilterExactly) {
  // The lines one reads a plan for, as psql shows them for this very JSON.
  const char* json = R"j([{"Plan": {"Node Type": "Seq Scan", "Parallel Aware": false,
    "Async Capable": false, "Relation Name": "item", "Alias": "item", "Startup Cost": 0.00,
    "Total Cost": 181.00, "Plan Rows": 10, "Plan Width": 14, "Actual Startup Time": 0.698,
    "Actual Total Time": 0.700, "Actual Rows": 10, "Actual Loops": 1,
    "Filter": "(price > '14985'::numeric)", "Rows Removed by Filter": 9990,
    "Shared Hit Blocks": 12, "Shared Read Blocks": 3, "Shared Dirtied Blocks": 0,
    "Shared Written Blocks": 0, "Temp Read Blocks": 0, "Temp Written Blocks": 0},
    "Planning": {"Shared Hit Blocks": 0, "Shared Read Blocks": 0}, "Planning Time": 0.022,
    "Execution Time": 0.704}])j";
  EXPECT_EQ(plan_text(json, "t"),
            "Seq Scan on item  (cost=0.00..181.00 rows=10 width=14) (actual time=0.698..0.700 "
            "rows=10 loops=1)\n"
            "  Filter: (price > '14985'::numeric)\n"
            "  Rows Removed by Filter: 9990\n"
            "  Buffers: shared hit=12 read=3\n");
}

TEST(PlanText, NamesThatNeedQuotesAndAliases) {
  const char* json = R"([{"Plan": {"Node Type": "Seq Scan", "Relation Name": "Order Items",
    "Alias": "o", "Startup Cost": 0, "Total Cost": 1, "Plan Rows": 1, "Plan Width": 4,
    "Plans": [{"Node Type": "Index Only Scan", "Scan Direction": "Backward",
      "Index Name": "Item_PK", "Relation Name": "item", "Alias": "item", "Startup Cost": 0,
      "Total Cost": 1, "Plan Rows": 1, "Plan Width": 4, "Subplan Name": "SubPlan 1"}]}}])";
  EXPECT_EQ(plan_text(json, "t"),
            "Seq Scan on \"Order Items\" o  (cost=0.00..1.00 rows=1 width=4)\n"
            "  SubPlan 1\n"
            "    ->  Index Only Scan Backward using \"Item_PK\" on item  (cost=0.00..1.00 rows=1 "
            "width=4)\n");
}

}  // namespace
}  // namespace coldgate::measure
