#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/format.hpp"
#include "results/results.hpp"

namespace coldgate::report {


/// "median (min – max)" of `samples` in `unit`, the median alone for one sample or when min and
/// max read the same; `median` overrides the computed one (the gate's); "—" for no samples.
std::string format_samples(const std::vector<double>& samples, const std::string& unit,
                           std::optional<double> median = std::nullopt);

/// The Change cell of a verdict: "🔴 10.4× regression", "🟠 2.50× slower", "🟢 0.10× faster",
/// "🆕 new" ("🆕 new stage" for a `whole_stage`), "➖ removed", else the verdict's name.
std::string change_cell(const results::MetricVerdict& verdict, bool whole_stage);

/// `v` in `unit` as results::format_value gives it; "—" when unset.
std::string value_or_dash(std::optional<double> v, const std::string& unit);

/// Text for a `<summary>` element: html_text, and `[` `]` as character references so that
/// a renderer reading Markdown inside the summary line finds no link in it.
std::string summary_text(std::string_view text);

/// One Markdown row or block (ends with a newline) and how urgent it is: 0 what fails the gate
/// (regression, failed stage, snapshot not matching), 1 slower, 2 faster / new / removed /
/// updated or obsolete snapshot, 3 the rest. A cut report keeps the urgent ones.
struct TableRow {
  std::string text;
  int rank = 3;
};

/// A Markdown table: header lines, rows, and a legend line (may be empty); data escaped.
struct MetricsTable {
  std::string header;
  std::vector<TableRow> rows;
  std::string legend;
};

/// A run's stages and the gate's verdicts indexed by stage for one report (a run may have
/// thousands of stages: lookups, not scans), and which stages changed.
class Comparison {
 public:
  /// `base` (may be null) gives the baseline's cold runs for min – max; it must outlive this.
  Comparison(const results::Results& results, const results::Results* base);

  /// The head results.
  const results::Results& results() const { return m_results; }
  /// True when the results carry a gate (a baseline was compared).
  bool gated() const { return m_results.gate.has_value(); }
  /// The gate's verdicts for `stage` in gate order; empty without a gate.
  const std::vector<const results::MetricVerdict*>& verdicts(const std::string& stage) const;
  /// The verdict of `metric` in `stage`, or nullptr: the metric is not gated.
  const results::MetricVerdict* verdict(const std::string& stage, const std::string& metric) const;
  /// The baseline's stage called `name`, or nullptr.
  const results::StageResult* base_stage(const std::string& name) const;
  /// How `stage` was measured unlike its base (gate.measurement_differences); empty: alike.
  const std::vector<const results::MeasurementDifference*>& measurement_differences(
      const std::string& stage) const;
  /// True when the stage is in the table of changes: failed, a snapshot other than match, a
  /// verdict other than same, measured unlike its base, or new / removed.
  bool changed(const std::string& stage) const { return m_rank.count(stage) > 0; }
  /// The most urgent rank (TableRow::rank) of the stage's changes; 3 when unchanged.
  int rank(const std::string& stage) const;
  /// True when the table of changes has a row for `metric` of `stage`.
  bool listed(const std::string& stage, const std::string& metric) const;
  /// True when the stage is new or removed as a whole: one row stands for all its metrics.
  bool whole_stage(const std::string& stage) const { return m_stage_metric.count(stage) > 0; }
  /// The gate's statement verdicts for `stage` (gate.statements), regressions first.
  const std::vector<const results::StatementVerdict*>& statements(const std::string& stage) const;
  /// Stages only the baseline has, in gate order.
  const std::vector<std::string>& removed_stages() const { return m_removed; }

 private:
  void note(const std::string& stage, int rank);

  const results::Results& m_results;
  std::map<std::string, std::vector<const results::MetricVerdict*>> m_verdicts;
  std::map<std::string, std::vector<const results::StatementVerdict*>> m_statements;
  std::map<std::string, const results::StageResult*> m_base_stages;
  std::map<std::string, std::vector<const results::MeasurementDifference*>> m_differences;
  std::map<std::string, int> m_rank;                  // changed stages only
  std::map<std::string, std::string> m_stage_metric;  // new / removed stage → its one row's metric
  std::vector<std::string> m_removed;
};

/// What changed, most urgent first: regressions, slower, faster, failed stages, snapshots not
/// matching (and obsolete ones), then new / removed stages and metrics; `| Stage | Metric |
/// Before | After | Change | Why |` with before / after as median (min – max) of the cold runs
/// and Why the gate's reason, the snapshot's message or the error's first line. No header and
/// no rows when nothing changed.
MetricsTable changes_table(const Comparison& comparison);

/// A statement's text on one line (runs of white space as one space), at most about `max_bytes`:
/// when longer, a SELECT's select list reads "…" and an INSERT's column and value lists "(…)"
/// (statements on one table then differ where they differ: FROM, WHERE, ORDER BY), and what is
/// still too long is cut with " …" (statement_lines.cpp).
std::string statement_line(const std::string& query, std::size_t max_bytes);

/// statement_line of each of `queries`, told apart: texts that differ but would print alike
/// show their start shortened, then " … " and about 60 bytes from the word before where they
/// differ from the others ("SELECT … FROM "article" … WHERE "article"."slug" = $1 …"); those
/// that still read alike (a difference past the stored text's cut) end in " #1", " #2", ….
/// The same text twice is one statement and reads the same.
std::vector<std::string> distinct_statement_lines(const std::vector<std::string>& queries,
                                                  std::size_t max_bytes);

/// What a statement does to which tables, to tell a rewritten statement from another: its first
/// word upper-cased and the names after FROM, JOIN, UPDATE and INTO (quotes removed, sorted),
/// "SELECT article user"; "" when it names no table.
std::string statement_shape(const std::string& query);

/// Most changed statements a stage lists in "Statements that changed"; the rest are in
/// results.json (gate.statements).
inline constexpr std::size_t k_statements_per_stage = 20;

/// "Statements that changed": per stage with statements that are not `same`, whose calls per
/// run differ, whose plan changed, or that one side lacks (StatementVerdict::changed), one
/// block `**stage**` + `| Statement | Calls per run | Blocks per call | ms per call | Change |
/// Why |` (before → after; regressions first, at most k_statements_per_stage rows; a new
/// statement and a gone one of the same statement_shape as one "🔁 rewritten" row; texts told
/// apart by distinct_statement_lines; blocks per call the figure the gate judged, the plans'
/// execution where both sides have one), under a statement whose plan changed a row `| ↳ | | |
/// | 🔀 plan changed | base's nodes → head's |` (shown, not gated), and the queryids that differ
/// between the sides in a fold; rank 0 when a statement regressed, else 2. No rows without a
/// gate.
std::vector<TableRow> statements_blocks(const Comparison& comparison);

/// Without a gate: the time metrics (`_ms`) and peak_rss_bytes of every stage, `| Stage |
/// Metric | Cold median (min – max) | Warm median (min – max) |`, a failed stage as one row.
MetricsTable head_table(const results::Results& results);

/// With a gate: one row per unchanged stage, `| Stage | Gated metrics: median before → after |`;
/// no rows without a gate.
MetricsTable unchanged_table(const Comparison& comparison);

/// Per stage, a `<details>` block listing the metrics the tables above leave out: not gated
/// (no verdict), or `same` in a changed stage; without a gate all but the time metrics.
std::vector<TableRow> more_metrics(const Comparison& comparison);

}  // namespace coldgate::report
