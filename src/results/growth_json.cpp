// results.json's `stages[].growth`: a stage's counts and its statements' over the data scales.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "results/growth_json.hpp"
#include "results/json_io.hpp"
#include "util/error.hpp"

namespace coldgate::results {
namespace {

using nlohmann::ordered_json;
using namespace json_io;

ordered_json fit_json(const GrowthFit& f) {
  ordered_json values = ordered_json::array();
  for (const auto& v : f.values) values.push_back(opt_number(v));
  ordered_json out = {{"values", values},
                      {"exponent", opt_number(f.exponent)},
                      {"coefficient", json_number(f.coefficient)},
                      {"offset", json_number(f.offset)},
                      {"growth", or_null(std::string(to_string(f.growth)))}};
  if (f.projected) out["projected"] = json_number(*f.projected);
  return out;
}

}  // namespace

ordered_json stage_growth_json(const StageGrowth& g) {
  ordered_json scales = ordered_json::array();
  for (double s : g.scales) scales.push_back(json_number(s));
  ordered_json statements = ordered_json::array();
  for (const auto& st : g.statements) {
    statements.push_back({{"query", st.query},
                          {"text_id", or_null(st.text_id)},
                          {"calls", fit_json(st.calls)},
                          {"rows_per_call", fit_json(st.rows_per_call)},
                          {"blocks_per_call", fit_json(st.blocks_per_call)},
                          {"time_ms", fit_json(st.time_ms)}});
  }
  return {{"scales", scales},
          {"production_scale", opt_number(g.production_scale)},
          {"queries", fit_json(g.queries)},
          {"rows", fit_json(g.rows)},
          {"blocks", fit_json(g.blocks)},
          {"time_ms", fit_json(g.time_ms)},
          {"wall_ms", fit_json(g.wall_ms)},
          {"statements", statements},
          {"error", or_null(g.error)}};
}

namespace {

// The classes a fit's `growth` may name.
constexpr std::string_view k_growth_class_names = "constant, sublinear, linear, quadratic, superquadratic or null";

GrowthFit fit_from(const ordered_json& f, const std::string& where, const std::string& source) {
  GrowthFit out;
  for (const auto& v : f.at("values")) out.values.push_back(number_or_null(v));
  out.exponent = number_or_null(f.at("exponent"));
  out.coefficient = f.at("coefficient").get<double>();
  out.offset = f.at("offset").get<double>();
  out.growth = named(f, "growth", growth_class_from, GrowthClass::none, where, k_growth_class_names, source);
  if (f.contains("projected")) out.projected = number_or_null(f.at("projected"));
  return out;
}

}  // namespace

StageGrowth stage_growth_from(const ordered_json& g, const std::string& stage, const std::string& source) {
  StageGrowth out;
  out.scales = g.at("scales").get<std::vector<double>>();
  out.production_scale = number_or_null(g.at("production_scale"));
  auto fit = [&](const ordered_json& f, const std::string& what) {
    GrowthFit x = fit_from(f, fmt::format("stage '{}' growth.{}", stage, what), source);
    if (x.values.size() != out.scales.size()) {
      throw usage_error(source, fmt::format("stage '{}' growth.{} has {} values for {} scales",
                                            stage, what, x.values.size(), out.scales.size()));
    }
    return x;
  };
  out.queries = fit(g.at("queries"), "queries");
  out.rows = fit(g.at("rows"), "rows");
  out.blocks = fit(g.at("blocks"), "blocks");
  out.time_ms = fit(g.at("time_ms"), "time_ms");
  out.wall_ms = fit(g.at("wall_ms"), "wall_ms");
  for (const auto& st : g.at("statements")) {
    StatementGrowth x;
    x.query = st.at("query").get<std::string>();
    x.text_id = str(st, "text_id");
    x.calls = fit(st.at("calls"), "statements[].calls");
    x.rows_per_call = fit(st.at("rows_per_call"), "statements[].rows_per_call");
    x.blocks_per_call = fit(st.at("blocks_per_call"), "statements[].blocks_per_call");
    x.time_ms = fit(st.at("time_ms"), "statements[].time_ms");
    out.statements.push_back(std::move(x));
  }
  out.error = str(g, "error");
  return out;
}

}  // namespace coldgate::results
