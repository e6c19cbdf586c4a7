#include "measure/diagnose.hpp"

#include <gtest/gtest.h>

namespace coldgate::measure {
namespace {

using namespace coldgate::results;

StageResult with_explain(const std::string& name, Explain e) {
  StageResult s;
  s.name = name;
  s.kind = StageKind::sql;
  s.explain = std::move(e);
  return s;
}

Explain jit_heavy() {
  Explain e;
  e.planning_ms = 12;
  e.execution_ms = 1911;
  e.total_cost = 455863.21;
  e.jit = true;
  e.jit_functions = 1404;
  e.jit_total_ms = 703 * 2;
  e.jit_above_cost = 100000;
  return e;
}

TEST(Diagnose, JitDominanceWithTheFiguresAndTheFix) {
  Results r;
  r.stages.push_back(with_explain("config-load-jit", jit_heavy()));
  auto d = diagnose(r, true);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].stage, "config-load-jit");
  EXPECT_EQ(d[0].kind, "jit_dominates");
  EXPECT_EQ(d[0].message,
            "JIT compiled 1,404 functions in 1.41 s of 1.91 s execution (cost estimate 455,863 > "
            "jit_above_cost 100,000) — consider `SET LOCAL jit = off` for this query "
            "(`settings: {jit: \"off\"}`)");
  EXPECT_EQ(d[0].data.at("jit_functions"), 1404);
  EXPECT_EQ(d[0].data.at("execution_ms"), 1911);
}

TEST(Diagnose, JitAtHalfOrLessOrOffIsNoFinding) {
  Results r;
  Explain half = jit_heavy();
  half.jit_total_ms = half.execution_ms / 2;  // exactly 50%: not more than half
  r.stages.push_back(with_explain("half", half));
  Explain off = jit_heavy();
  off.jit = false;
  off.jit_total_ms = 0;
  r.stages.push_back(with_explain("off", off));
  EXPECT_TRUE(diagnose(r, true).empty());
}

TEST(Diagnose, NeverAnalyzedOnlyWhenSetupDoesNotAnalyze) {
  Results r;
  Explain e;
  e.execution_ms = 5;
  e.planning_ms = 0.5;
  e.never_analyzed = {"public.a", "public.b", "public.c", "public.d", "public.e", "public.f", "public.g"};
  r.stages.push_back(with_explain("load", e));
  EXPECT_TRUE(diagnose(r, true).empty());
  auto d = diagnose(r, false);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, "never_analyzed");
  EXPECT_EQ(d[0].message,
            "7 tables this query reads were never analyzed (public.a, public.b, public.c, "
            "public.d, public.e, … 2 more): its plan rests on default statistics — add "
            "`- analyze: true` to setup:");
  EXPECT_EQ(d[0].data.at("tables"), 7);
}

TEST(Diagnose, PlanningLongerThanExecutionAboveTheFloor) {
  Results r;
  Explain slow_plan;
  slow_plan.planning_ms = 52.9;
  slow_plan.execution_ms = 12.4;
  r.stages.push_back(with_explain("plan-heavy", slow_plan));
  Explain tiny;
  tiny.planning_ms = 0.2;  // sub-millisecond: noise, not a finding
  tiny.execution_ms = 0.05;
  r.stages.push_back(with_explain("select-1", tiny));
  auto d = diagnose(r, true);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].stage, "plan-heavy");
  EXPECT_EQ(d[0].kind, "planning_exceeds_execution");
  EXPECT_EQ(d[0].message,
            "planning took 52.9 ms, more than the 12.4 ms execution — the plan is paid again on "
            "every run: consider a prepared statement or a simpler query (fewer joins or "
            "subqueries)");
}

TEST(Diagnose, FailedStagesAndCommandStagesAreSkipped) {
  Results r;
  StageResult failed = with_explain("failed", jit_heavy());
  failed.error = "cold run 1/2: exit status 1";
  r.stages.push_back(failed);
  StageResult command;
  command.name = "cmd";
  command.kind = StageKind::command;
  r.stages.push_back(command);
  EXPECT_TRUE(diagnose(r, false).empty());
}

}  // namespace
}  // namespace coldgate::measure
