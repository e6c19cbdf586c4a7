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
  bool record = false;             // measure head alone and store it in <out>/cache/
  std::optional<bool> ci;  // progress style, and uncommitted changes are an error; snapshots are
                           // always checked as in CI
};

/// Interleaved A/B of two commits (ab::run_ab): writes <out>/results.json (head, with the gate
/// block against base), <out>/base/results.json and <out>/report.md, prints the report; returns
/// 0 when the gate passes, 1 when it fails (regression, snapshot, failed stage, head's build or
/// setup). Throws Error as ab::run_ab.
int run_ab(const AbArgs& args);

}  // namespace coldgate::cli
