#include "report/sections.hpp"

#include <fmt/core.h>

namespace coldgate::report {

using namespace coldgate::results;

namespace {

// A section of whole rows (table rows, `<details>` blocks) between `head` and `tail`.
Section rows_section(std::string head, std::vector<TableRow> rows, std::string tail,
                     std::string what_one, std::string what_many) {
  Section s{std::move(head), {}, std::move(tail), std::move(what_one), std::move(what_many)};
  for (auto& row : rows) s.items.push_back({std::move(row.text), row.rank});
  return s;
}

}  // namespace

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
        "`max_blocks_ratio`, `min_blocks_delta`). Blocks are those of the captured plan's "
        "execution where the statement has one, as the gate judges them, else "
        "pg_stat_statements', which also counts planning's catalog reads. ms per call is shown, "
        "not judged, and so is a plan change (🔀: the plan nodes base had and head lost → head's "
        "new ones); 🔁 is a new statement in place of a gone one on the same tables.\n";
  }
  return s;
}

}  // namespace coldgate::report
