#include "report/table.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "gate/gate.hpp"

namespace coldgate::report {
namespace {

using namespace coldgate::measure;

// Keeps text from breaking out of a Markdown table cell.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string with_separators(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string summary(const std::vector<double>& samples, const std::string& unit) {
  if (samples.empty()) return "—";
  double med = median(samples);
  if (samples.size() == 1) return format_value(med, unit);
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  return fmt::format("{} ({} – {})", format_value(med, unit), format_value(*lo, unit),
                     format_value(*hi, unit));
}

// Metrics the table leaves to results.json: the JIT phases (jit_total_ms sums them), and every
// JIT row when JIT did not fire.
bool shown_in_table(const StageResult& s, const std::string& name) {
  if (name == "jit_generation_ms" || name == "jit_inlining_ms" || name == "jit_optimization_ms" ||
      name == "jit_emission_ms") {
    return false;
  }
  if (name == "jit_functions" || name == "jit_total_ms") return s.explain && s.explain->jit;
  return true;
}

}  // namespace

std::string format_value(double v, const std::string& unit) {
  if (unit == "ms") {
    if (std::fabs(v) >= 1000) return fmt::format("{:.2f} s", v / 1000);
    if (std::fabs(v) >= 10) return fmt::format("{:.1f} ms", v);
    return fmt::format("{:.2f} ms", v);
  }
  if (unit == "bytes") {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    double x = v;
    while (std::fabs(x) >= 1024 && i < 4) {
      x /= 1024;
      ++i;
    }
    return i == 0 ? fmt::format("{:.0f} B", x) : fmt::format("{:.1f} {}", x, units[i]);
  }
  std::string number = v == std::floor(v) && std::fabs(v) < 1e15
                           ? with_separators(static_cast<long long>(v))
                           : fmt::format("{:.2f}", v);
  if (unit.empty() || unit == "count") return number;
  return number + " " + unit;
}

std::string run_markdown(const Results& r) {
  std::string md = fmt::format("## {}\n\n**{}**\n\n", cell(r.title), gate::verdict(r));
  md += "| Stage | Metric | Cold median (min – max) | Warm median (min – max) |\n";
  md += "|---|---|---:|---:|\n";
  for (const auto& s : r.stages) {
    bool any = false;
    for (const auto& [name, m] : s.metrics) {
      if (!shown_in_table(s, name) || (m.cold.empty() && m.warm.empty())) continue;
      md += fmt::format("| {} | {} | {} | {} |\n", cell(s.name), cell(name), summary(m.cold, m.unit),
                        summary(m.warm, m.unit));
      any = true;
    }
    if (!any) md += fmt::format("| {} | — | failed | — |\n", cell(s.name));
  }

  bool has_snapshots = std::any_of(r.stages.begin(), r.stages.end(),
                                   [](const auto& s) { return s.snapshot.has_value(); });
  if (has_snapshots || !r.obsolete_snapshots.empty()) {
    md += "\n| Stage | Snapshot | Status |\n|---|---|---|\n";
    for (const auto& s : r.stages) {
      if (!s.snapshot) continue;
      md += fmt::format("| {} | `{}` | {} |\n", cell(s.name), cell(s.snapshot->path), s.snapshot->status);
    }
    for (const auto& path : r.obsolete_snapshots) {
      md += fmt::format("| — | `{}` | obsolete (no stage claims it) |\n", cell(path));
    }
  }
  for (const auto& s : r.stages) {
    if (s.failed()) {
      md += fmt::format("\n### {}: failed\n\n```\n{}\n```\n", cell(s.name), s.error);
    }
  }
  for (const auto& s : r.stages) {
    if (!s.snapshot || s.snapshot->status == "match") continue;
    if (s.snapshot->status == "updated") {
      md += fmt::format("\n### {}: snapshot updated\n\n{}\n", cell(s.name), s.snapshot->message);
      continue;
    }
    md += fmt::format("\n### {}: snapshot {}\n\n{}\n", cell(s.name), s.snapshot->status,
                      s.snapshot->message);
    if (!s.snapshot->diff.empty()) md += fmt::format("\n```diff\n{}```\n", s.snapshot->diff);
  }
  return md;
}

}  // namespace coldgate::report
