#include "measure/explain.hpp"

#include <gtest/gtest.h>

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
  for (const char* bad : {"", "{}", "[]", "[1]", R"([{"Plan": 1}])",
                          R"([{"Plan": {"Total Cost": "x"}, "Execution Time": 1}])",
                          R"([{"Plan": {"Total Cost": 1}, "Planning Time": 0.1}])"}) {
    try {
      parse_explain(bad, "stage x: EXPLAIN");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), "stage x: EXPLAIN");
      EXPECT_EQ(std::string(e.what()).rfind("unexpected EXPLAIN output: ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace coldgate::measure
