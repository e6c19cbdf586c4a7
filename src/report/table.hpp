#pragma once

#include <string>

#include "measure/results.hpp"

namespace coldgate::report {

/// A value with its unit for humans: ms as "812 ms" / "1.91 s", bytes as "12.3 MiB", counts
/// as integers with thousands separators ("1,404").
std::string format_value(double value, const std::string& unit);

/// The Markdown results of one run without a baseline: a one-line verdict, then
/// `| Stage | Metric | Cold median (min–max) | Warm median (min–max) |` with every metric that has
/// samples (JIT phases folded into jit_total_ms; JIT rows left out when JIT did not fire), the
/// snapshot list with diffs of snapshots that are not a match, and failed stages' errors.
std::string run_markdown(const measure::Results& results);

}  // namespace coldgate::report
