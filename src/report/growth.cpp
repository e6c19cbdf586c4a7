#include "report/sections.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "results/growth.hpp"

namespace coldgate::report {

using namespace coldgate::results;

namespace {

// Statements per stage in the Growth section: those that grow first, then by time.
constexpr std::size_t k_growth_statements = 8;

// "24 → 96 → 384 · linear" for a table cell; "24 → 96 · linear" with two scales.
std::string growth_cell(const GrowthFit& f) {
  std::string values = growth_values(f);
  if (f.growth == GrowthClass::none) return values;
  const std::string name(to_string(f.growth));
  return values + " · " + (f.growth > GrowthClass::constant ? "**" + name + "**" : name);
}

// What a statement's growth means, in one line; "" when nothing grows.
std::string growth_meaning(const StatementGrowth& g) {
  std::vector<std::string> parts;
  if (g.calls.growth >= GrowthClass::linear) {
    parts.push_back(fmt::format("calls grow {} with the data: an N+1 that grows", growth_adverb(g.calls.growth)));
  }
  if (g.blocks_per_call.growth >= GrowthClass::linear) {
    const bool rows_flat = g.rows_per_call.growth <= GrowthClass::constant;
    parts.push_back(fmt::format("blocks per call grow {}{}", growth_adverb(g.blocks_per_call.growth),
                                rows_flat ? " while rows per call stay constant: it reads more of a table to return "
                                            "the same rows (a sequential scan, an index it lacks)"
                                          : ""));
  } else if (g.blocks_per_call.growth == GrowthClass::sublinear) {
    // An index's depth grows with the logarithm of its rows: not a scan.
    parts.push_back("blocks per call grow sublinearly, slower than the data (an index's depth, a scan "
                    "that stops early)");
  }
  if (g.rows_per_call.growth >= GrowthClass::linear) {
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

}  // namespace

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
                                   ms_values(g.wall_ms) + (g.wall_ms.growth == GrowthClass::none
                                                                 ? ""
                                                                 : " · " + std::string(to_string(g.wall_ms.growth))));
    if (g.production_scale && g.wall_ms.projected) {
      text += fmt::format("; projected at ×{:g}: {} per run", *g.production_scale,
                          projected_value(*g.wall_ms.projected, "ms"));
      projected = true;
    }
    text += "\n";
    if (!g.error.empty()) text += fmt::format("\n⚠️ {}\n", md_with_code(capped(g.error, k_max_line_bytes)));
    std::vector<const StatementGrowth*> rows;
    auto grows = [](const StatementGrowth* x) {
      return std::max({x->calls.growth, x->rows_per_call.growth, x->blocks_per_call.growth});
    };
    std::size_t hidden = 0;
    for (const auto& x : g.statements) {
      if (bookkeeping(x.query) && grows(&x) == GrowthClass::constant) {
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
    std::vector<std::string> texts;
    for (std::size_t i = 0; i < n; ++i) texts.push_back(rows[i]->query);
    const std::vector<std::string> lines = distinct_statement_lines(texts, 100);
    for (std::size_t i = 0; i < n; ++i) {
      const StatementGrowth& x = *rows[i];
      text += fmt::format("| {} | {} | {} | {} |", md_code(lines[i], true),
                          growth_cell(x.calls), growth_cell(x.rows_per_call), growth_cell(x.blocks_per_call));
      if (g.production_scale) text += " " + projected_cell(x) + " |";
      text += "\n";
      if (std::string m = growth_meaning(x); !m.empty()) {
        meanings += fmt::format("- {}: {}\n", md_code(lines[i], true), m);
      }
    }
    if (rows.size() + hidden > n) {
      text += fmt::format("\n… {} more in results.json (`stages[].growth.statements`){}\n", rows.size() + hidden - n,
                          hidden ? fmt::format(", {} of them transaction control or settings", hidden) : "");
    }
    if (!meanings.empty()) text += "\n" + meanings;
    s.items.push_back({text, !rows.empty() && grows(rows.front()) > GrowthClass::constant ? 1 : 3});
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

}  // namespace coldgate::report
