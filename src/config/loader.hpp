#pragma once
// The loader of a parsed document into a Config, section by section. Internal to the config
// module: loader.cpp holds the top-level sections, stage_keys.cpp the keys of `stages:`.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "config/reader.hpp"

namespace coldgate::config::detail {

/// Builds a Config from the document, section by section, in the order later sections need.
/// Every method throws Error(usage) at the offending node's `file:line:col`.
class Loader {
 public:
  Loader(const Reader& reader, Config& config) : m_r(reader), m_c(config) {}

  /// Reads the whole document (a mapping) into the Config.
  void run(const YAML::Node& root);

 private:
  /// `isolation: run | stage | none`.
  static Isolation isolation(const Reader& r, const YAML::Node& node, const std::string& path);
  /// `cold: process | restart`.
  static ColdMode cold_mode(const Reader& r, const YAML::Node& node, const std::string& path);

  // Top-level sections (loader.cpp).
  /// `version: 1`, the only one this coldgate reads.
  void read_version(const YAML::Node& node);
  /// `database:`: provider, version, bindir, image, engine, url, name, settings, …
  void read_database(const Fields& f);
  /// `setup:`: the steps in order.
  void read_setup(const YAML::Node& node);
  /// An `env:` mapping (top level or a command stage's), each value checked now, kept as written.
  EnvMap read_env(const YAML::Node& node, const std::string& path) const;
  /// A setup step's `psql: {file, database, variables}`.
  void read_psql_options(const Fields& f, SetupStep& s) const;
  /// `defaults:`, which the stages read next start from.
  void read_defaults(const Fields& f);
  /// A `max_result_bytes` size above 0 bytes.
  std::uint64_t result_limit(const YAML::Node& node, const std::string& path) const;
  /// A `timeout` longer than 0 ms.
  Duration timeout(const YAML::Node& node, const std::string& path) const;
  /// The keys of a `gate:` mapping, applied on top of `gate`.
  void read_gate(const Fields& f, Gate& gate) const;
  /// `history:`.
  void read_history(const Fields& f);
  /// `report:`.
  void read_report(const Fields& f);
  /// A `scales:` list: numbers above 0, ascending, none twice.
  std::vector<double> read_scales(const YAML::Node& node, const std::string& path) const;
  /// Every `scales:` list (top level and stages') starts at the same scale.
  void check_scales_start_alike(const Fields& top) const;

  // `stages:` (stage_keys.cpp).
  /// `stages:`: each stage, names unique.
  void read_stages(const YAML::Node& node);
  /// One stage's keys, on top of the defaults read before.
  Stage read_stage(const Fields& f, std::string name, const YAML::Node& name_node) const;
  /// Fails at `node` when `text` (a stage's SQL) is not UTF-8.
  void utf8_query(std::string_view text, const YAML::Node& node, const std::string& path,
                  const std::string& byte_label) const;
  /// A stage's `remedies:` list.
  void read_remedies(const YAML::Node& node, const std::string& path, Stage& s) const;
  /// A SQL stage's `params:` list.
  void read_params(const YAML::Node& node, const std::string& path, Stage& s) const;
  /// A stage's `snapshot:` (true, false, or a mapping); nullopt for false.
  std::optional<Snapshot> read_snapshot(const YAML::Node& node, const std::string& path,
                                        const Stage& stage) const;
  /// A list of snapshot path patterns (`ordered`, `redact`), each checked.
  std::vector<std::string> patterns(const YAML::Node& node, const std::string& path) const;

  const Reader& m_r;
  Config& m_c;
  YAML::Node m_default_cold;  // the value of `defaults.cold`, when given (for its location)
};

}  // namespace coldgate::config::detail
