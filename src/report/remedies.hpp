#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace coldgate::report {

/// "blocks per call 1,705 → 4": per statement in both variants' statement_blocks_per_call, as
/// is's figure → `r`'s (rounded, ", " between statements); "" when none is in both, or `r` is
/// `as_is`.
std::string blocks_change(const results::Remedy& r, const results::Remedy& as_is);

/// One stage's remedy trial as Markdown: `| Remedy | Cold wall | Server time | JIT | vs as is |
/// Snapshot |` (Server time — db_plan_ms + db_exec_ms per cold run, median (min–max) — only for
/// a profiled trial; "as is" first, a remedy with its blocks_change() beside its name; cold wall
/// as median (min–max), a prepared statement's second execution;
/// JIT as db_jit_ms; vs as is as the ratio of the wall medians; snapshot identical, differs at
/// the first differing path, or — without a snapshot), then the trial's notes and the
/// recommendation() line. "" for an empty trial.
std::string remedies_table(const std::vector<results::Remedy>& trial, results::StageKind kind);

/// The one line naming the fastest remedy that is faster than as is by more than 10%, with every
/// run apart — by the cold wall time, or in a profiled trial by the server's time (db_plan_ms +
/// db_exec_ms) with the wall time no worse: a command stage's start-up can hide a statement's
/// gain — and whose snapshot is identical — "`jit = off`: 4.85 s → 0.58 s (8.4× faster), server
/// time … → … (…), snapshot identical —
/// add `settings: {jit: "off"}` (…)" — or saying that none is; a remedy whose snapshot differs
/// is never recommended, one of a stage without a snapshot is named with that caveat.
std::string recommendation(const std::vector<results::Remedy>& trial, results::StageKind kind);

}  // namespace coldgate::report
