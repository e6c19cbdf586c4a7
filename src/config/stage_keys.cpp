#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "config/config.hpp"
#include "config/loader.hpp"
#include "config/reader.hpp"
#include "config/values.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/text.hpp"

// The keys of `stages:`, for the Loader (loader.hpp).
namespace coldgate::config::detail {

void Loader::read_stages(const YAML::Node& node) {
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

Stage Loader::read_stage(const Fields& f, std::string name, const YAML::Node& name_node) const {
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
  } else if (auto* e = f.find("requests")) {
    m_r.fail(e->key_node, f.path("requests"),
             "only command stages take 'requests'; a SQL stage runs its one query once per run "
             "(remove the key)");
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
  if (auto* e = f.find("requests")) s.requests = m_r.integer(e->value, f.path("requests"), 1);
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
void Loader::utf8_query(std::string_view text, const YAML::Node& node, const std::string& path,
                const std::string& byte_label) const {
  if (auto at = util::first_invalid_utf8(text))
    m_r.fail(node, path,
             fmt::format("{}{} (0x{:02X}) is not UTF-8; PostgreSQL receives queries as UTF-8: "
                         "save the SQL as UTF-8",
                         byte_label, *at, static_cast<unsigned char>(text[*at])));
}

void Loader::read_remedies(const YAML::Node& node, const std::string& path, Stage& s) const {
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

void Loader::read_params(const YAML::Node& node, const std::string& path, Stage& s) const {
  m_r.require_list(node, path);
  for (std::size_t i = 0; i < node.size(); ++i) {
    bool null = node[i].IsNull();
    s.params.push_back(
        null ? std::string()
             : m_r.text(node[i], index(path, i), "a scalar (text, number, boolean or null)"));
    s.params_null.push_back(null);
  }
}

std::optional<Snapshot> Loader::read_snapshot(const YAML::Node& node, const std::string& path,
                                      const Stage& stage) const {
  Snapshot snap;
  snap.where = m_r.location(node);
  snap.path_where = snap.where;
  snap.path = (m_r.base_dir() / "snapshots" / (stage.name + ".json")).lexically_normal();
  snap.from_stdout = stage.is_command();
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
    snap.from_stdout = from == "stdout";  // the keyword, as the config spells it
    if (!snap.from_stdout) snap.from = m_r.file_path(e->value, f.path("from")).string();
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

std::vector<std::string> Loader::patterns(const YAML::Node& node, const std::string& path) const {
  auto list = m_r.text_list(node, path);
  for (std::size_t i = 0; i < list.size(); ++i)
    if (auto problem = detail::pattern_problem(list[i]); !problem.empty())
      m_r.fail(node[i], index(path, i), problem);
  return list;
}
}  // namespace coldgate::config::detail
