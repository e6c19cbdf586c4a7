#pragma once

// The parts of report.md, each built by a file of its own (report.cpp assembles and cuts them):
// verdict.cpp the title and verdict, changes.cpp the tables of changes, statements and errors,
// snapshot_diffs.cpp the diffs, diagnoses.cpp, growth.cpp, database.cpp (with the remedies),
// chart.cpp, trend.cpp (with a history baseline's commits), footer.cpp. Internal to the module.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "report/escape.hpp"
#include "report/table.hpp"
#include "results/results.hpp"

namespace coldgate::report {

/// A whole row or block of a section; a cut report drops or shortens items, never splits them
/// mid-Markdown. `body` (when not empty) is a fenced code block between `text` and `after` that
/// may be shortened at a line boundary.
struct Item {
  std::string text;
  int rank = 3;  // 0 most urgent … 3 least; a cut report shows urgent items first
  std::string body;
  std::string info;
  std::string after;

  /// The item as Markdown: `text`, `body` fenced with `info`, `after`.
  std::string whole() const { return body.empty() ? text : text + md_fence(body, info) + after; }
};

/// A part of the report: a heading (or table header), items, and what closes it.
struct Section {
  std::string head;
  std::vector<Item> items;
  std::string tail;
  std::string what_one;   // "table row", … for the note when items are left out
  std::string what_many;  // "table rows", …
};

/// Cap in bytes for the parts that have no items: a verdict naming thousands of stages.
inline constexpr std::size_t k_max_line_bytes = 4'000;

/// `text` cut to a UTF-8 prefix of at most `max` bytes followed by " …" when longer.
std::string capped(std::string text, std::size_t max);
/// `text` as valid UTF-8 on one line: a file name may hold a newline.
std::string one_line(std::string_view text);
/// The first 7 characters of a commit's SHA.
std::string short_sha(const std::string& sha);
/// "1 stage", "1,234 stages": `n` formatted as a count with its noun.
std::string plural(std::size_t n, std::string_view one, std::string_view many);

/// "`a1b2c3d` … `e4f5a6b`": the oldest and the newest commit a history baseline used.
std::string history_range(const results::HistoryTrend& h);
/// The marker, the title, the verdict line and the notes and warnings under it (verdict.cpp).
std::string top(const results::Results& r);

/// A MetricsTable as a section; `what_one`/`what_many` name its rows in a cut note.
Section table_section(MetricsTable t, std::string what_one, std::string what_many);
/// Every unchanged stage in one closed `<details>`.
Section unchanged_section(const Comparison& c);
/// The per-stage `<details>` of more_metrics in one closed `<details>`.
Section more_metrics_section(const Comparison& c);
/// A stopped run's cause and each failed stage's whole error, open and verbatim.
Section errors_section(const results::Results& r);
/// "Statements that changed": statements_blocks under a heading and the legend.
Section statements_section(const Comparison& c);
/// Each snapshot diff not `match`, once, closed (snapshot_diffs.cpp).
Section diffs_section(const results::Results& r);
/// The diagnoses: new and worse first, then fixed, those base had too folded (diagnoses.cpp).
Section diagnoses_section(const Comparison& c);
/// Per stage measured at several data scales, its counts and growing statements (growth.cpp).
Section growth_section(const results::Results& r);
/// Each stage's remedy trial (`--try`): its table and the recommendation (database.cpp).
Section remedies_section(const results::Results& r);
/// The server side of each profiled stage, one fold per stage (database.cpp).
Section database_section(const results::Results& r);
/// `text` as a quoted Mermaid string of at most about `max_bytes` (chart.cpp).
std::string mermaid_string(std::string_view text, std::size_t max_bytes = 40);
/// The chart of the changed stages' cold wall time, or of every stage without a gate.
Section chart_section(const Comparison& c);
/// The commits a history baseline used, oldest first (trend.cpp).
Section history_section(const results::Results& r);
/// The recorded results' trend per stage, for `reader` (trend.cpp).
Section trend_section(const Comparison& c, Reader reader);
/// The footer: commits, CI run, environment, version, uncommitted changes (footer.cpp).
std::string footer(const results::Results& r);

}  // namespace coldgate::report
