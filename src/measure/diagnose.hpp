#pragma once

#include <string>
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

/// Rows a scan must remove per execution (per loop, as EXPLAIN counts them) before
/// `missing_index` names it: fewer are cheap to filter whatever the plan.
inline constexpr double k_index_min_removed_rows = 1000;

/// How many times the rows it returns a scan must remove for `missing_index`: a filter that keeps
/// more than 1% of the rows is a job for a sequential scan, not an index (PostgreSQL's planner
/// prefers one at far lower selectivities).
inline constexpr double k_index_removed_ratio = 100;

/// Shared blocks (hit + read) per execution a scan must read for `missing_index`: a relation of
/// fewer than 10 pages (80 kB) is read whole in about the time an index descent and its heap
/// fetches take, and the planner scans such tables sequentially even with an index.
inline constexpr double k_index_min_blocks = 10;

/// Estimated against actual rows per loop, the factor (either way) at which `misestimate` fires.
inline constexpr double k_misestimate_ratio = 100;

/// The larger of the two row counts must reach this too: 1 row against 0 (or 0.01) is no
/// misestimate that changes a plan.
inline constexpr double k_misestimate_min_rows = 100;

/// The columns of one relation that a plan's condition text compares ("Filter", "Join Filter",
/// "Index Cond" as EXPLAIN deparses them: `((c."articleId" = 42) AND (c.created_at > now()))`),
/// each as PostgreSQL printed it (quoted when it needs quotes), in order of appearance, without
/// repeats. Only conjuncts count (a conjunct holding OR is skipped: no single index serves it),
/// and only a column that a comparison's side is by itself, casts allowed (`(c.code)::text`),
/// not one inside a function call (that needs an expression index).
struct ConditionColumns {
  std::vector<std::string> equality;  // `col = …`, `col = ANY (…)`
  std::vector<std::string> range;     // `<`, `<=`, `>`, `>=`
};

/// The ConditionColumns of `condition` that belong to the relation called `alias` (columns
/// qualified with another alias are left out; unqualified ones count when `unqualified` is
/// true: a non-VERBOSE plan's scan filter). Never throws: text it cannot read gives none.
ConditionColumns condition_columns(const std::string& condition, const std::string& alias,
                                   bool unqualified);

/// `name` as an SQL identifier: as is when it is lower case letters, digits, `_` and `$` not
/// starting with a digit or `$`, and no reserved key word (PostgreSQL docs, "SQL Key Words"),
/// else in double quotes with inner quotes doubled — what PostgreSQL's quote_ident() gives.
std::string quote_identifier(const std::string& name);

/// Findings from each stage's server-side profile (its statement table and db_* metrics), its
/// plan-only EXPLAIN and the catalog, for SQL and command stages alike, each with a concrete
/// suggestion in the stage's own terms (what had to be found by hand in the case that inspired
/// coldgate):
/// - `jit_dominates`, per statement: median JIT time > 50% of its median execution (and
///   ≥ k_jit_floor_ms) → `settings: {jit: "off"}` for a SQL stage; for an application,
///   `SET LOCAL jit = off;` right before that statement in a transaction of its own, or the
///   stage's `settings:`;
/// - `repeated_query`, per statement: ≥ the stage's `repeated_threshold` calls per cold run, or
///   per request when the stage says it makes `requests:` (its calls / requests: one call per
///   request is the stage's own loop); fact "shape", from the calls' growth with the data and
///   how the whole text uses its parameters (QueryStats::parameters, not the shortened text):
///   `per_row` (an N+1: calls that grow with the data, or a lookup by parameter,
///   `= $n`/`IN ($n…)`) → one query with a join, `= ANY($1)`, or eager loading; `same_text` (no
///   parameter: the same statement each time) → run it once and reuse the result; `fixed_loop`
///   (calls constant with the data, no parameter is a looked-up key, or a cut text without its
///   parameters) → batch the calls; data "requests" and "calls_per_request" when requests > 1;
/// - `never_analyzed`: tables the stage's plans read that were never analyzed (only when
///   config has no `analyze:` setup step, which would have covered them);
/// - `planning_exceeds_execution`: median db_plan_ms > median db_exec_ms (warm repetitions'
///   medians when there are any, else the cold runs'), ≥ k_planning_floor_ms, and
///   ≥ k_planning_per_call_ms per statement; and the plans after each statement's first (its
///   plan_ms × (calls − 1) / calls, summed over the statements run ≥ 2 times per cold run) —
///   what a prepared statement saves — ≥ k_planning_floor_ms;
/// - `missing_index`, from each statement's captured plan (QueryStats::plan): a scan (Seq Scan,
///   or an Index/Bitmap Heap Scan whose Filter does the work) whose Filter — or the Join Filter
///   of the Nested Loop it is the inner side of — removes ≥ k_index_min_removed_rows per
///   execution and ≥ k_index_removed_ratio × the rows it returns, reading ≥ k_index_min_blocks
///   per execution; facts "table" (schema.name), "columns" (equality columns first, then the
///   first range column: a B-tree bounds its scan by the equality prefix and one range, PostgreSQL
///   docs "Multicolumn Indexes") and "index" (`CREATE INDEX ON public."Comments" ("articleId")`);
///   one per (stage, table, columns);
/// - `misestimate`, from the same plans: a scan feeding a join (its parent a Hash/Merge Join or
///   Nested Loop, or a Hash, Materialize, Memoize or Sort under one) whose estimated and actual
///   rows per loop differ ≥ k_misestimate_ratio× either way, the larger ≥ k_misestimate_min_rows;
///   facts "table", "columns" (of its filter and index condition) and, with ≥ 2 columns,
///   "statistics" (the CREATE STATISTICS to try); one per (stage, table, columns).
/// Stages the config does not name get the default thresholds.
std::vector<results::Diagnosis> diagnose(const results::Results& results,
                                         const config::Config& config);

}  // namespace coldgate::measure
