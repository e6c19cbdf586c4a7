#pragma once

#include <string>
#include <string_view>

#include "results/results.hpp"

namespace coldgate::results {

/// results.json text (schema coldgate-results/1, docs/architecture.md "Results JSON"): pretty,
/// stable member order, every raw sample; ends with a newline.
std::string to_json(const Results& results);

/// Reads results.json text; throws Error(usage) with `source` and the JSON path of what is
/// wrong (not JSON, another schema, a member of the wrong type).
Results from_json(std::string_view text, const std::string& source);

/// One stage's remedy trial as `coldgate explain STAGE --try --json` prints it:
/// `{"stage": …, "remedies": [{stage, remedy, settings, second_execution, metrics,
/// snapshot_identical, first_difference, note, error}, …]}`, "as is" first, as in results.json.
std::string trial_to_json(const std::string& stage, const std::vector<Remedy>& remedies);

}  // namespace coldgate::results
