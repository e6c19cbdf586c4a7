#include "report/stack.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "gate/gate.hpp"
#include "report/escape.hpp"
#include "report/sections.hpp"
#include "report/table.hpp"
#include "results/format.hpp"

namespace coldgate::report {
namespace {

using results::MetricVerdict;
using results::Results;
using results::SnapshotStatus;
using results::StageResult;
using results::Verdict;


// "[#12](url) Title `a1b2c3d`", or the ref and the commit when the stack was given as refs.
std::string pull_request_cell(const StackEntry& e) {
  std::string who;
  if (e.number > 0) {
    const std::string number = fmt::format("#{}", e.number);
    who = e.url.starts_with("https://") || e.url.starts_with("http://")
              ? fmt::format("[{}](<{}>)", number, e.url)
              : number;
    if (!e.title.empty()) who += " " + md_text(e.title);
  } else {
    who = md_text(e.ref);
  }
  if (e.results && !e.results->git.commit.empty()) {
    who += " " + md_code(short_sha(e.results->git.commit), true);
  }
  return who;
}

// "1" linked to the pull request's report.
std::string index_cell(const StackEntry& e) {
  return e.report.empty() ? std::to_string(e.index)
                          : fmt::format("[{}](<{}>)", e.index, e.report);
}

// How a pull request is named in the lines under the table: "#12 (feature-2)" or "2 (s2)".
std::string named(const StackEntry& e) {
  return e.number > 0 ? fmt::format("#{} ({})", e.number, md_text(e.ref))
                      : fmt::format("{} ({})", e.index, md_text(e.ref));
}

std::string snapshot_cell(const StageResult* s) {
  if (!s || !s->snapshot) return "—";
  const SnapshotStatus st = s->snapshot->status;
  const std::string name(results::to_string(st));
  return st == SnapshotStatus::match || st == SnapshotStatus::updated ? name : "❌ " + name;
}

const StageResult* stage_of(const Results& r, const std::string& name) {
  for (const auto& s : r.stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string md_value_or_dash(const std::optional<double>& v, const std::string& unit) {
  return v ? md_text(results::format_value(*v, unit)) : "—";
}

// One table row; a pull request's first regression row in bold.
std::string row(const std::string& index, const std::string& pull, const std::string& stage,
                const std::string& before, const std::string& after, const std::string& change,
                const std::string& snapshot, bool bold) {
  auto b = [bold](const std::string& cell) {
    return bold && cell != "—" && !cell.empty() ? "**" + cell + "**" : cell;
  };
  return fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", b(index), b(pull), b(stage),
                     b(before), b(after), b(change), b(snapshot));
}

bool changed_snapshot(const StageResult& s) {
  return s.snapshot && s.snapshot->status != SnapshotStatus::match &&
         s.snapshot->status != SnapshotStatus::updated;
}

// The rows of one pull request: each verdict other than same (regressions first), each stage
// that failed or whose snapshot does not match; one row when nothing changed.
std::string rows_of(const StackEntry& e) {
  const std::string index = index_cell(e);
  const std::string pull = pull_request_cell(e);
  if (!e.results) return row(index, pull, "—", "—", "—", "not measured", "—", false);
  const Results& r = *e.results;
  if (r.stopped) {
    return row(index, pull, "—", "—", "—", "❌ " + md_text(results::failure_summary(r.stopped->error)),
               "—", false);
  }
  std::string out;
  bool bold_done = false;
  std::map<std::string, bool> stage_listed;
  std::vector<const MetricVerdict*> notable;
  if (r.gate) {
    for (int pass = 0; pass < 2; ++pass) {
      for (const auto& v : r.gate->metrics) {
        if (v.verdict == Verdict::same) continue;
        if ((v.verdict == Verdict::regression) != (pass == 0)) continue;
        notable.push_back(&v);
      }
    }
  }
  // The migration's regressions and drift fail the pull request first: one row each.
  if (r.migration) {
    for (const auto& f : r.migration->findings) {
      if (f.severity != results::MigrationSeverity::regression) continue;
      const bool bold = !bold_done;
      bold_done = true;
      out += row(index, pull, "migration · " + md_text(to_string(f.kind)) + " " + md_code(f.table, true),
                 "—", "—", "🔴 regression", "—", bold);
    }
    if (!r.migration->drift.empty()) {
      out += row(index, pull, "migration · schema drift", "—", "—",
                 fmt::format("🔴 {} object{} differ", r.migration->drift.size(),
                             r.migration->drift.size() == 1 ? "" : "s"),
                 "—", !bold_done);
      bold_done = true;
    }
  }
  // Statements that regressed (gate.statements) fail the gate like a metric does.
  auto side = [](const std::optional<results::StatementSide>& x) {
    if (!x) return std::string("—");
    std::string text =
        md_text(results::format_value(x->calls, "count")) + (x->calls == 1 ? " call" : " calls");
    if (x->blocks_per_call)
      text += " · " + md_text(results::format_value(std::round(*x->blocks_per_call), "count")) +
              " blocks/call";
    return text;
  };
  if (r.gate) {
    for (const auto& v : r.gate->statements) {
      if (v.verdict != Verdict::regression) continue;
      const bool bold = !bold_done;
      bold_done = true;
      out += row(index, pull, md_text(v.stage) + " · statement " + md_code(statement_line(v.query, 80)),
                 side(v.base), side(v.head), "🔴 regression", snapshot_cell(stage_of(r, v.stage)),
                 bold);
      stage_listed[v.stage] = true;
    }
  }
  for (const MetricVerdict* v : notable) {
    const bool bold = v->verdict == Verdict::regression && !bold_done;
    if (bold) bold_done = true;
    out += row(index, pull, md_text(v->stage) + " · " + md_text(v->metric),
               md_value_or_dash(v->base_median, v->unit), md_value_or_dash(v->head_median, v->unit),
               change_cell(*v, false), snapshot_cell(stage_of(r, v->stage)), bold);
    stage_listed[v->stage] = true;
  }
  for (const auto& s : r.stages) {
    if (stage_listed.count(s.name)) continue;
    if (s.failed()) {
      out += row(index, pull, md_text(s.name), "—", "—",
                 "❌ failed: " + md_text(results::failure_summary(s.error)), snapshot_cell(&s),
                 false);
    } else if (changed_snapshot(s)) {
      out += row(index, pull, md_text(s.name), "—", "—", "same", snapshot_cell(&s), false);
    }
  }
  if (out.empty()) {
    std::size_t snapshots = 0;
    for (const auto& s : r.stages) snapshots += s.snapshot ? 1 : 0;
    out = row(index, pull, fmt::format("{} stage{}", r.stages.size(), r.stages.size() == 1 ? "" : "s"),
              "—", "—", r.gate ? "same" : "no baseline",
              snapshots ? fmt::format("{} match", snapshots) : "—", false);
  }
  return out;
}

// The verdict of `metric` of `stage` in `r`'s gate, or nullptr.
const MetricVerdict* verdict_of(const Results* r, const std::string& stage,
                                const std::string& metric) {
  if (!r || !r->gate) return nullptr;
  for (const auto& v : r->gate->metrics) {
    if (v.stage == stage && v.metric == metric) return &v;
  }
  return nullptr;
}

// Per regression: who introduced it and who fixed it — the first later pull request whose
// verdict is faster, or whose median is back within warn_ratio of the median before the
// regression.
std::string regression_lines(const std::vector<StackEntry>& entries) {
  std::string out;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const Results* r = entries[k].results;
    if (!r || !r->gate) continue;
    for (const auto& v : r->gate->metrics) {
      if (v.verdict != Verdict::regression) continue;
      std::string fixed = "not fixed in this stack";
      for (std::size_t j = k + 1; j < entries.size(); ++j) {
        const MetricVerdict* w = verdict_of(entries[j].results, v.stage, v.metric);
        if (!w) continue;
        const double warn = entries[j].results->gate->thresholds.warn_ratio;
        const bool back = v.base_median && w->head_median &&
                          *w->head_median <= *v.base_median * warn;
        if (w->verdict == Verdict::faster || back) {
          fixed = "fixed by " + named(entries[j]);
          break;
        }
      }
      out += fmt::format("- 🔴 {} {}: introduced by {}{}, {}\n", md_text(v.stage),
                         md_text(v.metric), named(entries[k]),
                         v.ratio ? " (" + results::format_ratio(*v.ratio) + ")" : "", fixed);
    }
    for (const auto& v : r->gate->statements) {
      if (v.verdict != Verdict::regression) continue;
      // Fixed by the first later pull request whose verdict for the same statement is fewer
      // calls or blocks, or that no longer runs it.
      std::string fixed = "not fixed in this stack";
      for (std::size_t j = k + 1; j < entries.size() && fixed.starts_with("not"); ++j) {
        const Results* later = entries[j].results;
        if (!later || !later->gate) continue;
        for (const auto& w : later->gate->statements) {
          if (w.stage == v.stage && w.query == v.query &&
              (w.verdict == Verdict::faster || w.verdict == Verdict::removed)) {
            fixed = "fixed by " + named(entries[j]);
            break;
          }
        }
      }
      out += fmt::format("- 🔴 {} statement {}: introduced by {} ({}), {}\n", md_text(v.stage),
                         md_code(statement_line(v.query, 80)), named(entries[k]),
                         md_text(v.reason.substr(0, v.reason.find(';'))), fixed);
    }
  }
  return out;
}

// Per snapshot that stopped matching: who changed it, and who made it match again — "accepted
// in" when that pull request commits the very document the change loaded.
std::string snapshot_lines(const std::vector<StackEntry>& entries) {
  std::string out;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const Results* r = entries[k].results;
    if (!r) continue;
    for (const auto& s : r->stages) {
      if (!changed_snapshot(s)) continue;
      std::string then = "not accepted in this stack";
      for (std::size_t j = k + 1; j < entries.size(); ++j) {
        const StageResult* later = entries[j].results ? stage_of(*entries[j].results, s.name) : nullptr;
        if (!later || !later->snapshot) continue;
        if (later->snapshot->status != SnapshotStatus::match) continue;
        then = later->snapshot->sha256 == s.snapshot->sha256
                   ? "accepted in " + named(entries[j])
                   : "matching again (another document) in " + named(entries[j]);
        break;
      }
      out += fmt::format("- 📸 {}: {} by {}, {}\n", md_text(s.name),
                         md_text(results::to_string(s.snapshot->status)), named(entries[k]), then);
    }
  }
  return out;
}

}  // namespace

std::string stack_summary(const std::vector<StackEntry>& entries, const std::string& title) {
  std::string md = fmt::format("## {} · stack\n\n", md_text(title));
  std::size_t failing = 0;
  for (const auto& e : entries) {
    if (!e.results || e.results->stopped) {
      ++failing;
      continue;
    }
    const Results& r = *e.results;
    // What the pull request's own verdict says: a statement regression fails it too.
    const bool fails = !gate::passed(r);
    failing += fails ? 1 : 0;
  }
  std::string base;
  if (!entries.empty() && entries.front().results && entries.front().results->gate) {
    const auto& g = entries.front().results->gate->base_git;
    base = fmt::format(" on {} {}", g.branch.empty() ? "the base" : md_text(g.branch),
                       md_code(short_sha(g.commit)));
  }
  const std::string verdict =
      failing ? fmt::format("❌ **{} of {} pull request{} fail{} the gate**", failing,
                            entries.size(), entries.size() == 1 ? "" : "s",
                            failing == 1 ? "s" : "")
              : fmt::format("✅ **{} pull request{} pass{}**", entries.size(),
                            entries.size() == 1 ? "" : "s", entries.size() == 1 ? "es" : "");
  std::size_t bases_cached = 0;  // the commit below from the cache
  std::size_t heads_cached = 0;  // the pull request's own commit from the cache
  for (const auto& e : entries) {
    if (!e.results || !e.results->gate) continue;
    if (e.results->gate->base_source == results::BaseSource::cache) ++bases_cached;
    if (e.results->gate->head_cached) ++heads_cached;
  }
  std::string cached;
  if (bases_cached > 0) cached = fmt::format("{} of {} bases", bases_cached, entries.size());
  if (heads_cached > 0) {
    cached += fmt::format("{}{} of {} heads", cached.empty() ? "" : " and ", heads_cached,
                          entries.size());
  }
  const std::string how =
      cached.empty()
          ? "each measured against the commit below it, all interleaved on one server"
          : fmt::format("each measured against the commit below it; {} from the cache "
                        "(measured by an earlier run, not interleaved)",
                        cached);
  md += fmt::format("{}{}: {}.\n\n", verdict, base.empty() ? "" : " (stack" + base + ")", how);
  md += "| # | Pull request | Stage | Before | After | Change | Snapshot |\n";
  md += "|---:|---|---|---:|---:|---|---|\n";
  for (const auto& e : entries) md += rows_of(e);
  md += "\nBefore / after: median of the cold runs of the commit below and of this one; the first "
        "regression of each pull request in bold.\n";
  const std::string regressions = regression_lines(entries);
  const std::string snapshots = snapshot_lines(entries);
  if (!regressions.empty() || !snapshots.empty()) md += "\n" + regressions + snapshots;
  return md;
}

}  // namespace coldgate::report
