#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/stack.hpp"

namespace coldgate::cli {

/// `coldgate stack REF0 REF1 … REFn` (docs/commands.md "coldgate stack").
struct StackArgs {
  std::vector<std::string> refs;        // REF0 (the base, usually main) … REFn, bottom-up
  std::string config = "coldgate.yaml";
  std::string out = "coldgate-out";     // outputs under <out>/stack/
  bool github = false;                  // --github: discover the stack from open pull requests
  bool gitlab = false;                  // --gitlab: likewise from open merge requests
  std::string token_env;                // --token-env (as coldgate comment)
  bool comment = false;                 // --comment: one comment per pull request
  int max_commits = 20;                 // --max-commits: REF0 … REFn at most this many
  bool no_cache = false;                // --no-cache: measure every commit again
  bool try_fixes = false;               // --try: each migration regression's fix measured on copies
  std::optional<bool> ci;               // --ci / --no-ci
};

/// Measures every commit of the stack once, interleaved on one server, gates pull request k
/// against commit k−1 as `ab` would, writes <out>/stack/<k>-<ref>/{results.json, report.md,
/// junit.xml} and <out>/stack/summary.md, comments on each pull request with --comment; exit 1
/// when any pull request fails its gate. Throws Error.
int run_stack(const StackArgs& args);

/// With --comment: on each pull request of `entries` (number > 0) its report.md from
/// <out>/stack/, under the usual marker (updated in place), followed by a line that links the
/// stack summary (`summary_url`, e.g. the CI run's artifact, or "" to name summary.md only)
/// and names its place in the stack ("2 of 4"). Token and forge as `coldgate comment`; a fork's
/// read-only token warns. Throws Error(infrastructure) when a comment cannot be posted.
void comment_stack(const StackArgs& args, const std::vector<report::StackEntry>& entries,
                   const std::string& summary_url);

}  // namespace coldgate::cli
