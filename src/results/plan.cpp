#include "results/plan.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::results {
namespace {

using nlohmann::json;

std::string text_of(const json& node, const char* key) {
  auto it = node.find(key);
  return it != node.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number_of(const json& node, const char* key) {
  auto it = node.find(key);
  return it != node.end() && it->is_number() ? it->get<double>() : 0.0;
}

void walk(const json& node, int depth, int parent, std::vector<PlanNode>& out,
          const std::string& where) {
  if (!node.is_object() || !node.contains("Node Type")) {
    throw Error(ExitCode::gate_failed, where, "a plan node without \"Node Type\"");
  }
  if (depth > 1000) throw Error(ExitCode::gate_failed, where, "a plan nested over 1000 levels");
  PlanNode n;
  n.node_type = text_of(node, "Node Type");
  n.relation = text_of(node, "Relation Name");
  n.schema = text_of(node, "Schema");
  n.alias = text_of(node, "Alias");
  n.index = text_of(node, "Index Name");
  n.join_type = text_of(node, "Join Type");
  n.parent_relationship = text_of(node, "Parent Relationship");
  n.filter = text_of(node, "Filter");
  n.join_filter = text_of(node, "Join Filter");
  for (const char* key : {"Hash Cond", "Merge Cond", "Index Cond", "Recheck Cond"}) {
    if (std::string c = text_of(node, key); !c.empty()) {
      n.condition = c;
      break;
    }
  }
  n.plan_rows = number_of(node, "Plan Rows");
  n.analyzed = node.contains("Actual Rows");
  n.actual_rows = number_of(node, "Actual Rows");
  n.loops = number_of(node, "Actual Loops");
  n.rows_removed_by_filter = number_of(node, "Rows Removed by Filter");
  n.rows_removed_by_join_filter = number_of(node, "Rows Removed by Join Filter");
  n.shared_blocks = number_of(node, "Shared Hit Blocks") + number_of(node, "Shared Read Blocks");
  n.depth = depth;
  n.parent = parent;
  const int self = static_cast<int>(out.size());
  out.push_back(std::move(n));
  if (auto it = node.find("Plans"); it != node.end() && it->is_array()) {
    for (const auto& child : *it) walk(child, depth + 1, self, out, where);
  }
}

}  // namespace

std::vector<PlanNode> plan_nodes(const std::string& plan_json, const std::string& where) {
  json doc = json::parse(plan_json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) throw Error(ExitCode::gate_failed, where, "the plan is not JSON");
  if (doc.is_array() && !doc.empty()) doc = doc.front();
  if (doc.is_object() && doc.contains("Plan")) doc = doc["Plan"];
  std::vector<PlanNode> out;
  walk(doc, 0, -1, out, where);
  return out;
}

std::string node_label(const PlanNode& node) {
  std::string out = node.node_type;
  if (!node.join_type.empty() && node.join_type != "Inner" &&
      (node.node_type == "Hash Join" || node.node_type == "Merge Join" ||
       node.node_type == "Nested Loop")) {
    // psql: "Hash Left Join", "Nested Loop Semi Join"
    out = node.node_type == "Nested Loop"
              ? fmt::format("Nested Loop {} Join", node.join_type)
              : fmt::format("{} {} Join", node.node_type.substr(0, node.node_type.size() - 5),
                            node.join_type);
  }
  if (!node.index.empty()) out += " using " + node.index;
  if (!node.relation.empty()) {
    out += " on " + (node.schema.empty() ? node.relation : node.schema + "." + node.relation);
    if (!node.alias.empty() && node.alias != node.relation) out += " " + node.alias;
  }
  return out;
}

std::string plan_shape(const std::vector<PlanNode>& nodes) {
  std::string out;
  for (const auto& n : nodes) {
    out.append(static_cast<std::size_t>(n.depth) * 2, ' ');
    out += n.node_type;
    if (!n.join_type.empty()) out += " [" + n.join_type + "]";
    if (!n.index.empty()) out += " using " + n.index;
    if (!n.relation.empty())
      out += " on " + (n.schema.empty() ? n.relation : n.schema + "." + n.relation);
    out += '\n';
  }
  return out;
}

std::string plan_shape_id(const std::vector<PlanNode>& nodes) {
  return util::sha256_hex(plan_shape(nodes)).substr(0, 16);
}

std::optional<double> execution_blocks(const std::string& plan_json) {
  json doc = json::parse(plan_json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_array() && !doc.empty()) doc = doc.front();
  if (doc.is_object() && doc.contains("Plan")) doc = doc["Plan"];
  if (!doc.is_object()) return std::nullopt;
  auto hit = doc.find("Shared Hit Blocks");
  auto read = doc.find("Shared Read Blocks");
  if (hit == doc.end() || read == doc.end() || !hit->is_number() || !read->is_number())
    return std::nullopt;
  return hit->get<double>() + read->get<double>();
}

}  // namespace coldgate::results
