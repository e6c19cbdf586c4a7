#include "report/table.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report/escape.hpp"

namespace coldgate::report {
namespace {

using namespace coldgate::measure;

std::string with_separators(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

// "median (min – max)" of `samples`; `median_override` is the median the gate compared.
std::string summary(const std::vector<double>& samples, const std::string& unit,
                    std::optional<double> median_override = std::nullopt) {
  if (samples.empty()) return median_override ? format_value(*median_override, unit) : "—";
  double med = median_override ? *median_override : median(samples);
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

// The gate's verdicts by stage, in their order: a run may have thousands of stages.
std::map<std::string, std::vector<const MetricVerdict*>> by_stage(const GateResult& g) {
  std::map<std::string, std::vector<const MetricVerdict*>> out;
  for (const auto& v : g.metrics) out[v.stage].push_back(&v);
  return out;
}

const MetricVerdict* find_verdict(const std::vector<const MetricVerdict*>& verdicts,
                                  const std::string& metric) {
  for (const MetricVerdict* v : verdicts) {
    if (v->metric == metric) return v;
  }
  return nullptr;
}

int rank_of(const std::string& verdict) {
  if (verdict == "regression") return 0;
  if (verdict == "slower") return 1;
  if (verdict == "faster" || verdict == "new" || verdict == "removed") return 2;
  return 3;
}

std::string change_cell(const MetricVerdict* v, std::optional<double> base_med,
                        std::optional<double> head_med) {
  if (!v) {
    // Not gated: the ratio for information, without a verdict.
    if (base_med && head_med && *base_med > 0) return format_ratio(*head_med / *base_med);
    return "—";
  }
  std::string ratio = v->ratio ? format_ratio(*v->ratio) + " " : "";
  if (v->verdict == "regression") return "🔴 " + ratio + "regression";
  if (v->verdict == "slower") return "🟠 " + ratio + "slower";
  if (v->verdict == "faster") return "🟢 " + ratio + "faster";
  if (v->verdict == "same") return v->ratio ? format_ratio(*v->ratio) : "same";
  return ratio + md_text(v->verdict);
}

void no_baseline_rows(const Results& r, MetricsTable& t) {
  t.header =
      "| Stage | Metric | Cold median (min – max) | Warm median (min – max) |\n"
      "|---|---|---:|---:|\n";
  for (const auto& s : r.stages) {
    bool any = false;
    for (const auto& [name, m] : s.metrics) {
      if (!shown_in_table(s, name) || (m.cold.empty() && m.warm.empty())) continue;
      t.rows.push_back(
          {fmt::format("| {} | {} | {} | {} |\n", md_text(s.name), md_text(name),
                       md_text(summary(m.cold, m.unit)), md_text(summary(m.warm, m.unit))),
           3});
      any = true;
    }
    if (!any) t.rows.push_back({fmt::format("| {} | — | failed | — |\n", md_text(s.name)), 1});
  }
}

void baseline_rows(const Results& r, const Results* base, MetricsTable& t) {
  const GateResult& g = *r.gate;
  t.header = "| Stage | Metric | Before | After | Change |\n|---|---|---:|---:|---|\n";
  t.legend =
      "Before / after: median of the cold runs (min – max). Change: after ÷ before; "
      "🔴 regression, 🟠 slower, 🟢 faster by the gate's thresholds; a bare ratio is "
      "within them or not gated.\n";
  auto row = [&](const std::string& stage, const std::string& name, const Metric* head_m,
                 const Metric* base_m, const MetricVerdict* v) {
    std::string unit = head_m ? head_m->unit : base_m ? base_m->unit : v ? v->unit : "";
    std::optional<double> base_med = v ? v->base_median : std::nullopt;
    std::optional<double> head_med = v ? v->head_median : std::nullopt;
    if (!v && base_m && !base_m->cold.empty()) base_med = median(base_m->cold);
    if (!v && head_m && !head_m->cold.empty()) head_med = median(head_m->cold);
    std::string before = base_m     ? summary(base_m->cold, unit, base_med)
                         : base_med ? format_value(*base_med, unit)
                                    : "—";
    std::string after = head_m     ? summary(head_m->cold, unit, head_med)
                        : head_med ? format_value(*head_med, unit)
                                   : "—";
    t.rows.push_back(
        {fmt::format("| {} | {} | {} | {} | {} |\n", md_text(stage), md_text(name), md_text(before),
                     md_text(after), change_cell(v, base_med, head_med)),
         v ? rank_of(v->verdict) : 3});
  };
  auto verdicts = by_stage(g);
  std::map<std::string, const StageResult*> base_stages;
  if (base) {
    for (const auto& s : base->stages) base_stages.emplace(s.name, &s);
  }
  auto base_stage = [&](const std::string& name) -> const StageResult* {
    auto it = base_stages.find(name);
    return it == base_stages.end() ? nullptr : it->second;
  };
  for (const auto& s : r.stages) {
    const StageResult* bs = base_stage(s.name);
    const auto& stage_verdicts = verdicts[s.name];
    bool any = false;
    for (const auto& [name, m] : s.metrics) {
      if (!shown_in_table(s, name) || (m.cold.empty() && m.warm.empty())) continue;
      row(s.name, name, &m, bs ? bs->find(name) : nullptr, find_verdict(stage_verdicts, name));
      any = true;
    }
    // Gated metrics the head lacks (removed from a stage that still exists).
    for (const MetricVerdict* v : stage_verdicts) {
      if (!s.find(v->metric)) {
        row(s.name, v->metric, nullptr, bs ? bs->find(v->metric) : nullptr, v);
        any = true;
      }
    }
    if (s.failed()) {
      t.rows.push_back({fmt::format("| {} | — | — | failed | ❌ failed |\n", md_text(s.name)), 1});
    } else if (!any) {
      t.rows.push_back({fmt::format("| {} | — | — | — | — |\n", md_text(s.name)), 3});
    }
  }
  // Stages only the baseline has.
  std::set<std::string> head_stages;
  for (const auto& s : r.stages) head_stages.insert(s.name);
  for (const auto& name : g.stages_removed) {
    if (head_stages.count(name)) continue;
    bool any = false;
    const StageResult* bs = base_stage(name);
    for (const MetricVerdict* v : verdicts[name]) {
      row(name, v->metric, nullptr, bs ? bs->find(v->metric) : nullptr, v);
      any = true;
    }
    if (!any) t.rows.push_back({fmt::format("| {} | — | — | — | removed |\n", md_text(name)), 2});
  }
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

std::string format_ratio(double ratio) {
  if (ratio >= 100) return fmt::format("{:.0f}×", ratio);
  if (ratio >= 10) return fmt::format("{:.1f}×", ratio);
  return fmt::format("{:.2f}×", ratio);
}

MetricsTable metrics_table(const Results& r, const Results* base) {
  MetricsTable t;
  if (r.gate) {
    baseline_rows(r, base, t);
  } else {
    no_baseline_rows(r, t);
  }
  return t;
}

}  // namespace coldgate::report
