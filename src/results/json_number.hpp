#pragma once

// How coldgate's JSON files write numbers (results.json, history files): include from a .cpp
// that links nlohmann/json; the module's headers do not.
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

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

}  // namespace coldgate::results
