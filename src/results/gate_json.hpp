#pragma once
// results.json's `gate` block. Include from a .cpp that links nlohmann/json.

#include <nlohmann/json.hpp>
#include <string>

#include "results/results.hpp"

namespace coldgate::results {

/// `g` as results.json's `gate` member: the baseline, the thresholds, the metrics' and the
/// statements' verdicts.
nlohmann::ordered_json gate_json(const GateResult& g);

/// The `gate` member read back; a member of the wrong type throws nlohmann's exception (the
/// caller turns it into "malformed results file"), an unknown verdict, base_source or
/// head_source throws Error(usage) naming `source` and the member.
GateResult gate_from(const nlohmann::ordered_json& g, const std::string& source);

}  // namespace coldgate::results
