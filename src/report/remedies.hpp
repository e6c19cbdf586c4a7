#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace coldgate::report {

/// "blocks per call 1,705 → 4": per statement in both variants' statement_blocks_per_call, as
/// is's figure → `r`'s (rounded, ", " between statements); "" when none is in both, or `r` is
/// `as_is`.
std::string blocks_change(const results::Remedy& r, const results::Remedy& as_is);

/// "blocks per call 1,211 → 57, server time per call 2.02 ms → 1.10 ms, calls 1 → 1": the
/// medians over the cold runs of each statement `r` is aimed at (Remedy::aimed_at), as is →
/// `r`, "; " between statements; "" for as is, a stage-wide remedy, or a trial without them.
std::string statement_change(const results::Remedy& r, const results::Remedy& as_is);

/// One stage's remedy trial as Markdown: `| Remedy | Cold wall | Server time | JIT | vs as is |
/// Snapshot |` (Server time — db_plan_ms + db_exec_ms per cold run, median (min–max) — only for
/// a profiled trial; "as is" first, a remedy with its statement_change(), else its
/// blocks_change(), beside its name; cold wall
/// as median (min–max), a prepared statement's second execution;
/// JIT as db_jit_ms; vs as is as the ratio of the wall medians; snapshot identical, differs at
/// the first differing path, or — without a snapshot), then the trial's notes and the
/// recommendation() line. "" for an empty trial.
std::string remedies_table(const std::vector<results::Remedy>& trial, results::StageKind kind);

/// The one line naming the fastest remedy whose snapshot is identical and that is either faster
/// than as is by more than 10% by the cold wall time, with every run apart; or, aimed at
/// statements (Remedy::aimed_at: an index, statistics), improves each of them in every run —
/// blocks and server time per call lower in every run than in any of as is's, calls no more —
/// with the stage's wall time no worse beyond as is's noise (its fastest run not slower than
/// as is's slowest); or, stage-wide in a profiled trial, faster by the server's time (db_plan_ms
/// + db_exec_ms) by more than 10% with every run apart and the wall time no worse. The line says
/// what decided: "`jit = off`: 4.85 s → 0.58 s (8.4× faster), server time … → … (…), snapshot
/// identical — add `settings: {jit: "off"}` (…)", or "`CREATE INDEX …`: recommended: blocks per
/// call 1,211 → 57 and server time per call 2.02 ms → 1.10 ms in every run (…)"; or it says
/// that none is. A remedy whose snapshot differs is never recommended, one of a stage without a
/// snapshot is named with that caveat.
std::string recommendation(const std::vector<results::Remedy>& trial, results::StageKind kind);

}  // namespace coldgate::report
