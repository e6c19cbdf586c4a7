#include "report/results_json.hpp"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "util/error.hpp"

namespace coldgate::report {
namespace {

using nlohmann::ordered_json;
using namespace coldgate::measure;

// Integers print without a fraction; other values as nlohmann's shortest round-trip double.
ordered_json number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) {
    return static_cast<std::int64_t>(v);
  }
  return v;
}

ordered_json samples(const std::vector<double>& values) {
  ordered_json a = ordered_json::array();
  for (double v : values) a.push_back(number(v));
  return a;
}

ordered_json or_null(const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }

std::string str(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::string() : it->get<std::string>();
}

}  // namespace

std::string to_json(const Results& r) {
  ordered_json doc;
  doc["schema"] = k_results_schema;
  doc["tool"] = {{"name", "coldgate"}, {"version", r.tool_version}};
  doc["title"] = r.title;
  doc["config"] = r.config;
  doc["started_at"] = r.started_at;
  doc["finished_at"] = r.finished_at;
  doc["git"] = {{"commit", or_null(r.git.commit)},
                {"branch", or_null(r.git.branch)},
                {"base", or_null(r.git.base)},
                {"dirty", r.git.dirty},
                {"dirty_measured", r.git.dirty_measured}};
  doc["no_baseline"] = or_null(r.no_baseline);
  doc["ci_run_url"] = or_null(r.ci_run_url);
  const Environment& e = r.environment;
  ordered_json settings = ordered_json::object();
  for (const auto& [k, v] : e.postgres_settings) settings[k] = v;
  doc["environment"] = {{"host", e.host},
                        {"cpus", e.cpus},
                        {"cpu_model", e.cpu_model},
                        {"kernel", e.kernel},
                        {"os", e.os},
                        {"provider", e.provider},
                        {"postgres",
                         {{"version", e.postgres_version},
                          {"version_num", e.postgres_version_num},
                          {"settings", settings}}}};
  ordered_json setup = ordered_json::array();
  for (const auto& s : r.setup) {
    setup.push_back({{"kind", s.kind}, {"label", s.label}, {"wall_ms", number(s.wall_ms)}});
  }
  doc["setup"] = setup;
  ordered_json stages = ordered_json::array();
  for (const auto& s : r.stages) {
    ordered_json st;
    st["name"] = s.name;
    st["kind"] = s.kind;
    st["cold"] = s.cold_mode;
    st["runs"] = s.runs;
    st["warm"] = s.warm;
    st["error"] = or_null(s.error);
    if (s.snapshot) {
      const auto& sn = *s.snapshot;
      st["snapshot"] = {{"status", sn.status},   {"path", sn.path},
                        {"sha256", sn.sha256},   {"pending", or_null(sn.pending)},
                        {"message", or_null(sn.message)},
                        // The readable diff, so a report made from results files alone
                        // (compare, merged shards) still shows what changed.
                        {"diff", or_null(sn.diff)}};
    } else {
      st["snapshot"] = nullptr;
    }
    if (s.explain) {
      st["explain"] = {{"total_cost", number(s.explain->total_cost)},
                       {"jit", s.explain->jit},
                       {"jit_above_cost", number(s.explain->jit_above_cost)},
                       {"never_analyzed", s.explain->never_analyzed},
                       {"plan", s.explain->plan_file}};
    } else {
      st["explain"] = nullptr;
    }
    ordered_json metrics = ordered_json::object();
    for (const auto& [name, m] : s.metrics) {
      metrics[name] = {{"unit", m.unit}, {"cold", samples(m.cold)}, {"warm", samples(m.warm)}};
    }
    st["metrics"] = metrics;
    stages.push_back(std::move(st));
  }
  doc["stages"] = stages;
  doc["obsolete_snapshots"] = r.obsolete_snapshots;
  ordered_json diagnoses = ordered_json::array();
  for (const auto& d : r.diagnoses) {
    ordered_json data = ordered_json::object();
    for (const auto& [k, v] : d.data) data[k] = number(v);
    diagnoses.push_back({{"stage", d.stage}, {"kind", d.kind}, {"message", d.message}, {"data", data}});
  }
  doc["diagnoses"] = diagnoses;
  if (r.gate) {
    const GateResult& g = *r.gate;
    auto opt = [](const std::optional<double>& v) { return v ? number(*v) : ordered_json(nullptr); };
    ordered_json metrics = ordered_json::array();
    for (const auto& m : g.metrics) {
      metrics.push_back({{"stage", m.stage},
                         {"metric", m.metric},
                         {"unit", m.unit},
                         {"verdict", m.verdict},
                         {"base_median", opt(m.base_median)},
                         {"head_median", opt(m.head_median)},
                         {"ratio", opt(m.ratio)},
                         {"reason", m.reason}});
    }
    doc["gate"] = {{"baseline", g.baseline},
                   {"base_git",
                    {{"commit", or_null(g.base_git.commit)},
                     {"branch", or_null(g.base_git.branch)},
                     {"base", or_null(g.base_git.base)}}},
                   {"base_source", to_string(g.base_source)},
                   {"base_measured_at", or_null(g.base_measured_at)},
                   {"base_host", or_null(g.base_host)},
                   {"environment_differences", g.environment_differences},
                   {"stages_new", g.stages_new},
                   {"stages_removed", g.stages_removed},
                   {"metrics", metrics}};
  } else {
    doc["gate"] = nullptr;
  }
  return doc.dump(2) + "\n";
}

Results from_json(std::string_view text, const std::string& source) {
  ordered_json doc = ordered_json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) throw usage_error(source, "not valid JSON (expected a coldgate results file)");
  if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != k_results_schema) {
    throw usage_error(source, fmt::format("not a {} file (its \"schema\" member differs)",
                                          k_results_schema));
  }
  Results r;
  try {
    r.tool_version = doc.at("tool").at("version").get<std::string>();
    r.title = str(doc, "title");
    r.config = str(doc, "config");
    r.started_at = str(doc, "started_at");
    r.finished_at = str(doc, "finished_at");
    const auto& g = doc.at("git");
    r.git = {str(g, "commit"), str(g, "branch"), str(g, "base"), {}, true};
    if (g.contains("dirty")) r.git.dirty = g.at("dirty").get<std::vector<std::string>>();
    if (g.contains("dirty_measured")) r.git.dirty_measured = g.at("dirty_measured").get<bool>();
    r.no_baseline = str(doc, "no_baseline");
    r.ci_run_url = str(doc, "ci_run_url");
    const auto& e = doc.at("environment");
    r.environment.host = str(e, "host");
    r.environment.cpus = e.at("cpus").get<int>();
    r.environment.cpu_model = str(e, "cpu_model");
    r.environment.kernel = str(e, "kernel");
    r.environment.os = str(e, "os");
    r.environment.provider = str(e, "provider");
    const auto& pg = e.at("postgres");
    r.environment.postgres_version = str(pg, "version");
    r.environment.postgres_version_num = pg.at("version_num").get<int>();
    for (const auto& [k, v] : pg.at("settings").items()) {
      r.environment.postgres_settings[k] = v.get<std::string>();
    }
    for (const auto& s : doc.at("setup")) {
      r.setup.push_back({str(s, "kind"), str(s, "label"), s.at("wall_ms").get<double>()});
    }
    for (const auto& s : doc.at("stages")) {
      StageResult st;
      st.name = s.at("name").get<std::string>();
      st.kind = str(s, "kind");
      st.cold_mode = str(s, "cold");
      st.runs = s.at("runs").get<int>();
      st.warm = s.at("warm").get<int>();
      st.error = str(s, "error");
      if (const auto& sn = s.at("snapshot"); !sn.is_null()) {
        st.snapshot = SnapshotResult{str(sn, "status"), str(sn, "path"), str(sn, "pending"),
                                     str(sn, "sha256"), str(sn, "message"), str(sn, "diff")};
      }
      if (const auto& ex = s.at("explain"); !ex.is_null()) {
        Explain x;
        x.total_cost = ex.at("total_cost").get<double>();
        x.jit = ex.at("jit").get<bool>();
        x.plan_file = str(ex, "plan");
        if (ex.contains("jit_above_cost")) x.jit_above_cost = ex.at("jit_above_cost").get<double>();
        if (ex.contains("never_analyzed")) {
          x.never_analyzed = ex.at("never_analyzed").get<std::vector<std::string>>();
        }
        st.explain = x;
      }
      for (const auto& item : s.at("metrics").items()) {
        // Named, not a structured binding: clang 14 (the fuzz build) cannot capture those.
        const std::string& name = item.key();
        const auto& m = item.value();
        // A sample that is not a number (null is how NaN and infinity come out of a JSON
        // writer) is named precisely: the gate cannot compare it.
        auto samples = [&](const char* phase) {
          std::vector<double> out;
          const auto& list = m.at(phase);
          if (!list.is_array()) {
            throw usage_error(source, fmt::format("stage '{}' metric {}: \"{}\" is not an array",
                                                  st.name, name, phase));
          }
          for (std::size_t i = 0; i < list.size(); ++i) {
            if (!list[i].is_number()) {
              throw usage_error(source,
                                fmt::format("stage '{}' metric {}: {} sample {} is {}, not a "
                                            "number (NaN and infinity are written as null)",
                                            st.name, name, phase, i + 1, list[i].dump()));
            }
            out.push_back(list[i].get<double>());
          }
          return out;
        };
        Metric metric{m.at("unit").get<std::string>(), samples("cold"), samples("warm")};
        st.metrics.emplace_back(name, std::move(metric));
      }
      if (st.explain) {
        auto first = [&](const char* n) {
          const Metric* m = st.find(n);
          return m && !m->cold.empty() ? m->cold.front() : 0.0;
        };
        st.explain->planning_ms = first("planning_ms");
        st.explain->execution_ms = first("execution_ms");
        st.explain->jit_functions = first("jit_functions");
        st.explain->jit_generation_ms = first("jit_generation_ms");
        st.explain->jit_inlining_ms = first("jit_inlining_ms");
        st.explain->jit_optimization_ms = first("jit_optimization_ms");
        st.explain->jit_emission_ms = first("jit_emission_ms");
        st.explain->jit_total_ms = first("jit_total_ms");
      }
      r.stages.push_back(std::move(st));
    }
    if (doc.contains("obsolete_snapshots")) {
      r.obsolete_snapshots = doc["obsolete_snapshots"].get<std::vector<std::string>>();
    }
    if (doc.contains("diagnoses")) {
      for (const auto& d : doc["diagnoses"]) {
        Diagnosis x{d.at("stage").get<std::string>(), d.at("kind").get<std::string>(),
                    d.at("message").get<std::string>(), {}};
        for (const auto& [k, v] : d.at("data").items()) x.data[k] = v.get<double>();
        r.diagnoses.push_back(std::move(x));
      }
    }
    if (doc.contains("gate") && !doc["gate"].is_null()) {
      const auto& g = doc["gate"];
      GateResult x;
      x.baseline = g.at("baseline").get<std::string>();
      const auto& bg = g.at("base_git");
      x.base_git = {str(bg, "commit"), str(bg, "branch"), str(bg, "base"), {}, true};
      if (std::string named = str(g, "base_source"); !named.empty()) {
        auto parsed = base_source_from(named);
        if (!parsed) {
          throw usage_error(source, fmt::format("gate.base_source is \"{}\" (expected file, "
                                                     "interleaved or cache)", named));
        }
        x.base_source = *parsed;
      }
      x.base_measured_at = str(g, "base_measured_at");
      x.base_host = str(g, "base_host");
      x.environment_differences = g.at("environment_differences").get<std::vector<std::string>>();
      x.stages_new = g.at("stages_new").get<std::vector<std::string>>();
      x.stages_removed = g.at("stages_removed").get<std::vector<std::string>>();
      auto opt = [](const ordered_json& v) {
        return v.is_null() ? std::optional<double>() : std::optional<double>(v.get<double>());
      };
      for (const auto& m : g.at("metrics")) {
        x.metrics.push_back({m.at("stage").get<std::string>(), m.at("metric").get<std::string>(),
                             m.at("unit").get<std::string>(), m.at("verdict").get<std::string>(),
                             opt(m.at("base_median")), opt(m.at("head_median")), opt(m.at("ratio")),
                             m.at("reason").get<std::string>()});
      }
      r.gate = std::move(x);
    }
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(source, fmt::format("malformed results file: {}", e.what()));
  }
  return r;
}

}  // namespace coldgate::report
