#include "measure/explain.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>
#include <set>

#include "util/error.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw Error(ExitCode::infrastructure, where, "unexpected EXPLAIN output: " + what);
}

// A timing that is a number, or (PostgreSQL 17 "Generation") an object with a "Total".
double timing(const json& timing_block, const char* name) {
  auto it = timing_block.find(name);
  if (it == timing_block.end()) return 0;
  if (it->is_number()) return it->get<double>();
  if (it->is_object()) {
    auto total = it->find("Total");
    if (total != it->end() && total->is_number()) return total->get<double>();
  }
  return 0;
}

double number(const json& object, const char* name, const std::string& where, bool required) {
  auto it = object.find(name);
  if (it == object.end()) {
    if (required) bad(where, fmt::format("no \"{}\"", name));
    return 0;
  }
  if (!it->is_number()) bad(where, fmt::format("\"{}\" is not a number", name));
  return it->get<double>();
}

}  // namespace

Explain parse_explain(std::string_view text, const std::string& where) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) bad(where, "not JSON");
  if (!doc.is_array() || doc.size() != 1 || !doc[0].is_object()) {
    bad(where, "expected a one-element array of an object");
  }
  const json& top = doc[0];
  auto plan = top.find("Plan");
  if (plan == top.end() || !plan->is_object()) bad(where, "no \"Plan\" object");

  Explain e;
  e.total_cost = number(*plan, "Total Cost", where, true);
  e.planning_ms = number(top, "Planning Time", where, false);
  // EXPLAIN ANALYZE gives both times; a plan-only EXPLAIN (no ANALYZE, no SUMMARY) neither.
  e.execution_ms = number(top, "Execution Time", where, top.contains("Planning Time"));
  auto jit = top.find("JIT");
  if (jit != top.end() && jit->is_object()) {
    e.jit = true;
    e.jit_functions = number(*jit, "Functions", where, false);
    auto t = jit->find("Timing");
    if (t != jit->end() && t->is_object()) {
      e.jit_generation_ms = timing(*t, "Generation");
      e.jit_inlining_ms = timing(*t, "Inlining");
      e.jit_optimization_ms = timing(*t, "Optimization");
      e.jit_emission_ms = timing(*t, "Emission");
      e.jit_total_ms = timing(*t, "Total");
    }
  }
  return e;
}

std::vector<std::pair<std::string, std::string>> plan_scans(std::string_view text) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  std::vector<std::pair<std::string, std::string>> scans;
  std::vector<const json*> todo{&doc};  // iterative: plans of hundreds of subplans nest deep
  while (!todo.empty()) {
    const json* node = todo.back();
    todo.pop_back();
    if (node->is_array()) {
      for (const auto& child : *node) todo.push_back(&child);
    } else if (node->is_object()) {
      auto rel = node->find("Relation Name");
      if (rel != node->end() && rel->is_string()) {
        auto schema = node->find("Schema");
        scans.emplace_back(schema != node->end() && schema->is_string() ? schema->get<std::string>() : "",
                           rel->get<std::string>());
      }
      for (auto it = node->begin(); it != node->end(); ++it) {
        if (it->is_structured()) todo.push_back(&*it);
      }
    }
  }
  return scans;
}

std::vector<std::string> plan_relations(std::string_view text) {
  std::set<std::string> names;
  for (auto& [schema, name] : plan_scans(text)) names.insert(std::move(name));
  return {names.begin(), names.end()};
}

}  // namespace coldgate::measure
