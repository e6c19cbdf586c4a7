#include "report/sections.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <optional>

namespace coldgate::report {

using namespace coldgate::results;

namespace {

// Stages the cold wall time chart shows at most.
constexpr std::size_t k_chart_stages = 20;

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

}  // namespace

// `text` as a quoted Mermaid string of at most about `max_bytes`: Mermaid takes a quoted label
// up to the next `"`, `#` starts an entity code, `<` could open markup in a label, backticks
// could touch the fence, a newline would end the statement: none of them get through.
std::string mermaid_string(std::string_view text, std::size_t max_bytes) {
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

}  // namespace coldgate::report
