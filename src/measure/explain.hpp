#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/results.hpp"

namespace coldgate::measure {

/// The options coldgate's EXPLAIN run uses, in front of the stage's query.
inline constexpr std::string_view k_explain_prefix =
    "EXPLAIN (ANALYZE, BUFFERS, TIMING, FORMAT JSON)\n";

/// Reads the output of EXPLAIN (ANALYZE, FORMAT JSON) — a one-element array holding "Plan",
/// "Planning Time", "Execution Time" and, when JIT fired, "JIT" {"Functions", "Timing"
/// {"Generation", "Inlining", "Optimization", "Emission", "Total"}} in ms (PostgreSQL docs,
/// "Using EXPLAIN"; PostgreSQL 17 makes "Generation" an object with its own "Total", also read).
/// Throws Error(infrastructure) with `where` when the text is not such a document.
results::Explain parse_explain(std::string_view json, const std::string& where);

/// The relations the plan scans, one (schema, relation) per node with a "Relation Name" ("Schema"
/// is there with VERBOSE, else ""), in the order found, from EXPLAIN (FORMAT JSON) text; empty
/// when the text is not such a plan. Walked without recursion: plans of hundreds of subplans
/// nest deep.
std::vector<std::pair<std::string, std::string>> plan_scans(std::string_view json);

/// Names of the tables the plan reads ("Relation Name" of every node, sorted, unique), from
/// EXPLAIN (FORMAT JSON) text; empty when the text is not such a plan.
std::vector<std::string> plan_relations(std::string_view json);

/// The plan tree of EXPLAIN (FORMAT JSON) output — with ANALYZE and BUFFERS or plan-only — as
/// PostgreSQL's text format prints it (src/backend/commands/explain.c, ExplainNode): the top
/// node first, each child after `->  ` two spaces in from its parent's lines; per node its
/// cost estimate, what ANALYZE measured (`(actual time=… rows=… loops=…)`, `(never executed)`),
/// then its keys, conditions, rows removed, sort, hash and heap figures, workers and
/// `Buffers: shared hit=12 read=3`, each only when present and, for counts, not zero; the
/// planner's buffers last. Lines end with '\n'. Throws Error(infrastructure) with `where` when
/// the text is not such a document.
std::string plan_text(std::string_view json, const std::string& where);

}  // namespace coldgate::measure
