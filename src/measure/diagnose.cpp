#include "measure/diagnose.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "results/format.hpp"

namespace coldgate::measure {
namespace {

using namespace coldgate::results;

std::string ms(double v) {
  return results::format_value(v, "ms");
}
std::string count(double v) {
  return results::format_value(v, "count");
}

}  // namespace

std::vector<Diagnosis> diagnose(const Results& results, bool setup_analyzes) {
  std::vector<Diagnosis> out;
  for (const auto& s : results.stages) {
    if (!s.explain || s.failed()) continue;
    const Explain& e = *s.explain;
    if (e.jit && e.execution_ms > 0 && e.jit_total_ms > k_jit_dominance_share * e.execution_ms) {
      out.push_back(
          {s.name,
           "jit_dominates",
           fmt::format("JIT compiled {} functions in {} of {} execution (cost estimate {} > "
                       "jit_above_cost {}) — consider `SET LOCAL jit = off` for this query "
                       "(`settings: {{jit: \"off\"}}`)",
                       count(e.jit_functions), ms(e.jit_total_ms), ms(e.execution_ms),
                       count(std::round(e.total_cost)), count(std::round(e.jit_above_cost))),
           {{"jit_functions", e.jit_functions},
            {"jit_total_ms", e.jit_total_ms},
            {"execution_ms", e.execution_ms},
            {"total_cost", e.total_cost},
            {"jit_above_cost", e.jit_above_cost}}});
    }
    if (!setup_analyzes && !e.never_analyzed.empty()) {
      std::string names;
      const std::size_t shown = std::min<std::size_t>(e.never_analyzed.size(), 5);
      for (std::size_t i = 0; i < shown; ++i) names += (i ? ", " : "") + e.never_analyzed[i];
      if (e.never_analyzed.size() > shown)
        names += fmt::format(", … {} more", e.never_analyzed.size() - shown);
      out.push_back({s.name,
                     "never_analyzed",
                     fmt::format("{} table{} this query reads {} never analyzed ({}): its plan "
                                 "rests on default statistics — add `- analyze: true` to setup:",
                                 e.never_analyzed.size(), e.never_analyzed.size() == 1 ? "" : "s",
                                 e.never_analyzed.size() == 1 ? "was" : "were", names),
                     {{"tables", static_cast<double>(e.never_analyzed.size())}}});
    }
    if (e.planning_ms > e.execution_ms && e.planning_ms >= k_planning_floor_ms) {
      out.push_back({s.name,
                     "planning_exceeds_execution",
                     fmt::format("planning took {}, more than the {} execution — the plan is "
                                 "paid again on every run: consider a prepared statement or a "
                                 "simpler query (fewer joins or subqueries)",
                                 ms(e.planning_ms), ms(e.execution_ms)),
                     {{"planning_ms", e.planning_ms}, {"execution_ms", e.execution_ms}}});
    }
  }
  return out;
}

}  // namespace coldgate::measure
