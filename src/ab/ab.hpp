#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "ab/git.hpp"
#include "measure/progress.hpp"
#include "results/results.hpp"
#include "util/error.hpp"

namespace coldgate::ab {

/// How `coldgate ab` runs.
struct Options {
  std::filesystem::path config = "coldgate.yaml";  // -c, in the current checkout
  BaseRequest refs;                                // --base, --head
  /// A base that cannot be had (not fetched, no merge-base) still gets head measured and a
  /// report that says nothing was compared; this makes that outcome pass instead of exit 3.
  bool allow_no_baseline = false;
  bool use_cache = true;           // --no-cache: always measure the base
  bool record = false;             // --record: measure head alone and store it in the cache
  bool ci = false;                 // CI mode: uncommitted changes of the checkout are an error
  bool try_fixes = false;          // --try: measure each migration regression's fix on copies
  std::filesystem::path out_dir = "coldgate-out";
  measure::ProgressStyle progress = measure::ProgressStyle::plain;
};

/// What `coldgate ab` measured.
struct Outcome {
  results::Results head;                 // head's results, with the gate block when there is a base
  std::optional<results::Results> base;  // base's results (measured or cached); nullopt: none
  std::string baseline;  // where base's results are: <out>/base/results.json or a cache file
  std::string note;      // one line, printed as progress: cache hit, no baseline and why
  /// gate::compare's error (require_same_environment), or the missing base without
  /// allow_no_baseline (exit 3): thrown once the outputs are written.
  std::optional<Error> gate_error;
  /// The error that stopped the run after head's config loaded (head.stopped says it, base is
  /// nullopt): printed and exited with once the outputs are written.
  std::optional<Error> stop_error;
};

/// `coldgate ab`: resolves both commits (resolve_commits), checks each out as a git worktree
/// under <out>/ab/, runs its `build:` commands, starts one server, sets up the database of each
/// side (head: database.name, base: <name>_base) from that side's own setup steps, then measures
/// every stage of head's config interleaved — base cold run 1, head cold run 1, base run 2, … —
/// checks head's snapshots (never base's), gates head against base and caches each side's
/// results by commit and fingerprint() in <out>/cache/. A cached base is not measured again.
/// Worktrees are removed on every exit path. A named base that cannot be resolved leaves head
/// measured alone with results.no_baseline saying why (and gate_error exit 3 unless
/// allow_no_baseline). A base whose setup loads from another database (psql's `database:`)
/// is set up first, as head's would be, and its database renamed to <name>_base. Throws Error
/// before head's config loaded: usage (no config in head, bad refs, base and head one commit,
/// uncommitted changes in CI mode), infrastructure (no base named at all without
/// allow_no_baseline), interrupted. After it loaded, an error comes back in `stop_error` with
/// head.stopped saying why: usage (config::check_setup), infrastructure (base's build or setup
/// failed, server; when head's build fails, base is built too, and both failing is
/// infrastructure: judged_build_failure), gate_failed (head's build fails while base builds,
/// head's setup failed), interrupted.
Outcome run_ab(const Options& options);

}  // namespace coldgate::ab
