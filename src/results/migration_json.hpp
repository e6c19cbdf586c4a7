#pragma once
// results.json's `migration` block. Include from a .cpp that links nlohmann/json.

#include <nlohmann/json.hpp>
#include <string>

#include "results/migration.hpp"

namespace coldgate::results {

/// `m` as results.json's `migration` member (its shape: docs/architecture.md, "Results JSON").
nlohmann::ordered_json migration_json(const Migration& m);

/// The `migration` member read back; a member of the wrong type throws nlohmann's exception
/// (the caller turns it into "malformed results file"), an unknown kind or severity throws
/// Error(usage) naming `source` and the member.
Migration migration_from(const nlohmann::ordered_json& j, const std::string& source);

}  // namespace coldgate::results
