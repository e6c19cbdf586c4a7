#include "results/json.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "results/gate_json.hpp"
#include "results/growth_json.hpp"
#include "results/json_io.hpp"
#include "results/json_parts.hpp"
#include "results/migration_json.hpp"
#include "util/error.hpp"

namespace coldgate::results {
namespace {

using nlohmann::ordered_json;
using namespace json_io;

// QueryStats::parameters by name (results.json `stages[].queries[].parameters`).
constexpr std::pair<util::ParameterUse, std::string_view> k_parameter_uses[] = {
    {util::ParameterUse::none, "none"}, {util::ParameterUse::lookup, "lookup"}, {util::ParameterUse::other, "other"}};

std::string parameters_name(util::ParameterUse use) {
  for (const auto& [v, name] : k_parameter_uses) {
    if (v == use) return std::string(name);
  }
  return "none";
}

std::optional<util::ParameterUse> parameters_from(std::string_view text) {
  for (const auto& [v, name] : k_parameter_uses) {
    if (name == text) return v;
  }
  return std::nullopt;
}

// --- writing, one function per section ------------------------------------------------------

ordered_json snapshot_json(const std::optional<SnapshotResult>& snapshot) {
  if (!snapshot) return nullptr;
  const auto& sn = *snapshot;
  return {{"status", to_string(sn.status)},
          {"path", sn.path},
          {"sha256", sn.sha256},
          {"pending", or_null(sn.pending)},
          {"message", or_null(sn.message)},
          // The readable diff, so a report made from results files alone (compare, merged
          // shards) still shows what changed.
          {"diff", or_null(sn.diff)}};
}

ordered_json explain_json(const std::optional<Explain>& explain) {
  if (!explain) return nullptr;
  return {{"total_cost", json_number(explain->total_cost)},
          {"jit", explain->jit},
          {"jit_above_cost", json_number(explain->jit_above_cost)},
          {"never_analyzed", explain->never_analyzed},
          {"plan", explain->plan_file}};
}

ordered_json metrics_json(const std::vector<std::pair<std::string, Metric>>& metrics) {
  ordered_json out = ordered_json::object();
  for (const auto& [name, m] : metrics) {
    out[name] = {{"unit", m.unit}, {"cold", json_samples(m.cold)}, {"warm", json_samples(m.warm)}};
  }
  return out;
}

ordered_json stage_json(const StageResult& s) {
  ordered_json st;
  st["name"] = s.name;
  st["kind"] = to_string(s.kind);
  st["cold"] = to_string(s.cold_mode);
  st["runs"] = s.runs;
  st["warm"] = s.warm;
  if (!s.isolation.empty()) st["isolation"] = s.isolation;
  st["settings"] = string_map(s.settings);
  st["error"] = or_null(s.error);
  st["snapshot"] = snapshot_json(s.snapshot);
  st["explain"] = explain_json(s.explain);
  ordered_json queries = ordered_json::array();
  for (const auto& q : s.queries) {
    queries.push_back({{"queryid", q.queryid},
                       {"query", q.query},
                       {"calls", json_number(q.calls)},
                       {"rows", json_number(q.rows)},
                       {"plan_ms", json_number(q.plan_ms)},
                       {"exec_ms", json_number(q.exec_ms)},
                       {"jit_ms", json_number(q.jit_ms)},
                       {"jit_functions", json_number(q.jit_functions)},
                       {"total_cost", q.total_cost ? json_number(*q.total_cost) : ordered_json()},
                       {"blocks", opt_number(q.blocks)},
                       {"blocks_per_call", opt_number(q.blocks_per_call)},
                       {"text_id", or_null(q.text_id)}});
    if (q.parameters) queries.back()["parameters"] = parameters_name(*q.parameters);
    if (q.plan) {
      ordered_json plan = ordered_json::parse(q.plan->json, nullptr, false);
      queries.back()["plan"] = {{"duration_ms", json_number(q.plan->duration_ms)},
                                {"shape_id", q.plan->shape_id},
                                {"plan", plan.is_discarded() ? ordered_json() : plan}};
    } else {
      queries.back()["plan"] = nullptr;
    }
  }
  st["queries"] = queries;
  st["metrics"] = metrics_json(s.metrics);
  if (s.growth) st["growth"] = stage_growth_json(*s.growth);
  return st;
}

ordered_json diagnoses_json(const std::vector<Diagnosis>& diagnoses) {
  ordered_json out = ordered_json::array();
  for (const auto& d : diagnoses) {
    ordered_json data = ordered_json::object();
    for (const auto& [k, v] : d.data) data[k] = json_number(v);
    if (!d.queryid.empty()) data["queryid"] = d.queryid;
    if (!d.query.empty()) data["query"] = d.query;
    for (const auto& [k, v] : d.facts) data[k] = v;
    out.push_back({{"stage", d.stage},
                   {"kind", std::string(to_string(d.kind))},
                   {"message", d.message},
                   {"data", data},
                   {"change", or_null(std::string(to_string(d.change)))}});
  }
  return out;
}

ordered_json remedies_json(const std::vector<Remedy>& remedies) {
  ordered_json out = ordered_json::array();
  for (const auto& r : remedies) {
    out.push_back({{"stage", r.stage},
                   {"remedy", r.remedy},
                   {"settings", string_map(r.settings)},
                   {"second_execution", r.second_execution},
                   {"metrics", metrics_json(r.metrics)},
                   {"snapshot_identical",
                    r.snapshot_identical ? ordered_json(*r.snapshot_identical) : ordered_json()},
                   {"first_difference", or_null(r.first_difference)},
                   {"note", or_null(r.note)},
                   {"error", or_null(r.error)}});
    if (!r.statement_blocks_per_call.empty()) {
      ordered_json blocks = ordered_json::object();
      for (const auto& [k, v] : r.statement_blocks_per_call) blocks[k] = json_number(v);
      out.back()["statement_blocks_per_call"] = blocks;
    }
  }
  return out;
}

ordered_json history_json(const HistoryTrend& h) {
  ordered_json commits = ordered_json::array();
  for (const auto& c : h.commits) {
    commits.push_back({{"commit", c.commit}, {"subject", c.subject}, {"date", c.date}});
  }
  ordered_json series = ordered_json::array();
  for (const auto& s : h.series) {
    ordered_json medians = ordered_json::array();
    for (const auto& m : s.medians) medians.push_back(opt_number(m));
    series.push_back({{"stage", s.stage},
                      {"metric", s.metric},
                      {"unit", s.unit},
                      {"medians", medians},
                      {"head", opt_number(s.head)}});
  }
  return {{"store", h.store}, {"asked", h.asked}, {"commits", commits}, {"series", series}};
}

// --- reading, one function per section ------------------------------------------------------

Environment environment_from(const ordered_json& e) {
  Environment out;
  out.host = str(e, "host");
  out.cpus = e.at("cpus").get<int>();
  out.cpu_model = str(e, "cpu_model");
  out.kernel = str(e, "kernel");
  out.os = str(e, "os");
  out.provider = str(e, "provider");
  const auto& pg = e.at("postgres");
  out.postgres_version = str(pg, "version");
  out.postgres_version_num = pg.at("version_num").get<int>();
  for (const auto& [k, v] : pg.at("settings").items()) {
    out.postgres_settings[k] = v.get<std::string>();
  }
  return out;
}

Explain explain_from(const ordered_json& ex) {
  Explain x;
  x.total_cost = ex.at("total_cost").get<double>();
  x.jit = ex.at("jit").get<bool>();
  x.plan_file = str(ex, "plan");
  if (ex.contains("jit_above_cost")) x.jit_above_cost = ex.at("jit_above_cost").get<double>();
  if (ex.contains("never_analyzed")) {
    x.never_analyzed = ex.at("never_analyzed").get<std::vector<std::string>>();
  }
  return x;
}

// A metric's samples; a sample that is not a number (null is how NaN and infinity come out of
// a JSON writer) is named precisely: the gate cannot compare it.
std::vector<double> samples_from(const ordered_json& m, const char* phase, const std::string& stage,
                                 const std::string& name, const std::string& source) {
  std::vector<double> out;
  const auto& list = m.at(phase);
  if (!list.is_array()) {
    throw usage_error(
        source, fmt::format("stage '{}' metric {}: \"{}\" is not an array", stage, name, phase));
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_number()) {
      throw usage_error(source,
                        fmt::format("stage '{}' metric {}: {} sample {} is {}, not a number "
                                    "(NaN and infinity are written as null)",
                                    stage, name, phase, i + 1, list[i].dump()));
    }
    out.push_back(list[i].get<double>());
  }
  return out;
}

// The EXPLAIN split of a stage is kept as its metrics' first cold samples.
void explain_figures_from_metrics(StageResult& st) {
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

StageResult stage_from(const ordered_json& s, const std::string& source) {
  StageResult st;
  st.name = s.at("name").get<std::string>();
  st.kind = named(s, "kind", stage_kind_from, StageKind::sql, "stage '" + st.name + "'",
                  "sql or command", source);
  st.cold_mode = named(s, "cold", cold_mode_from, ColdMode::process, "stage '" + st.name + "'",
                       "process or restart", source);
  st.runs = s.at("runs").get<int>();
  st.warm = s.at("warm").get<int>();
  st.isolation = str(s, "isolation");
  if (s.contains("settings")) {
    st.settings = s.at("settings").get<std::map<std::string, std::string>>();
  }
  st.error = str(s, "error");
  if (const auto& sn = s.at("snapshot"); !sn.is_null()) {
    SnapshotStatus status =
        named(sn, "status", snapshot_status_from, SnapshotStatus::match,
              "stage '" + st.name + "' snapshot",
              "match, changed, missing, malformed, nondeterministic or updated", source);
    st.snapshot = SnapshotResult{
        status,         str(sn, "path"), str(sn, "pending"), str(sn, "sha256"), str(sn, "message"),
        str(sn, "diff")};
  }
  if (const auto& ex = s.at("explain"); !ex.is_null()) st.explain = explain_from(ex);
  for (const auto& item : s.at("metrics").items()) {
    // Named, not a structured binding: clang 14 (the fuzz build) cannot capture those.
    const std::string& name = item.key();
    const auto& m = item.value();
    Metric metric{m.at("unit").get<std::string>(), samples_from(m, "cold", st.name, name, source),
                  samples_from(m, "warm", st.name, name, source)};
    st.metrics.emplace_back(name, std::move(metric));
  }
  if (st.explain) explain_figures_from_metrics(st);
  if (s.contains("queries")) {
    for (const auto& q : s.at("queries")) {
      QueryStats x;
      x.queryid = q.at("queryid").get<std::string>();
      x.query = q.at("query").get<std::string>();
      x.calls = q.at("calls").get<double>();
      x.rows = q.at("rows").get<double>();
      x.plan_ms = q.at("plan_ms").get<double>();
      x.exec_ms = q.at("exec_ms").get<double>();
      x.jit_ms = q.at("jit_ms").get<double>();
      x.jit_functions = q.at("jit_functions").get<double>();
      if (const auto& c = q.at("total_cost"); !c.is_null()) x.total_cost = c.get<double>();
      if (q.contains("blocks") && !q["blocks"].is_null()) x.blocks = q["blocks"].get<double>();
      if (q.contains("blocks_per_call") && !q["blocks_per_call"].is_null())
        x.blocks_per_call = q["blocks_per_call"].get<double>();
      if (q.contains("text_id") && !q["text_id"].is_null())
        x.text_id = q["text_id"].get<std::string>();
      if (q.contains("parameters") && !q["parameters"].is_null()) {
        x.parameters = named(q, "parameters", parameters_from, util::ParameterUse::none,
                             "stage '" + st.name + "' queries[]", "none, lookup or other", source);
      }
      if (q.contains("plan") && q["plan"].is_object()) {
        const auto& p = q["plan"];
        StatementPlan plan;
        plan.duration_ms = p.at("duration_ms").get<double>();
        plan.shape_id = p.at("shape_id").get<std::string>();
        plan.json = p.at("plan").dump();
        x.plan = std::move(plan);
      }
      st.queries.push_back(std::move(x));
    }
  }
  if (s.contains("growth") && !s["growth"].is_null()) st.growth = stage_growth_from(s["growth"], st.name, source);
  return st;
}

// The history block, each member checked by name ("history.series[2].medians[0] is \"x\", not
// a number or null"): a wrong type or a count that does not match the commits is an error, an
// unknown member is skipped.
class HistoryReader {
 public:
  explicit HistoryReader(const std::string& source) : m_source(source) {}

  HistoryTrend read(const ordered_json& h) const {
    object(h, "history");
    HistoryTrend out;
    out.store = text(member(h, "store", "history"), "history.store");
    const ordered_json& asked = member(h, "asked", "history");
    if (!asked.is_number_integer() || asked.get<std::int64_t>() < 0 ||
        asked.get<std::int64_t>() > std::numeric_limits<int>::max()) {
      fail("history.asked", asked, "a whole number of records");
    }
    out.asked = asked.get<int>();
    const ordered_json& commits = list(member(h, "commits", "history"), "history.commits");
    for (std::size_t i = 0; i < commits.size(); ++i) {
      std::string at = fmt::format("history.commits[{}]", i);
      object(commits[i], at);
      out.commits.push_back({text(member(commits[i], "commit", at), at + ".commit"),
                             text(member(commits[i], "subject", at), at + ".subject"),
                             text(member(commits[i], "date", at), at + ".date")});
    }
    const ordered_json& series = list(member(h, "series", "history"), "history.series");
    for (std::size_t i = 0; i < series.size(); ++i) {
      std::string at = fmt::format("history.series[{}]", i);
      const ordered_json& s = series[i];
      object(s, at);
      HistorySeries x{text(member(s, "stage", at), at + ".stage"),
                      text(member(s, "metric", at), at + ".metric"),
                      text(member(s, "unit", at), at + ".unit"),
                      {},
                      number_or_null(member(s, "head", at), at + ".head")};
      const ordered_json& medians = list(member(s, "medians", at), at + ".medians");
      if (medians.size() != out.commits.size()) {
        throw usage_error(m_source, fmt::format("{}.medians has {} values for {} commits (one "
                                                "per history.commits entry, null where missing)",
                                                at, medians.size(), out.commits.size()));
      }
      for (std::size_t k = 0; k < medians.size(); ++k) {
        x.medians.push_back(number_or_null(medians[k], fmt::format("{}.medians[{}]", at, k)));
      }
      out.series.push_back(std::move(x));
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& at, const ordered_json& value,
                         std::string_view expected) const {
    std::string shown = value.dump();
    if (shown.size() > 40) {
      std::size_t cut = 40;  // at a UTF-8 character boundary
      while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) --cut;
      shown = shown.substr(0, cut) + "…";
    }
    throw usage_error(m_source, fmt::format("{} is {}, not {}", at, shown, expected));
  }

  const ordered_json& member(const ordered_json& o, const char* key, const std::string& at) const {
    auto it = o.find(key);
    if (it == o.end()) throw usage_error(m_source, fmt::format("{} has no \"{}\"", at, key));
    return *it;
  }

  void object(const ordered_json& v, const std::string& at) const {
    if (!v.is_object()) fail(at, v, "an object");
  }

  const ordered_json& list(const ordered_json& v, const std::string& at) const {
    if (!v.is_array()) fail(at, v, "an array");
    return v;
  }

  std::string text(const ordered_json& v, const std::string& at) const {
    if (!v.is_string()) fail(at, v, "a string");
    return v.get<std::string>();
  }

  std::optional<double> number_or_null(const ordered_json& v, const std::string& at) const {
    if (v.is_null()) return std::nullopt;
    if (!v.is_number()) fail(at, v, "a number or null");
    return v.get<double>();
  }

  const std::string& m_source;
};

}  // namespace

std::string to_json(const Results& r) {
  ordered_json doc;
  doc["schema"] = k_results_schema;
  doc["tool"] = {{"name", "coldgate"}, {"version", r.tool_version}};
  doc["title"] = r.title;
  doc["config"] = r.config;
  doc["started_at"] = r.started_at;
  doc["finished_at"] = r.finished_at;
  doc["git"] = git_json(r.git);
  doc["no_baseline"] = or_null(r.no_baseline);
  doc["ci_run_url"] = or_null(r.ci_run_url);
  doc["environment"] = environment_json(r.environment);
  ordered_json setup = ordered_json::array();
  for (const auto& s : r.setup) {
    setup.push_back({{"kind", s.kind}, {"label", s.label}, {"wall_ms", json_number(s.wall_ms)}});
  }
  doc["setup"] = setup;
  ordered_json stages = ordered_json::array();
  for (const auto& s : r.stages) stages.push_back(stage_json(s));
  doc["stages"] = stages;
  doc["obsolete_snapshots"] = r.obsolete_snapshots;
  doc["diagnoses"] = diagnoses_json(r.diagnoses);
  doc["remedies"] = remedies_json(r.remedies);
  doc["profile_note"] = or_null(r.profile_note);
  doc["profile_limit"] = or_null(r.profile_limit);
  if (!r.plans_note.empty()) doc["plans_note"] = r.plans_note;
  doc["gate"] = r.gate ? gate_json(*r.gate) : ordered_json(nullptr);
  if (r.history) doc["history"] = history_json(*r.history);
  if (r.migration) doc["migration"] = migration_json(*r.migration);
  // Written only when there is something to say: results of complete runs read as before.
  if (!r.warnings.empty()) doc["warnings"] = r.warnings;
  if (r.stopped) {
    const Stopped& x = *r.stopped;
    doc["stopped"] = {{"exit_code", x.exit_code}, {"phase", std::string(to_string(x.phase))},   {"step", or_null(x.step)},
                      {"where", or_null(x.where)}, {"error", x.error}, {"not_run", x.not_run}};
  }
  // Error texts carry a command's stderr and server messages byte for byte: bytes that are not
  // UTF-8 become U+FFFD, so the results are written whatever a stage printed.
  return doc.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

std::string trial_to_json(const std::string& stage, const std::vector<Remedy>& remedies) {
  ordered_json doc;
  doc["stage"] = stage;
  doc["remedies"] = remedies_json(remedies);
  return doc.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

Results from_json(std::string_view text, const std::string& source) {
  ordered_json doc = ordered_json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded())
    throw usage_error(source, "not valid JSON (expected a coldgate results file)");
  if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != k_results_schema) {
    throw usage_error(
        source, fmt::format("not a {} file (its \"schema\" member differs)", k_results_schema));
  }
  Results r;
  try {
    r.tool_version = doc.at("tool").at("version").get<std::string>();
    r.title = str(doc, "title");
    r.config = str(doc, "config");
    r.started_at = str(doc, "started_at");
    r.finished_at = str(doc, "finished_at");
    r.git = git_from(doc.at("git"));
    r.no_baseline = str(doc, "no_baseline");
    r.ci_run_url = str(doc, "ci_run_url");
    r.environment = environment_from(doc.at("environment"));
    for (const auto& s : doc.at("setup")) {
      r.setup.push_back({str(s, "kind"), str(s, "label"), s.at("wall_ms").get<double>()});
    }
    for (const auto& s : doc.at("stages")) r.stages.push_back(stage_from(s, source));
    if (doc.contains("obsolete_snapshots")) {
      r.obsolete_snapshots = doc["obsolete_snapshots"].get<std::vector<std::string>>();
    }
    if (doc.contains("diagnoses")) {
      for (const auto& d : doc["diagnoses"]) {
        Diagnosis x{d.at("stage").get<std::string>(), {}, d.at("message").get<std::string>(), {}};
        const auto kind_name = d.at("kind").get<std::string>();
        const auto kind = diagnosis_kind_from(kind_name);
        if (!kind) {
          throw usage_error(source, fmt::format("diagnosis of stage '{}'.kind is \"{}\" (expected jit_dominates, "
                                                "repeated_query, never_analyzed, planning_exceeds_execution, "
                                                "missing_index, misestimate or scan_grows)",
                                                x.stage, kind_name));
        }
        x.kind = *kind;
        for (const auto& [k, v] : d.at("data").items()) {
          if (k == "queryid") {
            x.queryid = v.get<std::string>();
          } else if (k == "query") {
            x.query = v.get<std::string>();
          } else if (v.is_string()) {
            x.facts[k] = v.get<std::string>();
          } else {
            x.data[k] = v.get<double>();
          }
        }
        x.change = named(d, "change", diagnosis_change_from, DiagnosisChange::none,
                         "diagnosis of stage '" + x.stage + "'",
                         "\"new\", \"worse\", \"gone\" or \"also_in_base\"", source);
        r.diagnoses.push_back(std::move(x));
      }
    }
    if (doc.contains("profile_note")) r.profile_note = str(doc, "profile_note");
    if (doc.contains("profile_limit")) r.profile_limit = str(doc, "profile_limit");
    if (doc.contains("plans_note")) r.plans_note = str(doc, "plans_note");
    if (doc.contains("remedies")) {
      for (const auto& x : doc["remedies"]) {
        Remedy m;
        m.stage = x.at("stage").get<std::string>();
        m.remedy = x.at("remedy").get<std::string>();
        m.settings = x.at("settings").get<std::map<std::string, std::string>>();
        m.second_execution = x.at("second_execution").get<bool>();
        m.kind = remedy_kind_of(m.remedy, m.settings, m.second_execution);
        for (const auto& item : x.at("metrics").items()) {
          const auto& v = item.value();
          m.metrics.emplace_back(
              item.key(), Metric{v.at("unit").get<std::string>(),
                                 samples_from(v, "cold", m.stage, item.key(), source),
                                 samples_from(v, "warm", m.stage, item.key(), source)});
        }
        if (const auto& i = x.at("snapshot_identical"); !i.is_null())
          m.snapshot_identical = i.get<bool>();
        m.first_difference = str(x, "first_difference");
        m.note = str(x, "note");
        m.error = str(x, "error");
        if (x.contains("statement_blocks_per_call") && x["statement_blocks_per_call"].is_object()) {
          for (const auto& [k, v] : x["statement_blocks_per_call"].items())
            m.statement_blocks_per_call[k] = v.get<double>();
        }
        r.remedies.push_back(std::move(m));
      }
    }
    if (doc.contains("gate") && !doc["gate"].is_null()) r.gate = gate_from(doc["gate"], source);
    if (doc.contains("history") && !doc["history"].is_null())
      r.history = HistoryReader(source).read(doc["history"]);
    if (doc.contains("migration") && !doc["migration"].is_null())
      r.migration = migration_from(doc["migration"], source);
    if (doc.contains("warnings")) r.warnings = doc["warnings"].get<std::vector<std::string>>();
    if (doc.contains("stopped") && !doc["stopped"].is_null()) {
      const auto& x = doc["stopped"];
      const auto phase_name = x.at("phase").get<std::string>();
      const auto phase = stop_phase_from(phase_name);
      if (!phase) {
        throw usage_error(source, fmt::format("stopped.phase is \"{}\" (expected usage, config, server, build, "
                                              "setup, migrate, stages, scales, remedies or teardown)",
                                              phase_name));
      }
      r.stopped = Stopped{x.at("exit_code").get<int>(), *phase,
                          str(x, "step"), str(x, "where"), x.at("error").get<std::string>(),
                          x.at("not_run").get<std::vector<std::string>>()};
    }
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(source, fmt::format("malformed results file: {}", e.what()));
  }
  return r;
}

}  // namespace coldgate::results
