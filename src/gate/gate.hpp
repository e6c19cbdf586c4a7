#pragma once

#include <map>
#include <string>

#include "config/config.hpp"
#include "measure/results.hpp"

namespace coldgate::gate {

/// Thresholds for one comparison: the config's top-level `gate:` and each stage's override.
struct Thresholds {
  config::Gate defaults;                        // top-level gate (or built-in defaults)
  std::map<std::string, config::Gate> stages;   // stage name → gate with its overrides applied
  /// The gate for `stage`: its override, else the defaults.
  const config::Gate& for_stage(const std::string& stage) const;
  /// From a loaded config (top level + stages[].gate).
  static Thresholds from(const config::Config& config);
};

/// Head results against a baseline (shared/DESIGN.md "The gate"): stages matched by name,
/// metrics by name; per gated metric the medians of cold (+ warm) samples give regression /
/// slower / faster / same, and new / removed where one side lacks it. `baseline_name` is the
/// baseline file as given. Throws Error(usage) for NaN, infinite or negative samples (naming
/// the file, stage and metric) and, with require_same_environment, for differing environments.
measure::GateResult compare(const measure::Results& head, const measure::Results& base,
                            const std::string& baseline_name, const Thresholds& thresholds);

/// True when the run passes: no failed stage, every snapshot `match` (or `updated`), and no
/// `regression` in results.gate.
bool passed(const measure::Results& results);

/// The one-line verdict: "passed: 5 stages, 5 snapshots match" or "failed: 1 regression
/// (config-load wall_ms 10.4×), 1 snapshot changed (config-load)".
std::string verdict(const measure::Results& results);

}  // namespace coldgate::gate
