#pragma once

// The pieces coldgate's JSON files (results.json, history files) write alike: numbers and the
// environment block. Include from a .cpp that links nlohmann/json; the module's headers do not.
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/results.hpp"

namespace coldgate::results {

/// `v` as JSON: an integer without a fraction when it is one (|v| < 9e15, exact in a double),
/// else nlohmann's shortest round-trip double.
inline nlohmann::ordered_json json_number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) {
    return static_cast<std::int64_t>(v);
  }
  return v;
}

/// `values` as a JSON array of json_number()s.
inline nlohmann::ordered_json json_samples(const std::vector<double>& values) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (double v : values) a.push_back(json_number(v));
  return a;
}

/// results.json's `environment` block: {host, cpus, cpu_model, kernel, os, provider, postgres
/// {version, version_num, settings}}.
inline nlohmann::ordered_json environment_json(const Environment& e) {
  nlohmann::ordered_json settings = nlohmann::ordered_json::object();
  for (const auto& [k, v] : e.postgres_settings) settings[k] = v;
  return {{"host", e.host},
          {"cpus", e.cpus},
          {"cpu_model", e.cpu_model},
          {"kernel", e.kernel},
          {"os", e.os},
          {"provider", e.provider},
          {"postgres",
           {{"version", e.postgres_version},
            {"version_num", e.postgres_version_num},
            {"settings", std::move(settings)}}}};
}

}  // namespace coldgate::results
