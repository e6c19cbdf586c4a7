#pragma once

#include "cli/commands.hpp"

namespace coldgate::cli {

/// Arguments of `coldgate review`: accept's (-c, the stages, --ci/--no-ci, --allow-outside,
/// --from).
using ReviewArgs = AcceptArgs;

/// Walks the pending `.new` snapshots of the config's stages (or the candidates a run wrote
/// under `--from DIR`: snapshot::Source) one at a time on the terminal, in
/// the manner of `cargo insta review`: the stage, check()'s one-line status, the path summary
/// and the capped diff (snapshot::view_pending), then one key without Enter — `a` accepts (what
/// `coldgate accept STAGE` does, atomically), `r` rejects (deletes the candidate and its
/// `.new.diff`), `s` skips, `q` (or Esc, Ctrl-D, the end of input) quits with the rest skipped —
/// and at the end prints `review: N accepted, N rejected, N skipped` with the stages of each.
/// Returns 0, also when nothing is pending (said so). Throws Error(usage) in CI mode, when stdin
/// or stdout is not a terminal, for a config error or an unknown stage; Error(interrupted) on
/// SIGINT/SIGTERM after printing what was done. The terminal's mode is restored on every exit.
int run_review(const ReviewArgs& args);

}  // namespace coldgate::cli
