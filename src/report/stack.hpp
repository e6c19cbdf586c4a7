#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace coldgate::report {

/// One pull request of a stack, as the stack summary shows it.
struct StackEntry {
  int index = 0;                 // k, 1-based: the k-th pull request from the bottom
  std::string ref;               // as given ("s1", "feature-2")
  long number = 0;               // its pull/merge request number when discovered, else 0
  std::string title;             // its title when discovered, else ""
  std::string url;               // its web address when discovered, else ""
  std::string report;            // its report, relative to summary.md: "1-s1/report.md"
  const results::Results* results = nullptr;  // commit k gated against commit k−1
};

/// `coldgate-out/stack/summary.md`: the whole stack as one table `| # | Pull request | Stage |
/// Before | After | Change | Snapshot |` (per pull request the stages that changed, the first
/// row of each pull request's regressions in bold, an unchanged pull request as one row), then
/// one line per regression naming the pull request that introduced it and the one that fixed it
/// (or "not fixed in this stack"), and per changed snapshot which pull request changed it and
/// which accepted it. Data strings escaped as in report.md. `title` is report.title.
std::string stack_summary(const std::vector<StackEntry>& entries, const std::string& title);

}  // namespace coldgate::report
