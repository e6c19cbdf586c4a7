#pragma once

#include <optional>
#include <string>
#include <vector>

namespace coldgate::results {

/// One node of an actual plan (EXPLAIN (ANALYZE, BUFFERS, VERBOSE, FORMAT JSON) or auto_explain's
/// JSON; PostgreSQL docs, "EXPLAIN"), the members coldgate reads. Row figures are per loop, as
/// EXPLAIN prints them; 0 when the plan has no ANALYZE figures.
struct PlanNode {
  std::string node_type;  // "Seq Scan", "Index Scan", "Nested Loop", …
  std::string relation;   // "Relation Name" ("" for a node that reads no relation)
  std::string schema;     // "Schema" (VERBOSE plans only)
  std::string alias;      // "Alias"
  std::string index;      // "Index Name"
  std::string join_type;  // "Join Type" (Inner, Left, Semi, …)
  std::string parent_relationship;  // "Parent Relationship" (Outer, Inner, SubPlan, …)
  std::string filter;       // "Filter"
  std::string join_filter;  // "Join Filter"
  std::string condition;    // "Hash Cond" / "Merge Cond" / "Index Cond" / "Recheck Cond"
  double plan_rows = 0;     // the planner's estimate, per loop
  double actual_rows = 0;   // per loop
  double loops = 0;
  bool analyzed = false;    // the node has "Actual Rows"
  double rows_removed_by_filter = 0;       // per loop
  double rows_removed_by_join_filter = 0;  // per loop
  double shared_blocks = 0;  // "Shared Hit Blocks" + "Shared Read Blocks": this node and below
  int depth = 0;             // 0 for the top node
  int parent = -1;           // index of the parent node in the list; -1 for the top node
};

/// The nodes of a plan, depth first, parents before children (Plans[] in order). Accepts the
/// "Plan" object, an object holding "Plan", or EXPLAIN's array of one such object. Throws
/// Error(gate_failed) naming `where` for text that is not such a plan.
std::vector<PlanNode> plan_nodes(const std::string& plan_json, const std::string& where);

/// A node as psql's text form heads it, without figures: "Index Scan using comments_article_id
/// on Comments", "Hash Join", "Seq Scan on public.books b".
std::string node_label(const PlanNode& node);

/// A plan's shape: per node, depth first, its type, join type, relation (schema-qualified when
/// known) and index — no costs, rows, conditions or timings — one node a line, indented by
/// depth. Equal shapes mean the same access paths and join order.
std::string plan_shape(const std::vector<PlanNode>& nodes);

/// The first 16 hex digits of the SHA-256 of plan_shape(): the shape's fingerprint.
std::string plan_shape_id(const std::vector<PlanNode>& nodes);

/// The shared blocks (hit + read) a captured plan's execution read: its top node's "Shared Hit
/// Blocks" + "Shared Read Blocks" (EXPLAIN BUFFERS, auto_explain.log_buffers; a node's count
/// holds its children's). Planning's catalog reads are not in it, unlike pg_stat_statements'
/// blocks with track_planning on. nullopt when the plan has no buffer figures or is not a plan.
std::optional<double> execution_blocks(const std::string& plan_json);

}  // namespace coldgate::results
