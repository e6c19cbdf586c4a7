// results.json's `gate` block: the thresholds, each metric's and each statement's verdict.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "results/gate_json.hpp"
#include "results/json_io.hpp"
#include "util/error.hpp"

namespace coldgate::results {
namespace {

using nlohmann::ordered_json;
using namespace json_io;

// A statement side's growth classes by figure, each by its name.
ordered_json classes_json(const std::map<std::string, GrowthClass>& m) {
  ordered_json o = ordered_json::object();
  for (const auto& [k, v] : m) o[k] = std::string(to_string(v));
  return o;
}

ordered_json thresholds_json(const GateThresholds& t) {
  return {{"max_ratio", json_number(t.max_ratio)},
          {"warn_ratio", json_number(t.warn_ratio)},
          {"min_delta_ms", json_number(t.min_delta_ms)},
          {"min_delta_bytes", json_number(t.min_delta_bytes)},
          {"max_query_ratio", json_number(t.max_query_ratio)},
          {"min_query_delta", json_number(t.min_query_delta)},
          {"max_blocks_ratio", json_number(t.max_blocks_ratio)},
          {"min_blocks_delta", json_number(t.min_blocks_delta)},
          {"statements", t.statements},
          {"max_extra_runs", json_number(t.max_extra_runs)},
          {"growth", t.growth},
          {"metrics", t.metrics},
          {"require_same_environment", t.require_same_environment}};
}

}  // namespace

ordered_json gate_json(const GateResult& g) {
  ordered_json metrics = ordered_json::array();
  for (const auto& m : g.metrics) {
    metrics.push_back({{"stage", m.stage},
                       {"metric", m.metric},
                       {"unit", m.unit},
                       {"verdict", to_string(m.verdict)},
                       {"base_median", opt_number(m.base_median)},
                       {"head_median", opt_number(m.head_median)},
                       {"ratio", opt_number(m.ratio)},
                       {"reason", m.reason}});
    if (m.extra_runs > 0) metrics.back()["extra_runs"] = m.extra_runs;
  }
  ordered_json statements = ordered_json::array();
  for (const auto& v : g.statements) {
    auto side = [](const std::optional<StatementSide>& x) -> ordered_json {
      if (!x) return nullptr;
      ordered_json out = {{"queryid", x->queryid},
              {"calls", json_number(x->calls)},
              {"rows_per_call", json_number(x->rows_per_call)},
              {"blocks_per_call", opt_number(x->blocks_per_call)},
              {"plan_ms_per_call", json_number(x->plan_ms_per_call)},
              {"exec_ms_per_call", json_number(x->exec_ms_per_call)},
              {"plan_shape_id", or_null(x->plan_shape_id)},
              {"growth", x->growth.empty() ? ordered_json(nullptr) : classes_json(x->growth)}};
      if (x->execution_blocks_per_call) out["execution_blocks_per_call"] = json_number(*x->execution_blocks_per_call);
      return out;
    };
    statements.push_back({{"stage", v.stage},
                          {"queryid", v.head ? v.head->queryid : v.base->queryid},
                          {"query", v.query},
                          {"base", side(v.base)},
                          {"head", side(v.head)},
                          {"verdict", to_string(v.verdict)},
                          {"reason", v.reason}});
    if (!v.plan_change.empty()) statements.back()["plan_change"] = v.plan_change;
    if (!v.growth_change.empty()) statements.back()["growth_change"] = v.growth_change;
  }
  ordered_json stage_thresholds = ordered_json::object();
  for (const auto& [stage, t] : g.stage_thresholds) stage_thresholds[stage] = thresholds_json(t);
  ordered_json differences = ordered_json::array();
  for (const auto& d : g.measurement_differences) {
    differences.push_back(
        {{"stage", d.stage}, {"field", d.field}, {"base", d.base}, {"head", d.head}});
  }
  return {{"baseline", g.baseline},
          {"base_git", git_json(g.base_git)},
          {"base_source", to_string(g.base_source)},
          {"base_measured_at", or_null(g.base_measured_at)},
          {"base_host", or_null(g.base_host)},
          {"head_source", g.head_cached ? "cache" : "measured"},
          {"thresholds", thresholds_json(g.thresholds)},
          {"stage_thresholds", stage_thresholds},
          {"environment_differences", g.environment_differences},
          {"measurement_differences", differences},
          {"stages_new", g.stages_new},
          {"stages_removed", g.stages_removed},
          {"metrics", metrics},
          {"statements", statements}};
}

namespace {

GateThresholds thresholds_from(const ordered_json& t) {
  GateThresholds out;
  out.max_ratio = t.at("max_ratio").get<double>();
  out.warn_ratio = t.at("warn_ratio").get<double>();
  out.min_delta_ms = t.at("min_delta_ms").get<double>();
  out.min_delta_bytes = t.at("min_delta_bytes").get<double>();
  if (t.contains("max_query_ratio")) out.max_query_ratio = t.at("max_query_ratio").get<double>();
  if (t.contains("min_query_delta")) out.min_query_delta = t.at("min_query_delta").get<double>();
  if (t.contains("max_blocks_ratio")) out.max_blocks_ratio = t.at("max_blocks_ratio").get<double>();
  if (t.contains("min_blocks_delta")) out.min_blocks_delta = t.at("min_blocks_delta").get<double>();
  if (t.contains("statements")) out.statements = t.at("statements").get<bool>();
  if (t.contains("max_extra_runs")) out.max_extra_runs = t.at("max_extra_runs").get<double>();
  if (t.contains("growth")) out.growth = t.at("growth").get<std::string>();
  out.metrics = t.at("metrics").get<std::vector<std::string>>();
  out.require_same_environment = t.at("require_same_environment").get<bool>();
  return out;
}

}  // namespace

GateResult gate_from(const ordered_json& g, const std::string& source) {
  GateResult x;
  x.baseline = g.at("baseline").get<std::string>();
  x.base_git = git_from(g.at("base_git"));
  if (std::string named = str(g, "base_source"); !named.empty()) {
    auto parsed = base_source_from(named);
    if (!parsed) {
      throw usage_error(source, fmt::format("gate.base_source is \"{}\" (expected file, "
                                            "interleaved, cache or history)",
                                            named));
    }
    x.base_source = *parsed;
  }
  x.base_measured_at = str(g, "base_measured_at");
  x.base_host = str(g, "base_host");
  if (std::string head = str(g, "head_source"); !head.empty()) {  // absent before it was written
    if (head != "measured" && head != "cache") {
      throw usage_error(source, fmt::format("gate.head_source is \"{}\" (expected measured or "
                                            "cache)",
                                            head));
    }
    x.head_cached = head == "cache";
  }
  if (g.contains("thresholds")) x.thresholds = thresholds_from(g.at("thresholds"));
  if (g.contains("stage_thresholds")) {
    for (const auto& item : g.at("stage_thresholds").items()) {
      x.stage_thresholds[item.key()] = thresholds_from(item.value());
    }
  }
  x.environment_differences = g.at("environment_differences").get<std::vector<std::string>>();
  if (g.contains("measurement_differences")) {
    for (const auto& d : g.at("measurement_differences")) {
      x.measurement_differences.push_back(
          {str(d, "stage"), str(d, "field"), str(d, "base"), str(d, "head")});
    }
  }
  x.stages_new = g.at("stages_new").get<std::vector<std::string>>();
  x.stages_removed = g.at("stages_removed").get<std::vector<std::string>>();
  auto opt = [](const ordered_json& v) {
    return v.is_null() ? std::optional<double>() : std::optional<double>(v.get<double>());
  };
  for (const auto& m : g.at("metrics")) {
    Verdict verdict = named(m, "verdict", verdict_from, Verdict::same, "gate.metrics[]",
                            "regression, slower, faster, same, new or removed", source);
    x.metrics.push_back({m.at("stage").get<std::string>(), m.at("metric").get<std::string>(),
                         m.at("unit").get<std::string>(), verdict, opt(m.at("base_median")),
                         opt(m.at("head_median")), opt(m.at("ratio")),
                         m.at("reason").get<std::string>()});
    if (m.contains("extra_runs")) x.metrics.back().extra_runs = m.at("extra_runs").get<int>();
  }
  if (g.contains("statements")) {
    auto side = [&](const ordered_json& v) -> std::optional<StatementSide> {
      if (v.is_null()) return std::nullopt;
      StatementSide out{v.at("queryid").get<std::string>(), v.at("calls").get<double>(),
                        v.at("rows_per_call").get<double>(), opt(v.at("blocks_per_call")),
                        v.at("plan_ms_per_call").get<double>(),
                        v.at("exec_ms_per_call").get<double>()};
      if (v.contains("plan_shape_id") && v["plan_shape_id"].is_string())
        out.plan_shape_id = v["plan_shape_id"].get<std::string>();
      if (v.contains("execution_blocks_per_call"))
        out.execution_blocks_per_call = opt(v["execution_blocks_per_call"]);
      if (v.contains("growth") && !v["growth"].is_null()) {
        for (const auto& [figure, name] : v["growth"].get<std::map<std::string, std::string>>()) {
          auto c = growth_class_from(name);
          if (!c) {
            throw usage_error(source, fmt::format("gate.statements[].growth.{} is \"{}\" (expected constant, "
                                                  "sublinear, linear, quadratic or superquadratic)",
                                                  figure, name));
          }
          out.growth[figure] = *c;
        }
      }
      return out;
    };
    for (const auto& v : g.at("statements")) {
      Verdict verdict = named(v, "verdict", verdict_from, Verdict::same, "gate.statements[]",
                              "regression, slower, faster, same, new or removed", source);
      StatementVerdict sv{v.at("stage").get<std::string>(), v.at("query").get<std::string>(),
                          side(v.at("base")), side(v.at("head")), verdict,
                          v.at("reason").get<std::string>()};
      if (v.contains("plan_change") && v["plan_change"].is_string())
        sv.plan_change = v["plan_change"].get<std::string>();
      if (v.contains("growth_change") && v["growth_change"].is_string())
        sv.growth_change = v["growth_change"].get<std::string>();
      if (!sv.base && !sv.head)
        throw usage_error(source, "gate.statements[]: a statement with neither base nor head");
      x.statements.push_back(std::move(sv));
    }
  }
  return x;
}

}  // namespace coldgate::results
