#include "report/sections.hpp"

#include <fmt/core.h>

namespace coldgate::report {

using namespace coldgate::results;

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

}  // namespace coldgate::report
