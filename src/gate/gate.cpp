#include "gate/gate.hpp"
#include "gate/improvements.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "results/format.hpp"
#include "util/error.hpp"

namespace coldgate::gate {
namespace {

using namespace coldgate::results;

std::size_t count_status(const Results& r, SnapshotStatus status) {
  return static_cast<std::size_t>(
      std::count_if(r.stages.begin(), r.stages.end(),
                    [&](const auto& s) { return s.snapshot && s.snapshot->status == status; }));
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The kind of quantity a metric holds, for its absolute floor: by name first (`_ms`, `_bytes`),
// then by unit; counts and a command's own units have no floor.
enum class Quantity { time_ms, size_bytes, other };

Quantity quantity(const std::string& name, const std::string& unit) {
  if (ends_with(name, "_ms") || unit == "ms") return Quantity::time_ms;
  if (ends_with(name, "_bytes") || unit == "bytes") return Quantity::size_bytes;
  return Quantity::other;
}


// A statement's text for a one-line verdict: its first 60 characters.
std::string short_statement(const std::string& q) {
  if (q.size() <= 60) return q;
  std::size_t cut = q.find_last_of(' ', 57);
  return q.substr(0, cut == std::string::npos || cut == 0 ? 57 : cut) + " …";
}

// What regressed in a statement, shortest: "calls 1 → 40", "blocks per call 4 → 1,937".
std::string statement_change(const StatementVerdict& s) {
  auto c = [](double v) { return format_value(std::round(v), "count"); };
  if (!s.base) return fmt::format("new, {} calls per run", c(s.head->calls));
  // Only what grew: a regression is more calls or more blocks, and a figure that fell beside
  // it is not the reason.
  std::string out;
  if (s.head->calls > s.base->calls)
    out = fmt::format("calls {} → {}", c(s.base->calls), c(s.head->calls));
  // The figures the gate judged (the plans' execution when both sides have one), as the report's
  // cells show them.
  if (auto blocks = judged_blocks(s); blocks && std::round(blocks->base) < std::round(blocks->head)) {
    out += fmt::format("{}blocks per call {} → {}", out.empty() ? "" : ", ", c(blocks->base),
                       c(blocks->head));
  }
  return out;
}

std::string plural(std::size_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// A reason's amount in the report's own format (results/format): "812.0 ms", "12.0 MiB", "3".
std::string amount(double v, Quantity q) {
  return format_value(v, q == Quantity::time_ms      ? "ms"
                         : q == Quantity::size_bytes ? "bytes"
                                                     : "count");
}

// db_queries, a count that does not depend on the machine's speed: a regression at
// max_query_ratio × base's median and min_query_delta statements more (a new N+1), fewer past
// the same ratio and delta is "faster"; no range test (counts repeat exactly run to run).
MetricVerdict judge_count(MetricVerdict v, const config::Gate& g) {
  const double b = *v.base_median;
  const double h = *v.head_median;
  const double delta = h - b;
  const double need = static_cast<double>(g.min_query_delta);
  if (b > 0) v.ratio = h / b;
  const std::string ratio_text = b > 0 ? format_ratio(h / b) : fmt::format("from 0 to {:g}", h);
  if (delta >= need && (b <= 0 || h / b >= g.max_query_ratio)) {
    v.verdict = Verdict::regression;
    v.reason = fmt::format("{} ≥ max_query_ratio {:g}, +{:g} statements ≥ min_query_delta {}",
                           ratio_text, g.max_query_ratio, delta, g.min_query_delta);
  } else if (-delta >= need && h * g.max_query_ratio <= b) {
    v.verdict = Verdict::faster;
    v.reason = fmt::format("{} ≤ 1/max_query_ratio, {:g} statements fewer", ratio_text, -delta);
  } else if (delta == 0) {
    v.reason = fmt::format("{:g} statements on both sides", h);
  } else if (std::fabs(delta) < need) {
    v.reason = fmt::format("{:+g} statements: under min_query_delta {}", delta, g.min_query_delta);
  } else {
    v.reason = fmt::format("{:+g} statements, {}: under max_query_ratio {:g}", delta, ratio_text,
                           g.max_query_ratio);
  }
  return v;
}

// One verdict from the two sides' samples (both non-empty).
MetricVerdict judge(const std::string& stage, const std::string& name, const Metric& head,
                    const Metric& base, const config::Gate& g) {
  const auto& hs = head.gated();
  const auto& bs = base.gated();
  MetricVerdict v{stage, name, head.unit, Verdict::same, median(bs), median(hs), std::nullopt, ""};
  if (name == "db_queries") return judge_count(std::move(v), g);
  const double b = *v.base_median;
  const double h = *v.head_median;
  const Quantity q = quantity(name, head.unit);
  const double floor = q == Quantity::time_ms      ? static_cast<double>(g.min_delta.count())
                       : q == Quantity::size_bytes ? static_cast<double>(g.min_delta_bytes)
                                                   : 0.0;
  // A zero base median has no ratio: any positive head is "infinitely" slower, and only the
  // absolute floor and the ranges keep noise from becoming a regression.
  double ratio = 1;
  if (b > 0) {
    ratio = h / b;
    v.ratio = ratio;
  } else if (h > 0) {
    ratio = std::numeric_limits<double>::infinity();
  }
  const double delta = h - b;
  const double head_min = *std::min_element(hs.begin(), hs.end());
  const double base_max = *std::max_element(bs.begin(), bs.end());
  const std::string ratio_text =
      b > 0 ? format_ratio(ratio) : fmt::format("from 0 to {}", amount(h, q));

  // Below the absolute floor a difference is noise whatever its ratio: a 0.16 → 0.40 ms
  // execution is 2.5× but says nothing, and must get neither a badge nor an annotation.
  if (std::fabs(delta) < floor) {
    if (b <= 0 && h <= 0) {
      v.reason = "0 on both sides";
    } else if (b > 0 && ratio < g.warn_ratio && ratio > 1 / g.warn_ratio) {
      v.reason = fmt::format("{} within warn_ratio {:g}", format_ratio(ratio), g.warn_ratio);
    } else {
      v.reason = fmt::format("{}, but the difference of {} is under min_delta {}", ratio_text,
                             amount(std::fabs(delta), q), amount(floor, q));
    }
    return v;
  }
  if (ratio >= g.max_ratio) {
    if (head_min > base_max) {
      v.verdict = Verdict::regression;
      v.reason = fmt::format("{} ≥ max_ratio {:g}, +{} ≥ min_delta {}, ranges apart", ratio_text,
                             g.max_ratio, amount(delta, q), amount(floor, q));
      return v;
    }
    // Past the floor (checked above) but the two sides' runs overlap: not proven, only slower.
    v.verdict = Verdict::slower;
    v.reason = fmt::format("{} but the ranges overlap (fastest head run {} ≤ slowest base run {})",
                           ratio_text, amount(head_min, q), amount(base_max, q));
    return v;
  }
  if (ratio >= g.warn_ratio) {
    v.verdict = Verdict::slower;
    v.reason = fmt::format("{} ≥ warn_ratio {:g}", ratio_text, g.warn_ratio);
  } else if (ratio <= 1 / g.warn_ratio) {
    v.verdict = Verdict::faster;
    v.reason = fmt::format("{} ≤ 1/warn_ratio", format_ratio(ratio));
  } else {
    v.reason = b > 0 ? fmt::format("{} within warn_ratio {:g}", format_ratio(ratio), g.warn_ratio)
                     : "0 on both sides";
  }
  return v;
}

MetricVerdict one_sided(const std::string& stage, const std::string& name, const Metric& m,
                        bool in_head, std::string reason) {
  MetricVerdict v{
      stage,        name,         m.unit,       in_head ? Verdict::added : Verdict::removed,
      std::nullopt, std::nullopt, std::nullopt, std::move(reason)};
  (in_head ? v.head_median : v.base_median) = median(m.gated());
  return v;
}

bool has_samples(const Metric* m) {
  return m && !(m->cold.empty() && m->warm.empty());
}

const StageResult* find_stage(const Results& r, const std::string& name) {
  for (const auto& s : r.stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// Gated metric names of a stage pair: head's in its order, then those only the baseline has.
std::vector<std::string> gated_names(const StageResult* head, const StageResult* base,
                                     const config::Gate& g) {
  std::vector<std::string> names;
  for (const StageResult* s : {head, base}) {
    if (!s) continue;
    for (const auto& [name, m] : s->metrics) {
      if (is_gated(g, name) && std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(name);
      }
    }
  }
  return names;
}

int major_version(const Environment& e) {
  // version_num: 150008 → 15; before PostgreSQL 10, 90624 → 9.6 (kept as 906).
  if (e.postgres_version_num >= 100000) return e.postgres_version_num / 10000;
  return e.postgres_version_num / 100;
}

GateThresholds recorded(const config::Gate& g) {
  GateThresholds t;
  t.max_ratio = g.max_ratio;
  t.warn_ratio = g.warn_ratio;
  t.min_delta_ms = static_cast<double>(g.min_delta.count());
  t.min_delta_bytes = static_cast<double>(g.min_delta_bytes);
  t.max_query_ratio = g.max_query_ratio;
  t.min_query_delta = g.min_query_delta;
  t.max_blocks_ratio = g.max_blocks_ratio;
  t.min_blocks_delta = g.min_blocks_delta;
  t.statements = g.statements;
  t.max_extra_runs = g.max_extra_runs;
  t.growth = g.growth == config::GrowthGate::fail ? "fail" : g.growth == config::GrowthGate::warn ? "warn" : "off";
  t.metrics = g.metrics;
  t.require_same_environment = g.require_same_environment;
  return t;
}

// How the two sides of one stage were measured differently: cold mode, runs, warm, kind, and
// each setting that differs (a setting is reported but is usually the change under test).
void measured_differently(const StageResult& head, const StageResult& base,
                          std::vector<MeasurementDifference>& out) {
  auto differ = [&](const char* field, const std::string& b, const std::string& h) {
    if (b != h) out.push_back({head.name, field, b, h});
  };
  differ("kind", std::string(to_string(base.kind)), std::string(to_string(head.kind)));
  differ("cold", std::string(to_string(base.cold_mode)), std::string(to_string(head.cold_mode)));
  differ("runs", std::to_string(base.runs), std::to_string(head.runs));
  differ("warm", std::to_string(base.warm), std::to_string(head.warm));
  // Only when both say: results of earlier versions and history records do not.
  if (!base.isolation.empty() && !head.isolation.empty()) {
    differ("isolation", base.isolation, head.isolation);
  }
  std::set<std::string> names;
  for (const auto& [k, v] : base.settings) names.insert(k);
  for (const auto& [k, v] : head.settings) names.insert(k);
  for (const auto& name : names) {
    auto b = base.settings.find(name);
    auto h = head.settings.find(name);
    std::string bv = b == base.settings.end() ? "" : b->second;
    std::string hv = h == head.settings.end() ? "" : h->second;
    if (bv != hv) out.push_back({head.name, "settings." + name, bv, hv});
  }
}

// A measurement that makes timings incomparable (not a setting: that is what a change tunes).
bool is_method(const MeasurementDifference& d) {
  return d.field.rfind("settings.", 0) != 0;
}

}  // namespace

const config::Gate& Thresholds::for_stage(const std::string& stage) const {
  auto it = stages.find(stage);
  return it == stages.end() ? defaults : it->second;
}

Thresholds Thresholds::from(const config::Config& config) {
  Thresholds t;
  t.defaults = config.gate;
  for (const auto& s : config.stages) t.stages[s.name] = s.gate;
  return t;
}

bool is_gated(const config::Gate& gate, const std::string& metric) {
  if (!gate.metrics.empty()) {
    return std::find(gate.metrics.begin(), gate.metrics.end(), metric) != gate.metrics.end();
  }
  return ends_with(metric, "_ms") || metric == "peak_rss_bytes" || metric == "db_queries";
}

void check_samples(const Results& r, const std::string& source) {
  for (const auto& s : r.stages) {
    for (const auto& [name, m] : s.metrics) {
      const bool non_negative = quantity(name, m.unit) != Quantity::other;
      for (const auto* samples : {&m.cold, &m.warm}) {
        for (std::size_t i = 0; i < samples->size(); ++i) {
          double x = (*samples)[i];
          if (std::isfinite(x) && (x >= 0 || !non_negative)) continue;
          throw usage_error(
              source, fmt::format("stage '{}', metric {}: {} sample {} is {} ({})", s.name, name,
                                  samples == &m.cold ? "cold" : "warm", i + 1, x,
                                  std::isfinite(x) ? "a time or size cannot be negative"
                                                   : "not a finite number"));
        }
      }
    }
  }
}

std::vector<std::string> environment_differences(const Environment& base, const Environment& head,
                                                 std::size_t* significant) {
  std::vector<std::string> out;
  auto differ = [&](std::string_view field, const std::string& b, const std::string& h,
                    std::string_view suffix = "") {
    if (b != h) {
      out.push_back(fmt::format("{}: {} → {}{}", field, b.empty() ? "(unknown)" : b,
                                h.empty() ? "(unknown)" : h, suffix));
    }
  };
  differ("postgres major version", std::to_string(major_version(base)),
         std::to_string(major_version(head)));
  differ("provider", base.provider, head.provider);
  differ("cpu_model", base.cpu_model, head.cpu_model);
  if (significant) *significant = out.size();
  differ("cpus", std::to_string(base.cpus), std::to_string(head.cpus), " (info)");
  differ("kernel", base.kernel, head.kernel, " (info)");
  if (major_version(base) == major_version(head)) {
    differ("postgres version", base.postgres_version, head.postgres_version, " (info)");
  }
  return out;
}

GateResult compare(const Results& head, const Results& base, const std::string& baseline_name,
                   const Thresholds& thresholds) {
  check_samples(base, baseline_name);
  check_samples(head, "head results");

  GateResult g;
  g.baseline = baseline_name;
  g.base_git = base.git;
  g.base_measured_at = base.finished_at;
  g.base_host = base.environment.host;
  g.thresholds = recorded(thresholds.defaults);
  for (const auto& [stage, gate] : thresholds.stages) {
    if (GateThresholds t = recorded(gate); !(t == g.thresholds)) g.stage_thresholds[stage] = t;
  }
  std::set<std::string> names_seen;
  auto add_stage = [&](const StageResult* h, const StageResult* b) {
    const std::string& name = h ? h->name : b->name;
    if (!names_seen.insert(name).second) return;
    if (h && b) measured_differently(*h, *b, g.measurement_differences);
    if (!b) g.stages_new.push_back(name);
    if (!h) g.stages_removed.push_back(name);
    if (h && h->failed()) return;  // the failure fails the gate; its samples prove nothing
    const config::Gate& gate = thresholds.for_stage(name);
    if (h && b && !b->failed()) {
      auto statements = compare_statements(*h, *b, gate);
      g.statements.insert(g.statements.end(), std::make_move_iterator(statements.begin()),
                          std::make_move_iterator(statements.end()));
    }
    for (const auto& metric : gated_names(h, b, gate)) {
      const Metric* hm = h ? h->find(metric) : nullptr;
      const Metric* bm = b ? b->find(metric) : nullptr;
      bool base_usable = has_samples(bm) && !b->failed();
      if (has_samples(hm) && base_usable && hm->unit != bm->unit) {
        g.metrics.push_back(one_sided(
            name, metric, *hm, true,
            fmt::format("unit changed from '{}' to '{}': not compared", bm->unit, hm->unit)));
      } else if (has_samples(hm) && base_usable) {
        g.metrics.push_back(judge(name, metric, *hm, *bm, gate));
      } else if (has_samples(hm)) {
        g.metrics.push_back(one_sided(name, metric, *hm, true,
                                      !b            ? "stage not in the baseline"
                                      : b->failed() ? "stage failed in the baseline"
                                                    : "metric not in the baseline"));
      } else if (has_samples(bm)) {
        g.metrics.push_back(
            one_sided(name, metric, *bm, false,
                      h ? "metric not in the head results" : "stage not in the head results"));
      }
    }
  };
  for (const auto& h : head.stages) add_stage(&h, find_stage(base, h.name));
  for (const auto& b : base.stages) add_stage(find_stage(head, b.name), &b);
  std::size_t significant = 0;
  g.environment_differences =
      environment_differences(base.environment, head.environment, &significant);
  std::size_t methods = static_cast<std::size_t>(
      std::count_if(g.measurement_differences.begin(), g.measurement_differences.end(), is_method));
  if ((significant > 0 || methods > 0) && thresholds.defaults.require_same_environment) {
    std::string list;
    for (std::size_t i = 0; i < significant; ++i)
      list += (i ? "; " : "") + g.environment_differences[i];
    for (const auto& d : g.measurement_differences) {
      if (!is_method(d)) continue;
      list += fmt::format("{}stage {} {}: {} → {}", list.empty() ? "" : "; ", d.stage, d.field,
                          d.base, d.head);
    }
    throw Error(
        ExitCode::infrastructure, baseline_name,
        fmt::format("measured in another environment ({}) and gate.require_same_environment "
                    "is true; compare results from matching runners",
                    list));
  }

  return g;
}

bool passed(const Results& r) {
  if (r.stopped) return false;
  bool regression = r.gate && (std::any_of(r.gate->metrics.begin(), r.gate->metrics.end(),
                                           [](const MetricVerdict& m) {
                                             return m.verdict == Verdict::regression;
                                           }) ||
                                std::any_of(r.gate->statements.begin(), r.gate->statements.end(),
                                            [](const StatementVerdict& s) {
                                              return s.verdict == Verdict::regression;
                                            }));
  if (r.migration && migration_fails(*r.migration)) return false;
  return !regression && std::none_of(r.stages.begin(), r.stages.end(), [](const StageResult& s) {
    return s.failed() || (s.snapshot && !passes(s.snapshot->status));
  });
}

std::string stopped_verdict(const Stopped& x) {
  std::string text;
  std::string at = x.where.empty() ? "" : " at " + x.where;
  std::string summary = failure_summary(x.error);
  switch (x.exit_code) {
    case 1:
      text = x.step.empty() ? fmt::format("failed: {}{}", x.where.empty() ? "" : x.where + ": ", summary)
                            : fmt::format("failed: setup step {}{}: {}", x.step, at, summary);
      break;
    case 2:
      // A server that refused a setting of the config's is the config's error too.
      text = fmt::format("{} error{}: {}",
                         x.phase == StopPhase::config || x.phase == StopPhase::server ? "config" : "usage", at,
                         summary);
      break;
    case 130:
      text = fmt::format("{} {}", summary,
                         !x.step.empty()          ? "during setup step " + x.step
                         : x.phase == StopPhase::server ? "while the server started"
                         // "stage first, after cold run 2 of 5": the stage the stop left partial
                         : x.phase == StopPhase::stages && !x.where.empty() ? "during " + x.where
                         : x.phase == StopPhase::stages && !x.not_run.empty()
                             ? "during stage " + x.not_run.front()
                             : "during " + std::string(to_string(x.phase)));
      break;
    default:
      text = fmt::format("infrastructure error{}: {}", at, summary);
      break;
  }
  if (!x.not_run.empty()) {
    std::size_t n = x.not_run.size();
    text += fmt::format("; {} stage{} not run", n, n == 1 ? "" : "s");
  }
  return text;
}

std::string verdict(const Results& r) {
  if (r.stopped) return stopped_verdict(*r.stopped);
  std::vector<std::string> failed_names;
  for (const auto& s : r.stages) {
    if (s.failed()) failed_names.push_back(s.name);
  }
  std::vector<std::string> parts;
  if (!failed_names.empty()) {
    std::string names;
    for (const auto& n : failed_names) names += (names.empty() ? "" : ", ") + n;
    parts.push_back(fmt::format("{} stage{} failed ({})", failed_names.size(),
                                failed_names.size() == 1 ? "" : "s", names));
  }
  if (r.migration) {
    std::size_t n = 0;
    std::string names;
    for (const auto& f : r.migration->findings) {
      if (f.severity != MigrationSeverity::regression) continue;
      ++n;
      names += fmt::format("{}{} {}", names.empty() ? "" : ", ", to_string(f.kind), f.table);
    }
    if (n > 0) parts.push_back(fmt::format("the migration: {} ({})", plural(n, "regression"), names));
    if (!r.migration->drift.empty()) {
      parts.push_back(fmt::format("schema drift ({} object{} differ from head's fresh setup)",
                                  r.migration->drift.size(),
                                  r.migration->drift.size() == 1 ? "" : "s"));
    }
  }
  std::size_t slower = 0;
  if (r.gate) {
    std::string names;
    std::size_t n = 0;
    for (const auto& m : r.gate->metrics) {
      if (m.verdict == Verdict::slower) ++slower;
      if (m.verdict != Verdict::regression) continue;
      ++n;
      names += fmt::format("{}{} {} {}", names.empty() ? "" : ", ", m.stage, m.metric,
                           m.ratio ? format_ratio(*m.ratio) : "from 0");
    }
    for (const auto& s : r.gate->statements) {
      if (s.verdict != Verdict::regression) continue;
      ++n;
      names += fmt::format("{}{} statement `{}` {}", names.empty() ? "" : ", ", s.stage,
                           short_statement(s.query), statement_change(s));
    }
    if (n > 0) parts.push_back(fmt::format("{} ({})", plural(n, "regression"), names));
  }
  for (SnapshotStatus status : {SnapshotStatus::changed, SnapshotStatus::rearranged,
                                SnapshotStatus::missing, SnapshotStatus::malformed,
                                SnapshotStatus::nondeterministic}) {
    std::string names;
    for (const auto& s : r.stages) {
      if (s.snapshot && s.snapshot->status == status) names += (names.empty() ? "" : ", ") + s.name;
    }
    if (names.empty()) continue;
    std::size_t n = count_status(r, status);
    parts.push_back(
        fmt::format("{} snapshot{} {} ({})", n, n == 1 ? "" : "s", to_string(status), names));
  }
  if (parts.empty()) {
    std::size_t snaps = count_status(r, SnapshotStatus::match);
    std::size_t updated = count_status(r, SnapshotStatus::updated);
    std::string gate_text;
    if (r.gate)
      gate_text = slower ? fmt::format(", no regression ({} slower)", slower) : ", no regression";
    std::string migration_text;
    if (r.migration) {
      std::size_t warnings = 0;
      for (const auto& f : r.migration->findings) warnings += f.severity == MigrationSeverity::warning;
      migration_text = warnings ? fmt::format(", the migration safe but {}", plural(warnings, "warning"))
                                : ", the migration safe";
    }
    // What got better, as benchmark services show it: a passing change can be the fix.
    const std::string improved = improvements(r);
    return fmt::format("passed: {} stage{}, {} snapshot{} match{}{}{}{}", r.stages.size(),
                       r.stages.size() == 1 ? "" : "s", snaps, snaps == 1 ? "" : "s",
                       updated ? fmt::format(", {} updated", updated) : "", gate_text,
                       migration_text, improved.empty() ? "" : " — " + improved);
  }
  std::string text = "failed: ";
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : "") + parts[i];
  return text;
}

}  // namespace coldgate::gate
