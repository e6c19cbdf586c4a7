#include "report/remedies.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "report/escape.hpp"
#include "results/format.hpp"

namespace coldgate::report {
using namespace coldgate::results;
namespace {

// A remedy is only named when it beats as is by more than run-to-run noise.
constexpr double k_clearly_faster = 1.1;

// The remedy's slowest cold run is faster than as is's fastest: the gate's own test that a
// difference is not noise.
bool apart(const Remedy& r, const Remedy& as_is) {
  const Metric* a = as_is.find("wall_ms");
  const Metric* b = r.find("wall_ms");
  if (!a || !b || a->cold.empty() || b->cold.empty()) return false;
  return *std::max_element(b->cold.begin(), b->cold.end()) <
         *std::min_element(a->cold.begin(), a->cold.end());
}

std::string cold_wall(const Remedy& r) {
  const Metric* m = r.find("wall_ms");
  const auto& samples = m ? m->cold : std::vector<double>{};
  if (samples.empty()) return "—";
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  std::string out = format_value(median(samples), "ms");
  if (samples.size() > 1) {
    out += fmt::format(" ({}–{})", format_value(*lo, "ms"), format_value(*hi, "ms"));
  }
  return out;
}

std::string vs(const Remedy& r, const Remedy& as_is) {
  auto a = as_is.median_of("wall_ms");
  auto b = r.median_of("wall_ms");
  if (&r == &as_is) return "—";
  if (!a || !b || *a <= 0 || *b <= 0) return "—";
  double ratio = *a / *b;
  if (ratio >= 1) return format_ratio(ratio) + " faster";
  return format_ratio(1 / ratio) + " slower";
}

std::string settings_yaml(const std::map<std::string, std::string>& settings) {
  std::string out;
  for (const auto& [k, v] : settings) out += fmt::format("{}{}: \"{}\"", out.empty() ? "" : ", ", k, v);
  return "{" + out + "}";
}

// How to apply a remedy, in the stage's terms.
std::string fix(const Remedy& r, StageKind kind) {
  if (r.second_execution) {
    return "prepare the statement once and execute it (the driver's prepared statements)";
  }
  if (r.remedy.rfind("CREATE INDEX", 0) == 0) {
    return fmt::format("add `{}` to the schema's migrations (CONCURRENTLY on a live table)",
                       r.remedy);
  }
  if (r.remedy.rfind("CREATE STATISTICS", 0) == 0) {
    return fmt::format("add `{}` to the schema's migrations, then ANALYZE the table", r.remedy);
  }
  if (r.remedy == "ANALYZE") {
    return "add `- analyze: true` to setup: (and ANALYZE those tables after loading them)";
  }
  const bool jit_off =
      r.settings.size() == 1 && r.settings.count("jit") && r.settings.at("jit") == "off";
  if (kind == StageKind::sql) {
    std::string out = fmt::format("add `settings: {}` to the stage", settings_yaml(r.settings));
    return jit_off ? out + " (or `SET LOCAL jit = off;` in front of the query)" : out;
  }
  // An application: the stage's settings only change how coldgate runs it; the fix goes into
  // the application.
  if (jit_off) {
    return "in the application, run `SET LOCAL jit = off;` right before the statement, in a "
           "transaction of its own (`settings: {jit: \"off\"}` on the stage measures it so)";
  }
  return fmt::format("set {} in the application's sessions (`settings: {}` on the stage "
                     "measures it so)",
                     settings_yaml(r.settings), settings_yaml(r.settings));
}

}  // namespace

std::string blocks_change(const Remedy& r, const Remedy& as_is) {
  if (&r == &as_is) return "";
  std::string out;
  for (const auto& [key, after] : r.statement_blocks_per_call) {
    auto before = as_is.statement_blocks_per_call.find(key);
    if (before == as_is.statement_blocks_per_call.end()) continue;
    out += fmt::format("{}{} → {}", out.empty() ? "" : ", ",
                       format_value(std::round(before->second), "count"),
                       format_value(std::round(after), "count"));
  }
  return out.empty() ? "" : "blocks per call " + out;
}

std::string recommendation(const std::vector<Remedy>& trial, StageKind kind) {
  if (trial.size() < 2) return "";
  const Remedy& as_is = trial.front();
  auto base = as_is.median_of("wall_ms");
  if (!base) return "No remedy is recommended: the stage as it is did not finish its runs.";
  const Remedy* best = nullptr;
  for (std::size_t i = 1; i < trial.size(); ++i) {
    const Remedy& r = trial[i];
    if (!r.error.empty() || (r.snapshot_identical && !*r.snapshot_identical)) continue;
    auto w = r.median_of("wall_ms");
    if (!w || *w * k_clearly_faster >= *base || !apart(r, as_is)) continue;
    if (!best || *w < *best->median_of("wall_ms")) best = &r;
  }
  if (!best) {
    return "No remedy was more than 10% faster than as is, with every run apart from as is's "
           "and an identical snapshot.";
  }
  double w = *best->median_of("wall_ms");
  std::string blocks = blocks_change(*best, as_is);
  return fmt::format("`{}`: {} → {} ({} faster){}, {} — {}", best->remedy,
                     format_value(*base, "ms"), format_value(w, "ms"), format_ratio(*base / w),
                     blocks.empty() ? "" : ", " + blocks,
                     best->snapshot_identical ? "snapshot identical"
                                              : "no snapshot to prove it loads the same data",
                     fix(*best, kind));
}

std::string remedies_table(const std::vector<Remedy>& trial, StageKind kind) {
  if (trial.empty()) return "";
  std::string out = "| Remedy | Cold wall | JIT | vs as is | Snapshot |\n|---|--:|--:|--:|---|\n";
  for (const auto& r : trial) {
    auto jit = r.median_of("db_jit_ms");
    std::string snapshot = !r.error.empty()            ? "failed: " + r.error.substr(0, r.error.find('\n'))
                           : !r.snapshot_identical     ? "—"
                           : *r.snapshot_identical     ? "identical"
                                                       : "differs at " + r.first_difference;
    if (&r == &trial.front() && r.error.empty()) snapshot = "reference";
    std::string blocks = blocks_change(r, trial.front());
    out += fmt::format("| {}{} | {} | {} | {} | {} |\n", md_text(r.remedy),
                       blocks.empty() ? "" : " · " + md_text(blocks), cold_wall(r),
                       jit && *jit > 0 ? format_value(*jit, "ms") : "—", vs(r, trial.front()),
                       md_text(snapshot));
  }
  out += "\n";
  for (const auto& r : trial) {
    if (!r.note.empty()) out += fmt::format("- {}: {}\n", md_text(r.remedy), md_text(r.note));
  }
  std::string line = recommendation(trial, kind);
  if (!line.empty()) out += "\n" + md_with_code(line) + "\n";
  return out;
}

}  // namespace coldgate::report
