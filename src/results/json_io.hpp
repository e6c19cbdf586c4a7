#pragma once
// The pieces results.json's writer and reader share across its files (json.cpp, gate_json.cpp,
// growth_json.cpp): absent-or-null members, enum members by name, the git block. Include only
// from the results module's JSON sources; they link nlohmann/json.

#include <fmt/core.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "results/json_parts.hpp"
#include "results/results.hpp"
#include "util/error.hpp"

namespace coldgate::results::json_io {

using nlohmann::ordered_json;

/// `s`, or null when it is empty.
inline ordered_json or_null(const std::string& s) {
  return s.empty() ? ordered_json(nullptr) : ordered_json(s);
}

/// `v` as json_number(), or null.
inline ordered_json opt_number(const std::optional<double>& v) {
  return v ? json_number(*v) : ordered_json(nullptr);
}

/// `m` as a JSON object of strings.
inline ordered_json string_map(const std::map<std::string, std::string>& m) {
  ordered_json o = ordered_json::object();
  for (const auto& [k, v] : m) o[k] = v;
  return o;
}

/// The string member `key` of `j`; "" when absent or null.
inline std::string str(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::string() : it->get<std::string>();
}

/// The enum value that `key` names through `parse`; `fallback` when the member is absent (files
/// of earlier versions); Error(usage) naming the member and what it may be otherwise.
template <typename T, typename Parse>
T named(const ordered_json& j, const char* key, Parse parse, T fallback, const std::string& where,
        std::string_view allowed, const std::string& source) {
  std::string text = str(j, key);
  if (text.empty()) return fallback;
  if (auto v = parse(text)) return *v;
  throw usage_error(source,
                    fmt::format("{}.{} is \"{}\" (expected {})", where, key, text, allowed));
}

/// The number `v`; nullopt for null.
inline std::optional<double> number_or_null(const ordered_json& v) {
  if (v.is_null()) return std::nullopt;
  return v.get<double>();
}

/// The `git` block (results.json `git`, `gate.base_git`).
inline ordered_json git_json(const GitInfo& g) {
  return {{"commit", or_null(g.commit)},
          {"branch", or_null(g.branch)},
          {"base", or_null(g.base)},
          {"dirty", g.dirty},
          {"dirty_measured", g.dirty_measured},
          {"unborn", g.unborn}};
}

/// The `git` block read back; a member of the wrong type throws nlohmann's exception.
inline GitInfo git_from(const ordered_json& g) {
  GitInfo out{str(g, "commit"), str(g, "branch"), str(g, "base"), {}, true};
  if (g.contains("dirty")) out.dirty = g.at("dirty").get<std::vector<std::string>>();
  if (g.contains("dirty_measured")) out.dirty_measured = g.at("dirty_measured").get<bool>();
  if (g.contains("unborn")) out.unborn = g.at("unborn").get<bool>();
  return out;
}

}  // namespace coldgate::results::json_io
