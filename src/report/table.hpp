#pragma once

#include <string>
#include <vector>

#include "measure/results.hpp"

namespace coldgate::report {

/// A value with its unit for humans: ms as "812 ms" / "1.91 s", bytes as "12.3 MiB", counts
/// as integers with thousands separators ("1,404").
std::string format_value(double value, const std::string& unit);

/// A head/base ratio for humans: "10.4×", "2.31×", "0.41×", "123×".
std::string format_ratio(double ratio);

/// One Markdown table row (ends with a newline) and how urgent it is: 0 regression, 1 failed
/// stage or slower, 2 faster / new / removed, 3 the rest. A cut report keeps the urgent ones.
struct TableRow {
  std::string text;
  int rank = 3;
};

/// The metrics table of a report: header lines, one row per stage and shown metric, and a
/// legend line (may be empty), all Markdown with data escaped.
struct MetricsTable {
  std::string header;
  std::vector<TableRow> rows;
  std::string legend;
};

/// The metrics table for `results`. Without results.gate: `| Stage | Metric | Cold median
/// (min – max) | Warm median (min – max) |`. With it: `| Stage | Metric | Before | After |
/// Change |`, medians as the gate compared them (MetricVerdict), min – max of the cold runs
/// from `base` (may be null: the median alone) and the head, Change as ratio with 🔴 regression /
/// 🟠 slower / 🟢 faster (or new / removed), plus rows for stages only the baseline has.
/// JIT phases are folded into jit_total_ms; JIT rows are left out when JIT did not fire.
MetricsTable metrics_table(const measure::Results& results, const measure::Results* base);

}  // namespace coldgate::report
