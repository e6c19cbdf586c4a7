#pragma once
// What is wrong with a document yaml-cpp cannot read, at its place, for the loader. Internal to
// the config module.

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "config/config.hpp"

namespace coldgate::config::detail {

/// Throws Error(usage) at the first C0 control character (but tab, LF, CR) or DEL in `yaml`,
/// which YAML 1.2 §5.1 refuses and yaml-cpp does not check.
void reject_control_characters(std::string_view yaml, const std::string& file);

/// Where yaml-cpp 0.7 would loop for ever on `yaml` (a document that starts where the one
/// before did: a ',' outside a flow collection), or nullopt.
std::optional<YAML::Mark> stuck_document(const std::string& yaml);

/// `mark` as a Location in `file` (1-based; line 0 when the mark is null).
Location yaml_error_location(const std::string& file, const YAML::Mark& mark);

/// Where yaml-cpp's syntax error `e` is fixed, and the one-line message saying what to do.
std::pair<Location, std::string> yaml_syntax_error(std::string_view yaml, const std::string& file,
                                                   const YAML::Exception& e);

}  // namespace coldgate::config::detail
