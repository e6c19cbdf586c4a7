#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace coldgate::measure {

/// One line a command stage wrote to $COLDGATE_METRICS.
struct CommandMetric {
  std::string name;   // [a-z][a-z0-9_]*, not one of coldgate's own metric names
  double value = 0;
  std::string unit;   // "bytes", "ms", "count", … ("" when not given)
  bool warm = false;  // "phase": "warm" — a warm repetition's sample; default a cold one
};

/// Parses $COLDGATE_METRICS: one JSON object per line, e.g.
/// `{"metric":"allocated_bytes","value":123,"unit":"bytes"}`, optional `"phase":"warm"`; blank
/// lines are skipped. Throws Error(gate_failed) with where = "<where> line N" for a line that is
/// not such an object (unknown member, missing or non-finite value, bad or reserved name, a
/// metric given twice for the cold run, a unit that changes between lines).
std::vector<CommandMetric> parse_metric_lines(std::string_view text, const std::string& where);

}  // namespace coldgate::measure
