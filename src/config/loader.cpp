#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <vector>

#include "config/config.hpp"
#include "config/env.hpp"
#include "config/migrate_keys.hpp"
#include "config/reader.hpp"
#include "config/values.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/text.hpp"

namespace coldgate::config {
namespace {

namespace fs = std::filesystem;
using detail::Entry;
using detail::Fields;
using detail::index;
using detail::join;
using detail::Reader;

Isolation isolation(const Reader& r, const YAML::Node& node, const std::string& path) {
  const std::string v = r.choice(node, path, {"run", "stage", "none"});
  return v == "run" ? Isolation::run : v == "stage" ? Isolation::stage : Isolation::none;
}

ColdMode cold_mode(const Reader& r, const YAML::Node& node, const std::string& path) {
  return r.choice(node, path, {"process", "restart"}) == "restart" ? ColdMode::restart
                                                                   : ColdMode::process;
}

// Builds a Config from the document, section by section, in the order later sections need.
class Loader {
 public:
  Loader(const Reader& reader, Config& config) : m_r(reader), m_c(config) {}

  void run(const YAML::Node& root) {
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

 private:
  void read_version(const YAML::Node& node) {
    m_c.version = m_r.integer(node, "version", 1);
    if (m_c.version != 1)
      m_r.fail(node, "version",
               fmt::format("unsupported version {} (this coldgate reads version 1)", m_c.version));
  }

  void read_database(const Fields& f) {
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

  void read_setup(const YAML::Node& node) {
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
  EnvMap read_env(const YAML::Node& node, const std::string& path) const {
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
  void read_psql_options(const Fields& f, SetupStep& s) const {
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

  void read_defaults(const Fields& f) {
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

  std::uint64_t result_limit(const YAML::Node& node, const std::string& path) const {
    std::uint64_t bytes = m_r.size(node, path);
    if (bytes == 0) m_r.fail(node, path, "must be more than 0 bytes, e.g. 256MiB");
    return bytes;
  }

  Duration timeout(const YAML::Node& node, const std::string& path) const {
    Duration d = m_r.duration(node, path);
    if (d.count() == 0) m_r.fail(node, path, "a timeout must be longer than 0ms");
    return d;
  }

  // Applies the keys present in `f` on top of `gate` (the defaults, or the top-level gate).
  void read_gate(const Fields& f, Gate& gate) const {
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

  void read_history(const Fields& f) {
    if (auto* e = f.find("store")) {
      m_c.history.store = m_r.nonempty_text(e->value, f.path("store"));
      m_c.history.where = m_r.location(e->value);
    }
  }

  void read_report(const Fields& f) {
    if (auto* e = f.find("title")) m_c.report.title = m_r.nonempty_text(e->value, f.path("title"));
    if (auto* e = f.find("comment")) m_c.report.comment = m_r.boolean(e->value, f.path("comment"));
  }

  // A `scales:` list: numbers above 0, ascending, none twice.
  std::vector<double> read_scales(const YAML::Node& node, const std::string& path) const {
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
  void check_scales_start_alike(const Fields& top) const {
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

  void read_stages(const YAML::Node& node) {
    m_r.require_list(node, "stages");
    std::map<std::string, Location> first_at;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string path = index("stages", i);
      Fields f = m_r.fields(node[i], path, "stages[]");
      const Entry* name = f.find("name");
      if (!name) m_r.fail(f.node(), path, "missing required key 'name'");
      Stage s = read_stage(f, m_r.nonempty_text(name->value, f.path("name")), name->value);
      auto [it, inserted] = first_at.emplace(s.name, m_r.location(name->value));
      if (!inserted)
        m_r.fail(name->value, f.path("name"),
                 "duplicate stage name '" + s.name + "' (first at " + it->second.str() + ")");
      m_c.stages.push_back(std::move(s));
    }
  }

  Stage read_stage(const Fields& f, std::string name, const YAML::Node& name_node) const {
    Stage s;
    s.name = std::move(name);
    s.where = m_r.location(f.node());
    if (!detail::is_stage_name(s.name))
      m_r.fail(name_node, f.path("name"),
               "'" + s.name +
                   "' is not a valid stage name: use letters, digits, '.', '_' and '-', starting "
                   "with a letter or digit (it becomes a file name)");
    const std::string label = f.path() + " (" + s.name + ")";
    const Entry* sql = f.find("sql");
    const Entry* query = f.find("query");
    const Entry* command = f.find("command");
    if (sql && query)
      m_r.fail(
          query->key_node, label,
          "has both 'sql' and 'query'; give the SQL as a file (sql) or inline (query), not both");
    if (const Entry* q = sql ? sql : query; q && command)
      m_r.fail(
          command->key_node, label,
          "has both '" + q->key + "' and 'command'; a stage is either a SQL query or a command");
    if (!sql && !query && !command)
      m_r.fail(f.node(), label, "needs one of 'sql', 'query' or 'command'");

    if (sql) {
      s.sql = m_r.existing_path(sql->value, f.path("sql"));
      utf8_query(util::read_file(s.sql), sql->value, f.path("sql"),
                 sql->value.Scalar() + ": byte ");
    }
    if (query) {
      s.query = m_r.nonempty_text(query->value, f.path("query"));
      utf8_query(s.query, query->value, f.path("query"), "byte ");
    }
    if (command) {
      m_r.command(command->value, f.path("command"), s.command, s.shell);
      s.command_key = f.path("command");
      s.command_where = m_r.location(command->value);
      if (!s.command.empty()) {  // check_stages() points at the program
        s.command_where = m_r.location(command->value[0]);
        s.command_key = index(s.command_key, 0);
      }
    }
    if (command) {
      for (const char* key : {"params", "decode"})
        if (auto* e = f.find(key))
          m_r.fail(e->key_node, f.path(key),
                   std::string("only SQL stages take '") + key + "'; this stage is a command");
    } else if (auto* e = f.find("settings_via")) {
      m_r.fail(e->key_node, f.path("settings_via"),
               "only command stages take 'settings_via'; a SQL stage's settings are SET LOCAL in "
               "its own transaction (remove the key)");
    } else if (auto* e = f.find("env")) {
      m_r.fail(e->key_node, f.path("env"),
               "only command stages take 'env'; a SQL stage starts no program of yours (remove "
               "the key)");
    }
    if (command) {
      s.env = m_c.env;
      if (auto* e = f.find("env"))
        for (auto& [k, v] : read_env(e->value, f.path("env"))) s.env[k] = std::move(v);
    }
    if (auto* e = f.find("params")) read_params(e->value, f.path("params"), s);
    if (auto* e = f.find("settings"))
      s.settings = m_r.settings(e->value, f.path("settings"), &s.settings_where);
    if (auto* e = f.find("settings_via"))
      s.settings_via = m_r.choice(e->value, f.path("settings_via"), {"pgoptions", "role"}) == "role"
                           ? SettingsVia::role
                           : SettingsVia::pgoptions;
    if (auto* e = f.find("decode"))
      s.decode = m_r.choice(e->value, f.path("decode"), {"json", "none"}) == "json" ? Decode::json
                                                                                    : Decode::none;

    s.runs = m_c.default_runs;
    s.warm = m_c.default_warm;
    s.cold = m_c.default_cold;
    s.isolation = m_c.default_isolation;
    if (auto* e = f.find("isolation")) s.isolation = isolation(m_r, e->value, f.path("isolation"));
    s.timeout = m_c.default_timeout;
    s.max_result_bytes = m_c.default_max_result_bytes;
    s.profile = m_c.database.profile;
    s.repeated_threshold = m_c.default_repeated_threshold;
    if (auto* e = f.find("profile")) s.profile = m_r.boolean(e->value, f.path("profile"));
    if (auto* e = f.find("repeated_threshold"))
      s.repeated_threshold = m_r.integer(e->value, f.path("repeated_threshold"), 2);
    s.try_runs = m_c.default_try_runs;
    if (auto* e = f.find("try_runs")) s.try_runs = m_r.integer(e->value, f.path("try_runs"), 1);
    if (auto* e = f.find("remedies")) read_remedies(e->value, f.path("remedies"), s);
    if (auto* e = f.find("max_result_bytes"))
      s.max_result_bytes = result_limit(e->value, f.path("max_result_bytes"));
    if (auto* e = f.find("runs")) s.runs = m_r.integer(e->value, f.path("runs"), 1);
    if (auto* e = f.find("warm")) s.warm = m_r.integer(e->value, f.path("warm"), 0);
    if (auto* e = f.find("timeout")) s.timeout = timeout(e->value, f.path("timeout"));
    const Entry* cold = f.find("cold");
    if (cold) s.cold = cold_mode(m_r, cold->value, f.path("cold"));
    if (s.cold == ColdMode::restart && m_c.database.provider == Provider::external &&
        m_c.database.restart_command.empty()) {
      const YAML::Node& at = cold ? cold->value : m_default_cold;
      m_r.fail(at, cold ? f.path("cold") : "defaults.cold",
               "'restart' needs a server coldgate can restart; the external provider has none — "
               "set database.restart_command or use cold: process");
    }
    if (auto* e = f.find("snapshot")) s.snapshot = read_snapshot(e->value, f.path("snapshot"), s);
    s.scales = m_c.scales;
    if (auto* e = f.find("scales")) s.scales = read_scales(e->value, f.path("scales"));
    s.gate = m_c.gate;
    if (auto* e = f.find("gate"))
      read_gate(m_r.fields(e->value, f.path("gate"), "stages[].gate"), s.gate);
    return s;
  }

  // A query goes to the server in the client encoding UTF8 (and into the probe's JSON request):
  // bytes that are not UTF-8 would be refused by a UTF-8 server, or changed on the way.
  void utf8_query(std::string_view text, const YAML::Node& node, const std::string& path,
                  const std::string& byte_label) const {
    if (auto at = util::first_invalid_utf8(text))
      m_r.fail(node, path,
               fmt::format("{}{} (0x{:02X}) is not UTF-8; PostgreSQL receives queries as UTF-8: "
                           "save the SQL as UTF-8",
                           byte_label, *at, static_cast<unsigned char>(text[*at])));
  }

  void read_remedies(const YAML::Node& node, const std::string& path, Stage& s) const {
    m_r.require_list(node, path);
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string item = index(path, i);
      Fields f = m_r.fields(node[i], item, "stages[].remedies[]");
      UserRemedy r;
      r.where = m_r.location(node[i]);
      const Entry* name = f.find("name");
      const Entry* settings = f.find("settings");
      if (!name) m_r.fail(f.node(), item, "missing required key 'name' (how the trial names it)");
      if (!settings)
        m_r.fail(f.node(), item, "missing required key 'settings' (what the remedy sets)");
      r.name = m_r.nonempty_text(name->value, f.path("name"));
      r.settings = m_r.settings(settings->value, f.path("settings"));
      if (r.settings.empty())
        m_r.fail(settings->value, f.path("settings"), "is empty; a remedy sets at least one setting");
      // The names of "as is" and of the diagnoses' remedies (measure::remedies_for).
      static const std::vector<std::string> k_builtin = {
          "as is", "jit = off", "JIT without inlining and optimization", "prepared statement",
          "ANALYZE"};
      if (std::find(k_builtin.begin(), k_builtin.end(), r.name) != k_builtin.end())
        m_r.fail(name->value, f.path("name"),
                 "'" + r.name + "' is the name of coldgate's own variant; name yours otherwise");
      for (const auto& other : s.remedies) {
        if (other.name == r.name)
          m_r.fail(name->value, f.path("name"),
                   "duplicate remedy name '" + r.name + "' (first at " + other.where.str() + ")");
      }
      s.remedies.push_back(std::move(r));
    }
  }

  void read_params(const YAML::Node& node, const std::string& path, Stage& s) const {
    m_r.require_list(node, path);
    for (std::size_t i = 0; i < node.size(); ++i) {
      bool null = node[i].IsNull();
      s.params.push_back(
          null ? std::string()
               : m_r.text(node[i], index(path, i), "a scalar (text, number, boolean or null)"));
      s.params_null.push_back(null);
    }
  }

  std::optional<Snapshot> read_snapshot(const YAML::Node& node, const std::string& path,
                                        const Stage& stage) const {
    Snapshot snap;
    snap.where = m_r.location(node);
    snap.path_where = snap.where;
    snap.path = (m_r.base_dir() / "snapshots" / (stage.name + ".json")).lexically_normal();
    if (stage.is_command()) snap.from = "stdout";
    if (!node.IsMap()) {
      if (!node.IsScalar())
        m_r.fail(node, path,
                 "expected true (snapshot at snapshots/<stage>.json) or a mapping (path, from, "
                 "ordered, identity, redact, redact_ids, max_depth), got " +
                     detail::describe(node));
      if (!m_r.boolean(node, path)) return std::nullopt;
      return snap;
    }
    Fields f = m_r.fields(node, path, "stages[].snapshot");
    if (auto* e = f.find("path")) {
      snap.path = m_r.file_path(e->value, f.path("path"));
      snap.path_where = m_r.location(e->value);
    }
    if (auto* e = f.find("from")) {
      if (!stage.is_command())
        m_r.fail(e->key_node, f.path("from"),
                 "only command stages have 'from'; a SQL stage's snapshot is its query result");
      std::string from = m_r.nonempty_text(e->value, f.path("from"));
      snap.from = from == "stdout" ? from : m_r.file_path(e->value, f.path("from")).string();
    }
    if (auto* e = f.find("ordered")) snap.canon.ordered = patterns(e->value, f.path("ordered"));
    if (auto* e = f.find("redact")) snap.canon.redact = patterns(e->value, f.path("redact"));
    if (auto* e = f.find("identity")) {
      snap.canon.identity = m_r.text_list(e->value, f.path("identity"));
      for (std::size_t i = 0; i < snap.canon.identity.size(); ++i)
        if (snap.canon.identity[i].empty())
          m_r.fail(e->value[i], index(f.path("identity"), i),
                   "must not be empty; give a member name such as id");
    }
    if (auto* e = f.find("redact_ids"))
      snap.canon.redact_ids = m_r.boolean(e->value, f.path("redact_ids"));
    if (auto* e = f.find("max_depth")) {
      const int depth = m_r.integer(e->value, f.path("max_depth"), 1);
      if (static_cast<std::size_t>(depth) > k_max_snapshot_depth)
        m_r.fail(e->value, f.path("max_depth"),
                 "at most " + std::to_string(k_max_snapshot_depth) +
                     " levels: the canonical text grows with the square of the nesting (30,000 "
                     "levels print as 1.8 GB); flatten the document instead");
      snap.canon.max_depth = static_cast<std::size_t>(depth);
    }
    return snap;
  }

  std::vector<std::string> patterns(const YAML::Node& node, const std::string& path) const {
    auto list = m_r.text_list(node, path);
    for (std::size_t i = 0; i < list.size(); ++i)
      if (auto problem = detail::pattern_problem(list[i]); !problem.empty())
        m_r.fail(node[i], index(path, i), problem);
    return list;
  }

  const Reader& m_r;
  Config& m_c;
  YAML::Node m_default_cold;  // the value of `defaults.cold`, when given (for its location)
};

// YAML 1.2 §5.1 allows no C0 control but tab, LF and CR, and no DEL, in a stream; yaml-cpp does
// not check (its scanner reads a NUL as the end of input). Refused first, at their place.
void reject_control_characters(std::string_view yaml, const std::string& file) {
  int line = 1;
  int column = 1;
  for (char ch : yaml) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      throw usage_error(Location{file, line, column}.str(),
                        fmt::format("invalid YAML: control character U+{:04X} is not allowed "
                                    "(YAML 1.2 §5.1); remove it",
                                    c));
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++column;  // columns count characters, not UTF-8 continuation bytes
    }
  }
}

// Records where each document starts and ignores the rest.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// yaml-cpp 0.7 meets a ',' outside a flow collection at document level (", x", "[a]\n, x") by
// returning an endless run of empty documents that never consume it, so YAML::LoadAll never
// returns (found by fuzz/fuzz_config.cpp). A first pass walks the documents and stops where
// one starts at the same place as the one before; returns that place, or nothing.
std::optional<YAML::Mark> stuck_document(const std::string& yaml) {
  std::istringstream in(yaml);
  YAML::Parser parser(in);
  DocumentStarts starts;
  while (parser.HandleNextDocument(starts)) {
    const auto& m = starts.marks;
    if (m.size() >= 2 && m[m.size() - 1].pos == m[m.size() - 2].pos) return m.back();
  }
  return std::nullopt;
}

// The line holding byte `pos` (without its newline) and the offset it starts at.
std::pair<std::string_view, std::size_t> line_at(std::string_view yaml, std::size_t pos) {
  std::size_t begin = pos == 0 ? std::string_view::npos : yaml.rfind('\n', pos - 1);
  begin = begin == std::string_view::npos ? 0 : begin + 1;
  const std::size_t end = std::min(yaml.find('\n', begin), yaml.size());
  return {yaml.substr(begin, end - begin), begin};
}

// For yaml-cpp's "illegal map value" on a line `key: some: text`: a plain value cannot hold
// ': ', and quoting it is the fix, so the hint is the value quoted. "" when the line is not of
// that shape (the mark is not past a first ': ').
std::string quote_hint(std::string_view yaml, const YAML::Mark& mark) {
  if (mark.is_null() || mark.pos < 0 || static_cast<std::size_t>(mark.pos) > yaml.size()) return "";
  std::size_t pos = static_cast<std::size_t>(mark.pos);
  const auto [line, begin] = line_at(yaml, pos);
  std::size_t sep = line.find(": ");
  if (sep == std::string_view::npos || begin + sep >= pos) return "";
  std::string_view value = line.substr(sep + 2);
  if (std::size_t comment = value.find(" #"); comment != std::string_view::npos)
    value = value.substr(0, comment);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r'))
    value.remove_suffix(1);
  if (value.empty() || value.find(": ") == std::string_view::npos) return "";
  std::string quoted;
  if (value.find_first_of("\"\\") == std::string_view::npos) {
    quoted = "\"" + std::string(value) + "\"";
  } else {  // single quotes take everything literally but a quote, which is doubled
    quoted = "'";
    for (char c : value) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    quoted += "'";
  }
  return "; a plain value cannot hold ': ' — quote the value: " + quoted;
}

Location yaml_error_location(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return {file, 0, 0};
  return {file, mark.line + 1, mark.column + 1};
}

// The innermost '[' (or '{') before `end` that no ']' ('}') closes: its byte offset, or npos.
// Quoted scalars and comments are skipped, as the scanner skips them.
std::size_t unclosed_flow(std::string_view yaml, std::size_t end, char open) {
  std::vector<std::pair<char, std::size_t>> opened;
  for (std::size_t i = 0; i < end && i < yaml.size(); ++i) {
    const char c = yaml[i];
    if (c == '#' && (i == 0 || yaml[i - 1] == ' ' || yaml[i - 1] == '\t' || yaml[i - 1] == '\n')) {
      while (i < end && yaml[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      // A quote opens a scalar only where a value starts, not inside a plain one (it's).
      const char before = i == 0 ? '\n' : yaml[i - 1];
      if (std::string_view(" \t\n[{,:-").find(before) == std::string_view::npos) continue;
      for (++i; i < end; ++i) {
        if (c == '"' && yaml[i] == '\\') {
          ++i;
        } else if (yaml[i] == c) {
          if (c == '\'' && i + 1 < end && yaml[i + 1] == '\'') {
            ++i;
          } else {
            break;
          }
        }
      }
    } else if (c == '[' || c == '{') {
      opened.emplace_back(c, i);
    } else if ((c == ']' || c == '}') && !opened.empty()) {
      opened.pop_back();
    }
  }
  for (auto it = opened.rbegin(); it != opened.rend(); ++it)
    if (it->first == open) return it->second;
  return std::string_view::npos;
}

// Where yaml-cpp's syntax error is fixed and what to do, one line: an unclosed '[' or '{' at its
// own place; a line with no ':' that ran on into the next key (`provider local`) at that line;
// an illegal ': ' inside a plain value with the value quoted (quote_hint); otherwise the place
// yaml-cpp gives, with the indentation to check.
std::pair<Location, std::string> yaml_syntax_error(std::string_view yaml, const std::string& file,
                                                   const YAML::Exception& e) {
  const Location at = yaml_error_location(file, e.mark);
  const std::string what = "invalid YAML: " + e.msg;
  if (e.mark.is_null() || e.mark.pos < 0) return {at, what};
  const std::size_t pos = std::min(static_cast<std::size_t>(e.mark.pos), yaml.size());
  auto place = [&](std::size_t offset) {
    const std::size_t begin = line_at(yaml, offset).second;
    const int number = static_cast<int>(std::count(yaml.begin(), yaml.begin() + begin, '\n')) + 1;
    return Location{file, number, static_cast<int>(offset - begin) + 1};
  };
  if (e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW || e.msg == YAML::ErrorMsg::END_OF_MAP_FLOW) {
    const bool seq = e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW;
    const std::size_t open = unclosed_flow(yaml, pos, seq ? '[' : '{');
    if (open != std::string_view::npos) {
      return {place(open), fmt::format("invalid YAML: this '{}' is not closed; close it with '{}', "
                                       "or quote the value if it is text",
                                       seq ? '[' : '{', seq ? ']' : '}')};
    }
  }
  if (e.msg == YAML::ErrorMsg::MAP_VALUE) {
    if (std::string hint = quote_hint(yaml, e.mark); !hint.empty()) return {at, what + hint};
    // The line before: a key without ':' is a plain scalar that continues into this line.
    std::size_t begin = line_at(yaml, pos).second;
    while (begin > 0) {
      const auto [line, start] = line_at(yaml, begin - 1);
      begin = start;
      const std::size_t first = line.find_first_not_of(" \t");
      if (first == std::string_view::npos || line[first] == '#') continue;
      if (line[first] == '-') break;  // a list item's text may hold spaces and no ':'
      std::string_view text = line.substr(first);
      if (std::size_t comment = text.find(" #"); comment != std::string_view::npos)
        text = text.substr(0, comment);
      while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
      const std::size_t space = text.find(' ');
      if (text.find(':') != std::string_view::npos || space == std::string_view::npos ||
          text.find_first_of("\"'[{") != std::string_view::npos) {
        break;
      }
      return {place(start + first),
              fmt::format("invalid YAML: '{}' has no ':', so it runs on into the next line; "
                          "write '{}: {}'",
                          text, text.substr(0, space), text.substr(space + 1))};
    }
  }
  if (e.msg == YAML::ErrorMsg::MAP_VALUE || e.msg == YAML::ErrorMsg::END_OF_MAP ||
      e.msg == YAML::ErrorMsg::END_OF_SEQ) {
    return {at, what + "; check this line's indentation: a key lines up with the other keys of "
                       "its mapping, a list item's keys with the key after its '- '"};
  }
  return {at, what};
}

}  // namespace

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
