#pragma once
// results.json's `stages[].growth` block. Include from a .cpp that links nlohmann/json.

#include <nlohmann/json.hpp>
#include <string>

#include "results/results.hpp"

namespace coldgate::results {

/// `g` as results.json's `stages[].growth` member: scales, production_scale, the stage's fits
/// and each statement's (values, exponent, coefficient, offset, growth, projected).
nlohmann::ordered_json stage_growth_json(const StageGrowth& g);

/// The `growth` member of stage `stage` read back; a member of the wrong type throws nlohmann's
/// exception (the caller turns it into "malformed results file"), a fit whose values do not
/// match the scales or an unknown growth class throws Error(usage) naming `source` and the member.
StageGrowth stage_growth_from(const nlohmann::ordered_json& g, const std::string& stage,
                              const std::string& source);

}  // namespace coldgate::results
