#pragma once

#include <optional>
#include <string>

namespace coldgate::cli {

/// Arguments of `coldgate ab`.
struct AbArgs {
  std::string config = "coldgate.yaml";
  std::string base;  // --base REF ("" = GITHUB_BASE_REF / CI_MERGE_REQUEST_TARGET_BRANCH_NAME)
  std::string head = "HEAD";  // --head REF
  std::string out =
      "coldgate-out";              // --out: results.json, base/results.json, report.md, ab/, cache/
  bool allow_no_baseline = false;  // measure head alone when the base cannot be resolved
  bool no_cache = false;           // always measure the base, never read or write <out>/cache/
  bool try_fixes = false;          // --try: each migration regression's fix measured on copies
  bool record = false;             // measure head alone and store it in <out>/cache/
  std::string store;               // --store: the history store of the trend ("" = history.store)
  bool no_trend = false;           // --no-trend: leave the history store unread
  std::optional<bool> ci;  // progress style, and uncommitted changes are an error; snapshots are
                           // always checked as in CI
};

/// Interleaved A/B of two commits (ab::run_ab): writes <out>/results.json (head, with the gate
/// block against base and, when the history store has records of base's branch up to the base
/// commit, the trend in `history`), <out>/base/results.json and <out>/report.md, prints the
/// report; returns 0 when the gate passes, 1 when it fails (regression, snapshot, failed stage,
/// head's build or setup). A store that cannot be read is a warning, never a failure. Throws
/// Error as ab::run_ab, and Error(usage) at --store for a bad store spec.
int run_ab(const AbArgs& args);

}  // namespace coldgate::cli
