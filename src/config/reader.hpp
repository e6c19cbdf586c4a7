#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "config/env.hpp"

// Typed access to the nodes of a YAML document. Every getter takes the node and its key path
// (`stages[2].snapshot.path`) and throws Error(usage) at the node's `file:line:col` with a message
// that starts with that path. String scalars are `${VAR}`-expanded before they are interpreted.
namespace coldgate::config::detail {

/// "a.b" (or "b" at the top level).
std::string join(const std::string& path, std::string_view key);
/// "a[3]".
std::string index(const std::string& path, std::size_t i);

/// One `key: value` of a mapping.
struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

/// The entries of a checked mapping, in file order.
class Fields {
 public:
  Fields(YAML::Node node, std::string path, std::vector<Entry> entries)
      : m_node(std::move(node)), m_path(std::move(path)), m_entries(std::move(entries)) {}
  /// The entry for `key`, or nullptr when absent.
  const Entry* find(std::string_view key) const;
  /// The mapping node itself.
  const YAML::Node& node() const { return m_node; }
  /// Its key path.
  const std::string& path() const { return m_path; }
  /// Key path of a member.
  std::string path(std::string_view key) const { return join(m_path, key); }

 private:
  YAML::Node m_node;
  std::string m_path;
  std::vector<Entry> m_entries;
};

/// Reads typed values out of one YAML document.
class Reader {
 public:
  /// `file` is the file name as given (for `where`); `base_dir` resolves relative paths.
  Reader(std::string file, std::filesystem::path base_dir, EnvLookup env);

  /// Where `node` stands in the file (1-based).
  Location location(const YAML::Node& node) const;
  /// Throws Error(usage) at `node` with "<path>: <what>" (just "<what>" when path is empty).
  [[noreturn]] void fail(const YAML::Node& node, const std::string& path,
                         const std::string& what) const;

  /// A mapping whose keys come from known_keys().at(table): unknown keys (with a "did you mean"
  /// hint) and duplicate keys are errors.
  Fields fields(const YAML::Node& node, const std::string& path, const std::string& table) const;
  /// The entries of any mapping (keys are free), duplicate keys an error.
  std::vector<Entry> entries(const YAML::Node& node, const std::string& path) const;
  /// Every entry has a value (`key:` alone, or `~`, is an error at the key).
  void require_values(const std::vector<Entry>& list, const std::string& path) const;

  /// An expanded scalar; `expected` names the kind of value for the message.
  std::string text(const YAML::Node& node, const std::string& path,
                   std::string_view expected = "a string") const;
  /// An expanded scalar that must not be empty.
  std::string nonempty_text(const YAML::Node& node, const std::string& path) const;
  /// An integer ≥ `min` (1: "a positive integer", 0: "a non-negative integer").
  int integer(const YAML::Node& node, const std::string& path, int min) const;
  /// true/false (also yes/no, on/off).
  bool boolean(const YAML::Node& node, const std::string& path) const;
  /// A number strictly greater than 1.
  double ratio(const YAML::Node& node, const std::string& path) const;
  /// A number above 0 (a data scale); fail()s otherwise.
  double positive_number(const YAML::Node& node, const std::string& path) const;
  /// A duration, "250ms" … "1h".
  Duration duration(const YAML::Node& node, const std::string& path) const;
  /// A size in bytes, "16MiB".
  std::uint64_t size(const YAML::Node& node, const std::string& path) const;
  /// One of `choices` ("did you mean" when close).
  std::string choice(const YAML::Node& node, const std::string& path,
                     const std::vector<std::string>& choices) const;
  /// A list of expanded scalars.
  std::vector<std::string> text_list(const YAML::Node& node, const std::string& path) const;
  /// A list node (error "expected a list" otherwise).
  void require_list(const YAML::Node& node, const std::string& path) const;
  /// A path resolved against the config's folder, lexically normalized.
  std::filesystem::path file_path(const YAML::Node& node, const std::string& path) const;
  /// As file_path(), and the file (or, with `folder_ok`, a folder) must exist.
  std::filesystem::path existing_path(const YAML::Node& node, const std::string& path,
                                      bool folder_ok = false) const;
  /// `settings:` — name → value text; YAML booleans become on/off. `where`, when given, gets
  /// each name's location.
  std::map<std::string, std::string> settings(
      const YAML::Node& node, const std::string& path,
      std::map<std::string, Location>* where = nullptr) const;
  /// A command: a list → argv (no shell), a string → shell text.
  void command(const YAML::Node& node, const std::string& path, std::vector<std::string>& argv,
               std::string& shell) const;

  /// The config's folder, absolute.
  const std::filesystem::path& base_dir() const { return m_base_dir; }

 private:
  std::string m_file;
  std::filesystem::path m_base_dir;
  EnvLookup m_env;
};

/// How a node looks, for "got …": 'text', a list, a mapping, nothing.
std::string describe(const YAML::Node& node);

}  // namespace coldgate::config::detail
