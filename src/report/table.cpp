#include "report/table.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "gate/improvements.hpp"
#include "report/escape.hpp"

namespace coldgate::report {
namespace {

using namespace coldgate::results;

// A cell of free text (a reason, a message, an error) stays one short line: the table is read
// at a glance, the whole text is in results.json.
constexpr std::size_t k_max_why_bytes = 300;

// md_text with `[` and `]` as character references rather than backslash escapes: free text
// (a server's error quoting a value) then holds no `](url)` at all, escaped or not.
std::string cell_text(std::string_view text) {
  std::string out;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t bracket = std::min(text.find_first_of("[]", start), text.size());
    out += md_text(text.substr(start, bracket - start));
    if (bracket == text.size()) break;
    out += md_bracket(text[bracket]);
    start = bracket + 1;
  }
  return out;
}

// The first line of `text`, at most k_max_why_bytes, for a table cell (escaped); a longer one
// is cut after a whole word (within the last third) and ends in " …".
std::string why_cell(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (line.empty()) return "—";
  if (line.size() <= k_max_why_bytes) return cell_text(line);
  std::string_view cut = utf8_prefix(line, k_max_why_bytes);
  if (std::size_t space = cut.rfind(' '); space != std::string_view::npos && space >= cut.size() * 2 / 3)
    cut = cut.substr(0, space);
  while (!cut.empty() && std::string_view(",;:(-").find(cut.back()) != std::string_view::npos)
    cut.remove_suffix(1);
  return cell_text(cut) + " …";
}

bool is_time_metric(std::string_view name) {
  return name.ends_with("_ms") || name == "peak_rss_bytes";
}

// Metrics the tables leave to results.json: the JIT phases (jit_total_ms sums them), the
// profile's row and block counts, and every JIT row when JIT did not fire.
bool shown_in_table(const StageResult& s, const std::string& name) {
  if (name == "jit_generation_ms" || name == "jit_inlining_ms" || name == "jit_optimization_ms" ||
      name == "jit_emission_ms" || name == "db_rows" || name == "db_shared_hit_blocks" ||
      name == "db_shared_read_blocks") {
    return false;
  }
  if (name == "jit_functions" || name == "jit_total_ms") return s.explain && s.explain->jit;
  if (name == "db_jit_ms" || name == "db_jit_functions") {
    const Metric* m = s.find("db_jit_functions");
    return m && (std::any_of(m->cold.begin(), m->cold.end(), [](double v) { return v > 0; }) ||
                 std::any_of(m->warm.begin(), m->warm.end(), [](double v) { return v > 0; }));
  }
  return true;
}

// The median the gate would read: the cold samples' (warm ones' when there are no cold).
std::optional<double> gated_median(const Metric* m) {
  if (!m || m->gated().empty()) return std::nullopt;
  return median(m->gated());
}

int rank_of(Verdict verdict) {
  if (verdict == Verdict::regression) return 0;
  if (verdict == Verdict::slower) return 1;
  if (verdict == Verdict::faster || verdict == Verdict::added || verdict == Verdict::removed)
    return 2;
  return 3;
}

// Where a row of the table of changes goes: the order the reader should meet them in.
enum class Kind { regression, slower, faster, failed, snapshot, measured, added_or_removed };

Kind kind_of(Verdict verdict) {
  if (verdict == Verdict::regression) return Kind::regression;
  if (verdict == Verdict::slower) return Kind::slower;
  if (verdict == Verdict::faster) return Kind::faster;
  return Kind::added_or_removed;
}

// A row of the table of changes, its cells escaped Markdown; before / after only with a gate.
struct ChangeRow {
  Kind kind;
  int rank;
  std::string stage;
  std::string metric;
  std::string before;
  std::string after;
  std::string change;
  std::string why;

  std::string text(bool compared) const {
    if (!compared) return fmt::format("| {} | {} | {} | {} |\n", stage, metric, change, why);
    return fmt::format("| {} | {} | {} | {} | {} | {} |\n", stage, metric, before, after, change,
                       why);
  }
};


// "40", "1 → 40"; "—" for a side without the figure.
std::string before_after(std::optional<double> b, std::optional<double> h, const char* unit) {
  auto text = [&](std::optional<double> v) { return v ? format_value(*v, unit) : std::string("—"); };
  std::string before = text(b);
  std::string after = text(h);
  return before == after ? after : before + " → " + after;
}

std::optional<double> calls_of(const std::optional<StatementSide>& s) {
  return s ? std::optional<double>(s->calls) : std::nullopt;
}
std::optional<double> ms_of(const std::optional<StatementSide>& s) {
  return s ? std::optional<double>(s->plan_ms_per_call + s->exec_ms_per_call) : std::nullopt;
}

// A statement's blocks per call on both sides, one figure throughout: what the gate judged
// when both sides have the statement (gate::judged_blocks: the plans' execution when both
// captured one), else the side's plan's execution where captured, else pg_stat_statements'.
struct BlocksFigures {
  std::optional<double> base;
  std::optional<double> head;
};

BlocksFigures blocks_figures(const StatementVerdict& v) {
  auto rounded = [](std::optional<double> x) {
    return x ? std::optional<double>(std::round(*x)) : std::nullopt;
  };
  if (auto judged = gate::judged_blocks(v)) return {rounded(judged->base), rounded(judged->head)};
  auto one = [&](const std::optional<StatementSide>& s) -> std::optional<double> {
    if (!s) return std::nullopt;
    return rounded(s->execution_blocks_per_call ? s->execution_blocks_per_call : s->blocks_per_call);
  };
  return {one(v.base), one(v.head)};
}

// The gate's reason as a row shows it. When the row's blocks are the plans' execution, the
// gate's note quoting pg_stat_statements' other figures is left out: one figure per row, and
// the legend says which (results.json keeps the whole reason).
std::string shown_reason(const StatementVerdict& v) {
  auto judged = gate::judged_blocks(v);
  if (!judged || !judged->plans) return v.reason;
  std::string out;
  std::string_view rest = v.reason;
  while (!rest.empty()) {
    std::size_t end = rest.find("; ");
    std::string_view part = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
    if (part.starts_with("pg_stat_statements' blocks per call")) continue;
    out += (out.empty() ? "" : "; ") + std::string(part);
  }
  return out;
}

std::string statement_change_cell(const StatementVerdict& v) {
  switch (v.verdict) {
    case Verdict::regression: return "🔴 regression";
    case Verdict::faster: return "🟢 fewer";
    case Verdict::added: return "🆕 new";
    case Verdict::removed: return "➖ gone";
    default: return "same";
  }
}

// A statement's line (distinct_statement_lines) as a table cell: code on one line.
std::string statement_cell(const std::string& line) {
  return md_code(line, true);
}

// About how long a statement's line is in a table.
constexpr std::size_t k_statement_line_bytes = 100;

// `line`: the statement's line among its stage's (distinct_statement_lines).
ChangeRow statement_row(const StatementVerdict& v, const std::string& line) {
  const BlocksFigures blocks = blocks_figures(v);
  auto side = [](const std::optional<StatementSide>& s, std::optional<double> blocks_per_call) {
    if (!s) return std::string("—");
    std::string out = fmt::format("{} call{}", format_value(s->calls, "count"), s->calls == 1 ? "" : "s");
    if (blocks_per_call) out += fmt::format(" · {} blocks/call", format_value(*blocks_per_call, "count"));
    return out;
  };
  return {Kind::regression, 0, md_text(v.stage), "statement " + statement_cell(line),
          md_text(side(v.base, blocks.base)), md_text(side(v.head, blocks.head)),
          statement_change_cell(v), why_cell(shown_reason(v))};
}

// The reason a new / removed row needs when the gate gives none.
std::string default_why(const MetricVerdict& v, bool whole_stage) {
  if (v.verdict == Verdict::added) return whole_stage ? "not in the base" : "no base sample";
  if (v.verdict == Verdict::removed) return whole_stage ? "not in head" : "no head sample";
  return "";
}

ChangeRow metric_row(const Comparison& c, const std::string& stage, const StageResult* head,
                     const MetricVerdict& v) {
  const StageResult* bs = c.base_stage(stage);
  const Metric* base_m = bs ? bs->find(v.metric) : nullptr;
  const Metric* head_m = head ? head->find(v.metric) : nullptr;
  std::string unit = head_m ? head_m->unit : base_m ? base_m->unit : v.unit;
  std::string before = base_m ? format_samples(base_m->cold, unit, v.base_median)
                              : format_samples({}, unit, v.base_median);
  std::string after = head_m ? format_samples(head_m->cold, unit, v.head_median)
                             : format_samples({}, unit, v.head_median);
  bool whole = c.whole_stage(stage);
  std::string why = v.reason.empty() ? default_why(v, whole) : v.reason;
  return {kind_of(v.verdict), rank_of(v.verdict), md_text(stage),        md_text(v.metric),
          md_text(before),    md_text(after),     change_cell(v, whole), why_cell(why)};
}

ChangeRow failed_row(const StageResult& s) {
  return {Kind::failed, 0, md_text(s.name), "—", "—", "—", "❌ failed",
          why_cell(results::failure_summary(s.error))};
}

ChangeRow snapshot_row(const StageResult& s) {
  const SnapshotResult& sn = *s.snapshot;
  bool updated = sn.status == SnapshotStatus::updated;
  std::string why =
      sn.message.empty() ? "snapshot " + std::string(to_string(sn.status)) : sn.message;
  return {Kind::snapshot,
          updated ? 2 : 0,
          md_text(s.name),
          "snapshot",
          "—",
          "—",
          (updated ? "📝 " : "❌ ") + md_text(to_string(sn.status)),
          why_cell(why)};
}

ChangeRow obsolete_row(const std::string& path) {
  return {Kind::snapshot,
          2,
          "—",
          "snapshot",
          "—",
          "—",
          "⚠️ obsolete",
          md_code(path, true) + ": no stage claims it"};
}

// How the stage was measured unlike its base (gate.measurement_differences), one row: a
// different method makes the timings incomparable as they stand; a changed setting is usually
// the change under test (`jit: "off"`), so it is named, not alarmed.
std::optional<ChangeRow> measured_row(const std::string& stage,
                                      const std::vector<const MeasurementDifference*>& diffs) {
  if (diffs.empty()) return std::nullopt;
  std::string before;
  std::string after;
  bool method = false;
  for (const MeasurementDifference* d : diffs) {
    method = method || d->field.rfind("settings.", 0) != 0;
    before += (before.empty() ? "" : ", ") + d->field + " " + (d->base.empty() ? "—" : d->base);
    after += (after.empty() ? "" : ", ") + d->field + " " + (d->head.empty() ? "—" : d->head);
  }
  return ChangeRow{Kind::measured,
                   2,
                   md_text(stage),
                   "measured",
                   md_text(before),
                   md_text(after),
                   method ? "⚠️ measured differently" : "⚙️ settings changed",
                   method
                       ? why_cell("the two sides were not measured alike: compare the timings "
                                  "with care (gate.require_same_environment makes this an error)")
                       : why_cell("the stage's settings differ between base and head")};
}

// The rows of the stage's listed verdicts; a new / removed stage without any gets one row.
void add_metric_rows(const Comparison& c, const std::string& stage, const StageResult* head,
                     std::vector<ChangeRow>& rows) {
  std::size_t before = rows.size();
  for (const MetricVerdict* v : c.verdicts(stage)) {
    if (c.listed(stage, v->metric)) rows.push_back(metric_row(c, stage, head, *v));
  }
  if (rows.size() > before || !c.whole_stage(stage)) return;
  rows.push_back({Kind::added_or_removed, 2, md_text(stage), "—", "—", "—",
                  head ? "🆕 new stage" : "➖ removed stage",
                  head ? "not in the base" : "not in head"});
}

// "wall_ms 2.40 s → 2.41 s": a gated metric of an unchanged stage, medians only.
std::string before_after(const MetricVerdict& v) {
  auto side = [&](std::optional<double> x) { return x ? format_value(*x, v.unit) : "—"; };
  return fmt::format("{} {} → {}", md_text(v.metric), md_text(side(v.base_median)),
                     md_text(side(v.head_median)));
}

// One list line of more_metrics with a gate: medians before → after, ratio, and why it is not
// in the table of changes.
std::string gated_line(const Comparison& c, const StageResult& s, const std::string& name,
                       const Metric& m) {
  const MetricVerdict* v = c.verdict(s.name, name);
  const StageResult* bs = c.base_stage(s.name);
  std::optional<double> before = v ? v->base_median : gated_median(bs ? bs->find(name) : nullptr);
  std::optional<double> after = v ? v->head_median : gated_median(&m);
  std::string note = v ? md_text(to_string(v->verdict)) : "not gated";
  if (before && after && *before > 0) note = format_ratio(*after / *before) + ", " + note;
  return fmt::format("- {}: {} → {} ({})\n", md_text(name),
                     md_text(before ? format_value(*before, m.unit) : "—"),
                     md_text(after ? format_value(*after, m.unit) : "—"), note);
}

// One list line of more_metrics without a gate: cold and warm summaries.
std::string head_line(const std::string& name, const Metric& m) {
  std::string out = "- " + md_text(name) + ": " + md_text(format_samples(m.cold, m.unit));
  if (!m.warm.empty()) out += ", warm " + md_text(format_samples(m.warm, m.unit));
  return out + "\n";
}

// The metrics of `s` that more_metrics lists, as its lines.
std::string more_lines(const Comparison& c, const StageResult& s, std::size_t& count) {
  std::string lines;
  for (const auto& [name, m] : s.metrics) {
    if (!shown_in_table(s, name) || (m.cold.empty() && m.warm.empty())) continue;
    if (!c.gated()) {
      if (is_time_metric(name)) continue;
      lines += head_line(name, m);
    } else {
      // Unchanged stages show their gated metrics in unchanged_table.
      if (c.listed(s.name, name) || (c.verdict(s.name, name) && !c.changed(s.name))) continue;
      lines += gated_line(c, s, name, m);
    }
    ++count;
  }
  return lines;
}

// A row of "Statements that changed": one verdict, or a new statement with the gone one it
// replaced (`replaced`).
struct StatementRow {
  const StatementVerdict* v;
  const StatementVerdict* replaced = nullptr;
};

// The rows of a stage's changed statements, in the gate's order. A new statement and a gone
// one of the same shape (statement_shape: its verb and the tables it reads) are one row at the
// new one's place: an ORM that changes a query's column list or a condition makes a new text
// the gate cannot pair, and a reviewer reads one rewritten statement, not a new and a gone one.
// A new statement the gate judged a regression keeps its own row.
std::vector<StatementRow> statement_rows(const std::vector<const StatementVerdict*>& changed) {
  const std::size_t n = changed.size();
  std::map<std::string, std::vector<std::size_t>> gone;  // shape → gone statements, in order
  for (std::size_t i = 0; i < n; ++i) {
    const StatementVerdict& v = *changed[i];
    if (v.head || !v.base) continue;
    if (std::string shape = statement_shape(v.query); !shape.empty()) gone[shape].push_back(i);
  }
  std::vector<std::optional<std::size_t>> partner(n);
  std::vector<bool> taken(n);
  for (std::size_t i = 0; i < n; ++i) {
    const StatementVerdict& v = *changed[i];
    if (v.base || !v.head || v.verdict != Verdict::added) continue;
    auto it = gone.find(statement_shape(v.query));
    if (it == gone.end()) continue;
    for (std::size_t k : it->second) {
      if (taken[k]) continue;
      taken[k] = true;
      partner[i] = k;
      break;
    }
  }
  std::vector<StatementRow> rows;
  for (std::size_t i = 0; i < n; ++i) {
    if (taken[i]) continue;
    rows.push_back({changed[i], partner[i] ? changed[*partner[i]] : nullptr});
  }
  return rows;
}

}  // namespace

std::string change_cell(const MetricVerdict& v, bool whole_stage) {
  std::string ratio = v.ratio ? format_ratio(*v.ratio) + " " : "";
  if (v.verdict == Verdict::regression) return "🔴 " + ratio + "regression";
  if (v.verdict == Verdict::slower) return "🟠 " + ratio + "slower";
  if (v.verdict == Verdict::faster) return "🟢 " + ratio + "faster";
  if (v.verdict == Verdict::added) return whole_stage ? "🆕 new stage" : "🆕 new";
  if (v.verdict == Verdict::removed) return whole_stage ? "➖ removed stage" : "➖ removed";
  return md_text(to_string(v.verdict));
}

std::string value_or_dash(std::optional<double> v, const std::string& unit) {
  return v ? results::format_value(*v, unit) : "—";
}

std::string summary_text(std::string_view text) {
  std::string out;
  for (char c : html_text(text)) {
    if (c == '[' || c == ']') {
      out += md_bracket(c);
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_samples(const std::vector<double>& samples, const std::string& unit,
                           std::optional<double> median_override) {
  if (samples.empty()) return median_override ? format_value(*median_override, unit) : "—";
  std::string med = format_value(median_override ? *median_override : median(samples), unit);
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  std::string low = format_value(*lo, unit);
  std::string high = format_value(*hi, unit);
  // "1,404 (1,404 – 1,404)" says nothing the median does not.
  if (low == high) return med;
  return fmt::format("{} ({} – {})", med, low, high);
}

Comparison::Comparison(const Results& r, const Results* base) : m_results(r) {
  if (base) {
    for (const auto& s : base->stages) m_base_stages.emplace(s.name, &s);
  }
  for (const auto& s : r.stages) {
    if (s.failed()) note(s.name, 0);
    if (s.snapshot && s.snapshot->status != SnapshotStatus::match)
      note(s.name, s.snapshot->status == SnapshotStatus::updated ? 2 : 0);
  }
  if (!r.gate) return;
  for (const auto& v : r.gate->metrics) {
    m_verdicts[v.stage].push_back(&v);
    if (v.verdict != Verdict::same) note(v.stage, rank_of(v.verdict));
  }
  for (const auto& v : r.gate->statements) {
    m_statements[v.stage].push_back(&v);
    if (v.verdict != Verdict::same) note(v.stage, rank_of(v.verdict));
  }
  for (const auto& d : r.gate->measurement_differences) {
    m_differences[d.stage].push_back(&d);
    note(d.stage, 2);
  }
  std::set<std::string> head_stages;
  for (const auto& s : r.stages) head_stages.insert(s.name);
  auto whole = [&](const std::string& stage) {
    const auto& vs = verdicts(stage);
    auto wall = std::find_if(vs.begin(), vs.end(),
                             [](const MetricVerdict* v) { return v->metric == "wall_ms"; });
    m_stage_metric[stage] = wall != vs.end() ? "wall_ms" : vs.empty() ? "" : vs.front()->metric;
    note(stage, 2);
  };
  for (const auto& name : r.gate->stages_new) whole(name);
  for (const auto& name : r.gate->stages_removed) {
    if (head_stages.count(name)) continue;
    whole(name);
    m_removed.push_back(name);
  }
}

void Comparison::note(const std::string& stage, int rank) {
  auto [it, added] = m_rank.emplace(stage, rank);
  if (!added) it->second = std::min(it->second, rank);
}

const std::vector<const StatementVerdict*>& Comparison::statements(
    const std::string& stage) const {
  static const std::vector<const StatementVerdict*> none;
  auto it = m_statements.find(stage);
  return it == m_statements.end() ? none : it->second;
}

const std::vector<const MetricVerdict*>& Comparison::verdicts(const std::string& stage) const {
  static const std::vector<const MetricVerdict*> none;
  auto it = m_verdicts.find(stage);
  return it == m_verdicts.end() ? none : it->second;
}

const MetricVerdict* Comparison::verdict(const std::string& stage,
                                         const std::string& metric) const {
  for (const MetricVerdict* v : verdicts(stage)) {
    if (v->metric == metric) return v;
  }
  return nullptr;
}

const std::vector<const MeasurementDifference*>& Comparison::measurement_differences(
    const std::string& stage) const {
  static const std::vector<const MeasurementDifference*> none;
  auto it = m_differences.find(stage);
  return it == m_differences.end() ? none : it->second;
}

const StageResult* Comparison::base_stage(const std::string& name) const {
  auto it = m_base_stages.find(name);
  return it == m_base_stages.end() ? nullptr : it->second;
}

int Comparison::rank(const std::string& stage) const {
  auto it = m_rank.find(stage);
  return it == m_rank.end() ? 3 : it->second;
}

bool Comparison::listed(const std::string& stage, const std::string& metric) const {
  const MetricVerdict* v = verdict(stage, metric);
  if (!v || v->verdict == Verdict::same) return false;
  auto it = m_stage_metric.find(stage);
  return it == m_stage_metric.end() || it->second == metric;
}

MetricsTable changes_table(const Comparison& c) {
  const Results& r = c.results();
  std::vector<ChangeRow> rows;
  for (const auto& s : r.stages) {
    if (s.failed()) rows.push_back(failed_row(s));
    add_metric_rows(c, s.name, &s, rows);
    if (s.snapshot && s.snapshot->status != SnapshotStatus::match) rows.push_back(snapshot_row(s));
    if (auto row = measured_row(s.name, c.measurement_differences(s.name))) rows.push_back(*row);
    std::vector<const StatementVerdict*> regressions;
    std::vector<std::string> texts;
    for (const StatementVerdict* v : c.statements(s.name)) {
      if (v->verdict != Verdict::regression) continue;
      regressions.push_back(v);
      texts.push_back(v->query);
    }
    const std::vector<std::string> lines = distinct_statement_lines(texts, k_statement_line_bytes);
    for (std::size_t i = 0; i < regressions.size(); ++i)
      rows.push_back(statement_row(*regressions[i], lines[i]));
  }
  for (const auto& name : c.removed_stages()) add_metric_rows(c, name, nullptr, rows);
  for (const auto& path : r.obsolete_snapshots) rows.push_back(obsolete_row(path));
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ChangeRow& a, const ChangeRow& b) { return a.kind < b.kind; });
  MetricsTable t;
  if (rows.empty()) return t;
  if (c.gated()) {
    t.header = "| Stage | Metric | Before | After | Change | Why |\n|---|---|---:|---:|---|---|\n";
    t.legend =
        "Before / after: median of the cold runs (min – max); change: after ÷ before, judged by "
        "the gate's thresholds (🔴 fails the gate).\n";
  } else {
    // Nothing was compared: no before, after or change to show.
    t.header = "| Stage | What | Status | Why |\n|---|---|---|---|\n";
  }
  for (const auto& row : rows) t.rows.push_back({row.text(c.gated()), row.rank});
  return t;
}

std::vector<TableRow> statements_blocks(const Comparison& c) {
  std::vector<TableRow> out;
  if (!c.gated()) return out;
  for (const auto& s : c.results().stages) {
    std::vector<const StatementVerdict*> changed;
    for (const StatementVerdict* v : c.statements(s.name)) {
      if (v->changed()) changed.push_back(v);
    }
    if (changed.empty()) continue;
    bool regressed = changed.front()->verdict == Verdict::regression;
    std::string text = fmt::format(
        "\n**{}**\n\n| Statement | Calls per run | Blocks per call | ms per call | Change | Why "
        "|\n|---|--:|--:|--:|---|---|\n",
        md_text(s.name));
    const std::vector<StatementRow> rows = statement_rows(changed);
    // Every text the block names, told apart: a rewritten statement's old text is in its row.
    std::vector<std::string> texts;
    for (const StatementRow& row : rows) {
      texts.push_back(row.v->query);
      if (row.replaced) texts.push_back(row.replaced->query);
    }
    const std::vector<std::string> lines = distinct_statement_lines(texts, k_statement_line_bytes);
    std::string ids;
    const std::size_t n = std::min(rows.size(), k_statements_per_stage);
    std::size_t line = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const StatementRow& row = rows[i];
      const StatementVerdict& v = *row.v;
      const std::string& head_line = lines[line++];
      const std::string* base_line = row.replaced ? &lines[line++] : nullptr;
      if (i >= n) continue;
      // A rewritten statement: the gone one's figures before, the new one's after.
      const StatementVerdict& before = row.replaced ? *row.replaced : v;
      const std::optional<StatementSide>& base = before.base;
      const BlocksFigures blocks_before = blocks_figures(before);
      const BlocksFigures blocks_after = blocks_figures(v);
      std::string change = statement_change_cell(v);
      std::string why = why_cell(shown_reason(v));
      if (row.replaced) {
        change = "🔁 rewritten";
        why = md_text("replaces ") + md_code(*base_line, true) +
              md_text(" (same tables; new and gone to the gate, not judged as one)");
      }
      text += fmt::format("| {} | {} | {} | {} | {} | {} |\n", statement_cell(head_line),
                          md_text(before_after(calls_of(base), calls_of(v.head), "count")),
                          md_text(before_after(blocks_before.base, blocks_after.head, "count")),
                          md_text(before_after(ms_of(base), ms_of(v.head), "ms")), change, why);
      // A row of its own under the statement's: a line between rows would end the table (or,
      // without pipes, be read as a row anyway: GFM spec, "Tables").
      if (!v.plan_change.empty()) {
        text += fmt::format("| ↳ | | | | 🔀 plan changed | {} |\n", why_cell(v.plan_change));
      }
      if (!v.growth_change.empty()) {
        text += fmt::format("| ↳ | | | | 📈 growth with the data | {} |\n", why_cell(v.growth_change));
      }
      // Only ids that differ: the same id on both sides is nothing to look up twice.
      if (base && v.head && base->queryid != v.head->queryid) {
        ids += fmt::format("- {}: base {} · head {}\n", statement_cell(head_line),
                           md_code(base->queryid), md_code(v.head->queryid));
      }
    }
    if (rows.size() > n) {
      text += fmt::format("\n… {} more in results.json (`gate.statements`)\n", rows.size() - n);
    }
    if (!ids.empty()) {
      text += fmt::format("\n<details><summary>queryids (they differ between the two databases)"
                          "</summary>\n\n{}\n</details>\n",
                          ids);
    }
    out.push_back({text, regressed ? 0 : 2});
  }
  return out;
}

MetricsTable head_table(const Results& r) {
  MetricsTable t;
  t.header =
      "| Stage | Metric | Cold median (min – max) | Warm median (min – max) |\n"
      "|---|---|---:|---:|\n";
  for (const auto& s : r.stages) {
    bool any = false;
    for (const auto& [name, m] : s.metrics) {
      if (!is_time_metric(name) || !shown_in_table(s, name) || (m.cold.empty() && m.warm.empty()))
        continue;
      t.rows.push_back({fmt::format("| {} | {} | {} | {} |\n", md_text(s.name), md_text(name),
                                    md_text(format_samples(m.cold, m.unit)),
                                    md_text(format_samples(m.warm, m.unit))),
                        3});
      any = true;
    }
    if (!any && s.failed())
      t.rows.push_back({fmt::format("| {} | — | ❌ failed | — |\n", md_text(s.name)), 3});
  }
  return t;
}

MetricsTable unchanged_table(const Comparison& c) {
  MetricsTable t;
  if (!c.gated()) return t;
  t.header = "| Stage | Gated metrics: median before → after |\n|---|---|\n";
  for (const auto& s : c.results().stages) {
    if (c.changed(s.name)) continue;
    std::string cells;
    for (const MetricVerdict* v : c.verdicts(s.name)) {
      if (!shown_in_table(s, v->metric)) continue;
      cells += (cells.empty() ? "" : " · ") + before_after(*v);
    }
    t.rows.push_back(
        {fmt::format("| {} | {} |\n", md_text(s.name), cells.empty() ? "—" : cells), 3});
  }
  return t;
}

std::vector<TableRow> more_metrics(const Comparison& c) {
  std::vector<TableRow> out;
  for (const auto& s : c.results().stages) {
    std::size_t count = 0;
    std::string lines = more_lines(c, s, count);
    if (count == 0) continue;
    out.push_back({fmt::format("\n<details><summary>{}: {} metric{}</summary>\n\n{}\n</details>\n",
                               summary_text(s.name), count, count == 1 ? "" : "s", lines),
                   3});
  }
  return out;
}

}  // namespace coldgate::report
