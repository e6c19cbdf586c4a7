#include "results/migration.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "results/json_parts.hpp"
#include "results/migration_json.hpp"
#include "util/error.hpp"

namespace coldgate::results {

const char* to_string(MigrationFindingKind kind) {
  switch (kind) {
    case MigrationFindingKind::rewrite: return "rewrite";
    case MigrationFindingKind::index_build: return "index_build";
    case MigrationFindingKind::stall: return "stall";
    case MigrationFindingKind::lock_without_timeout: return "lock_without_timeout";
    case MigrationFindingKind::validation: return "validation";
  }
  return "rewrite";
}

const char* to_string(MigrationSeverity severity) {
  return severity == MigrationSeverity::regression ? "regression" : "warning";
}

std::optional<MigrationFindingKind> migration_finding_kind(const std::string& name) {
  for (auto k : {MigrationFindingKind::rewrite, MigrationFindingKind::index_build,
                 MigrationFindingKind::stall, MigrationFindingKind::lock_without_timeout,
                 MigrationFindingKind::validation}) {
    if (name == to_string(k)) return k;
  }
  return std::nullopt;
}

std::optional<MigrationSeverity> migration_severity(const std::string& name) {
  if (name == "regression") return MigrationSeverity::regression;
  if (name == "warning") return MigrationSeverity::warning;
  return std::nullopt;
}

bool migration_fails(const Migration& m) {
  return !m.drift.empty() ||
         std::any_of(m.findings.begin(), m.findings.end(), [](const MigrationFinding& f) {
           return f.severity == MigrationSeverity::regression;
         });
}

using nlohmann::ordered_json;

ordered_json migration_json(const Migration& m) {
  ordered_json statements = ordered_json::array();
  for (const auto& s : m.statements) {
    ordered_json st = {{"query", s.query}, {"calls", s.calls}, {"exec_ms", json_number(s.exec_ms)}};
    if (s.blocks) st["blocks"] = json_number(*s.blocks);
    if (s.wal_bytes) st["wal_bytes"] = *s.wal_bytes;
    statements.push_back(std::move(st));
  }
  ordered_json tables = ordered_json::array();
  for (const auto& t : m.tables) {
    tables.push_back({{"name", t.name},
                      {"rows", json_number(t.rows)},
                      {"bytes_before", t.bytes_before},
                      {"bytes_after", t.bytes_after},
                      {"lock", t.lock.empty() ? ordered_json(nullptr) : ordered_json(t.lock)},
                      {"lock_held_ms", json_number(t.lock_held_ms)},
                      {"lock_statement", t.lock_statement},
                      {"probed", t.probed},
                      {"read_stall_ms", json_number(t.read_stall_ms)},
                      {"write_stall_ms", json_number(t.write_stall_ms)},
                      {"rewritten", t.rewritten}});
  }
  ordered_json findings = ordered_json::array();
  for (const auto& f : m.findings) {
    findings.push_back({{"kind", to_string(f.kind)},
                        {"severity", to_string(f.severity)},
                        {"table", f.table},
                        {"statement", f.statement},
                        {"lock", f.lock},
                        {"index", f.index},
                        {"rows", json_number(f.rows)},
                        {"measured_ms", json_number(f.measured_ms)},
                        {"message", f.message},
                        {"fix", f.fix}});
  }
  ordered_json growth = ordered_json::array();
  for (const auto& g : m.growth) {
    ordered_json values = ordered_json::array();
    for (const auto& v : g.values_ms) values.push_back(v ? json_number(*v) : ordered_json(nullptr));
    ordered_json row = {{"what", g.what},
                        {"table", g.table},
                        {"values_ms", std::move(values)},
                        {"exponent", g.exponent ? json_number(*g.exponent) : ordered_json(nullptr)},
                        {"growth", std::string(to_string(g.growth))},
                        {"projected_ms", g.projected_ms ? json_number(*g.projected_ms) : ordered_json(nullptr)}};
    if (!g.blocks.empty()) {
      ordered_json blocks = ordered_json::array();
      for (const auto& v : g.blocks) blocks.push_back(v ? json_number(*v) : ordered_json(nullptr));
      row["blocks"] = std::move(blocks);
      row["counted"] = g.counted;
    }
    growth.push_back(std::move(row));
  }
  ordered_json scales = ordered_json::array();
  for (double s : m.scales) scales.push_back(json_number(s));
  auto side_json = [](const std::optional<MigrationTrialSide>& side) {
    if (!side) return ordered_json(nullptr);
    return ordered_json{{"wall_ms", json_number(side->wall_ms)},
                        {"read_stall_ms", json_number(side->read_stall_ms)},
                        {"write_stall_ms", json_number(side->write_stall_ms)},
                        {"lock", side->lock.empty() ? ordered_json(nullptr) : ordered_json(side->lock)},
                        {"regressions", side->regressions}};
  };
  ordered_json trials = ordered_json::array();
  for (const auto& t : m.trials) {
    trials.push_back({{"kind", to_string(t.kind)},
                      {"table", t.table},
                      {"statement", t.statement},
                      {"fix", t.fix},
                      {"not_tried", t.not_tried.empty() ? ordered_json(nullptr) : ordered_json(t.not_tried)},
                      {"error", t.error.empty() ? ordered_json(nullptr) : ordered_json(t.error)},
                      {"before", side_json(t.before)},
                      {"after", side_json(t.after)},
                      {"fixed", t.fixed}});
  }
  return {{"source", m.source},
          {"scales", std::move(scales)},
          {"production_scale", m.production_scale ? json_number(*m.production_scale) : ordered_json(nullptr)},
          {"growth", std::move(growth)},
          {"files", m.files},
          {"wall_ms", json_number(m.wall_ms)},
          {"wal_bytes", m.wal_bytes},
          {"size_before_bytes", m.size_before_bytes},
          {"size_after_bytes", m.size_after_bytes},
          {"lock_check", m.lock_check},
          {"drift_checked", m.drift_checked},
          {"drift", m.drift},
          {"findings", std::move(findings)},
          {"trials", std::move(trials)},
          {"tables", std::move(tables)},
          {"statements", std::move(statements)}};
}

namespace {

std::string text_of(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::string() : it->get<std::string>();
}

double number_of(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? 0.0 : it->get<double>();
}

std::uint64_t bytes_of(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? 0 : it->get<std::uint64_t>();
}

bool flag_of(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && !it->is_null() && it->get<bool>();
}

}  // namespace

Migration migration_from(const ordered_json& j, const std::string& source) {
  Migration m;
  m.source = text_of(j, "source");
  if (j.contains("files")) m.files = j["files"].get<std::vector<std::string>>();
  m.wall_ms = number_of(j, "wall_ms");
  m.wal_bytes = bytes_of(j, "wal_bytes");
  m.size_before_bytes = bytes_of(j, "size_before_bytes");
  m.size_after_bytes = bytes_of(j, "size_after_bytes");
  m.lock_check = flag_of(j, "lock_check");
  m.drift_checked = flag_of(j, "drift_checked");
  if (j.contains("drift")) m.drift = j["drift"].get<std::vector<std::string>>();
  if (j.contains("scales")) m.scales = j["scales"].get<std::vector<double>>();
  if (j.contains("production_scale") && !j["production_scale"].is_null())
    m.production_scale = j["production_scale"].get<double>();
  if (j.contains("growth")) {
    for (const auto& g : j["growth"]) {
      MigrationGrowth x;
      x.what = text_of(g, "what");
      x.table = text_of(g, "table");
      for (const auto& v : g.at("values_ms")) {
        x.values_ms.push_back(v.is_null() ? std::nullopt : std::optional<double>(v.get<double>()));
      }
      if (g.contains("exponent") && !g["exponent"].is_null()) x.exponent = g["exponent"].get<double>();
      if (const std::string name = text_of(g, "growth"); !name.empty()) {
        auto c = growth_class_from(name);
        if (!c) {
          throw usage_error(source, fmt::format("migration.growth[].growth is \"{}\" (expected constant, "
                                                "sublinear, linear, quadratic, superquadratic or \"\")",
                                                name));
        }
        x.growth = *c;
      }
      if (g.contains("projected_ms") && !g["projected_ms"].is_null())
        x.projected_ms = g["projected_ms"].get<double>();
      if (g.contains("blocks")) {
        for (const auto& v : g["blocks"]) {
          x.blocks.push_back(v.is_null() ? std::nullopt : std::optional<double>(v.get<double>()));
        }
      }
      x.counted = text_of(g, "counted");
      m.growth.push_back(std::move(x));
    }
  }
  if (j.contains("statements")) {
    for (const auto& s : j["statements"]) {
      MigrationStatement x{text_of(s, "query"), s.at("calls").get<std::int64_t>(), number_of(s, "exec_ms"),
                           std::nullopt, std::nullopt};
      if (s.contains("blocks") && !s["blocks"].is_null()) x.blocks = s["blocks"].get<double>();
      if (s.contains("wal_bytes") && !s["wal_bytes"].is_null()) x.wal_bytes = s["wal_bytes"].get<std::uint64_t>();
      m.statements.push_back(std::move(x));
    }
  }
  if (j.contains("tables")) {
    for (const auto& t : j["tables"]) {
      MigrationTable x;
      x.name = text_of(t, "name");
      x.rows = number_of(t, "rows");
      x.bytes_before = bytes_of(t, "bytes_before");
      x.bytes_after = bytes_of(t, "bytes_after");
      x.lock = text_of(t, "lock");
      x.lock_held_ms = number_of(t, "lock_held_ms");
      x.lock_statement = text_of(t, "lock_statement");
      x.probed = flag_of(t, "probed");
      x.read_stall_ms = number_of(t, "read_stall_ms");
      x.write_stall_ms = number_of(t, "write_stall_ms");
      x.rewritten = flag_of(t, "rewritten");
      m.tables.push_back(std::move(x));
    }
  }
  if (j.contains("findings")) {
    for (std::size_t i = 0; i < j["findings"].size(); ++i) {
      const auto& f = j["findings"][i];
      MigrationFinding x;
      const std::string where = fmt::format("migration.findings[{}]", i);
      const std::string kind = text_of(f, "kind");
      auto k = migration_finding_kind(kind);
      if (!k) {
        throw usage_error(source, fmt::format("{}.kind is \"{}\" (expected rewrite, index_build, "
                                              "stall, lock_without_timeout or validation)",
                                              where, kind));
      }
      x.kind = *k;
      const std::string severity = text_of(f, "severity");
      auto s = migration_severity(severity);
      if (!s) {
        throw usage_error(source, fmt::format("{}.severity is \"{}\" (expected regression or "
                                              "warning)",
                                              where, severity));
      }
      x.severity = *s;
      x.table = text_of(f, "table");
      x.statement = text_of(f, "statement");
      x.lock = text_of(f, "lock");
      x.index = text_of(f, "index");
      x.rows = number_of(f, "rows");
      x.measured_ms = number_of(f, "measured_ms");
      x.message = text_of(f, "message");
      x.fix = text_of(f, "fix");
      m.findings.push_back(std::move(x));
    }
  }
  if (j.contains("trials")) {
    auto side_from = [](const ordered_json& x) -> std::optional<MigrationTrialSide> {
      if (x.is_null()) return std::nullopt;
      MigrationTrialSide side;
      side.wall_ms = number_of(x, "wall_ms");
      side.read_stall_ms = number_of(x, "read_stall_ms");
      side.write_stall_ms = number_of(x, "write_stall_ms");
      side.lock = text_of(x, "lock");
      side.regressions = static_cast<std::size_t>(bytes_of(x, "regressions"));
      return side;
    };
    for (std::size_t i = 0; i < j["trials"].size(); ++i) {
      const auto& t = j["trials"][i];
      MigrationTrial x;
      const std::string kind = text_of(t, "kind");
      auto k = migration_finding_kind(kind);
      if (!k) {
        throw usage_error(source, fmt::format("migration.trials[{}].kind is \"{}\" (expected "
                                              "rewrite, index_build, stall, lock_without_timeout "
                                              "or validation)",
                                              i, kind));
      }
      x.kind = *k;
      x.table = text_of(t, "table");
      x.statement = text_of(t, "statement");
      if (t.contains("fix")) x.fix = t["fix"].get<std::vector<std::string>>();
      x.not_tried = text_of(t, "not_tried");
      x.error = text_of(t, "error");
      if (t.contains("before")) x.before = side_from(t["before"]);
      if (t.contains("after")) x.after = side_from(t["after"]);
      x.fixed = flag_of(t, "fixed");
      m.trials.push_back(std::move(x));
    }
  }
  return m;
}

}  // namespace coldgate::results
