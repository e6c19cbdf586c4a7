#include "config/reader.hpp"
#include "util/suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "config/config.hpp"
#include "config/values.hpp"
#include "util/error.hpp"

namespace coldgate::config::detail {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> k_true = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
const std::set<std::string> k_false = {"false", "False", "FALSE", "no", "No",
                                       "NO",    "off",   "Off",   "OFF"};

std::string got(const std::string& text) {
  return "'" + text + "'";
}

bool has_key(const std::string& table, const std::string& key) {
  auto it = known_keys().find(table);
  return it != known_keys().end() &&
         std::find(it->second.begin(), it->second.end(), key) != it->second.end();
}

// A known key one indentation level off: a key of a mapping under `table` (`ordered:` beside
// `snapshot:` instead of under it), or of the mapping `table` sits in (`runs:` under
// `snapshot:`). The fix, or nullopt.
std::optional<std::string> misplaced_level(const std::string& table, const std::string& key) {
  const std::string prefix = table.empty() ? "" : table + ".";
  for (const auto& child : known_keys().at(table)) {
    if (has_key(prefix + child, key) || has_key(prefix + child + "[]", key))
      return fmt::format("it is a key of '{}', so indent it under '{}:'", child, child);
  }
  if (table.empty() || table.ends_with("[]")) return std::nullopt;  // a list's items: no mapping above
  const std::size_t dot = table.rfind('.');
  const std::string parent = dot == std::string::npos ? "" : table.substr(0, dot);
  const std::string name = table.substr(dot == std::string::npos ? 0 : dot + 1);
  if (has_key(parent, key))
    return fmt::format("it belongs one level up, beside '{}:', so line it up with '{}:'", name, name);
  return std::nullopt;
}

}  // namespace

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string index(const std::string& path, std::size_t i) {
  return fmt::format("{}[{}]", path, i);
}

std::string describe(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  if (node.IsScalar()) return got(node.Scalar());
  return "nothing";
}

const Entry* Fields::find(std::string_view key) const {
  for (const auto& e : m_entries)
    if (e.key == key) return &e;
  return nullptr;
}

Reader::Reader(std::string file, fs::path base_dir, EnvLookup env)
    : m_file(std::move(file)), m_base_dir(std::move(base_dir)), m_env(std::move(env)) {}

Location Reader::location(const YAML::Node& node) const {
  YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {m_file, 0, 0};
  return {m_file, mark.line + 1, mark.column + 1};
}

void Reader::fail(const YAML::Node& node, const std::string& path, const std::string& what) const {
  throw usage_error(location(node).str(), path.empty() ? what : path + ": " + what);
}

std::vector<Entry> Reader::entries(const YAML::Node& node, const std::string& path) const {
  if (!node.IsMap()) {
    // `provider local` under `database:` is valid YAML, the text "provider local": a key that
    // lost its ':'.
    if (node.IsScalar()) {
      const std::string& text = node.Scalar();
      const std::size_t space = text.find(' ');
      const bool key_like =
          space != std::string::npos && space > 0 && text.find(':') == std::string::npos &&
          std::all_of(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(space), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
          });
      if (key_like) {
        fail(node, path,
             fmt::format("expected a mapping, got '{}', which has no ':'; write '{}: {}'", text,
                         text.substr(0, space), text.substr(space + 1)));
      }
    }
    fail(node, path, "expected a mapping, got " + describe(node));
  }
  std::vector<Entry> out;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar())
      fail(it->first, path, "a key must be plain text, not " + describe(it->first));
    Entry e{it->first.Scalar(), it->first, it->second};
    for (const auto& seen : out)
      if (seen.key == e.key)
        fail(e.key_node, path,
             "duplicate key '" + e.key + "' (first at " + location(seen.key_node).str() + ")");
    out.push_back(std::move(e));
  }
  return out;
}

void Reader::require_values(const std::vector<Entry>& list, const std::string& path) const {
  // yaml-cpp marks an empty value at the start of the next line, so point at its key instead.
  for (const auto& e : list)
    if (e.value.IsNull()) fail(e.key_node, join(path, e.key), "has no value");
}

Fields Reader::fields(const YAML::Node& node, const std::string& path,
                      const std::string& table) const {
  auto list = entries(node, path);
  const auto& known = known_keys().at(table);
  for (const auto& e : list) {
    if (std::find(known.begin(), known.end(), e.key) != known.end()) continue;
    std::string what = "unknown key '" + e.key + "'";
    if (auto level = misplaced_level(table, e.key))
      what += " here: " + *level;
    else if (auto hint = util::closest(e.key, known))
      what += " (did you mean '" + *hint + "'?)";
    else
      what += "; valid keys are " + quoted_list(known, " and ");
    fail(e.key_node, path, what);
  }
  require_values(list, path);
  return Fields(node, path, std::move(list));
}

std::string Reader::text(const YAML::Node& node, const std::string& path,
                         std::string_view expected) const {
  if (!node.IsScalar())
    fail(node, path, "expected " + std::string(expected) + ", got " + describe(node));
  std::string error;
  std::string out = expand_env(node.Scalar(), m_env, error);
  if (!error.empty()) fail(node, path, error);
  return out;
}

std::string Reader::nonempty_text(const YAML::Node& node, const std::string& path) const {
  std::string out = text(node, path);
  if (out.empty()) fail(node, path, "must not be empty");
  return out;
}

int Reader::integer(const YAML::Node& node, const std::string& path, int min) const {
  const std::string expected = min >= 1 ? "a positive integer" : "a non-negative integer";
  std::string t = text(node, path, expected);
  int value = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || value < min)
    fail(node, path, "expected " + expected + ", got " + got(t));
  return value;
}

bool Reader::boolean(const YAML::Node& node, const std::string& path) const {
  std::string t = text(node, path, "true or false");
  if (k_true.count(t)) return true;
  if (k_false.count(t)) return false;
  fail(node, path, "expected true or false, got " + got(t));
}

double Reader::ratio(const YAML::Node& node, const std::string& path) const {
  const std::string expected = "a number greater than 1";
  std::string t = text(node, path, expected);
  double value = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !(value > 1))
    fail(node, path, "expected " + expected + ", got " + got(t));
  return value;
}

double Reader::positive_number(const YAML::Node& node, const std::string& path) const {
  const std::string expected = "a number above 0";
  std::string t = text(node, path, expected);
  double value = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !(value > 0) ||
      !std::isfinite(value))
    fail(node, path, "expected " + expected + ", got " + got(t));
  return value;
}

Duration Reader::duration(const YAML::Node& node, const std::string& path) const {
  auto parsed = duration_ms(text(node, path, "a duration such as 250ms, 1.5s, 10m or 1h"));
  if (!parsed.value) fail(node, path, parsed.error);
  return Duration(*parsed.value);
}

std::uint64_t Reader::size(const YAML::Node& node, const std::string& path) const {
  auto parsed = size_bytes(text(node, path, "a size such as 100B, 512KiB, 16MiB or 1GB"));
  if (!parsed.value) fail(node, path, parsed.error);
  return *parsed.value;
}

std::string Reader::choice(const YAML::Node& node, const std::string& path,
                           const std::vector<std::string>& choices) const {
  const std::string expected =
      choices.size() == 2 ? quoted_list(choices) : "one of " + quoted_list(choices);
  std::string t = text(node, path, expected);
  if (std::find(choices.begin(), choices.end(), t) != choices.end()) return t;
  std::string what = "expected " + expected + ", got " + got(t);
  if (auto hint = util::closest(t, choices)) what += " (did you mean '" + *hint + "'?)";
  fail(node, path, what);
}

void Reader::require_list(const YAML::Node& node, const std::string& path) const {
  if (!node.IsSequence()) fail(node, path, "expected a list");
}

std::vector<std::string> Reader::text_list(const YAML::Node& node, const std::string& path) const {
  require_list(node, path);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(text(node[i], index(path, i)));
  return out;
}

fs::path Reader::file_path(const YAML::Node& node, const std::string& path) const {
  fs::path p = nonempty_text(node, path);
  return (p.is_absolute() ? p : m_base_dir / p).lexically_normal();
}

fs::path Reader::existing_path(const YAML::Node& node, const std::string& path,
                               bool folder_ok) const {
  fs::path resolved = file_path(node, path);
  std::error_code ec;
  auto status = fs::status(resolved, ec);
  if (!fs::exists(status)) {
    fs::path given = text(node, path);
    std::string what = "file not found: " + given.string();
    if (given.is_relative())
      what += " (relative to the config's folder " + m_base_dir.string() + ")";
    fail(node, path, what + "; fix the path or add the file");
  }
  if (fs::is_directory(status) && !folder_ok)
    fail(node, path, resolved.string() + " is a folder; expected a file");
  return resolved;
}

std::map<std::string, std::string> Reader::settings(const YAML::Node& node,
                                                    const std::string& path,
                                                    std::map<std::string, Location>* where) const {
  std::map<std::string, std::string> out;
  auto list = entries(node, path);
  require_values(list, path);
  for (const auto& e : list) {
    if (!is_setting_name(e.key))
      fail(e.key_node, path, "'" + e.key + "' is not a PostgreSQL setting name");
    const std::string value_path = join(path, e.key);
    std::string value = text(e.value, value_path, "a setting value (text, number or boolean)");
    // A plain YAML boolean is a boolean to PostgreSQL too; write it the way postgresql.conf does.
    if (e.value.Tag() == "?" && k_true.count(value)) value = "on";
    if (e.value.Tag() == "?" && k_false.count(value)) value = "off";
    out[e.key] = value;
    if (where) (*where)[e.key] = location(e.key_node);
  }
  return out;
}

void Reader::command(const YAML::Node& node, const std::string& path,
                     std::vector<std::string>& argv, std::string& shell) const {
  if (node.IsSequence()) {
    argv = text_list(node, path);
    if (argv.empty()) fail(node, path, "is empty; give the program and its arguments");
    if (argv[0].empty()) fail(node[0], index(path, 0), "the program name is empty");
  } else if (node.IsScalar()) {
    shell = text(node, path);
    if (shell.empty()) fail(node, path, "is empty; give the program and its arguments");
  } else {
    fail(node, path,
         "expected a command: a list (program and arguments, run without a shell) or a string "
         "(run with /bin/sh -c), got " +
             describe(node));
  }
}

}  // namespace coldgate::config::detail
