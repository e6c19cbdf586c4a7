#include "gate/improvements.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "results/format.hpp"

namespace coldgate::gate {
namespace {

using namespace coldgate::results;

// Items a list in the verdict line names before "…": the line stays one line.
constexpr std::size_t k_named = 3;

// "10–53", or "6,412" when every value reads the same.
std::string range(const std::vector<double>& values) {
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  std::string low = format_value(std::round(*lo), "count");
  std::string high = format_value(std::round(*hi), "count");
  return low == high ? low : low + "–" + high;
}

// "6,412 → 10–53"
std::string before_after(const std::vector<double>& base, const std::vector<double>& head) {
  return range(base) + " → " + range(head);
}

// `items` joined by ", ", the first k_named of them and "…" for the rest.
std::string named(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < k_named; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > k_named) out += ", …";
  return out;
}

// "4 statements faster: blocks per call 6,412 → 10–53; calls per run 211 → 31".
std::string faster_statements(const GateResult& g) {
  std::size_t n = 0;
  std::vector<double> blocks_base, blocks_head, calls_base, calls_head;
  for (const auto& v : g.statements) {
    if (v.verdict != Verdict::faster) continue;
    ++n;
    if (auto b = judged_blocks(v); b && b->head < b->base) {
      blocks_base.push_back(b->base);
      blocks_head.push_back(b->head);
    }
    if (v.base && v.base->calls > (v.head ? v.head->calls : 0)) {
      calls_base.push_back(v.base->calls);
      calls_head.push_back(v.head ? v.head->calls : 0);
    }
  }
  if (n == 0) return "";
  std::vector<std::string> figures;
  if (!blocks_base.empty()) figures.push_back("blocks per call " + before_after(blocks_base, blocks_head));
  if (!calls_base.empty()) figures.push_back("calls per run " + before_after(calls_base, calls_head));
  std::string out = fmt::format("{} statement{} faster", n, n == 1 ? "" : "s");
  for (std::size_t i = 0; i < figures.size(); ++i) out += (i ? ", " : ": ") + figures[i];
  return out;
}

// "2 metrics faster (page wall_ms 0.31×, list db_queries 0.10×)".
std::string faster_metrics(const GateResult& g) {
  std::vector<std::string> items;
  for (const auto& m : g.metrics) {
    if (m.verdict != Verdict::faster) continue;
    items.push_back(fmt::format("{} {}{}", m.stage, m.metric, m.ratio ? " " + format_ratio(*m.ratio) : ""));
  }
  if (items.empty()) return "";
  return fmt::format("{} metric{} faster ({})", items.size(), items.size() == 1 ? "" : "s", named(items));
}

// "missing index on article (\"authorId\")", "repeated query in page".
std::string diagnosis_name(const Diagnosis& d) {
  std::string kind(to_string(d.kind));
  std::replace(kind.begin(), kind.end(), '_', ' ');
  auto table = d.facts.find("table");
  if (table == d.facts.end()) return kind + " in " + d.stage;
  auto columns = d.facts.find("columns");
  return kind + " on " + table->second +
         (columns == d.facts.end() || columns->second.empty() ? "" : " (" + columns->second + ")");
}

// "missing index on article (\"authorId\") fixed", "2 diagnoses fixed (…, …)".
std::string fixed_diagnoses(const Results& r) {
  std::vector<std::string> items;
  for (const auto& d : r.diagnoses) {
    if (d.change != DiagnosisChange::gone) continue;
    std::string name = diagnosis_name(d);
    if (std::find(items.begin(), items.end(), name) == items.end()) items.push_back(std::move(name));
  }
  if (items.empty()) return "";
  if (items.size() == 1) return items.front() + " fixed";
  return fmt::format("{} diagnoses fixed ({})", items.size(), named(items));
}

}  // namespace

std::optional<JudgedBlocks> judged_blocks(const StatementVerdict& v) {
  if (!v.base || !v.head) return std::nullopt;
  if (v.base->execution_blocks_per_call && v.head->execution_blocks_per_call)
    return JudgedBlocks{*v.base->execution_blocks_per_call, *v.head->execution_blocks_per_call, true};
  if (v.base->blocks_per_call && v.head->blocks_per_call)
    return JudgedBlocks{*v.base->blocks_per_call, *v.head->blocks_per_call, false};
  return std::nullopt;
}

std::string improvements(const Results& r) {
  if (!r.gate) return "";
  std::string out;
  for (const std::string& part : {faster_statements(*r.gate), faster_metrics(*r.gate), fixed_diagnoses(r)}) {
    if (!part.empty()) out += (out.empty() ? "" : "; ") + part;
  }
  return out;
}

}  // namespace coldgate::gate
