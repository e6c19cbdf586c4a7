#include "report/sections.hpp"

#include <fmt/core.h>

#include <cmath>

#include "report/remedies.hpp"

namespace coldgate::report {

using namespace coldgate::results;

namespace {

// Statements per stage in the Database section, by time.
constexpr std::size_t k_database_statements = 5;

std::string db_total(const StageResult& st, const char* name, const char* unit) {
  const Metric* m = st.find(name);
  if (!m || m->cold.empty()) return "—";
  return format_value(median(m->cold), unit);
}

}  // namespace

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
    std::vector<std::string> texts;
    for (std::size_t i = 0; i < n; ++i) texts.push_back(st.queries[i].query);
    const std::vector<std::string> lines = distinct_statement_lines(texts, 100);
    for (std::size_t i = 0; i < n; ++i) {
      const QueryStats& q = st.queries[i];
      text += fmt::format("| {} | {} | {} | {} | {} | {} |\n", md_code(lines[i], true),
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

}  // namespace coldgate::report
