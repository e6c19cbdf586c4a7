#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "measure/results.hpp"

namespace coldgate::report {

/// Longest report.md in bytes: GitHub refuses comment bodies over 65,536 characters (REST API,
/// "Create an issue comment"), and bytes ≥ characters, so a report of this size always posts.
inline constexpr std::size_t k_max_report_bytes = 65'000;

/// The Markdown report of one run (shared/DESIGN.md "The report").
struct Markdown {
  std::string report;  // at most max_bytes: stdout, $GITHUB_STEP_SUMMARY, the PR comment
  std::string full;    // everything; equals `report` unless `cut`
  bool cut = false;    // the full report was longer than max_bytes
};

/// The key of the PR comment marker: results.title with every run of characters other than
/// [A-Za-z0-9._] replaced by one `-` (so it cannot end the HTML comment); "coldgate" if empty.
std::string marker_key(const std::string& title);

/// The Markdown report: the hidden marker `<!-- coldgate:report:<key> -->`, title, one-line
/// verdict (gate::verdict), the metrics table (see metrics_table; `base` may be null), failed
/// stages' errors, snapshot statuses with diffs in `<details>`, diagnoses, a Mermaid
/// `xychart-beta` bar chart of cold wall_ms medians per stage, and a footer with the commits
/// and the environment. All text from data is escaped (report/escape.hpp). When the whole is
/// longer than `max_bytes`, `report` is a cut version that keeps the verdict, the regressions,
/// failures and changed snapshots first and names `full_name` for the rest.
Markdown markdown(const measure::Results& results, const measure::Results* base,
                  const std::string& full_name = "coldgate-out/report-full.md",
                  std::size_t max_bytes = k_max_report_bytes);

/// `text` (an already written report.md) cut to at most `max_bytes` bytes for a PR comment: at
/// a line boundary that is also a UTF-8 boundary, closing a code fence or `<details>` left open,
/// followed by the cut note of `markdown` naming `full_name`. Returns `text` unchanged when it fits.
std::string cut_markdown(std::string_view text, std::size_t max_bytes,
                         const std::string& full_name);

}  // namespace coldgate::report
