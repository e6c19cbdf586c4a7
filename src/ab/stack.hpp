#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "measure/progress.hpp"
#include "results/results.hpp"
#include "util/error.hpp"

namespace coldgate::ab {

/// How `coldgate stack` runs.
struct StackOptions {
  std::filesystem::path config = "coldgate.yaml";  // -c, in the current checkout
  std::vector<std::string> refs;                   // REF0 (the base) … REFn, bottom-up
  int max_commits = 20;                            // --max-commits: refs.size() at most
  bool use_cache = true;                           // --no-cache: measure every commit
  bool ci = false;  // CI mode: uncommitted changes of the checkout are an error
  bool try_fixes = false;  // --try: measure each migration regression's fix on copies
  std::filesystem::path out_dir = "coldgate-out";
  measure::ProgressStyle progress = measure::ProgressStyle::plain;
  /// Called once the refs and the checkout passed their checks, before anything is written
  /// (the caller clears the last stack's outputs there); may be empty.
  std::function<void()> ready;
};

/// One commit of the stack, as `coldgate stack` measured or found it.
struct StackCommit {
  std::string ref;     // as given ("main", "s1", "origin/feature-2")
  std::string commit;  // full SHA
  std::string folder;  // its outputs under <out>/stack/: "<k>-<ref>" with / as -, "0-main"
  bool cached = false;       // taken from <out>/cache/, not measured by this run
  std::string baseline;      // where its results are for the one above: cache file or results.json
  /// Its results; for k ≥ 1 gated against commit k−1 (results.gate), or `stopped` saying why not.
  results::Results results;
};

/// What `coldgate stack` measured.
struct StackOutcome {
  std::vector<StackCommit> commits;  // REF0 … REFn
  int measured = 0;                  // commits measured by this run (the others: cache)
  /// gate::compare's error (require_same_environment) of the first pull request that had one.
  std::optional<Error> gate_error;
  /// The error that stopped the run once the configs loaded (each pull request's results.stopped
  /// says it): printed and exited with once the outputs are written.
  std::optional<Error> stop_error;
};

/// `coldgate stack`: `coldgate ab` over N+1 commits. Checks the refs (each a commit, no two the
/// same, REFk descending from REFk−1, at most max_commits), checks each commit out as a worktree
/// under <out>/stack/worktrees/<k>, loads its config (REFn's text where a commit has none),
/// takes a commit found in <out>/cache/ by SHA and fingerprint (of the environment and REFn's
/// config) from there, builds the others once, starts one server, sets up each measured
/// commit's database (REFn: database.name, commit k: <name>_<k>), measures REFn's stages in
/// order, round-robin per cold run across the measured commits (commit 0 run 1, commit 1 run 1,
/// …), each commit with its own definition of the stage; checks the snapshots of commits 1…n
/// against their own committed files (candidates to <out>/stack/<folder>/snapshots/), caches
/// each fully measured commit, and gates commit k against commit k−1 with commit k's
/// thresholds. Worktrees and the server go on every exit path. Throws Error before the configs
/// loaded: usage (bad refs, no config in REFn, uncommitted changes in CI mode), interrupted.
/// After: the error comes back in stop_error (a setup of commit k ≥ 1 failing, or its build
/// while commit 0 builds — built then even when cached: gate_failed, naming "pull request k";
/// a build or setup of commit 0 failing, the server: infrastructure; interrupted).
StackOutcome run_stack(const StackOptions& options);

}  // namespace coldgate::ab
