#include "config/loader.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "config/config.hpp"
#include "config/env.hpp"
#include "config/migrate_keys.hpp"
#include "config/reader.hpp"
#include "config/values.hpp"
#include "config/yaml_errors.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::config {

namespace fs = std::filesystem;

namespace detail {

Isolation Loader::isolation(const Reader& r, const YAML::Node& node, const std::string& path) {
  const std::string v = r.choice(node, path, {"run", "stage", "none"});
  return v == "run" ? Isolation::run : v == "stage" ? Isolation::stage : Isolation::none;
}

ColdMode Loader::cold_mode(const Reader& r, const YAML::Node& node, const std::string& path) {
  return r.choice(node, path, {"process", "restart"}) == "restart" ? ColdMode::restart
                                                                   : ColdMode::process;
}

void Loader::run(const YAML::Node& root) {
  if (root.IsNull()) m_r.fail(root, "", "the file is empty; a config starts with 'version: 1'");
  if (!root.IsMap())
    m_r.fail(root, "", "expected a mapping of keys (version, database, stages, …)");
  // The version comes first: a newer file's keys are better explained by it than as unknown.
  for (const auto& e : m_r.entries(root, ""))
    if (e.key == "version") read_version(e.value);
  Fields top = m_r.fields(root, "", "");
  if (!top.find("version")) m_r.fail(root, "", "missing required key 'version'");
  if (auto* e = top.find("database"))
    read_database(m_r.fields(e->value, "database", "database"));
  else
    m_c.database.where = m_r.location(root);
  if (auto* e = top.find("env")) m_c.env = read_env(e->value, "env");
  if (auto* e = top.find("migrate")) m_c.migrate = detail::read_migrate(m_r, e->value);
  if (auto* e = top.find("setup")) read_setup(e->value);
  if (auto* e = top.find("build")) {
    if (e->value.IsScalar())
      m_c.build = {m_r.nonempty_text(e->value, "build")};
    else
      m_c.build = m_r.text_list(e->value, "build");
  }
  if (auto* e = top.find("defaults")) read_defaults(m_r.fields(e->value, "defaults", "defaults"));
  if (auto* e = top.find("gate")) {
    Fields gate = m_r.fields(e->value, "gate", "gate");
    read_gate(gate, m_c.gate);
    if (auto* m = gate.find("migration"))
      m_c.migration_gate = detail::read_migration_gate(m_r, m->value);
  }
  if (auto* e = top.find("report")) read_report(m_r.fields(e->value, "report", "report"));
  m_c.history.where = m_r.location(root);
  if (auto* e = top.find("history")) read_history(m_r.fields(e->value, "history", "history"));
  if (auto* e = top.find("scales")) m_c.scales = read_scales(e->value, "scales");
  if (auto* e = top.find("production_scale"))
    m_c.production_scale = m_r.positive_number(e->value, "production_scale");
  if (auto* e = top.find("stages")) read_stages(e->value);
  check_scales_start_alike(top);
}

void Loader::read_version(const YAML::Node& node) {
  m_c.version = m_r.integer(node, "version", 1);
  if (m_c.version != 1)
    m_r.fail(node, "version",
             fmt::format("unsupported version {} (this coldgate reads version 1)", m_c.version));
}

void Loader::read_database(const Fields& f) {
  Database& d = m_c.database;
  d.where = m_r.location(f.node());
  if (auto* e = f.find("provider")) {
    auto p = m_r.choice(e->value, f.path("provider"), {"local", "container", "external"});
    d.provider = p == "local"       ? Provider::local
                 : p == "container" ? Provider::container
                                    : Provider::external;
  }
  if (auto* e = f.find("version")) {
    d.version = m_r.integer(e->value, f.path("version"), 1);
    // Major versions before 10 were numbered 9.6, 9.5 …; none is supported any more.
    if (*d.version < 10) {
      m_r.fail(e->value, f.path("version"),
               fmt::format("PostgreSQL {} is not supported; use a major version of 10 or newer "
                           "(e.g. 15)", *d.version));
    }
  }
  if (auto* e = f.find("bindir")) {
    d.bindir = m_r.nonempty_text(e->value, f.path("bindir"));
    if (d.bindir.is_relative()) d.bindir = m_r.base_dir() / d.bindir;
    d.bindir = d.bindir.lexically_normal();
  }
  if (auto* e = f.find("image")) d.image = m_r.nonempty_text(e->value, f.path("image"));
  if (auto* e = f.find("engine"))
    d.engine = m_r.choice(e->value, f.path("engine"), {"docker", "podman"});
  if (auto* e = f.find("run_args")) d.run_args = m_r.text_list(e->value, f.path("run_args"));
  if (auto* e = f.find("url")) d.url = m_r.text(e->value, f.path("url"));
  if (auto* e = f.find("restart_command"))
    d.restart_command = m_r.nonempty_text(e->value, f.path("restart_command"));
  if (auto* e = f.find("name")) d.name = m_r.nonempty_text(e->value, f.path("name"));
  if (auto* e = f.find("settings"))
    d.settings = m_r.settings(e->value, f.path("settings"), &d.settings_where);
  if (auto* e = f.find("profile")) d.profile = m_r.boolean(e->value, f.path("profile"));
  if (auto* e = f.find("plans")) d.plans = m_r.boolean(e->value, f.path("plans"));
  if (d.provider == Provider::external) {
    auto* url = f.find("url");
    if (!url)
      m_r.fail(f.node(), "database",
               "missing required key 'url' (the external provider connects to it)");
    if (d.url.empty())
      m_r.fail(url->value, f.path("url"),
               "is empty; the external provider needs a libpq URL or conninfo string");
  }
  if (d.provider == Provider::container && d.image.empty())
    d.image = fmt::format("postgres:{}", d.version.value_or(15));
}

void Loader::read_setup(const YAML::Node& node) {
  m_r.require_list(node, "setup");
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string path = index("setup", i);
    if (node[i].IsScalar() && node[i].Scalar() == "migrate") {
      // `- migrate`: the config's own way to its schema, at this point of setup.
      if (m_c.migrate.empty()) {
        m_r.fail(node[i], path,
                 "'migrate' runs the config's migrate: command, and there is none; add "
                 "migrate: {command: [ARGV…]} or migrate: {sql_dir: DIR} at the top level");
      }
      SetupStep s;
      s.kind = SetupStep::Kind::migrate;
      s.where = m_r.location(node[i]);
      s.value_where = m_c.migrate.where;
      s.key = path;
      s.env = m_c.env;
      s.migrate = m_c.migrate;
      s.argv = m_c.migrate.argv;
      s.shell = m_c.migrate.shell;
      m_c.setup.push_back(std::move(s));
      continue;
    }
    Fields f = m_r.fields(node[i], path, "setup[]");
    static const std::vector<std::string> k_kinds = {"sql", "psql", "restore", "command",
                                                     "analyze"};
    const Entry* step = nullptr;
    for (const auto& kind : k_kinds) {
      const Entry* e = f.find(kind);
      if (!e) continue;
      if (step)
        m_r.fail(e->key_node, path,
                 "has both '" + step->key + "' and '" + e->key +
                     "'; each setup step does one thing (make them two list items)");
      step = e;
    }
    if (!step) m_r.fail(node[i], path, "needs one of " + detail::quoted_list(k_kinds));
    SetupStep s;
    s.where = m_r.location(node[i]);
    s.key = f.path(step->key);
    s.value_where = m_r.location(step->value);
    if (step->key == "analyze") {
      if (!m_r.boolean(step->value, s.key)) continue;  // `analyze: false` is no step
      s.kind = SetupStep::Kind::analyze;
    } else if (step->key == "command") {
      s.kind = SetupStep::Kind::command;
      s.env = m_c.env;
      m_r.command(step->value, s.key, s.argv, s.shell);
      if (!s.argv.empty()) {  // check_setup() points at the program
        s.value_where = m_r.location(step->value[0]);
        s.key = index(s.key, 0);
      }
    } else {
      s.kind = step->key == "sql"    ? SetupStep::Kind::sql
               : step->key == "psql" ? SetupStep::Kind::psql
                                     : SetupStep::Kind::restore;
      const YAML::Node* file = &step->value;
      std::optional<Fields> options;  // outlives `file`, which may point into it
      if (s.kind == SetupStep::Kind::psql && step->value.IsMap()) {
        const Fields& p = options.emplace(m_r.fields(step->value, s.key, "setup[].psql"));
        read_psql_options(p, s);
        file = &p.find("file")->value;
        s.key = p.path("file");
        s.value_where = m_r.location(*file);
      } else if (!step->value.IsScalar()) {
        m_r.fail(step->value, s.key,
                 "expected a file name" +
                     std::string(s.kind == SetupStep::Kind::psql
                                     ? ", or {file: FILE, database: NAME, variables: {k: v}}"
                                     : "") +
                     ", got " + detail::describe(step->value));
      }
      s.file_given = m_r.nonempty_text(*file, s.key);
      s.file = m_r.file_path(*file, s.key);  // whether it is there: check_setup()
    }
    m_c.setup.push_back(std::move(s));
  }
}

// `env:` — NAME: value. The value's text is kept as written and expanded at run time, when
// `${PGHOST}` and the other connection facts are known; here it is expanded once, facts
// standing in, so that a variable unset now is an error at its place before any server starts.
EnvMap Loader::read_env(const YAML::Node& node, const std::string& path) const {
  auto list = m_r.entries(node, path);
  m_r.require_values(list, path);
  const auto& facts = connection_fact_names();
  const detail::EnvLookup lookup = [&](const std::string& name) -> std::optional<std::string> {
    if (std::find(facts.begin(), facts.end(), name) != facts.end()) return std::string("x");
    return detail::getenv_lookup(name);
  };
  EnvMap out;
  for (const auto& v : list) {
    if (!detail::is_psql_variable_name(v.key) || (v.key[0] >= '0' && v.key[0] <= '9'))
      m_r.fail(v.key_node, path,
               "'" + v.key +
                   "' is not an environment variable name (letters, digits and '_', not "
                   "starting with a digit)");
    const std::string key = join(path, v.key);
    if (!v.value.IsScalar())
      m_r.fail(v.value, key,
               "expected a value (text or number), got " + detail::describe(v.value));
    std::string error;
    detail::expand_env(v.value.Scalar(), lookup, error);
    if (!error.empty()) m_r.fail(v.value, key, error);
    out[v.key] = EnvValue{v.value.Scalar(), key, m_r.location(v.value)};
  }
  return out;
}

// `psql: {file, database, variables}`: `file` is required.
void Loader::read_psql_options(const Fields& f, SetupStep& s) const {
  if (!f.find("file"))
    m_r.fail(f.node(), f.path(),
             "missing required key 'file' (the script psql runs: {file: dump.sql})");
  if (auto* e = f.find("database")) s.database = m_r.nonempty_text(e->value, f.path("database"));
  if (auto* e = f.find("variables")) {
    const std::string path = f.path("variables");
    auto list = m_r.entries(e->value, path);
    m_r.require_values(list, path);
    for (const auto& v : list) {
      // psql's own rule for variable names (its docs, "Variables"); ON_ERROR_STOP is how a
      // failing statement fails the step, so it is not the config's to turn off.
      if (!detail::is_psql_variable_name(v.key))
        m_r.fail(v.key_node, path,
                 "'" + v.key + "' is not a psql variable name (letters, digits and '_')");
      if (v.key == "ON_ERROR_STOP")
        m_r.fail(v.key_node, path,
                 "ON_ERROR_STOP is always 1: a failing statement fails the step");
      s.variables[v.key] = m_r.text(v.value, join(path, v.key), "a value (text or number)");
    }
  }
}

void Loader::read_defaults(const Fields& f) {
  if (auto* e = f.find("runs")) m_c.default_runs = m_r.integer(e->value, f.path("runs"), 1);
  if (auto* e = f.find("warm")) m_c.default_warm = m_r.integer(e->value, f.path("warm"), 0);
  if (auto* e = f.find("cold")) {
    m_c.default_cold = cold_mode(m_r, e->value, f.path("cold"));
    m_default_cold = e->value;
  }
  if (auto* e = f.find("isolation")) m_c.default_isolation = isolation(m_r, e->value, f.path("isolation"));
  if (auto* e = f.find("timeout")) m_c.default_timeout = timeout(e->value, f.path("timeout"));
  if (auto* e = f.find("max_result_bytes"))
    m_c.default_max_result_bytes = result_limit(e->value, f.path("max_result_bytes"));
  if (auto* e = f.find("repeated_threshold"))
    m_c.default_repeated_threshold = m_r.integer(e->value, f.path("repeated_threshold"), 2);
  if (auto* e = f.find("try_runs")) m_c.default_try_runs = m_r.integer(e->value, f.path("try_runs"), 1);
}

std::uint64_t Loader::result_limit(const YAML::Node& node, const std::string& path) const {
  std::uint64_t bytes = m_r.size(node, path);
  if (bytes == 0) m_r.fail(node, path, "must be more than 0 bytes, e.g. 256MiB");
  return bytes;
}

Duration Loader::timeout(const YAML::Node& node, const std::string& path) const {
  Duration d = m_r.duration(node, path);
  if (d.count() == 0) m_r.fail(node, path, "a timeout must be longer than 0ms");
  return d;
}

// Applies the keys present in `f` on top of `gate` (the defaults, or the top-level gate).
void Loader::read_gate(const Fields& f, Gate& gate) const {
  if (auto* e = f.find("max_ratio")) gate.max_ratio = m_r.ratio(e->value, f.path("max_ratio"));
  if (auto* e = f.find("warn_ratio")) gate.warn_ratio = m_r.ratio(e->value, f.path("warn_ratio"));
  if (auto* e = f.find("min_delta")) gate.min_delta = m_r.duration(e->value, f.path("min_delta"));
  if (auto* e = f.find("min_delta_bytes"))
    gate.min_delta_bytes = m_r.size(e->value, f.path("min_delta_bytes"));
  if (auto* e = f.find("metrics")) {
    gate.metrics = m_r.text_list(e->value, f.path("metrics"));
    for (std::size_t i = 0; i < gate.metrics.size(); ++i)
      if (!detail::is_metric_name(gate.metrics[i]))
        m_r.fail(e->value[i], index(f.path("metrics"), i),
                 "'" + gate.metrics[i] +
                     "' is not a metric name; metric names are lowercase letters, digits and '_' "
                     "(e.g. wall_ms)");
  }
  if (auto* e = f.find("require_same_environment"))
    gate.require_same_environment = m_r.boolean(e->value, f.path("require_same_environment"));
  if (auto* e = f.find("max_query_ratio"))
    gate.max_query_ratio = m_r.ratio(e->value, f.path("max_query_ratio"));
  if (auto* e = f.find("min_query_delta"))
    gate.min_query_delta = m_r.integer(e->value, f.path("min_query_delta"), 0);
  if (auto* e = f.find("max_blocks_ratio"))
    gate.max_blocks_ratio = m_r.ratio(e->value, f.path("max_blocks_ratio"));
  if (auto* e = f.find("min_blocks_delta"))
    gate.min_blocks_delta = m_r.integer(e->value, f.path("min_blocks_delta"), 0);
  if (auto* e = f.find("statements"))
    gate.statements = m_r.boolean(e->value, f.path("statements"));
  if (auto* e = f.find("max_extra_runs"))
    gate.max_extra_runs = m_r.integer(e->value, f.path("max_extra_runs"), 0);
  if (auto* e = f.find("growth")) {
    auto g = m_r.choice(e->value, f.path("growth"), {"fail", "warn", "off"});
    gate.growth = g == "fail" ? GrowthGate::fail : g == "warn" ? GrowthGate::warn : GrowthGate::off;
  }
  if (gate.warn_ratio > gate.max_ratio) {
    if (auto* e = f.find("warn_ratio"))
      m_r.fail(
          e->value, f.path("warn_ratio"),
          fmt::format("must not exceed max_ratio ({}), got {}", gate.max_ratio, gate.warn_ratio));
    auto* e = f.find("max_ratio");
    m_r.fail(e->value, f.path("max_ratio"),
             fmt::format("must not be below warn_ratio ({}), got {}", gate.warn_ratio,
                         gate.max_ratio));
  }
}

void Loader::read_history(const Fields& f) {
  if (auto* e = f.find("store")) {
    m_c.history.store = m_r.nonempty_text(e->value, f.path("store"));
    m_c.history.where = m_r.location(e->value);
  }
}

void Loader::read_report(const Fields& f) {
  if (auto* e = f.find("title")) m_c.report.title = m_r.nonempty_text(e->value, f.path("title"));
  if (auto* e = f.find("comment")) m_c.report.comment = m_r.boolean(e->value, f.path("comment"));
}

// A `scales:` list: numbers above 0, ascending, none twice.
std::vector<double> Loader::read_scales(const YAML::Node& node, const std::string& path) const {
  m_r.require_list(node, path);
  if (node.size() == 0) m_r.fail(node, path, "is empty; give the data scales, e.g. [1, 4, 16]");
  std::vector<double> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    double v = m_r.positive_number(node[i], index(path, i));
    if (!out.empty() && v <= out.back())
      m_r.fail(node[i], index(path, i),
               fmt::format("{}; list the scales ascending, each once (e.g. [1, 4, 16])",
                           v == out.back() ? fmt::format("{:g} is listed twice", v)
                                           : fmt::format("{:g} does not follow {:g}", v, out.back())));
    out.push_back(v);
  }
  return out;
}

// Every list starts at the scale setup loads the stages' database at: one database holds the
// figures that are gated and snapshotted, the others only their growth.
void Loader::check_scales_start_alike(const Fields& top) const {
  std::string first_path;
  std::optional<double> first;
  if (top.find("scales")) {
    first = m_c.scales.front();
    first_path = "scales";
  }
  auto* stages = top.find("stages");
  for (std::size_t i = 0; stages && i < m_c.stages.size(); ++i) {
    const YAML::Node& node = stages->value[i];
    if (!node.IsMap() || !node["scales"]) continue;
    const double v = m_c.stages[i].scales.front();
    const std::string path = index("stages", i) + ".scales";
    if (!first) {
      first = v;
      first_path = path;
    } else if (v != *first) {
      m_r.fail(node["scales"], path,
               fmt::format("starts at {:g}, {} at {:g}; every scales list starts at the scale "
                           "setup loads the stages' database at (the one gated and "
                           "snapshotted)",
                           v, first_path, *first));
    }
  }
}

}  // namespace detail

using detail::Loader;
using detail::Reader;
using detail::reject_control_characters;
using detail::stuck_document;
using detail::yaml_error_location;
using detail::yaml_syntax_error;

std::string Location::str() const {
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

Config parse(std::string_view yaml, const fs::path& file) {
  Config config;
  config.file = fs::absolute(file).lexically_normal();
  config.base_dir = config.file.parent_path();
  const std::string shown = file.string();
  reject_control_characters(yaml, shown);
  std::vector<YAML::Node> docs;
  try {
    if (auto stuck = stuck_document(std::string(yaml))) {
      throw usage_error(yaml_error_location(shown, *stuck).str(),
                        "invalid YAML: cannot parse past this point (a ',' outside [...] or "
                        "{...}?)");
    }
    docs = YAML::LoadAll(std::string(yaml));
  } catch (const YAML::Exception& e) {
    // yaml-cpp's parser recurses per level and stops itself at 500 levels (its depthguard.h,
    // DeepRecursion, not exported by the shared library, so matched by its message).
    if (e.msg == YAML::ErrorMsg::BAD_FILE)
      throw usage_error(yaml_error_location(shown, e.mark).str(),
                        "invalid YAML: nested deeper than yaml-cpp parses (500 levels); a config "
                        "nests a few levels");
    const auto [where, what] = yaml_syntax_error(yaml, shown, e);
    throw usage_error(where.str(), what);
  }
  Reader reader(shown, config.base_dir, detail::getenv_lookup);
  if (docs.empty()) {
    throw usage_error(Location{shown, 1, 1}.str(),
                      "the file is empty; a config starts with 'version: 1'");
  }
  if (docs.size() > 1)
    reader.fail(docs[1], "",
                "the file holds more than one YAML document; a config is one document");
  Loader(reader, config).run(docs[0]);
  return config;
}

Config load(const fs::path& file) {
  return parse(util::read_file(file), file);
}

Duration parse_duration(std::string_view text, const std::string& where) {
  auto parsed = detail::duration_ms(text);
  if (!parsed.value) throw usage_error(where, parsed.error);
  return Duration(*parsed.value);
}

std::uint64_t parse_size(std::string_view text, const std::string& where) {
  auto parsed = detail::size_bytes(text);
  if (!parsed.value) throw usage_error(where, parsed.error);
  return *parsed.value;
}

}  // namespace coldgate::config
