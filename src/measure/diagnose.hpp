#pragma once

#include <vector>

#include "config/config.hpp"
#include "results/results.hpp"

namespace coldgate::measure {

/// Share of a statement's execution spent in JIT above which JIT "dominates" it: more than half.
inline constexpr double k_jit_dominance_share = 0.5;

/// JIT time per run below which no statement is said to be dominated by it (sub-ms noise).
inline constexpr double k_jit_floor_ms = 1.0;

/// Median planning time per run below which "planning exceeds execution" is not reported: a
/// fresh backend's first plan loads catalog caches, a few ms that no prepared statement saves.
inline constexpr double k_planning_floor_ms = 5.0;

/// Median planning time per statement below which it is not reported either: many tiny plans
/// are the cost of many statements (repeated_query), not of planning.
inline constexpr double k_planning_per_call_ms = 1.0;

/// Findings from each stage's server-side profile (its statement table and db_* metrics), its
/// plan-only EXPLAIN and the catalog, for SQL and command stages alike, each with a concrete
/// suggestion in the stage's own terms (what had to be found by hand in the case that inspired
/// coldgate):
/// - `jit_dominates`, per statement: median JIT time > 50% of its median execution (and
///   ≥ k_jit_floor_ms) → `settings: {jit: "off"}` for a SQL stage; for an application,
///   `SET LOCAL jit = off;` right before that statement in a transaction of its own, or the
///   stage's `settings:`;
/// - `repeated_query` (N+1), per statement: ≥ the stage's `repeated_threshold` calls per cold
///   run → one query with a join, `= ANY($1)`, or eager loading;
/// - `never_analyzed`: tables the stage's plans read that were never analyzed (only when
///   config has no `analyze:` setup step, which would have covered them);
/// - `planning_exceeds_execution`: median db_plan_ms > median db_exec_ms (warm repetitions'
///   medians when there are any, else the cold runs'), ≥ k_planning_floor_ms, and
///   ≥ k_planning_per_call_ms per statement.
/// Stages the config does not name get the default thresholds.
std::vector<results::Diagnosis> diagnose(const results::Results& results,
                                         const config::Config& config);

}  // namespace coldgate::measure
