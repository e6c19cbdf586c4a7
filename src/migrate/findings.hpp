#pragma once
// What the migrate module's findings share between one measurement (migrate.cpp) and the data
// scales (scales.cpp): which finding explains a stall, the stall's fix, their order. Internal to
// the migrate module.

#include <string>
#include <vector>

#include "results/migration.hpp"

namespace coldgate::migrate {

/// True when `f` is a rewrite, index build or validation of `table`: the lock it held is the
/// stall's cause, and its finding already says how long reads and writes waited, so the stall
/// is one regression with it, not two.
bool explains_stall(const results::MigrationFinding& f, const std::string& table);

/// The fix of a stall finding: what shortens the statement that holds the lock.
extern const char* const k_stall_fix;

/// Regressions first, warnings after, each group in its order (stable).
void regressions_first(std::vector<results::MigrationFinding>& findings);

}  // namespace coldgate::migrate
