#pragma once

#include <vector>

#include "results/results.hpp"

namespace coldgate::measure {

/// Share of execution_ms spent in JIT above which JIT "dominates" a stage (issue 5: > 50%).
inline constexpr double k_jit_dominance_share = 0.5;

/// Planning time below which "planning exceeds execution" is not reported (sub-ms noise).
inline constexpr double k_planning_floor_ms = 1.0;

/// Findings from each SQL stage's EXPLAIN run and the catalog, each with a concrete suggestion
/// (what had to be found by hand in the case that inspired coldgate):
/// - `jit_dominates`: jit_total_ms > 50% of execution_ms → consider `SET LOCAL jit = off`;
/// - `never_analyzed`: tables the plan reads that were never analyzed (reported only when
///   `setup_analyzes` is false: an `analyze:` setup step would have covered them);
/// - `planning_exceeds_execution`: planning_ms > execution_ms (and ≥ k_planning_floor_ms).
std::vector<results::Diagnosis> diagnose(const results::Results& results, bool setup_analyzes);

}  // namespace coldgate::measure
