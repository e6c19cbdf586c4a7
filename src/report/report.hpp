#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "results/results.hpp"

namespace coldgate::report {

/// Longest report.md in bytes: GitHub refuses comment bodies over 65,536 characters (REST API,
/// "Create an issue comment"), and bytes ≥ characters, so a report of this size always posts.
inline constexpr std::size_t k_max_report_bytes = 65'000;

/// The Markdown report of one run (docs/architecture.md "The report").
struct Markdown {
  std::string report;  // at most max_bytes: stdout, $GITHUB_STEP_SUMMARY, the PR comment
  std::string full;    // everything; equals `report` unless `cut`
  bool cut = false;    // the full report was longer than max_bytes
  /// `report` for a terminal (stdout, a CI log): the same text with `& < > " [ ]` as plain
  /// characters, not entities (ReaderScope); cut only when `report` is.
  std::string terminal;
};

/// The key of the PR comment marker: results.title with every run of characters other than
/// [A-Za-z0-9._] replaced by one `-` (so it cannot end the HTML comment); "coldgate" if empty.
std::string marker_key(const std::string& title);

/// The Markdown report, read top-down in the order a reviewer needs it: the hidden marker
/// `<!-- coldgate:report:<key> -->` and title; a warning when nothing was compared
/// (results.no_baseline); the verdict (gate::verdict), with a note when the base came from the
/// cache or from the history store (how many recorded results, of which branch and store, the
/// range of commits); the table of what changed (changes_table), every unchanged stage folded
/// in one `<details>`; errors and snapshot diffs; diagnoses of the changed stages (all without
/// a gate); a Mermaid chart of the changed stages' cold wall time before and after; for a
/// history baseline the commits it used; whenever results.history has commits (a history
/// baseline, or `ab`'s recorded main points) the trend (per stage a Mermaid `xychart-beta` line
/// over the recorded medians and this run's, one text line per stage in `terminal`), both
/// folded; the other metrics per stage in `<details>`; a footer with the
/// commits, the CI run and the environment.
/// `base` may be null. All text from data is escaped (report/escape.hpp), for GitHub in
/// `report` and `full`, for a terminal in `terminal`. When the whole is
/// longer than `max_bytes`, `report` is a cut version that keeps the verdict, the regressions,
/// failures and changed snapshots first, drops the trend before anything else, and names
/// `full_name` for the rest.
Markdown markdown(const results::Results& results, const results::Results* base,
                  const std::string& full_name = "coldgate-out/report-full.md",
                  std::size_t max_bytes = k_max_report_bytes);

/// `text` (an already written report.md) cut to at most `max_bytes` bytes for a PR comment: at
/// a line boundary that is also a UTF-8 boundary, closing a code fence or `<details>` left open,
/// followed by the cut note of `markdown` naming `full_name`. Returns `text` unchanged when it
/// fits.
std::string cut_markdown(std::string_view text, std::size_t max_bytes,
                         const std::string& full_name);

/// `path` as the reader's checkout names it: the part after a throwaway `ab` worktree
/// (`coldgate-out/ab/head/`, `coldgate-out/ab/base/`); an absolute path as the first of
/// `anchors` (relative paths) it ends with, else from its last `coldgate-out/` on, else `…/` and
/// its file name. Other relative paths are returned as given.
std::string repo_path(std::string_view path, const std::vector<std::string>& anchors = {});

}  // namespace coldgate::report
