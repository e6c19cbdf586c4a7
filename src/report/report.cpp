#include "report/report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "gate/gate.hpp"
#include "results/growth.hpp"
#include "report/escape.hpp"
#include "report/migration.hpp"
#include "report/remedies.hpp"
#include "report/table.hpp"

namespace coldgate::report {
namespace {

using namespace coldgate::results;

// A whole row or block of a section; a cut report drops or shortens items, never splits them
// mid-Markdown. `body` (when not empty) is a fenced code block between `text` and `after` that
// may be shortened at a line boundary.
struct Item {
  std::string text;
  int rank = 3;  // 0 most urgent … 3 least; a cut report shows urgent items first
  std::string body;
  std::string info;
  std::string after;

  std::string whole() const { return body.empty() ? text : text + md_fence(body, info) + after; }
};

// A part of the report: a heading (or table header), items, and what closes it.
struct Section {
  std::string head;
  std::vector<Item> items;
  std::string tail;
  std::string what_one;   // "table row", … for the note when items are left out
  std::string what_many;  // "table rows", …
};

// Caps for the parts that have no items: a verdict naming thousands of stages, a long footer.
constexpr std::size_t k_max_line_bytes = 4'000;
constexpr std::size_t k_max_footer_line_bytes = 1'000;
constexpr std::size_t k_chart_stages = 20;
// Uncommitted changes listed in the footer (`git status --porcelain` lines), and how long each.
constexpr std::size_t k_dirty_lines = 20;
constexpr std::size_t k_dirty_line_bytes = 200;

std::string capped(std::string text, std::size_t max) {
  if (text.size() <= max) return text;
  return std::string(utf8_prefix(text, max)) + " …";
}

// `text` as valid UTF-8 on one line: a file name may hold a newline.
std::string one_line(std::string_view text) {
  std::string out = valid_utf8(text);
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

std::string short_sha(const std::string& sha) {
  return sha.substr(0, 7);
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", format_value(static_cast<double>(n), "count"), n == 1 ? one : many);
}

// "base from cache, measured 2026-11-30 on another runner: not interleaved".
std::string cache_note(const Results& r) {
  const GateResult& g = *r.gate;
  std::string note;
  if (g.base_source == BaseSource::cache) {
    std::string date = g.base_measured_at.substr(0, g.base_measured_at.find('T'));
    std::string runner;
    if (!g.base_host.empty())
      runner = g.base_host == r.environment.host ? " on this runner" : " on another runner";
    note = "base from cache";
    if (!date.empty() || !runner.empty()) note += ", measured";
    if (!date.empty()) note += " " + md_text(capped(date, 40));
    note += runner;
  }
  if (g.head_cached) {  // stack: this pull request's commit measured by an earlier run
    std::string date = r.finished_at.substr(0, r.finished_at.find('T'));
    note += (note.empty() ? "" : "; ") + std::string("head from cache");
    if (!date.empty()) note += ", measured " + md_text(capped(date, 40));
  }
  return "ℹ️ " + note + ": not interleaved";
}

// "`a1b2c3d` … `e4f5a6b`": the oldest and the newest commit a history baseline used.
std::string history_range(const HistoryTrend& h) {
  std::string first = md_code(short_sha(one_line(h.commits.front().commit)));
  if (h.commits.size() == 1) return first;
  return first + " … " + md_code(short_sha(one_line(h.commits.back().commit)));
}

// "base: the median of 5 recorded results of `main` in `git:coldgate-history` (`a1b2c3d` …
// `e4f5a6b`), not measured in this run", with "only 3 of 5 asked were found" when fewer.
std::string history_note(const Results& r) {
  const GateResult& g = *r.gate;
  std::string of =
      g.base_git.branch.empty() ? "" : " of " + md_code(capped(one_line(g.base_git.branch), 200));
  if (!r.history || r.history->commits.empty())
    return "ℹ️ base: recorded results" + of + " from the history, not measured in this run";
  const HistoryTrend& h = *r.history;
  const std::size_t k = h.commits.size();
  std::string what =
      k == 1 ? "the recorded result" : fmt::format("the median of {} recorded results", k);
  std::string in = h.store.empty() ? "" : " in " + md_code(capped(one_line(h.store), 300));
  std::string found;
  if (h.asked > 0 && k < static_cast<std::size_t>(h.asked))
    found = fmt::format("; only {} of {} asked were found", k, h.asked);
  return fmt::format("ℹ️ base: {}{}{} ({}{}), not measured in this run", what, of, in,
                     history_range(h), found);
}

// Where the base came from when it was not measured beside head in this run (the cache, the
// history store); "" when it was (interleaved) or is a file the user gave.
std::string base_note(const Results& r) {
  if (!r.gate) return "";
  if (r.gate->base_source == BaseSource::cache || r.gate->head_cached) return cache_note(r);
  if (r.gate->base_source == BaseSource::history) return history_note(r);
  return "";
}

std::string top(const Results& r) {
  std::string out = fmt::format("<!-- coldgate:report:{} -->\n## {}\n\n", marker_key(r.title),
                                md_text(capped(r.title, 200)));
  if (!r.no_baseline.empty()) {
    out +=
        fmt::format("⚠️ **no baseline: nothing was compared — measured head only** ({})\n\n",
                    md_text(capped(r.no_baseline, k_max_line_bytes)));
  }
  std::string verdict = capped(gate::verdict(r), k_max_line_bytes);
  out += fmt::format("{} **{}**\n", gate::passed(r) ? "✅" : "❌", md_text(verdict));
  if (std::string note = base_note(r); !note.empty()) out += "\n" + note + "\n";
  for (const auto& warning : r.warnings) {
    out += fmt::format("\n⚠️ {}\n", md_text(capped(one_line(warning), k_max_line_bytes)));
  }
  // ab measured the commit: the checkout's edits are not in these figures (listed in the footer).
  if (!r.git.dirty.empty() && !r.git.dirty_measured) {
    out += fmt::format("\n⚠️ {} in the checkout not measured: this is commit {} as committed "
                       "(listed at the end)\n",
                       plural(r.git.dirty.size(), "uncommitted change", "uncommitted changes"),
                       md_code(r.git.commit.substr(0, 7)));
  }
  return out;
}

// A section of whole rows (table rows, `<details>` blocks) between `head` and `tail`.
Section rows_section(std::string head, std::vector<TableRow> rows, std::string tail,
                     std::string what_one, std::string what_many) {
  Section s{std::move(head), {}, std::move(tail), std::move(what_one), std::move(what_many)};
  for (auto& row : rows) s.items.push_back({std::move(row.text), row.rank});
  return s;
}

Section table_section(MetricsTable t, std::string what_one, std::string what_many) {
  return rows_section("\n" + t.header, std::move(t.rows), t.legend.empty() ? "" : "\n" + t.legend,
                      std::move(what_one), std::move(what_many));
}

// Every unchanged stage in one closed `<details>`: one line to read past.
Section unchanged_section(const Comparison& c) {
  MetricsTable t = unchanged_table(c);
  std::string head =
      fmt::format("\n<details><summary>{}</summary>\n\n{}",
                  plural(t.rows.size(), "stage unchanged", "stages unchanged"), t.header);
  return rows_section(std::move(head), std::move(t.rows), "\n</details>\n", "unchanged stage",
                      "unchanged stages");
}

// The per-stage `<details>` of more_metrics, themselves in one closed `<details>`.
Section more_metrics_section(const Comparison& c) {
  std::vector<TableRow> rows = more_metrics(c);
  std::string head = fmt::format("\n<details><summary>More metrics of {}</summary>\n",
                                 plural(rows.size(), "stage", "stages"));
  return rows_section(std::move(head), std::move(rows), "\n</details>\n", "stage's metrics",
                      "stages' metrics");
}

// A failed stage's whole error, open and verbatim: the table of changes has its first line,
// escaped and capped; the rest (a server's message, a command's stderr) is what the reader
// needs next.
Section errors_section(const Results& r) {
  Section s{"", {}, "", "failed stage's error", "failed stages' errors"};
  if (r.stopped) {
    // Why the run stopped, whole (a psql stderr tail), and what it left unmeasured.
    const Stopped& x = *r.stopped;
    // An interrupt stopped the step; it did not fail (exit 130, not 1).
    std::string what = x.step.empty()       ? "the run stopped"
                       : x.exit_code == 130 ? "setup step " + x.step + " was interrupted"
                                            : "setup step " + x.step + " failed";
    if (!x.where.empty()) what += " at " + x.where;
    std::string after = "\n";
    if (!x.not_run.empty()) {
      std::string names;
      for (const auto& n : x.not_run) names += (names.empty() ? "" : ", ") + md_code(capped(n, 200));
      after += fmt::format("Stages {}: {}\n", not_run_reason(x), names);
    }
    s.items.push_back({fmt::format("\n<details open><summary>{}</summary>\n\n",
                                   summary_text(capped(what, 400))),
                       0, x.error, "", after + "</details>\n"});
  }
  for (const auto& st : r.stages) {
    std::string_view error = st.error;
    while (!error.empty() && error.back() == '\n') error.remove_suffix(1);
    if (error.empty()) continue;
    s.items.push_back({fmt::format("\n<details open><summary>{}: error</summary>\n\n",
                                   summary_text(capped(st.name, 200))),
                       1, std::string(error), "", "\n</details>\n"});
  }
  return s;
}

// "1 path differs: …", "12 paths differ: …": the diff's count line, which the snapshot's message
// (in the table of changes) already gives. "0 paths differ" says more than the message: kept.
bool is_count_line(std::string_view line) {
  std::size_t digits = line.find_first_not_of("0123456789,");
  if (digits == 0 || digits == std::string_view::npos || line.starts_with("0 ")) return false;
  std::string_view rest = line.substr(digits);
  return rest.starts_with(" path differs: ") || rest.starts_with(" paths differ: ");
}

// A diff header label ("snapshots/x.json", "snapshots/x.json (updated)") through repo_path.
std::string relabel(std::string_view label, const std::vector<std::string>& anchors) {
  std::string_view note;
  if (std::size_t open = label.rfind(" (");
      open != std::string_view::npos && label.ends_with(')')) {
    note = label.substr(open);
    label = label.substr(0, open);
  }
  return repo_path(label, anchors) + std::string(note);
}

// The snapshot's diff as the report shows it: without the count line, the header's paths and
// the cap note's full-diff path repository-relative.
std::string report_diff(const SnapshotResult& sn) {
  // The snapshot and its candidate as the results name them: a label ending in one of them.
  std::vector<std::string> anchors = {repo_path(sn.path), repo_path(sn.pending)};
  std::string out;
  bool in_header = true;  // before the first hunk: `--- ` and `+++ ` lines are labels there
  std::string_view diff = sn.diff;
  for (std::size_t pos = 0, n = 0; pos < diff.size(); ++n) {
    std::size_t end = std::min(diff.find('\n', pos), diff.size());
    std::string_view line = diff.substr(pos, end - pos);
    pos = end + 1;
    if (n == 0 && is_count_line(line)) continue;
    if (out.empty() && line.empty()) continue;
    if (line.starts_with("@@")) in_header = false;
    std::size_t full = line.find("; full diff: ");
    if (in_header && (line.starts_with("--- ") || line.starts_with("+++ "))) {
      out += std::string(line.substr(0, 4)) + relabel(line.substr(4), anchors);
    } else if (line.starts_with("… diff cut at") && full != std::string_view::npos) {
      out += std::string(line.substr(0, full + 13)) + repo_path(line.substr(full + 13), anchors);
    } else {
      out += line;
    }
    out += '\n';
  }
  return out;
}

// Each snapshot diff once, closed: the table of changes says what changed and why.
Section diffs_section(const Results& r) {
  Section s{"", {}, "", "snapshot diff", "snapshot diffs"};
  for (const auto& st : r.stages) {
    if (!st.snapshot || st.snapshot->status == SnapshotStatus::match || st.snapshot->diff.empty()) continue;
    const SnapshotResult& sn = *st.snapshot;
    std::string what =
        sn.status == SnapshotStatus::nondeterministic ? "diff of two cold runs" : "diff of " + repo_path(sn.path);
    s.items.push_back({fmt::format("\n<details><summary>{}: {}</summary>\n\n",
                                   summary_text(capped(st.name, 200)), summary_text(what)),
                       sn.status == SnapshotStatus::updated ? 3 : 1, report_diff(sn), "diff", "\n</details>\n"});
  }
  return s;
}

// Against a baseline, the diagnoses this pull request added or made worse come first, then
// those it fixed; those base had too are folded into one block. Without change marks (an older
// baseline's results), only the changed stages' diagnoses: the others were there before the
// change.
Section diagnoses_section(const Comparison& c) {
  Section s{"\n### Diagnoses\n\n", {}, "", "diagnosis", "diagnoses"};
  std::string also;
  std::size_t also_count = 0;
  auto line = [](const Diagnosis& d, std::string_view mark) {
    return fmt::format("- {}**{}**: {}\n", mark, md_text(d.stage), md_with_code(d.message));
  };
  for (const auto& d : c.results().diagnoses) {
    if (d.change == DiagnosisChange::added) s.items.push_back({line(d, "🆕 new in this pull request · "), 1});
  }
  for (const auto& d : c.results().diagnoses) {
    if (d.change != DiagnosisChange::worse) continue;
    auto base_calls = d.data.find("base_calls");
    auto calls = d.data.find("calls");
    std::string mark = "📈 worse in this pull request";
    if (base_calls != d.data.end() && calls != d.data.end()) {
      mark += fmt::format(" ({} → {} calls per run)", format_value(base_calls->second, "count"),
                          format_value(calls->second, "count"));
    }
    s.items.push_back({line(d, mark + " · "), 1});
  }
  for (const auto& d : c.results().diagnoses) {
    if (d.change == DiagnosisChange::gone) s.items.push_back({line(d, "✅ gone (fixed) · "), 2});
  }
  for (const auto& d : c.results().diagnoses) {
    if (d.change == DiagnosisChange::also_in_base) {
      also += line(d, "");
      ++also_count;
    } else if (d.change == DiagnosisChange::none) {
      if (c.gated() && !c.changed(d.stage)) continue;
      s.items.push_back({line(d, ""), 2});
    }
  }
  if (also_count > 0) {
    s.items.push_back({fmt::format("\n<details><summary>{} also in base</summary>\n\n{}\n"
                                   "</details>\n",
                                   plural(also_count, "diagnosis", "diagnoses"), also),
                       3});
  }
  if (s.items.empty()) s.head.clear();
  return s;
}

// Per stage, the statements that are not same, or whose calls per run or plan changed, between
// base and head.
Section statements_section(const Comparison& c) {
  Section s{"\n### Statements that changed\n", {}, "", "stage", "stages"};
  for (auto& row : statements_blocks(c)) s.items.push_back({std::move(row.text), row.rank});
  if (s.items.empty()) {
    s.head.clear();
  } else {
    s.tail =
        "\nCalls per run and blocks (shared, hit + read) per call are counts that repeat exactly "
        "on the same data and plan: the gate judges them (`max_query_ratio`, `min_query_delta`, "
        "`max_blocks_ratio`, `min_blocks_delta`); ms per call is shown, not judged, and so is a "
        "plan change (🔀: the plan nodes base had and head lost → head's new ones).\n";
  }
  return s;
}

// Statements per stage in the Growth section: those that grow first, then by time.
constexpr std::size_t k_growth_statements = 8;

// "24 → 96 → 384 · linear" for a table cell; "24 → 96 · linear" with two scales.
std::string growth_cell(const GrowthFit& f) {
  std::string values = growth_values(f);
  if (f.growth.empty()) return values;
  const bool grows = growth_rank(f.growth) > 0;
  return values + " · " + (grows ? "**" + f.growth + "**" : f.growth);
}

// What a statement's growth means, in one line; "" when nothing grows.
std::string growth_meaning(const StatementGrowth& g) {
  std::vector<std::string> parts;
  if (growth_rank(g.calls.growth) >= growth_rank("linear")) {
    parts.push_back(fmt::format("calls grow {} with the data: an N+1 that grows", growth_adverb(g.calls.growth)));
  }
  if (growth_rank(g.blocks_per_call.growth) >= growth_rank("linear")) {
    const bool rows_flat = growth_rank(g.rows_per_call.growth) == 0 || g.rows_per_call.growth.empty();
    parts.push_back(fmt::format("blocks per call grow {}{}", growth_adverb(g.blocks_per_call.growth),
                                rows_flat ? " while rows per call stay constant: it reads more of a table to return "
                                            "the same rows (a sequential scan, an index it lacks)"
                                          : ""));
  } else if (growth_rank(g.blocks_per_call.growth) == growth_rank("sublinear")) {
    // An index's depth grows with the logarithm of its rows: not a scan.
    parts.push_back("blocks per call grow sublinearly, slower than the data (an index's depth, a scan "
                    "that stops early)");
  }
  if (growth_rank(g.rows_per_call.growth) >= growth_rank("linear")) {
    parts.push_back("rows per call grow " + growth_adverb(g.rows_per_call.growth) +
                    ": each call returns more of the data as it grows (a list without a LIMIT?)");
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

// "212 ms → 498 ms → 1.41 s"
std::string ms_values(const GrowthFit& f) {
  std::string out;
  for (const auto& v : f.values) out += (out.empty() ? "" : " → ") + (v ? format_value(*v, "ms") : "–");
  return out;
}

// A projection to two significant digits with "≈": a fit's extension is an estimate, and more
// digits would read as a measurement.
std::string projected_value(double v, const std::string& unit) {
  v = std::max(0.0, v);
  if (v > 0) {
    const double step = std::pow(10.0, std::floor(std::log10(v)) - 1);
    v = std::round(v / step) * step;
  }
  if (unit == "ms") return v >= 1000 ? fmt::format("≈ {:g} s", v / 1000) : fmt::format("≈ {:g} ms", v);
  // Thousands separated, as measured counts are; below 1,000 no trailing zeros ("≈ 2.5").
  return "≈ " + (unit == "count" ? (v >= 1000 ? format_value(v, unit) : fmt::format("{:g}", v))
                                 : fmt::format("{:g} {}", v, unit));
}

std::string projected_cell(const StatementGrowth& g) {
  if (!g.calls.projected) return "—";
  std::string out = projected_value(*g.calls.projected, "count");
  out += out == "≈ 1" ? " call" : " calls";
  if (g.blocks_per_call.projected) {
    out += " · " + projected_value(*g.blocks_per_call.projected * *g.calls.projected, "count") + " blocks";
  }
  if (g.time_ms.projected) out += " · " + projected_value(*g.time_ms.projected, "ms");
  return out;
}

bool measured(const GrowthFit& f) {
  return std::any_of(f.values.begin(), f.values.end(), [](const auto& v) { return v.has_value(); });
}

// Transaction control and session settings: their calls follow the application's transactions,
// not the data; a row for them is noise unless their calls grow (a transaction per row).
bool bookkeeping(const std::string& query) {
  static const char* const words[] = {"BEGIN", "COMMIT", "ROLLBACK", "START TRANSACTION", "SAVEPOINT",
                                       "RELEASE", "SET ", "SHOW ", "RESET ", "DISCARD "};
  std::string head = query.substr(0, 20);
  for (auto& c : head) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return std::any_of(std::begin(words), std::end(words),
                     [&](const char* w) { return head.rfind(w, 0) == 0; });
}

// Per stage measured at several data scales (`scales:`): its counts per scale with their growth
// class, the statements that grow first, and, with `production_scale`, what each would cost
// there (a projection from the fit, marked so).
Section growth_section(const Results& r) {
  Section s{"\n### Growth\n", {}, "", "stage", "stages"};
  bool projected = false;
  for (const auto& st : r.stages) {
    if (!st.growth) continue;
    const StageGrowth& g = *st.growth;
    std::string scales;
    for (double x : g.scales) scales += (scales.empty() ? "" : " → ") + fmt::format("×{:g}", x);
    if (!measured(g.wall_ms)) {
      // Failed at the first scale: the other scales were not run.
      s.items.push_back({fmt::format("\n**{}** at data scales {}: not measured, the stage failed{}\n",
                                     md_text(capped(st.name, 200)), scales,
                                     st.failed() ? " (its error is above)" : " at every scale"),
                         2});
      continue;
    }
    const std::string counts =
        measured(g.queries) || measured(g.blocks)
            ? fmt::format("statements per run {}; blocks per run {}", growth_cell(g.queries), growth_cell(g.blocks))
            : "statements and blocks not measured (no server-side profile: `profile: false` or no "
              "pg_stat_statements)";
    std::string text = fmt::format("\n**{}** at data scales {}: {}; wall time {}", md_text(capped(st.name, 200)),
                                   scales, counts,
                                   ms_values(g.wall_ms) + (g.wall_ms.growth.empty() ? "" : " · " + g.wall_ms.growth));
    if (g.production_scale && g.wall_ms.projected) {
      text += fmt::format("; projected at ×{:g}: {} per run", *g.production_scale,
                          projected_value(*g.wall_ms.projected, "ms"));
      projected = true;
    }
    text += "\n";
    if (!g.error.empty()) text += fmt::format("\n⚠️ {}\n", md_with_code(capped(g.error, k_max_line_bytes)));
    std::vector<const StatementGrowth*> rows;
    auto grows = [](const StatementGrowth* x) {
      return std::max({growth_rank(x->calls.growth), growth_rank(x->rows_per_call.growth),
                       growth_rank(x->blocks_per_call.growth)});
    };
    std::size_t hidden = 0;
    for (const auto& x : g.statements) {
      if (bookkeeping(x.query) && grows(&x) == 0) {
        ++hidden;
      } else {
        rows.push_back(&x);
      }
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [&](const StatementGrowth* a, const StatementGrowth* b) { return grows(a) > grows(b); });
    const std::size_t n = std::min(rows.size(), k_growth_statements);
    if (n > 0) {
      text += g.production_scale
                  ? fmt::format("\n| Statement | Calls per run | Rows per call | Blocks per call | Projected per run at ×{:g} |\n"
                                "|---|---|---|---|---|\n",
                                *g.production_scale)
                  : "\n| Statement | Calls per run | Rows per call | Blocks per call |\n|---|---|---|---|\n";
    }
    std::string meanings;
    for (std::size_t i = 0; i < n; ++i) {
      const StatementGrowth& x = *rows[i];
      text += fmt::format("| {} | {} | {} | {} |", md_code(statement_line(x.query, 100), true),
                          growth_cell(x.calls), growth_cell(x.rows_per_call), growth_cell(x.blocks_per_call));
      if (g.production_scale) text += " " + projected_cell(x) + " |";
      text += "\n";
      if (std::string m = growth_meaning(x); !m.empty()) {
        meanings += fmt::format("- {}: {}\n", md_code(statement_line(x.query, 100), true), m);
      }
    }
    if (rows.size() + hidden > n) {
      text += fmt::format("\n… {} more in results.json (`stages[].growth.statements`){}\n", rows.size() + hidden - n,
                          hidden ? fmt::format(", {} of them transaction control or settings", hidden) : "");
    }
    if (!meanings.empty()) text += "\n" + meanings;
    s.items.push_back({text, !rows.empty() && grows(rows.front()) > 0 ? 1 : 3});
  }
  if (s.items.empty()) {
    s.head.clear();
  } else {
    s.tail = "\nEach scale is a database of its own, set up with `$COLDGATE_SCALE` (psql: `:scale`). "
             "A class is the exponent k of count ∝ scaleᵏ: constant (k < 0.2), sublinear, linear "
             "(~1), quadratic (~2). The gate fails a statement whose class got worse than the "
             "baseline's (`gate.growth`)." +
             std::string(projected ? " Projections extend each fit to `production_scale`: an "
                                     "estimate, not a measurement." : "") + "\n";
  }
  return s;
}

// Each stage's remedy trial (`--try`): its table and the recommendation, one item per stage.
Section remedies_section(const Results& r) {
  Section s{"\n### Remedies measured\n", {}, "", "stage", "stages"};
  for (const auto& st : r.stages) {
    std::vector<Remedy> trial;
    for (const auto& m : r.remedies) {
      if (m.stage == st.name) trial.push_back(m);
    }
    if (trial.empty()) continue;
    s.items.push_back({fmt::format("\n**{}**\n\n{}", md_text(capped(st.name, 200)),
                                   remedies_table(trial, st.kind)),
                       1});
  }
  if (s.items.empty()) s.head.clear();
  return s;
}

// Statements per stage in the Database section, by time.
constexpr std::size_t k_database_statements = 5;

std::string db_total(const StageResult& st, const char* name, const char* unit) {
  const Metric* m = st.find(name);
  if (!m || m->cold.empty()) return "—";
  return format_value(median(m->cold), unit);
}

// The server side of each profiled stage: its totals per cold run (medians) and its costliest
// statements, one fold per stage; why there is no profile (or no plans), when there is none.
Section database_section(const Results& r) {
  Section s{"\n### Database\n\n", {}, "", "stage", "stages"};
  if (!r.profile_note.empty()) {
    s.items.push_back({fmt::format("ℹ️ No server-side profile: {}\n",
                                   md_with_code(capped(r.profile_note, k_max_line_bytes))),
                       2});
  }
  if (!r.profile_limit.empty()) {
    s.items.push_back({fmt::format("ℹ️ Server-side profile: {}\n",
                                   md_with_code(capped(r.profile_limit, k_max_line_bytes))),
                       2});
  }
  if (!r.plans_note.empty()) {
    s.items.push_back({fmt::format("ℹ️ No actual plans: {}\n",
                                   md_with_code(capped(r.plans_note, k_max_line_bytes))),
                       2});
  }
  for (const auto& st : r.stages) {
    if (st.queries.empty()) continue;
    std::string text = fmt::format(
        "<details><summary>{}: {} per cold run · planning {} · execution {} · JIT {}</summary>"
        "\n\n| Statement | Calls | Rows | Planning | Execution | JIT |\n"
        "|---|--:|--:|--:|--:|--:|\n",
        summary_text(capped(st.name, 200)),
        html_text(plural(static_cast<std::size_t>(std::llround(
                             st.find("db_queries") && !st.find("db_queries")->cold.empty()
                                 ? median(st.find("db_queries")->cold)
                                 : 0)),
                         "statement", "statements")),
        html_text(db_total(st, "db_plan_ms", "ms")), html_text(db_total(st, "db_exec_ms", "ms")),
        html_text(st.find("db_jit_ms") && median(st.find("db_jit_ms")->cold) > 0
                      ? db_total(st, "db_jit_ms", "ms")
                      : "—"));
    const std::size_t n = std::min(st.queries.size(), k_database_statements);
    for (std::size_t i = 0; i < n; ++i) {
      const QueryStats& q = st.queries[i];
      text += fmt::format("| {} | {} | {} | {} | {} | {} |\n", md_code(statement_line(q.query, 100), true),
                          format_value(q.calls, "count"), format_value(q.rows, "count"),
                          format_value(q.plan_ms, "ms"), format_value(q.exec_ms, "ms"),
                          q.jit_ms > 0 ? format_value(q.jit_ms, "ms") : "—");
    }
    if (st.queries.size() > n) {
      text += fmt::format("\n… {} more in results.json (`stages[].queries`)\n",
                          st.queries.size() - n);
    }
    s.items.push_back({text + "\n</details>\n", 3});
  }
  if (s.items.empty()) s.head.clear();
  return s;
}

// `text` as a quoted Mermaid string of at most about `max_bytes`: Mermaid takes a quoted label
// up to the next `"`, `#` starts an entity code, `<` could open markup in a label, backticks
// could touch the fence, a newline would end the statement: none of them get through.
std::string mermaid_string(std::string_view text, std::size_t max_bytes = 40) {
  std::string out;
  for (char c : valid_utf8(capped(std::string(text), max_bytes))) {
    switch (c) {
      case '"':
      case '`':
        out += '\'';
        break;
      case '#':
        out += "no.";
        break;
      case '<':
        out += "‹";
        break;
      case '>':
        out += "›";
        break;
      case '\n':
      case '\t':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return "\"" + out + "\"";
}

struct Bar {
  std::string stage;
  double after = 0;
  std::optional<double> before;
  int rank = 3;
};

std::optional<double> cold_wall(const StageResult* s) {
  const Metric* m = s ? s->find("wall_ms") : nullptr;
  if (!m || m->cold.empty()) return std::nullopt;
  return median(m->cold);
}

// The changed stages with a cold wall median on both sides (the gate's medians where it has them).
std::vector<Bar> changed_bars(const Comparison& c) {
  std::vector<Bar> bars;
  for (const auto& st : c.results().stages) {
    if (!c.changed(st.name)) continue;
    const MetricVerdict* v = c.verdict(st.name, "wall_ms");
    std::optional<double> before =
        v && v->base_median ? v->base_median : cold_wall(c.base_stage(st.name));
    std::optional<double> after = v && v->head_median ? v->head_median : cold_wall(&st);
    // Stages whose wall time itself changed first, then by how urgent their other changes are.
    int wall = !v                           ? 3
               : v->verdict == Verdict::regression ? 0
               : v->verdict == Verdict::slower     ? 1
               : v->verdict == Verdict::faster     ? 2
                                            : 3;
    if (before && after) bars.push_back({st.name, *after, before, wall * 4 + c.rank(st.name)});
  }
  return bars;
}

std::vector<Bar> head_bars(const Results& r) {
  std::vector<Bar> bars;
  for (const auto& st : r.stages) {
    if (auto wall = cold_wall(&st)) bars.push_back({st.name, *wall, std::nullopt, 3});
  }
  return bars;
}

// The first k_chart_stages bars by `better`, kept in stage order.
std::vector<Bar> first_bars(std::vector<Bar> bars,
                            const std::function<bool(const Bar&, const Bar&)>& better) {
  if (bars.size() <= k_chart_stages) return bars;
  std::vector<std::size_t> order(bars.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return better(bars[a], bars[b]); });
  order.resize(k_chart_stages);
  std::sort(order.begin(), order.end());
  std::vector<Bar> kept;
  for (std::size_t i : order) kept.push_back(std::move(bars[i]));
  return kept;
}

// After (head) as bars and before (base) as a line over the same stages: two `bar` series at
// one x overlap in GitHub's Mermaid. Colours in series order: bar blue, line red. A line of one
// point draws nothing, so one changed stage gets no chart (its row has both medians).
Section chart_section(const Comparison& c) {
  Section s{"", {}, "", "chart", "charts"};
  std::vector<Bar> bars = c.gated() ? changed_bars(c) : head_bars(c.results());
  std::size_t all = bars.size();
  if (c.gated() && all < 2) return s;
  if (bars.empty()) return s;
  bars = c.gated() ? first_bars(std::move(bars),
                                [](const Bar& a, const Bar& b) { return a.rank < b.rank; })
                   : first_bars(std::move(bars),
                                [](const Bar& a, const Bar& b) { return a.after > b.after; });
  std::string labels;
  std::string afters;
  std::string befores;
  for (const auto& b : bars) {
    labels += (labels.empty() ? "" : ", ") + mermaid_string(b.stage);
    afters += (afters.empty() ? "" : ", ") + fmt::format("{:.1f}", b.after);
    if (b.before) befores += (befores.empty() ? "" : ", ") + fmt::format("{:.1f}", *b.before);
  }
  std::string chart = fmt::format(
      "%%{{init: {{\"themeVariables\": {{\"xyChart\": {{\"plotColorPalette\": \"#1f77b4, "
      "#d62728\"}}}}}}}}%%\nxychart-beta\n    title \"Cold wall time ({})\"\n    x-axis [{}]\n"
      "    y-axis \"ms\"\n    bar [{}]\n{}",
      c.gated() ? "median of the changed stages" : "median", labels, afters,
      c.gated() ? fmt::format("    line [{}]\n", befores) : std::string());
  std::string note;
  if (bars.size() < all) {
    note = fmt::format("The {} {} stages.\n\n", bars.size(),
                       c.gated() ? fmt::format("most urgent of {} changed", all)
                                 : fmt::format("slowest of {}", all));
  }
  std::string legend = c.gated() ? "\n🟦 bars: after (head) · 🟥 line: before (base)\n" : "";
  s.items.push_back({fmt::format("\n### Cold wall time\n\n{}", note), 3, chart, "mermaid", legend});
  return s;
}

// The commits a history baseline used, oldest first, one item each: short SHA, subject, date.
Section history_section(const Results& r) {
  Section s{"", {}, "\n</details>\n", "history commit", "history commits"};
  if (!r.gate || r.gate->base_source != BaseSource::history || !r.history) return s;
  const HistoryTrend& h = *r.history;
  if (h.commits.empty()) return s;
  std::string of = r.gate->base_git.branch.empty() ? "" : " of " + r.gate->base_git.branch;
  std::string found;
  if (h.asked > 0 && h.commits.size() < static_cast<std::size_t>(h.asked))
    found = fmt::format(" ({} of {} asked)", h.commits.size(), h.asked);
  s.head = fmt::format(
      "\n<details><summary>{}</summary>\n\nThe base is, per stage and metric, "
      "the median of their medians (oldest first):\n\n",
      summary_text(
          capped(one_line(fmt::format("History baseline: {}{}{}",
                                      plural(h.commits.size(), "commit", "commits"), of, found)),
                 300)));
  for (const auto& c : h.commits) {
    std::string subject = one_line(c.subject);
    std::string date = c.date.substr(0, c.date.find('T'));
    s.items.push_back(
        {fmt::format("- {} {}{}\n", md_code(short_sha(one_line(c.commit))),
                     subject.empty() ? "_(no subject)_" : md_text(capped(subject, 120)),
                     date.empty() ? "" : " · " + md_text(capped(one_line(date), 40))),
         3});
  }
  return s;
}

// `value` with three significant digits in plain decimal notation, as Mermaid's xychart reads
// numbers (no exponent): 1234 → "1230", 12.34 → "12.3", 0.01234 → "0.0123", 118 → "118".
std::string compact_number(double value) {
  if (value == 0 || !std::isfinite(value)) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const double step = std::pow(10.0, magnitude - 2);
  std::string out =
      fmt::format("{:.{}f}", std::round(value / step) * step, std::max(0, 2 - magnitude));
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

// The label of head's point on the trend's x axis: `run` measures the checkout, which is a pull
// request's head in CI and anything locally.
constexpr std::string_view k_trend_head = "this run";

// One stage's trend as a Mermaid `xychart-beta` line over the recorded commits that have a
// median and this run; xychart has no gap, so a commit without one is left out of that chart
// (`*left_out` counts them). "" when fewer than two points are left: a line of one draws nothing.
std::string trend_chart(const HistorySeries& series, const std::vector<HistoryCommit>& commits,
                        std::size_t* left_out) {
  std::string labels;
  std::string values;
  std::size_t points = 0;
  *left_out = 0;
  auto add = [&](std::string_view label, double value) {
    labels += (labels.empty() ? "" : ", ") + mermaid_string(label, 20);
    values += (values.empty() ? "" : ", ") + compact_number(value);
    ++points;
  };
  for (std::size_t i = 0; i < commits.size() && i < series.medians.size(); ++i) {
    const std::optional<double>& m = series.medians[i];
    if (m && std::isfinite(*m)) {
      add(short_sha(commits[i].commit), *m);
    } else {
      ++*left_out;
    }
  }
  if (series.head && std::isfinite(*series.head)) add(k_trend_head, *series.head);
  if (points < 2) return "";
  return fmt::format("xychart-beta\n    title {}\n    x-axis [{}]\n    y-axis {}\n    line [{}]\n",
                     mermaid_string(series.stage + " · " + series.metric, 80), labels,
                     mermaid_string(series.unit.empty() ? series.metric : series.unit, 20), values);
}

// One stage's trend on one line for a terminal: "config-load wall_ms (ms): 12.1 12.4 12.3 →
// this run 118", a commit without a median as —.
std::string trend_line(const HistorySeries& series) {
  std::string values;
  for (const auto& m : series.medians)
    values += (values.empty() ? "" : " ") + (m && std::isfinite(*m) ? compact_number(*m) : "—");
  return fmt::format(
      "- {} {}{}: {} → {} {}\n", md_text(capped(series.stage, 200)),
      md_text(capped(series.metric, 100)),
      series.unit.empty() ? "" : " (" + md_text(capped(series.unit, 40)) + ")",
      values.empty() ? "—" : values, k_trend_head,
      series.head && std::isfinite(*series.head) ? compact_number(*series.head) : "—");
}

// What the gate compared head with, for a trend whose recorded commits are not the base.
std::string compared_with(const Results& r) {
  if (!r.gate) return "";
  switch (r.gate->base_source) {
    case BaseSource::interleaved: return "the base measured beside it in this run";
    case BaseSource::cache: return "the base's result from the cache";
    case BaseSource::file: return "the baseline file";
    case BaseSource::history: break;
  }
  return "";
}

// The recorded results of the main branch, folded: per stage its recorded medians and this
// run's, as a Mermaid chart for GitHub, as a line for a terminal — behind a history baseline,
// or beside `ab`'s base, which is then said not to be these points. The stages in the table of
// changes come first when a cut report keeps only some.
Section trend_section(const Comparison& c, Reader reader) {
  const Results& r = c.results();
  Section s{"", {}, "\n</details>\n", "trend", "trends"};
  if (!r.history || r.history->commits.empty()) return s;
  const HistoryTrend& h = *r.history;
  const bool history_base = r.gate && r.gate->base_source == BaseSource::history;
  std::vector<std::string> no_chart;
  for (const auto& series : h.series) {
    const int rank = c.changed(series.stage) ? 2 : 3;
    if (reader == Reader::terminal) {
      s.items.push_back({trend_line(series), rank});
      continue;
    }
    std::size_t left_out = 0;
    std::string chart = trend_chart(series, h.commits, &left_out);
    if (chart.empty()) {
      no_chart.push_back(series.stage);
      continue;
    }
    std::string note;
    if (left_out > 0) {
      note = fmt::format("\n_{}: {} without a {} median left out._\n",
                         md_text(capped(series.stage, 200)),
                         plural(left_out, "recorded commit", "recorded commits"),
                         md_text(capped(series.metric, 100)));
    }
    s.items.push_back({"\n" + md_fence(chart, "mermaid") + note, rank});
  }
  if (!no_chart.empty()) {
    std::string names;
    for (const auto& n : no_chart)
      names += (names.empty() ? "" : ", ") + md_code(capped(one_line(n), 100));
    s.items.push_back(
        {fmt::format("\n_No chart for {} with fewer than two points: {}._\n",
                     plural(no_chart.size(), "stage", "stages"), capped(names, k_max_line_bytes)),
         3});
  }
  if (s.items.empty()) return s;
  const std::string branch = r.gate ? r.gate->base_git.branch : "";
  const std::string of = branch.empty() ? "" : " of " + branch;
  const std::string gaps = reader == Reader::terminal ? " (— where a commit has no median)" : "";
  std::string what;
  if (history_base) {
    what = fmt::format("Per stage the cold median of each recorded commit, oldest first, then {}{}.",
                       k_trend_head, gaps);
  } else {
    // ab's trend: the points are the branch's recorded history, the base was measured apart.
    std::string base = compared_with(r);
    what = fmt::format(
        "Per stage the cold median of each commit recorded{}, oldest first, then head: {}{}. "
        "These are the recorded results{} from earlier runs, not the base{}.",
        h.store.empty() ? "" : " in " + md_code(capped(one_line(h.store), 300)), k_trend_head,
        gaps, branch.empty() ? "" : " of " + md_code(capped(one_line(branch), 200)),
        base.empty() ? "" : ": the gate compared head with " + base);
  }
  s.head = fmt::format(
      "\n<details><summary>{}</summary>\n\n{}\n",
      summary_text(capped(one_line(fmt::format(
                              "Trend: {}{} and this run{}",
                              plural(h.commits.size(), "recorded commit", "recorded commits"), of,
                              history_base ? "" : " (head)")),
                          300)),
      what);
  if (reader == Reader::terminal) s.head += "\n";
  return s;
}

// `url` as a Markdown link destination: http(s) only, and every character that could end the
// link, the line or the destination percent-encoded; "" for any other scheme.
std::string link_url(std::string_view url) {
  if (!url.starts_with("https://") && !url.starts_with("http://")) return "";
  std::string out;
  // `@` too: the same in a query, and it cannot read as a mention.
  for (char ch : url.substr(0, url.find('#'))) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f ||
        std::string_view("<>()[]\"'`\\|*_~@").find(ch) != std::string_view::npos) {
      out += fmt::format("%{:02X}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

std::string commits_line(const Results& r) {
  std::string base_commit =
      r.gate && !r.gate->base_git.commit.empty() ? r.gate->base_git.commit : r.git.base;
  // `+dirty` (git describe --dirty's mark): what was measured is the commit with uncommitted
  // changes on top. run measures the working tree with its edits; ab measures the commit.
  auto commit = [](const std::string& sha, const std::string& branch, const GitInfo* git) {
    const bool dirty = git && !git->dirty.empty() && git->dirty_measured;
    std::string s = md_code(short_sha(sha) + (dirty ? "+dirty" : ""));
    if (!branch.empty()) s += " (" + md_code(capped(branch, 200)) + ")";
    return s;
  };
  std::string commits;
  if (r.gate && r.gate->base_source == BaseSource::history && r.history &&
      !r.history->commits.empty()) {
    // Many commits: the range, as the base line says, and the branch they were recorded on.
    std::string branch = r.gate->base_git.branch;
    commits +=
        fmt::format("base {} ({}{}) → ", history_range(*r.history),
                    branch.empty() ? "" : md_code(capped(one_line(branch), 200)) + ", ",
                    plural(r.history->commits.size(), "recorded commit", "recorded commits"));
  } else if (!base_commit.empty()) {
    const GitInfo* base_git = r.gate && base_commit == r.gate->base_git.commit ? &r.gate->base_git
                                                                                : nullptr;
    commits += "base " + commit(base_commit, base_git ? base_git->branch : "", base_git) + " → ";
  }
  if (!r.git.commit.empty()) {
    commits += "head " + commit(r.git.commit, r.git.branch, &r.git);
  } else {
    commits += r.git.unborn ? "head (git repository without commits)" : "head (not a git checkout)";
  }
  if (!r.git.dirty.empty()) {
    std::string changes = plural(r.git.dirty.size(), "uncommitted change", "uncommitted changes");
    commits += r.git.dirty_measured ? " with " + changes : " (" + changes + " not measured)";
  }
  // A baseline file the user gave is theirs to name; the cache's or ab's are internal.
  if (r.gate && r.gate->base_source == BaseSource::file && !r.gate->baseline.empty())
    commits += ", baseline " + md_code(capped(r.gate->baseline, 300));
  return "- Commits: " + commits + "\n";
}

std::string ci_line(const Results& r) {
  if (r.ci_run_url.empty()) return "";
  std::string url = link_url(r.ci_run_url);
  if (url.empty()) return "- CI run: " + md_code(capped(r.ci_run_url, 300)) + "\n";
  return fmt::format("- CI: [run]({0}) · artifact [coldgate-out]({0}#artifacts)\n", url);
}

std::string environment_line(const Environment& e) {
  std::vector<std::string> env;
  if (!e.postgres_version.empty()) env.push_back("PostgreSQL " + md_text(e.postgres_version));
  if (!e.provider.empty()) env.push_back(md_text(e.provider) + " provider");
  if (!e.cpu_model.empty() || e.cpus > 0) {
    env.push_back(md_text(e.cpu_model.empty() ? "CPU" : e.cpu_model) +
                  (e.cpus > 0 ? fmt::format(" ({} CPUs)", e.cpus) : ""));
  }
  if (!e.kernel.empty()) env.push_back(md_text(e.kernel));
  if (!e.os.empty()) env.push_back(md_text(e.os));
  std::string line;
  for (const auto& part : env) line += (line.empty() ? "" : " · ") + part;
  return line.empty() ? "" : "- Environment: " + line + "\n";
}

// The uncommitted changes named on the commits line, listed (capped) in a closed block.
std::string dirty_block(const GitInfo& git) {
  if (git.dirty.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < git.dirty.size() && i < k_dirty_lines; ++i)
    list += capped(one_line(git.dirty[i]), k_dirty_line_bytes) + "\n";
  if (git.dirty.size() > k_dirty_lines)
    list += fmt::format("… and {} more\n", git.dirty.size() - k_dirty_lines);
  return fmt::format("\n<details><summary>{}{}</summary>\n\n{}\n</details>\n",
                     plural(git.dirty.size(), "uncommitted change", "uncommitted changes"),
                     git.dirty_measured ? "" : ", not measured", md_fence(list));
}

std::string footer(const Results& r) {
  auto line = [](std::string text) {
    return text.size() <= k_max_footer_line_bytes ? text
                                                  : capped(text, k_max_footer_line_bytes) + "\n";
  };
  std::string out = "\n---\n\n" + line(commits_line(r)) + line(ci_line(r)) +
                    line(environment_line(r.environment));
  if (r.gate && !r.gate->environment_differences.empty()) {
    std::string diffs;
    for (const auto& d : r.gate->environment_differences)
      diffs += (diffs.empty() ? "" : "; ") + md_text(d);
    out += line("- ⚠️ **Environment differs from the baseline**: " + diffs + "\n");
  }
  out += line(fmt::format("- coldgate {}{}{}\n", md_text(r.tool_version),
                          r.config.empty() ? "" : " · " + md_code(r.config),
                          r.finished_at.empty() ? "" : " · " + md_text(r.finished_at)));
  return out + dirty_block(r.git);
}

// `item` within `budget` bytes: its code block shortened at a line boundary, or "" when even
// that does not fit.
std::string shortened(const Item& item, std::size_t budget, const std::string& full_name) {
  std::string note = fmt::format("… cut here; the whole text is in {}\n", full_name);
  std::size_t fixed = item.text.size() + item.after.size() + note.size() + item.info.size() + 64;
  if (item.body.empty() || budget < fixed + 200) return "";
  std::string_view body = utf8_prefix(item.body, budget - fixed);
  std::size_t nl = body.rfind('\n');
  body = body.substr(0, nl == std::string_view::npos ? 0 : nl + 1);
  // The fence may grow by one backtick per backtick run in `note`: it has none.
  std::string out = item.text + md_fence(std::string(body) + note, item.info) + item.after;
  return out.size() <= budget ? out : "";
}

std::string assemble(const std::string& head, const std::vector<Section>& sections,
                     const std::string& foot) {
  std::string out = head;
  for (const auto& s : sections) {
    if (s.items.empty()) continue;
    out += s.head;
    for (const auto& item : s.items) out += item.whole();
    out += s.tail;
  }
  return out + foot;
}

std::string more_note(std::size_t n, const Section& s, const std::string& full_name) {
  return fmt::format("\n_… {} more {} in {}._\n", format_value(static_cast<double>(n), "count"),
                     n == 1 ? s.what_one : s.what_many, md_code(full_name));
}

// Two passes over the sections, each keeping a prefix of its rank-sorted items: first only
// the urgent items (regressions, failures, changed snapshots; a long one shortened to a quarter
// of the limit), then the rest while room is left.
std::string cut_report(const std::string& head, std::vector<Section> sections,
                       const std::string& foot, const std::string& full_name,
                       std::size_t max_bytes) {
  std::string top =
      head + fmt::format(
                 "\n> [!NOTE]\n> This report was cut to stay under {} characters; "
                 "regressions, failures and "
                 "changed snapshots come first. The whole report is {}.\n",
                 format_value(static_cast<double>(max_bytes), "count"), md_code(full_name));
  std::size_t used = top.size() + foot.size();
  for (auto& s : sections) {
    std::stable_sort(s.items.begin(), s.items.end(),
                     [](const Item& a, const Item& b) { return a.rank < b.rank; });
    if (!s.items.empty()) used += more_note(s.items.size(), s, full_name).size();
  }
  std::vector<std::vector<std::string>> shown(sections.size());
  std::vector<bool> stopped(sections.size());
  auto pass = [&](int max_rank, std::size_t cap) {
    for (std::size_t k = 0; k < sections.size(); ++k) {
      const Section& s = sections[k];
      while (!stopped[k] && shown[k].size() < s.items.size()) {
        const Item& item = s.items[shown[k].size()];
        if (item.rank > max_rank) break;
        std::size_t open = shown[k].empty() ? s.head.size() + s.tail.size() : 0;
        std::size_t room = used + open < max_bytes ? max_bytes - used - open : 0;
        std::string text = item.whole();
        if (text.size() > std::min(room, cap))
          text = shortened(item, std::min(room, cap), full_name);
        if (text.empty()) {
          stopped[k] = true;  // keep a prefix: nothing after an item left out
          break;
        }
        used += open + text.size();
        shown[k].push_back(std::move(text));
      }
    }
  };
  pass(1, max_bytes / 4);
  pass(3, max_bytes);
  std::string out = top;
  for (std::size_t k = 0; k < sections.size(); ++k) {
    const Section& s = sections[k];
    if (s.items.empty()) continue;
    if (!shown[k].empty()) {
      out += s.head;
      for (const auto& text : shown[k]) out += text;
      out += s.tail;
    }
    if (shown[k].size() < s.items.size()) {
      out += more_note(s.items.size() - shown[k].size(), s, full_name);
    }
  }
  out += foot;
  // The caps above keep this from happening; a report over the limit would not post at all.
  if (out.size() > max_bytes) out = std::string(utf8_prefix(out, max_bytes - 2)) + "\n";
  return out;
}

}  // namespace

std::string marker_key(const std::string& title) {
  std::string key;
  for (char c : title) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_';
    if (keep) {
      key += c;
    } else if (!key.empty() && key.back() != '-') {
      key += '-';
    }
  }
  if (key.size() > 100) key.resize(100);
  while (!key.empty() && key.back() == '-') key.pop_back();
  return key.empty() ? "coldgate" : key;
}

std::string cut_markdown(std::string_view text, std::size_t max_bytes,
                         const std::string& full_name) {
  if (text.size() <= max_bytes) return std::string(text);
  std::string note = fmt::format(
      "\n> [!NOTE]\n> This report was cut to stay under {} characters. "
      "The whole report is {}.\n",
      format_value(static_cast<double>(max_bytes), "count"), md_code(full_name));
  // Room for the note and for closing what the cut leaves open (a fence of at most 64
  // backticks, a few `</details>`).
  std::size_t room = max_bytes > note.size() + 256 ? max_bytes - note.size() - 256 : 0;
  std::string_view kept = utf8_prefix(text, room);
  std::size_t nl = kept.rfind('\n');
  kept = kept.substr(0, nl == std::string_view::npos ? 0 : nl + 1);
  // Which fence and how many <details> are open at the cut (CommonMark: a fence closes on a
  // line of at least as many backticks and nothing else).
  std::string fence;
  int details = 0;
  for (std::size_t pos = 0; pos < kept.size();) {
    std::size_t end = kept.find('\n', pos);
    std::string_view line = kept.substr(pos, end - pos);
    pos = end + 1;
    std::size_t ticks = line.find_first_not_of('`');
    if (ticks == std::string_view::npos) ticks = line.size();
    if (!fence.empty()) {
      if (ticks >= fence.size() && line.find_first_not_of(" ", ticks) == std::string_view::npos)
        fence.clear();
    } else if (ticks >= 3) {
      fence.assign(ticks, '`');
    } else if (line.starts_with("<details")) {
      ++details;
    } else if (line.starts_with("</details>") && details > 0) {
      --details;
    }
  }
  std::string out(kept);
  if (!fence.empty()) out += fence.substr(0, 64) + "\n";
  for (int i = 0; i < details && out.size() + note.size() + 11 <= max_bytes; ++i)
    out += "</details>\n";
  out += note;
  return out.size() <= max_bytes ? out : std::string(utf8_prefix(out, max_bytes));
}

namespace {

// report::markdown for `reader`, the reader of the current ReaderScope (the escapes follow the
// scope; the trend's form follows `reader`): `report`, `full` and `cut`.
Markdown render(const Results& r, const Results* base, const std::string& full_name,
                std::size_t max_bytes, Reader reader) {
  Comparison c(r, base);
  std::string head = top(r);
  std::string foot = footer(r);
  Section changes = table_section(changes_table(c), "change", "changes");
  Section timings = c.gated() ? Section{} : table_section(head_table(r), "table row", "table rows");
  Section unchanged = unchanged_section(c);
  Section errors = errors_section(r);
  Section diffs = diffs_section(r);
  Section diagnoses = diagnoses_section(c);
  Section statements = statements_section(c);
  Section growth = growth_section(r);
  Section database = database_section(r);
  Section remedies = remedies_section(r);
  Section chart = chart_section(c);
  Section history = history_section(r);
  Section trend = trend_section(c, reader);
  Section more = more_metrics_section(c);
  Section migration{"", {}, "", "migration", "migrations"};
  if (r.migration) migration.items.push_back({migration_section(*r.migration), 0});
  Markdown md;
  md.full = assemble(head,
                     {migration, changes, timings, unchanged, statements, errors, diffs, diagnoses,
                      growth, remedies, database, chart, history, trend, more},
                     foot);
  if (md.full.size() <= max_bytes) {
    md.report = md.full;
    return md;
  }
  md.cut = true;
  // Errors, diffs, diagnoses and the chart before the long tables here: thousands of unchanged
  // stages must not crowd out why the gate failed. The history's commits with the chart; its
  // trend last, the first to go: the table of changes has the base and head medians already.
  md.report = cut_report(head,
                         {migration, changes, statements, errors, diffs, diagnoses, growth, remedies, chart, history,
                          timings,
                          unchanged, database, more, trend},
                         foot, full_name, max_bytes);
  return md;
}

}  // namespace

Markdown markdown(const Results& r, const Results* base, const std::string& full_name,
                  std::size_t max_bytes) {
  Markdown md = render(r, base, full_name, max_bytes, Reader::github);
  // Cut only when `report` is, and then `full_name` exists: entities are longer than their
  // characters, but a trend's lines can be longer than its charts.
  ReaderScope terminal(Reader::terminal);
  md.terminal =
      render(r, base, full_name, md.cut ? max_bytes : std::numeric_limits<std::size_t>::max(),
             Reader::terminal)
          .report;
  return md;
}

std::string repo_path(std::string_view path, const std::vector<std::string>& anchors) {
  for (std::string_view worktree : {"coldgate-out/ab/head/", "coldgate-out/ab/base/"}) {
    std::size_t pos = path.rfind(worktree);
    if (pos != std::string_view::npos && (pos == 0 || path[pos - 1] == '/'))
      return std::string(path.substr(pos + worktree.size()));
  }
  if (!path.starts_with('/')) return std::string(path);
  for (std::string_view anchor : anchors) {
    if (!anchor.empty() && !anchor.starts_with('/') && path.size() > anchor.size() &&
        path.ends_with(anchor) && path[path.size() - anchor.size() - 1] == '/') {
      return std::string(anchor);
    }
  }
  if (std::size_t out = path.rfind("/coldgate-out/"); out != std::string_view::npos)
    return std::string(path.substr(out + 1));
  return "…/" + std::string(path.substr(path.rfind('/') + 1));
}

}  // namespace coldgate::report
