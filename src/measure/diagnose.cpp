#include "measure/diagnose.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "measure/profile.hpp"
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

const config::Stage* stage_of(const config::Config& config, const std::string& name) {
  for (const auto& s : config.stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// The median of the warm repetitions when there are any (the steady state), else of the cold
// runs; `warm` says which.
double steady_median(const StageResult& s, const char* name, bool* warm = nullptr) {
  const Metric* m = s.find(name);
  if (!m) return 0;
  bool use_warm = !m->warm.empty();
  if (warm) *warm = use_warm;
  return median(use_warm ? m->warm : m->cold);
}

// "statement 123 `select …`", or without an id when there is none (coldgate explain).
std::string statement(const QueryStats& q) {
  return q.queryid.empty() ? fmt::format("statement `{}`", q.query)
                           : fmt::format("statement {} `{}`", q.queryid, q.query);
}

Diagnosis about(const StageResult& s, const QueryStats& q, std::string kind, std::string message,
                std::map<std::string, double> data) {
  return {s.name, std::move(kind), std::move(message), std::move(data), q.queryid, q.query};
}

void jit_dominates(const StageResult& s, std::vector<Diagnosis>& out) {
  for (const auto& q : s.queries) {
    if (q.jit_ms < k_jit_floor_ms || q.jit_ms <= k_jit_dominance_share * q.exec_ms) continue;
    std::string estimate;
    std::map<std::string, double> data{{"db_jit_ms", q.jit_ms},
                                       {"db_exec_ms", q.exec_ms},
                                       {"jit_functions", q.jit_functions},
                                       {"calls", q.calls}};
    if (q.total_cost) {
      data["total_cost"] = *q.total_cost;
      estimate = fmt::format("; cost estimate {}", count(std::round(*q.total_cost)));
      if (s.explain && s.explain->jit_above_cost > 0) {
        data["jit_above_cost"] = s.explain->jit_above_cost;
        estimate += fmt::format(" (jit_above_cost {})", count(std::round(s.explain->jit_above_cost)));
      }
    }
    std::string fix =
        s.kind == StageKind::sql
            ? "set `settings: {jit: \"off\"}` on this stage (SET LOCAL jit = off in the query's "
              "transaction)"
            : "run `SET LOCAL jit = off;` right before that statement, in a transaction of its "
              "own (the setting ends with the transaction, so the pooled connection keeps JIT for "
              "everything else), or measure the stage with `settings: {jit: \"off\"}`";
    // JIT time is not a part of the execution time as pg_stat_statements counts them (some of it
    // falls in executor start-up), so the two are set side by side.
    out.push_back(about(
        s, q, "jit_dominates",
        fmt::format("JIT compiled {} functions in {} per run for {}, whose execution took {}{} "
                    "— {}",
                    count(q.jit_functions), ms(q.jit_ms), statement(q), ms(q.exec_ms), estimate,
                    fix),
        std::move(data)));
  }
}

void repeated(const StageResult& s, int threshold, std::vector<Diagnosis>& out) {
  for (const auto& q : s.queries) {
    if (q.calls < threshold || !reads_or_writes_data(q.query)) continue;
    // No remedy to measure (it is a code change): the estimate is (calls − 1) × the median
    // time per call, what the other calls cost.
    const double saving = (q.calls - 1) * (q.time_ms() / q.calls);
    out.push_back(about(
        s, q, "repeated_query",
        fmt::format("{} ran {} times per cold run ({} in all, ≥ repeated_threshold {}) — an "
                    "N+1: load all of them with one query (a join, `= ANY($1)` with an array of "
                    "the keys, or the ORM's eager loading); that saves about {} of server time "
                    "per run, plus {} round trips",
                    statement(q), count(q.calls), ms(q.time_ms()), threshold, ms(saving),
                    count(q.calls - 1)),
        {{"calls", q.calls},
         {"db_time_ms", q.time_ms()},
         {"rows", q.rows},
         {"estimated_saving_ms", saving}}));
  }
}

void never_analyzed(const StageResult& s, std::vector<Diagnosis>& out) {
  if (!s.explain || s.explain->never_analyzed.empty()) return;
  const auto& tables = s.explain->never_analyzed;
  std::string names;
  const std::size_t shown = std::min<std::size_t>(tables.size(), 5);
  for (std::size_t i = 0; i < shown; ++i) names += (i ? ", " : "") + tables[i];
  if (tables.size() > shown) names += fmt::format(", … {} more", tables.size() - shown);
  out.push_back({s.name,
                 "never_analyzed",
                 fmt::format("{} table{} this stage's statements read {} never analyzed ({}): "
                             "their plans rest on default statistics — add `- analyze: true` to "
                             "setup:",
                             tables.size(), tables.size() == 1 ? "" : "s",
                             tables.size() == 1 ? "was" : "were", names),
                 {{"tables", static_cast<double>(tables.size())}},
                 "",
                 ""});
}

void planning(const StageResult& s, std::vector<Diagnosis>& out) {
  bool warm = false;
  double plan = steady_median(s, "db_plan_ms", &warm);
  double exec = steady_median(s, "db_exec_ms");
  // Per statement too: thirty 0.15 ms plans of an N+1 are the N+1's cost, not planning's.
  double statements = std::max(1.0, steady_median(s, "db_queries"));
  if (plan < k_planning_floor_ms || plan <= exec || plan / statements < k_planning_per_call_ms)
    return;
  out.push_back({s.name,
                 "planning_exceeds_execution",
                 fmt::format("planning took {} per run, more than the {} execution (medians of "
                             "the {}) — every execution plans again: a prepared statement (or "
                             "the driver's statement cache) plans once",
                             ms(plan), ms(exec), warm ? "warm repetitions" : "cold runs"),
                 {{"db_plan_ms", plan}, {"db_exec_ms", exec}},
                 "",
                 ""});
}

}  // namespace

std::vector<Diagnosis> diagnose(const Results& results, const config::Config& config) {
  std::vector<Diagnosis> out;
  const bool setup_analyzes = config.setup_analyzes();
  for (const auto& s : results.stages) {
    if (s.failed()) continue;
    const config::Stage* stage = stage_of(config, s.name);
    jit_dominates(s, out);
    repeated(s, stage ? stage->repeated_threshold : config::k_default_repeated_threshold, out);
    if (!setup_analyzes) never_analyzed(s, out);
    planning(s, out);
  }
  return out;
}

}  // namespace coldgate::measure
