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

// Per cold run, the server's time for the stage: db_plan_ms + db_exec_ms of the profile; empty
// when the trial was not profiled. What an index or statistics remedy changes, without the
// application's own start-up, which can be most of a command stage's wall time.
std::vector<double> server_ms(const Remedy& r) {
  const Metric* plan = r.find("db_plan_ms");
  const Metric* exec = r.find("db_exec_ms");
  if (!plan || !exec || plan->cold.size() != exec->cold.size()) return {};
  std::vector<double> out;
  for (std::size_t i = 0; i < exec->cold.size(); ++i) out.push_back(plan->cold[i] + exec->cold[i]);
  return out;
}

std::vector<double> wall_samples(const Remedy& r) {
  const Metric* m = r.find("wall_ms");
  return m ? m->cold : std::vector<double>{};
}

// The remedy's slowest cold run is faster than as is's fastest: the gate's own test that a
// difference is not noise.
bool apart(const std::vector<double>& remedy, const std::vector<double>& as_is) {
  if (remedy.empty() || as_is.empty()) return false;
  return *std::max_element(remedy.begin(), remedy.end()) <
         *std::min_element(as_is.begin(), as_is.end());
}

// Clearly faster: the median more than k_clearly_faster ahead and every run apart.
bool clearly_faster(const std::vector<double>& remedy, const std::vector<double>& as_is) {
  return !remedy.empty() && !as_is.empty() && median(remedy) * k_clearly_faster < median(as_is) &&
         apart(remedy, as_is);
}

// A statement's samples of `figure` in remedy `r`'s cold runs (statement_metric()).
std::vector<double> statement_samples(const Remedy& r, StatementFigure figure,
                                      const std::string& key) {
  const Metric* m = r.find(statement_metric(figure, key));
  return m ? m->cold : std::vector<double>{};
}

double lowest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double highest(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

// "blocks per call 1,211 → 57, server time per call 2.02 ms → 1.10 ms, calls 1 → 1": the
// medians of statement `key`'s figures as is → in `r`; "" when either lacks them.
std::string statement_figures(const Remedy& r, const Remedy& as_is, const std::string& key,
                              bool with_calls) {
  auto b0 = statement_samples(as_is, StatementFigure::blocks_per_call, key);
  auto b1 = statement_samples(r, StatementFigure::blocks_per_call, key);
  auto s0 = statement_samples(as_is, StatementFigure::server_ms_per_call, key);
  auto s1 = statement_samples(r, StatementFigure::server_ms_per_call, key);
  auto c0 = statement_samples(as_is, StatementFigure::calls, key);
  auto c1 = statement_samples(r, StatementFigure::calls, key);
  if (b0.empty() || b1.empty() || s0.empty() || s1.empty()) return "";
  std::string out = fmt::format(
      "blocks per call {} → {}{}server time per call {} → {}",
      format_value(std::round(median(b0)), "count"), format_value(std::round(median(b1)), "count"),
      with_calls ? ", " : " and ", format_value(median(s0), "ms"), format_value(median(s1), "ms"));
  if (with_calls && !c0.empty() && !c1.empty()) {
    out += fmt::format(", calls {} → {}", format_value(std::round(median(c0)), "count"),
                       format_value(std::round(median(c1)), "count"));
  }
  return out;
}

// The statement rule, for a remedy aimed at statements (an index, statistics): each statement
// it is aimed at was called in every cold run of both, and in every run of the remedy reads
// fewer blocks per call and takes less server time (plan + execution) per call than in any run
// of as is, with no more calls — each figure's ranges apart, the gate's test that a difference
// is not noise; blocks per call are counts, the same in every run for the same plan. And the
// stage's cold wall time is no worse beyond its noise: not every run of the remedy is slower
// than every run of as is (the ranges apart, which the gate requires of a regression), so a
// page whose other work swamps the statement does not hide its gain. Returns the deciding
// figures ("blocks per call 1,211 → 57 and server time per call 2.02 ms → 1.10 ms"), "" when
// the rule does not hold or the trial has no statement figures.
std::string statement_decides(const Remedy& r, const Remedy& as_is) {
  const std::vector<std::string> keys = r.aimed_at();
  const std::vector<double> wall = wall_samples(r), base_wall = wall_samples(as_is);
  if (&r == &as_is || keys.empty() || wall.empty() || base_wall.empty()) return "";
  if (lowest(wall) > highest(base_wall)) return "";  // worse beyond as is's noise
  std::string out;
  for (const auto& key : keys) {
    auto every_run = [&](StatementFigure f, bool strictly) {
      auto before = statement_samples(as_is, f, key);
      auto after = statement_samples(r, f, key);
      if (before.size() != base_wall.size() || after.size() != wall.size()) return false;
      return strictly ? highest(after) < lowest(before) : highest(after) <= lowest(before);
    };
    if (!every_run(StatementFigure::blocks_per_call, true) ||
        !every_run(StatementFigure::server_ms_per_call, true) ||
        !every_run(StatementFigure::calls, false)) {
      return "";
    }
    out += (out.empty() ? "" : "; ") + statement_figures(r, as_is, key, false);
  }
  return out;
}

std::string median_range(const std::vector<double>& samples) {
  if (samples.empty()) return "—";
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  std::string out = format_value(median(samples), "ms");
  if (samples.size() > 1) {
    out += fmt::format(" ({}–{})", format_value(*lo, "ms"), format_value(*hi, "ms"));
  }
  return out;
}

std::string cold_wall(const Remedy& r) { return median_range(wall_samples(r)); }

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
  switch (r.kind) {
    case RemedyKind::prepared:
      return "prepare the statement once and execute it (the driver's prepared statements)";
    case RemedyKind::index:
      return fmt::format("add `{}` to the schema's migrations (CONCURRENTLY on a live table)",
                         r.remedy);
    case RemedyKind::statistics:
      return fmt::format("add `{}` to the schema's migrations, then ANALYZE the table", r.remedy);
    case RemedyKind::analyze:
      return "add `- analyze: true` to setup: (and ANALYZE those tables after loading them)";
    case RemedyKind::as_is:
    case RemedyKind::settings:
      break;
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

std::string statement_change(const Remedy& r, const Remedy& as_is) {
  if (&r == &as_is) return "";
  std::string out;
  for (const auto& key : r.aimed_at()) {
    std::string figures = statement_figures(r, as_is, key, true);
    if (!figures.empty()) out += (out.empty() ? "" : "; ") + figures;
  }
  return out;
}

std::string recommendation(const std::vector<Remedy>& trial, StageKind kind) {
  if (trial.size() < 2) return "";
  const Remedy& as_is = trial.front();
  auto base = as_is.median_of("wall_ms");
  if (!base) return "No remedy is recommended: the stage as it is did not finish its runs.";
  // Faster by the cold wall time, or — for a profiled trial — by the server's time with the wall
  // time no worse: an application's start-up can hide a 45× faster statement in its wall time.
  // A remedy aimed at statements is judged first on them (statement_decides) unless it makes the
  // whole stage clearly faster: a 24 ms statement's gain is lost in a 1 s page's wall time. A
  // stage-wide remedy (jit = off) keeps the stage's wall time, or its server time.
  const std::vector<double> base_server = server_ms(as_is);
  const Remedy* best = nullptr;
  std::string best_statement;  // the figures that decided `best`, when its statements did
  bool any_aimed = false;
  for (std::size_t i = 1; i < trial.size(); ++i) {
    const Remedy& r = trial[i];
    if (!r.error.empty() || (r.snapshot_identical && !*r.snapshot_identical)) continue;
    auto w = r.median_of("wall_ms");
    if (!w) continue;
    const bool aimed = !r.aimed_at().empty();
    any_aimed = any_aimed || aimed;
    const bool by_wall = clearly_faster(wall_samples(r), wall_samples(as_is));
    const std::string by_statement = by_wall ? "" : statement_decides(r, as_is);
    const bool by_server =
        !aimed && *w <= *base && clearly_faster(server_ms(r), base_server);
    if (!by_wall && by_statement.empty() && !by_server) continue;
    if (!best || *w < *best->median_of("wall_ms")) {
      best = &r;
      best_statement = by_statement;
    }
  }
  if (!best) {
    std::string none =
        base_server.empty()
            ? "No remedy was more than 10% faster than as is, with every run apart from as "
              "is's and an identical snapshot."
            : "No remedy was more than 10% faster than as is (cold wall time, or the server's "
              "time with the wall time no worse), with every run apart from as is's and an "
              "identical snapshot.";
    if (any_aimed) {
      none.pop_back();
      none += "; nor did any remedy aimed at a statement lower that statement's blocks and "
              "server time per call in every run, with no more calls and the stage's wall time "
              "no worse beyond its noise.";
    }
    return none;
  }
  double w = *best->median_of("wall_ms");
  if (!best_statement.empty()) {
    return fmt::format("`{}`: recommended: {} in every run (its calls no more), the stage's cold "
                       "wall time {} → {} no worse beyond as is's noise, {} — {}",
                       best->remedy, best_statement, format_value(*base, "ms"),
                       format_value(w, "ms"),
                       best->snapshot_identical ? "snapshot identical"
                                                : "no snapshot to prove it loads the same data",
                       fix(*best, kind));
  }
  std::string blocks = blocks_change(*best, as_is);
  std::string server;
  if (auto after = server_ms(*best); !after.empty() && !base_server.empty() && median(after) > 0) {
    server = fmt::format(", server time {} → {} ({} {})", format_value(median(base_server), "ms"),
                         format_value(median(after), "ms"),
                         format_ratio(median(base_server) >= median(after)
                                          ? median(base_server) / median(after)
                                          : median(after) / median(base_server)),
                         median(base_server) >= median(after) ? "faster" : "slower");
  }
  return fmt::format("`{}`: {} → {} ({} {}){}{}, {} — {}", best->remedy,
                     format_value(*base, "ms"), format_value(w, "ms"),
                     format_ratio(*base >= w ? *base / w : w / *base),
                     *base >= w ? "faster" : "slower", server,
                     blocks.empty() ? "" : ", " + blocks,
                     best->snapshot_identical ? "snapshot identical"
                                              : "no snapshot to prove it loads the same data",
                     fix(*best, kind));
}

std::string remedies_table(const std::vector<Remedy>& trial, StageKind kind) {
  if (trial.empty()) return "";
  const bool server = !server_ms(trial.front()).empty();
  std::string out = server ? "| Remedy | Cold wall | Server time | JIT | vs as is | Snapshot "
                             "|\n|---|--:|--:|--:|--:|---|\n"
                           : "| Remedy | Cold wall | JIT | vs as is | Snapshot |\n|---|--:|--:|--:|---|\n";
  for (const auto& r : trial) {
    auto jit = r.median_of("db_jit_ms");
    std::string snapshot = !r.error.empty()            ? "failed: " + r.error.substr(0, r.error.find('\n'))
                           : !r.snapshot_identical     ? "—"
                           : *r.snapshot_identical     ? "identical"
                                                       : "differs at " + r.first_difference;
    if (&r == &trial.front() && r.error.empty()) snapshot = "reference";
    std::string blocks = statement_change(r, trial.front());
    if (blocks.empty()) blocks = blocks_change(r, trial.front());
    out += fmt::format("| {}{} | {}{} | {} | {} | {} |\n", md_text(r.remedy),
                       blocks.empty() ? "" : " · " + md_text(blocks), cold_wall(r),
                       server ? " | " + median_range(server_ms(r)) : "",
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
