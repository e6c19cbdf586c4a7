#include "report/sections.hpp"

#include <fmt/core.h>

#include <cmath>

namespace coldgate::report {

using namespace coldgate::results;

namespace {

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

}  // namespace

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

}  // namespace coldgate::report
