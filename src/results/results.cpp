#include "results/results.hpp"

#include <algorithm>

namespace coldgate::results {

Metric& StageResult::metric(const std::string& name, const std::string& unit) {
  for (auto& [n, m] : metrics) {
    if (n == name) return m;
  }
  metrics.emplace_back(name, Metric{unit, {}, {}});
  return metrics.back().second;
}

const Metric* StageResult::find(std::string_view name) const {
  for (const auto& [n, m] : metrics) {
    if (n == name) return &m;
  }
  return nullptr;
}

void StatementSum::add(const QueryStats& q) {
  if (q.calls > top_calls) {
    top_calls = q.calls;
    queryid = q.queryid;
    query = q.query;
    text_id = q.text_id;
  }
  if (q.plan && q.calls > plan_calls) {
    plan_calls = q.calls;
    plan = &*q.plan;
  }
  calls += q.calls;
  rows += q.rows;
  plan_ms += q.plan_ms;
  exec_ms += q.exec_ms;
  if (q.blocks_per_call) {
    blocks += *q.blocks_per_call * q.calls;
  } else {
    has_blocks = false;
  }
}

bool StatementVerdict::changed() const {
  if (verdict != Verdict::same || !base || !head) return true;
  // A plan change is not gated, but it is what a reviewer most needs to see.
  if (!plan_change.empty() || !growth_change.empty()) return true;
  // Blocks per call move a little between runs of one plan (catalog pages a fresh backend
  // reads, hint bits): below the gate's thresholds they are not a change to list.
  return base->calls != head->calls;
}

namespace {

// A value's name from a table of {value, name}; the first entry is the fallback.
template <typename T, std::size_t N>
std::string_view name_of(T value, const std::pair<T, std::string_view> (&names)[N]) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return names[0].second;
}

template <typename T, std::size_t N>
std::optional<T> value_of(std::string_view text, const std::pair<T, std::string_view> (&names)[N]) {
  for (const auto& [v, name] : names) {
    if (name == text) return v;
  }
  return std::nullopt;
}

constexpr std::pair<SnapshotStatus, std::string_view> k_snapshot_statuses[] = {
    {SnapshotStatus::match, "match"},
    {SnapshotStatus::changed, "changed"},
    {SnapshotStatus::missing, "missing"},
    {SnapshotStatus::malformed, "malformed"},
    {SnapshotStatus::nondeterministic, "nondeterministic"},
    {SnapshotStatus::updated, "updated"},
    {SnapshotStatus::rearranged, "rearranged"}};
constexpr std::pair<Verdict, std::string_view> k_verdicts[] = {
    {Verdict::same, "same"},     {Verdict::regression, "regression"},
    {Verdict::slower, "slower"}, {Verdict::faster, "faster"},
    {Verdict::added, "new"},     {Verdict::removed, "removed"}};
constexpr std::pair<StageKind, std::string_view> k_stage_kinds[] = {
    {StageKind::sql, "sql"}, {StageKind::command, "command"}};
constexpr std::pair<ColdMode, std::string_view> k_cold_modes[] = {{ColdMode::process, "process"},
                                                                  {ColdMode::restart, "restart"}};
constexpr std::pair<DiagnosisChange, std::string_view> k_diagnosis_changes[] = {
    {DiagnosisChange::none, ""},
    {DiagnosisChange::added, "new"},
    {DiagnosisChange::worse, "worse"},
    {DiagnosisChange::gone, "gone"},
    {DiagnosisChange::also_in_base, "also_in_base"}};
constexpr std::pair<DiagnosisKind, std::string_view> k_diagnosis_kinds[] = {
    {DiagnosisKind::jit_dominates, "jit_dominates"},
    {DiagnosisKind::repeated_query, "repeated_query"},
    {DiagnosisKind::never_analyzed, "never_analyzed"},
    {DiagnosisKind::planning_exceeds_execution, "planning_exceeds_execution"},
    {DiagnosisKind::missing_index, "missing_index"},
    {DiagnosisKind::misestimate, "misestimate"},
    {DiagnosisKind::scan_grows, "scan_grows"}};
constexpr std::pair<StopPhase, std::string_view> k_stop_phases[] = {
    {StopPhase::usage, "usage"},       {StopPhase::config, "config"},
    {StopPhase::server, "server"},     {StopPhase::build, "build"},
    {StopPhase::setup, "setup"},       {StopPhase::migrate, "migrate"},
    {StopPhase::stages, "stages"},     {StopPhase::scales, "scales"},
    {StopPhase::remedies, "remedies"}, {StopPhase::teardown, "teardown"}};
constexpr std::pair<GrowthClass, std::string_view> k_growth_classes[] = {
    {GrowthClass::none, ""},
    {GrowthClass::constant, "constant"},
    {GrowthClass::sublinear, "sublinear"},
    {GrowthClass::linear, "linear"},
    {GrowthClass::quadratic, "quadratic"},
    {GrowthClass::superquadratic, "superquadratic"}};
constexpr std::pair<BaseSource, std::string_view> k_base_sources[] = {
    {BaseSource::file, "file"},
    {BaseSource::interleaved, "interleaved"},
    {BaseSource::cache, "cache"},
    {BaseSource::history, "history"}};

}  // namespace

std::string_view to_string(SnapshotStatus status) {
  return name_of(status, k_snapshot_statuses);
}
std::string_view to_string(Verdict verdict) {
  return name_of(verdict, k_verdicts);
}
std::string_view to_string(StageKind kind) {
  return name_of(kind, k_stage_kinds);
}
std::string_view to_string(ColdMode mode) {
  return name_of(mode, k_cold_modes);
}

std::string_view to_string(DiagnosisChange change) {
  return name_of(change, k_diagnosis_changes);
}

std::optional<SnapshotStatus> snapshot_status_from(std::string_view text) {
  return value_of(text, k_snapshot_statuses);
}
std::optional<Verdict> verdict_from(std::string_view text) {
  return value_of(text, k_verdicts);
}
std::optional<StageKind> stage_kind_from(std::string_view text) {
  return value_of(text, k_stage_kinds);
}
std::optional<ColdMode> cold_mode_from(std::string_view text) {
  return value_of(text, k_cold_modes);
}
std::optional<DiagnosisChange> diagnosis_change_from(std::string_view text) {
  return text.empty() ? std::nullopt : value_of(text, k_diagnosis_changes);
}

std::string_view to_string(DiagnosisKind kind) {
  return name_of(kind, k_diagnosis_kinds);
}
std::optional<DiagnosisKind> diagnosis_kind_from(std::string_view text) {
  return value_of(text, k_diagnosis_kinds);
}

std::string_view to_string(StopPhase phase) {
  return name_of(phase, k_stop_phases);
}
std::optional<StopPhase> stop_phase_from(std::string_view text) {
  return value_of(text, k_stop_phases);
}

std::string_view to_string(GrowthClass growth) {
  return name_of(growth, k_growth_classes);
}
std::optional<GrowthClass> growth_class_from(std::string_view text) {
  return text.empty() ? std::nullopt : value_of(text, k_growth_classes);
}

bool passes(SnapshotStatus status) {
  return status == SnapshotStatus::match || status == SnapshotStatus::updated;
}

std::string_view to_string(BaseSource source) {
  return name_of(source, k_base_sources);
}

std::optional<BaseSource> base_source_from(std::string_view text) {
  return value_of(text, k_base_sources);
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  auto mid = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), mid, samples.end());
  double upper = *mid;
  if (samples.size() % 2 == 1) return upper;
  double lower = *std::max_element(samples.begin(), mid);
  return (lower + upper) / 2;
}

const Metric* Remedy::find(std::string_view name) const {
  for (const auto& [n, m] : metrics) {
    if (n == name) return &m;
  }
  return nullptr;
}

std::optional<double> Remedy::median_of(std::string_view name) const {
  const Metric* m = find(name);
  if (!m) return std::nullopt;
  if (m->cold.empty()) return std::nullopt;
  return median(m->cold);
}

namespace {
constexpr std::pair<StatementFigure, std::string_view> k_statement_figures[] = {
    {StatementFigure::calls, "statement_calls:"},
    {StatementFigure::blocks_per_call, "statement_blocks_per_call:"},
    {StatementFigure::server_ms_per_call, "statement_server_ms_per_call:"}};
}  // namespace

std::string statement_metric(StatementFigure figure, std::string_view key) {
  for (const auto& [f, prefix] : k_statement_figures) {
    if (f == figure) return std::string(prefix) + std::string(key);
  }
  return std::string(key);
}

RemedyKind remedy_kind_of(std::string_view name, const std::map<std::string, std::string>& settings,
                          bool second_execution) {
  if (second_execution) return RemedyKind::prepared;
  // A config's own remedy sets at least one setting, and may not take a name of coldgate's.
  if (!settings.empty()) return RemedyKind::settings;
  if (name == "as is") return RemedyKind::as_is;
  if (name == "ANALYZE") return RemedyKind::analyze;
  if (name.rfind("CREATE INDEX", 0) == 0) return RemedyKind::index;
  if (name.rfind("CREATE STATISTICS", 0) == 0) return RemedyKind::statistics;
  return RemedyKind::settings;
}

std::vector<std::string> Remedy::aimed_at() const {
  std::vector<std::string> out;
  for (const auto& [name, metric] : metrics) {
    for (const auto& [f, prefix] : k_statement_figures) {
      if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
      std::string key = name.substr(prefix.size());
      if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<std::string_view>& known_metric_order() {
  static const std::vector<std::string_view> order{
      "wall_ms",          "cpu_ms",           "peak_rss_bytes",        "connect_ms",
      "query_ms",         "decode_ms",        "db_queries",            "db_plan_ms",
      "db_exec_ms",       "db_jit_ms",        "db_jit_functions",      "db_rows",
      "db_shared_hit_blocks", "db_shared_read_blocks", "planning_ms",  "execution_ms",
      "jit_functions",    "jit_generation_ms", "jit_inlining_ms",      "jit_optimization_ms",
      "jit_emission_ms",  "jit_total_ms",     "result_bytes",          "rows"};
  return order;
}

}  // namespace coldgate::results
