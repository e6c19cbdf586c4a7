// The report's layout as a reviewer reads it: verdict first, then only what changed (most
// urgent first, with why), everything else folded, each diff once, no internal paths.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "report/markdown_tables.hpp"
#include "report/report.hpp"
#include "report/report_fixtures.hpp"
#include "results/json.hpp"

namespace coldgate::report {
namespace {

using namespace coldgate::results;
using namespace coldgate::report::tables;
using namespace coldgate::report::fixtures;

constexpr std::string_view k_changes_header = "| Stage | Metric | Before | After | Change | Why |";


std::size_t count(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}



// Column `column` of the table of changes.
std::vector<std::string> column(const std::string& md, std::size_t column) {
  std::vector<std::string> out;
  for (const auto& row : table(md, k_changes_header)) out.push_back(row.at(column));
  return out;
}

std::string report(const Results& r, const Results* base = nullptr) {
  Markdown md = markdown(r, base);
  EXPECT_FALSE(md.cut);
  return md.report;
}

TEST(ReportLayout, NoBaselineWarningIsTheFirstLineThenTheVerdict) {
  std::vector<std::string> lines = lines_of(report(no_baseline()));
  ASSERT_GE(lines.size(), 6u);
  EXPECT_EQ(lines[0], "<!-- coldgate:report:Start-up -->");
  EXPECT_EQ(lines[1], "## Start-up");
  EXPECT_EQ(lines[3],
            "⚠️ **no baseline: nothing was compared — measured head only** (base origin/main "
            "(1a2b3c4) has no coldgate.yaml: the pull request adds it)");
  EXPECT_EQ(lines[5].rfind("❌ **failed: 1 stage failed (shop-client)", 0), 0u) << lines[5];
}

TEST(ReportLayout, VerdictComesRightAfterTheTitle) {
  Results base = baseline_base();
  std::vector<std::string> lines = lines_of(report(baseline(), &base));
  EXPECT_EQ(lines[3].rfind("❌ **failed: 1 regression (config-load wall_ms 10.4×)", 0), 0u);
  EXPECT_EQ(lines[5].rfind(k_changes_header, 0), 0u) << "the table of changes follows";
  Results pass = passing_base();
  EXPECT_EQ(lines_of(report(passing(), &pass))[3],
            "✅ **passed: 4 stages, 1 snapshot match, no regression**");
}

TEST(ReportLayout, ABaseFromTheCacheIsSaidBesideTheVerdict) {
  Results base = failing_base();
  Results r = failing();
  std::vector<std::string> lines = lines_of(report(r, &base));
  EXPECT_EQ(lines[5],
            "ℹ️ base from cache, measured 2026-11-30 on another runner: not interleaved");
  r.gate->base_host = r.environment.host;
  EXPECT_EQ(lines_of(report(r, &base))[5],
            "ℹ️ base from cache, measured 2026-11-30 on this runner: not interleaved");
  r.gate->base_host.clear();
  EXPECT_EQ(lines_of(report(r, &base))[5],
            "ℹ️ base from cache, measured 2026-11-30: not interleaved");
  r.gate->base_source = BaseSource::interleaved;
  EXPECT_EQ(report(r, &base).find("base from cache"), std::string::npos);
  // stack: the pull request's own commit from the cache, its base measured in this run; then
  // both sides from the cache. Neither is called the other.
  r.finished_at = "2026-11-29T08:00:00Z";
  r.gate->head_cached = true;
  EXPECT_EQ(lines_of(report(r, &base))[5],
            "ℹ️ head from cache, measured 2026-11-29: not interleaved");
  r.gate->base_source = BaseSource::cache;
  EXPECT_EQ(lines_of(report(r, &base))[5],
            "ℹ️ base from cache, measured 2026-11-30; head from cache, measured 2026-11-29: not "
            "interleaved");
}

TEST(ReportLayout, ChangesComeMostUrgentFirstEachWithWhy) {
  Results base = failing_base();
  std::string md = report(failing(), &base);
  EXPECT_EQ(column(md, 4),
            (std::vector<std::string>{"🔴 3.10× regression", "🔴 regression", "🔴 regression",
                                      "🟠 3.10× slower", "🟢 0.30× faster", "🟢 0.30× faster",
                                      "❌ failed", "❌ changed", "🆕 new stage",
                                      "➖ removed stage"}));
  EXPECT_EQ(column(md, 0),
            (std::vector<std::string>{"config-load", "config-load", "config-load", "config-load",
                                      "config-load-jit", "config-load-jit", "report-export",
                                      "config-load", "new-stage", "old-stage"}));
  // A statement that regressed is a row of its own, its figures before and after.
  EXPECT_EQ(column(md, 1)[1], "statement `select count(*) from tag where article_id = $1`");
  EXPECT_EQ(column(md, 2)[1], "—");
  EXPECT_EQ(column(md, 3)[1], "40 calls · 3 blocks/call");
  EXPECT_EQ(column(md, 3)[2], "1 call · 1,937 blocks/call");
  std::vector<std::string> why = column(md, 5);
  EXPECT_EQ(why[0], "3.10× ≥ max_ratio 1.5, +504 ms ≥ min_delta 20 ms, ranges apart");
  // The error's first line announces the stderr tail; its last line names the cause.
  EXPECT_EQ(why[6],
            "cold run 1/2: exit status 2; stderr ends: export: relation \"report_rows\" does not exist");
  EXPECT_EQ(why[7].rfind("snapshot changed: 1 path differs (1 changed, 0 added, 0 removed); ", 0),
            0u);
  EXPECT_EQ(table(md, k_changes_header)[0][3], "744.0 ms (716.1 ms – 781.2 ms)") << "min – max";
}

// A stage measured unlike its base is named beside it in the table of changes, and a changed
// setting (the fix under test) is named as such.
TEST(ReportLayout, AStageMeasuredUnlikeItsBaseIsNamedBesideIt) {
  Results base = passing_base();
  Results r = passing();
  ASSERT_TRUE(r.gate);
  const std::string stage = r.stages.front().name;
  r.gate->measurement_differences = {{stage, "cold", "process", "restart"},
                                     {stage, "runs", "5", "3"}};
  std::string md = report(r, &base);
  auto rows = table(md, k_changes_header);
  ASSERT_EQ(rows.size(), 1u) << md;
  EXPECT_EQ(rows[0][0], stage);
  EXPECT_EQ(rows[0][1], "measured");
  EXPECT_EQ(rows[0][2], "cold process, runs 5");
  EXPECT_EQ(rows[0][3], "cold restart, runs 3");
  EXPECT_EQ(rows[0][4], "⚠️ measured differently");
  r.gate->measurement_differences = {{stage, "settings.jit", "", "off"}};
  rows = table(report(r, &base), k_changes_header);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][2], "settings.jit —");
  EXPECT_EQ(rows[0][3], "settings.jit off");
  EXPECT_EQ(rows[0][4], "⚙️ settings changed");
}

TEST(ReportLayout, UnchangedStagesFoldIntoOneDetails) {
  Results base = failing_base();
  std::string md = report(failing(), &base);
  std::size_t fold = md.find("<details><summary>3 stages unchanged</summary>");
  ASSERT_NE(fold, std::string::npos);
  auto rows = table(md, "| Stage | Gated metrics");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][0], "orders-report");
  EXPECT_EQ(rows[0][1],
            "wall_ms 84.0 ms → 85.0 ms · cpu_ms 28.0 ms → 28.3 ms · peak_rss_bytes 9.5 MiB → "
            "9.5 MiB");
  for (const char* stage : {"orders-report", "customer-search", "shop-client"})
    EXPECT_GT(md.find(stage), fold) << stage << " is not in the table of changes";
}

TEST(ReportLayout, MetricsNotGatedStayOutOfTheTableOfChanges) {
  Results base = failing_base();
  std::string md = report(failing(), &base);
  for (const auto& metric : column(md, 1)) {
    EXPECT_TRUE(metric == "wall_ms" || metric == "cpu_ms" || metric == "execution_ms" ||
                metric == "snapshot" || metric == "—" || metric.starts_with("statement `"))
        << metric;
  }
  // rows went 1,200 → 1,250 in orders-report: not gated, so only in that stage's details.
  std::size_t more = md.find("<details><summary>More metrics of 6 stages</summary>");
  ASSERT_NE(more, std::string::npos);
  EXPECT_GT(md.find("<details><summary>orders-report: 1 metric</summary>\n\n- rows: 1,200 → "
                    "1,250 (1.04×, not gated)\n"),
            more);
  EXPECT_GT(md.find("- jit_functions: 1,404 → 1,404 (1.00×, not gated)"), more);
}

TEST(ReportLayout, WithoutAGateTheTableShowsTimesOnly) {
  std::string md = report(no_baseline());
  EXPECT_EQ(md.find(k_changes_header), std::string::npos) << "nothing was compared";
  EXPECT_EQ(table(md, "| Stage | What | Status | Why |").size(), 3u);
  auto rows = table(md, "| Stage | Metric | Cold median");
  ASSERT_EQ(rows.size(), 8u);
  for (const auto& row : rows) {
    EXPECT_TRUE(row[1].ends_with("_ms") || row[1] == "peak_rss_bytes" || row[1] == "—") << row[1];
  }
  EXPECT_NE(md.find("<details><summary>config-load-jit: 2 metrics</summary>\n\n- db_queries: 1, "
                    "warm 1\n- db_jit_functions: 1,404, warm 1,404\n"),
            std::string::npos);
  EXPECT_EQ(md.find("stages unchanged"), std::string::npos);
}

TEST(ReportLayout, EachSnapshotDiffSummaryOnceWithRepositoryPaths) {
  Results base = failing_base();
  std::string md = report(failing(), &base);
  EXPECT_EQ(count(md, "1 path differs"), 1u) << md;
  EXPECT_EQ(count(md, "<summary>config-load: diff of snapshots/config-load.json</summary>"), 1u);
  EXPECT_NE(md.find("```diff\n  /realms/0/name: \"north\" → \"nord\"\n\n"
                    "--- snapshots/config-load.json\n"
                    "+++ coldgate-out/snapshots/config-load.json.new\n@@ -2,3 +2,3 @@\n"),
            std::string::npos)
      << md;
  for (const char* internal : {"/tmp/", "/home/runner", "coldgate-out/ab/"})
    EXPECT_EQ(md.find(internal), std::string::npos) << internal;
}

TEST(ReportLayout, DiagnosesThePullRequestAddedFirstThenFixedThenTheRestFolded) {
  Results base = failing_base();
  std::string md = report(failing(), &base);
  std::size_t added = md.find("### Diagnoses\n\n- 🆕 new in this pull request · **config-load**: "
                              "planning took");
  std::size_t n1 = md.find("- 🆕 new in this pull request · **config-load**: statement 77");
  std::size_t gone = md.find("- ✅ gone (fixed) · **config-load**: JIT compiled");
  std::size_t fold = md.find("<details><summary>1 diagnosis also in base</summary>");
  std::size_t orders = md.find("- **orders-report**: table `public.orders`");
  ASSERT_NE(added, std::string::npos) << md;
  EXPECT_LT(added, n1);
  EXPECT_LT(n1, gone);
  EXPECT_LT(gone, fold);
  EXPECT_LT(fold, orders);
  ASSERT_NE(orders, std::string::npos);
  // Results of an older coldgate carry no marks: only the changed stages' diagnoses then.
  Results old = failing();
  for (auto& d : old.diagnoses) d.change = results::DiagnosisChange::none;
  md = report(old, &base);
  EXPECT_EQ(md.find("public.orders"), std::string::npos) << "orders-report did not change";
  Results pass = passing_base();
  EXPECT_EQ(report(passing(), &pass).find("### Diagnoses"), std::string::npos);
  EXPECT_NE(report(no_baseline()).find("- **config-load-jit**: JIT compiled"), std::string::npos)
      << "without a gate every diagnosis";
}

TEST(ReportLayout, ADiagnosisThePullRequestMadeWorseIsListedWithTheNewOnesNotFolded) {
  Results base = failing_base();
  Results head = failing();
  head.diagnoses[1].change = results::DiagnosisChange::worse;
  head.diagnoses[1].data = {{"calls", 320}, {"base_calls", 20}};
  std::string md = report(head, &base);
  std::size_t worse = md.find("- 📈 worse in this pull request (20 → 320 calls per run) · **"
                              + head.diagnoses[1].stage + "**: ");
  std::size_t gone = md.find("- ✅ gone (fixed) · ");
  ASSERT_NE(worse, std::string::npos) << md;
  EXPECT_LT(worse, gone);
  EXPECT_EQ(md.find("also in base</summary>"), std::string::npos) << md;
}

TEST(ReportLayout, StatementsThatChangedPerStageWithTheirFiguresAndQueryidsFolded) {
  Results base = failing_base();
  std::string md = report(failing(), &base);
  std::size_t at = md.find("\n### Statements that changed\n\n**config-load**\n\n| Statement | "
                           "Calls per run | Blocks per call | ms per call | Change | Why |\n");
  ASSERT_NE(at, std::string::npos) << md;
  std::size_t added = md.find("| `select count(*) from tag where article_id = $1` | — → 40 | — → 3 | "
                              "— → 0.03 ms | 🔴 regression | new statement: runs 40 times per run",
                              at);
  std::size_t blocks = md.find("| 1 | 4 → 1,937 | 0.09 ms → 23.2 ms | 🔴 regression | reads 1,937 "
                               "blocks per call instead of 4 (484×",
                               at);
  EXPECT_NE(added, std::string::npos) << md.substr(at, 1500);
  EXPECT_NE(blocks, std::string::npos) << md.substr(at, 1500);
  // A plan change is a row of its own right under its statement's (a line between rows would
  // end the table), in the Change and Why columns.
  std::size_t plan = md.find("\n| ↳ | | | | 🔀 plan changed | Index Scan using comments_article_id "
                             "on public.Comments → Seq Scan on public.Comments (149,997 rows "
                             "removed by filter) |\n",
                             at);
  ASSERT_NE(plan, std::string::npos) << md.substr(at, 2000);
  EXPECT_EQ(md.rfind("\n| `select * from \"Comments\"", plan), md.rfind("\n| `", plan));
  EXPECT_GT(plan, blocks);
  // A statement whose counts did not move is listed for a plan change alone, as `same`; the
  // one whose plan did not change either is not; the queryids of both sides are.
  std::size_t config = md.find("| `select * from config` | 1 | 12 | 9.60 ms → 2.60 ms | same |", at);
  EXPECT_NE(config, std::string::npos) << md.substr(at, 2000);
  EXPECT_NE(md.find("| ↳ | | | | 🔀 plan changed | Seq Scan on public.config → Index Scan using "
                    "config_pkey on public.config |",
                    config),
            std::string::npos);
  EXPECT_EQ(md.find("`select * from setting` |", at), std::string::npos);
  EXPECT_NE(md.find("base `-377094331132490252` · head `-5210114618935114403`", at),
            std::string::npos);
  // A cut report keeps a stage whose statement regressed before the long tables.
  Results many = failing();
  for (int i = 0; i < 400; ++i) {
    StageResult s = many.stages.back();
    s.name = fmt::format("filler-{:03}", i);
    many.stages.push_back(s);
    many.gate->metrics.push_back({s.name, "wall_ms", "ms", Verdict::same, 80, 80, 1, "1.00×"});
  }
  Markdown cut = markdown(many, &base, "report-full.md", 20'000);
  ASSERT_TRUE(cut.cut);
  EXPECT_NE(cut.report.find("### Statements that changed"), std::string::npos) << cut.report;
  EXPECT_NE(cut.report.find("reads 1,937 blocks per call instead of 4"), std::string::npos);
}

TEST(ReportLayout, ChartShowsTheChangedStagesBeforeAsALineAfterAsBars) {
  Results base = failing_base();
  std::string md = report(failing(), &base);
  EXPECT_NE(md.find("```mermaid\n%%{init: {\"themeVariables\": {\"xyChart\": "
                    "{\"plotColorPalette\": \"#1f77b4, #d62728\"}}}}%%\nxychart-beta\n"),
            std::string::npos);
  EXPECT_NE(md.find("    x-axis [\"config-load\", \"config-load-jit\"]\n    y-axis \"ms\"\n"
                    "    bar [744.0, 720.0]\n    line [240.0, 2400.0]\n```\n\n"
                    "🟦 bars: after (head) · 🟥 line: before (base)\n"),
            std::string::npos)
      << md;
  Results pass = passing_base();
  EXPECT_EQ(report(passing(), &pass).find("xychart"), std::string::npos) << "nothing changed";
}

TEST(ReportLayout, FooterLinksTheRunAndNamesNoInternalPath) {
  Results base = failing_base();
  std::string md = report(failing(), &base);
  EXPECT_NE(md.find("- CI: [run](https://github.com/acme/shop/actions/runs/9876543211) · "
                    "artifact [coldgate-out](https://github.com/acme/shop/actions/runs/"
                    "9876543211#artifacts)\n"),
            std::string::npos);
  EXPECT_NE(md.find("- Commits: base `1a2b3c4` (`main`) → head `5d6e7f8` "
                    "(`feature/faster-load`)\n"),
            std::string::npos);
  EXPECT_EQ(md.find("cache/"), std::string::npos) << "the cache file is internal";
  Results file_base = baseline_base();
  EXPECT_NE(report(baseline(), &file_base).find(", baseline `baseline/results.json`\n"),
            std::string::npos)
      << "a --baseline file the user gave stays named";
  Results r = failing();
  r.ci_run_url = "javascript:alert(1)";
  md = report(r, &base);
  EXPECT_EQ(md.find("](javascript"), std::string::npos);
  EXPECT_NE(md.find("- CI run: `javascript:alert(1)`\n"), std::string::npos);
}

TEST(ReportLayout, UncommittedChangesAreCountedAndListedCapped) {
  Results base = passing_base();
  Results r = passing();
  std::string md = report(r, &base);
  EXPECT_NE(md.find("- Commits: base `1a2b3c4` (`main`) → head `5d6e7f8+dirty` "
                    "(`feature/faster-load`) with 2 uncommitted changes\n"),
            std::string::npos);
  EXPECT_NE(md.find("<details><summary>2 uncommitted changes</summary>\n\n```\n"
                    "M sql/orders_report.sql\n?? sql/new_index.sql\n```\n"),
            std::string::npos);
  r.git.dirty.clear();
  for (int i = 0; i < 30; ++i) r.git.dirty.push_back(fmt::format("M sql/{:02}.sql", i));
  md = report(r, &base);
  EXPECT_NE(md.find("`5d6e7f8+dirty` (`feature/faster-load`) with 30 uncommitted changes\n"),
            std::string::npos);
  EXPECT_NE(md.find("M sql/19.sql\n… and 10 more\n```"), std::string::npos);
  EXPECT_EQ(md.find("M sql/20.sql"), std::string::npos);
  // ab measured the commit, not the edits: the report says they were left out.
  r.git.dirty_measured = false;
  md = report(r, &base);
  EXPECT_NE(md.find("→ head `5d6e7f8` (`feature/faster-load`) (30 uncommitted changes not "
                    "measured)\n"),
            std::string::npos);
  EXPECT_NE(md.find("<summary>30 uncommitted changes, not measured</summary>"), std::string::npos);
}

// The base of a baseline measured on a working tree with edits is one commit plus those edits:
// a head at the same commit would read as an identical base without the mark.
TEST(ReportLayout, ABaseMeasuredWithUncommittedChangesIsMarkedDirty) {
  Results base = passing_base();
  Results r = passing();
  r.gate->base_git.commit = r.git.commit = "b8436e1f00000000000000000000000000000000";
  r.gate->base_git.dirty = {"M sql/orders_report.sql"};
  r.git.dirty.clear();
  std::string md = report(r, &base);
  EXPECT_NE(md.find("- Commits: base `b8436e1+dirty` (`main`) → head `b8436e1` "
                    "(`feature/faster-load`)\n"),
            std::string::npos)
      << md;
  // results.json keeps the base's changes, so compare and comment show the same mark.
  Results again = from_json(to_json(r), "results.json");
  EXPECT_EQ(again.gate->base_git.dirty, std::vector<std::string>{"M sql/orders_report.sql"});
  EXPECT_TRUE(again.gate->base_git.dirty_measured);
  EXPECT_EQ(report(again, &base), md);
}

TEST(ReportLayout, ARepositoryWithoutCommitsIsNotCalledNotACheckout) {
  Results r = no_baseline();
  r.git = {};
  EXPECT_NE(report(r, nullptr).find("- Commits: head (not a git checkout)\n"), std::string::npos);
  r.git.unborn = true;
  r.git.dirty = {"?? coldgate.yaml"};
  EXPECT_NE(report(r, nullptr).find("- Commits: head (git repository without commits) with 1 "
                                    "uncommitted change\n"),
            std::string::npos);
}

TEST(ReportLayout, FortyStagesShowTheRegressionsFirstAndStayShort) {
  Results base = forty_base();
  std::string md = report(forty(), &base);
  EXPECT_LT(md.size(), 20'000u);
  std::vector<std::string> stages = column(md, 0);
  EXPECT_EQ(stages, (std::vector<std::string>{"stage-14", "stage-22", "stage-27"}));
  EXPECT_EQ(column(md, 4), std::vector<std::string>(3, "🔴 4.00× regression"));
  std::size_t fold = md.find("<details><summary>37 stages unchanged</summary>");
  ASSERT_NE(fold, std::string::npos);
  EXPECT_LT(md.find("| stage-27 | wall_ms |"), fold);
  EXPECT_EQ(table(md, "| Stage | Gated metrics").size(), 37u);
  for (int i = 1; i <= 40; ++i) {
    std::size_t first = md.find("| " + forty_name(i) + " |");
    bool regressed = i == 14 || i == 22 || i == 27;
    EXPECT_EQ(first < fold, regressed) << forty_name(i);
  }
  EXPECT_NE(md.find("    x-axis [\"stage-14\", \"stage-22\", \"stage-27\"]\n"), std::string::npos)
      << "the chart has the changed stages only";
}

// The ```mermaid blocks of `md`, each without its fences.
std::vector<std::string> mermaid_blocks(const std::string& md) {
  std::vector<std::string> out;
  for (std::size_t at = md.find("```mermaid\n"); at != std::string::npos;
       at = md.find("```mermaid\n", at + 1)) {
    std::size_t begin = at + 11;
    std::size_t end = md.find("\n```\n", begin);
    out.push_back(end == std::string::npos ? "unclosed" : md.substr(begin, end + 1 - begin));
  }
  return out;
}

// The line of `block` that starts with `prefix` (after its indent), or "".
std::string line_starting(const std::string& block, std::string_view prefix) {
  for (const auto& line : lines_of(block)) {
    std::size_t text = line.find_first_not_of(' ');
    if (text != std::string::npos && std::string_view(line).substr(text).starts_with(prefix))
      return line;
  }
  return "";
}

TEST(ReportLayout, AHistoryBaseIsSaidWithTheCommitsItUsed) {
  Results base = history_base();
  Results r = history();
  std::string md = report(r, &base);
  std::vector<std::string> lines = lines_of(md);
  EXPECT_EQ(lines[5],
            "ℹ️ base: the median of 4 recorded results of `main` in `git:coldgate-history` "
            "(`a1b2c3d` … `e4f5a6b`; only 4 of 5 asked were found), not measured in this run");
  EXPECT_NE(md.find("- Commits: base `a1b2c3d` … `e4f5a6b` (`main`, 4 recorded commits) → head "
                    "`5d6e7f8` (`feature/faster-load`)\n"),
            std::string::npos);
  // Every commit named, oldest first, with its subject; the hostile one inert.
  std::size_t at = md.find(
      "<details><summary>History baseline: 4 commits of main (4 of 5 "
      "asked)</summary>\n");
  ASSERT_NE(at, std::string::npos);
  for (const char* item : {"- `a1b2c3d` load: cache realms in one query · 2026-11-26\n",
                           "- `b2c3d4e` fix: \\`&lt;/details&gt;\\` &lt;img src=x "
                           "onerror=alert(1)&gt; @\u200Bteam \\[link\\](http://e) \\*bold\\* · "
                           "2026-11-27\n",
                           "- `c3d4e5f` orders: index on customer_id · 2026-11-28\n",
                           "- `e4f5a6b` _(no subject)_ · 2026-11-30\n"}) {
    std::size_t next = md.find(item, at);
    EXPECT_NE(next, std::string::npos) << item;
    at = next;
  }
  EXPECT_EQ(md.find("<img"), std::string::npos);
  EXPECT_EQ(md.find("@team"), std::string::npos);
  EXPECT_EQ(md.find("](http://e)"), md.find("\\](http://e)") + 1) << "no link forms";
  // As many found as asked: no "only"; one record: no median of one.
  r.history->asked = 4;
  EXPECT_EQ(lines_of(report(r, &base))[5],
            "ℹ️ base: the median of 4 recorded results of `main` in `git:coldgate-history` "
            "(`a1b2c3d` … `e4f5a6b`), not measured in this run");
  EXPECT_NE(report(r, &base).find("<summary>History baseline: 4 commits of main</summary>"),
            std::string::npos);
  r.history->commits.resize(1);
  for (auto& series : r.history->series) series.medians.resize(1);
  r.history->asked = 1;
  EXPECT_EQ(lines_of(report(r, &base))[5],
            "ℹ️ base: the recorded result of `main` in `git:coldgate-history` (`a1b2c3d`), not "
            "measured in this run");
  // Another base source: no history baseline is said, its trend is the branch's history.
  r.gate->base_source = BaseSource::file;
  md = report(r, &base);
  EXPECT_EQ(md.find("ℹ️ base"), std::string::npos);
  EXPECT_EQ(md.find("History baseline"), std::string::npos);
  EXPECT_NE(md.find("<summary>Trend: 1 recorded commit of main and this run (head)</summary>"),
            std::string::npos);
  EXPECT_NE(md.find("not the base: the gate compared head with the baseline file."),
            std::string::npos);
  // A history with no commit draws nothing.
  r.history->commits.clear();
  for (auto& series : r.history->series) series.medians.clear();
  EXPECT_EQ(report(r, &base).find("Trend"), std::string::npos);
}

TEST(ReportLayout, AbsTrendIsTheBranchsRecordedPointsAndThisRunNotItsBase) {
  Results base = passing_base();
  Results r = ab_trend();
  Markdown md = markdown(r, &base);
  // The base is the interleaved one: said nowhere as recorded, and no list of a history base.
  EXPECT_EQ(md.report.find("History baseline"), std::string::npos);
  EXPECT_EQ(md.report.find("ℹ️ base"), std::string::npos);
  EXPECT_NE(md.report.find("- Commits: base `1a2b3c4` (`main`) → head "), std::string::npos)
      << md.report;
  const std::size_t trend =
      md.report.find("<details><summary>Trend: 3 recorded commits of main and this run "
                     "(head)</summary>\n\nPer stage the cold median of each commit recorded in "
                     "`git:coldgate-history`, oldest first, then head: this run. These are the "
                     "recorded results of `main` from earlier runs, not the base: the gate "
                     "compared head with the base measured beside it in this run.\n");
  ASSERT_NE(trend, std::string::npos) << md.report;
  EXPECT_LT(trend, md.report.find("<summary>More metrics")) << "where a history base's is";
  std::vector<std::string> charts = mermaid_blocks(md.report.substr(trend));
  ASSERT_EQ(charts.size(), 4u);
  EXPECT_EQ(line_starting(charts[0], "x-axis"),
            "    x-axis [\"7f6e5d4\", \"8e7d6c5\", \"1a2b3c4\", \"this run\"]")
      << "the base commit's record is the newest recorded point, head the last";
  EXPECT_EQ(line_starting(charts[2], "x-axis"), "    x-axis [\"8e7d6c5\", \"1a2b3c4\", \"this run\"]");
  EXPECT_NE(md.terminal.find("- customer-search wall_ms (ms): — 12.9 12.5 → this run "),
            std::string::npos)
      << md.terminal;
  // From the cache, or with no gate at all (require_same_environment failed): said as such.
  r.gate->base_source = BaseSource::cache;
  EXPECT_NE(report(r, &base).find("not the base: the gate compared head with the base's result "
                                  "from the cache.\n"),
            std::string::npos);
  r.gate.reset();
  std::string alone = report(r, &base);
  EXPECT_NE(alone.find("<summary>Trend: 3 recorded commits and this run (head)</summary>"),
            std::string::npos)
      << alone;
  EXPECT_NE(alone.find("These are the recorded results from earlier runs, not the base.\n"),
            std::string::npos);
}

TEST(ReportLayout, TheTrendIsAMermaidLinePerStageLeavingOutMissingMedians) {
  Results base = history_base();
  std::string md = report(history(), &base);
  std::size_t trend = md.find(
      "<details><summary>Trend: 4 recorded commits of main and this "
      "run</summary>\n");
  ASSERT_NE(trend, std::string::npos);
  EXPECT_LT(md.find("<summary>History baseline"), trend);
  EXPECT_LT(trend, md.find("<summary>More metrics"));
  std::vector<std::string> charts = mermaid_blocks(md.substr(trend));
  ASSERT_EQ(charts.size(), 4u) << "new-stage has one point only";
  EXPECT_EQ(charts[0],
            "xychart-beta\n    title \"config-load · wall_ms\"\n"
            "    x-axis [\"a1b2c3d\", \"b2c3d4e\", \"c3d4e5f\", \"e4f5a6b\", \"this run\"]\n"
            "    y-axis \"ms\"\n    line [240, 236, 251, 238, 744]\n");
  // orders-report has no median in b2c3d4e's record: that commit is left out, and said so.
  EXPECT_EQ(line_starting(charts[1], "x-axis"),
            "    x-axis [\"a1b2c3d\", \"c3d4e5f\", \"e4f5a6b\", \"this run\"]");
  EXPECT_EQ(line_starting(charts[1], "line"), "    line [84, 83.2, 86.5, 85]");
  EXPECT_GT(md.find("_orders-report: 1 recorded commit without a wall_ms median left out._\n"),
            trend);
  EXPECT_EQ(line_starting(charts[3], "line"), "    line [2410, 2390, 2430, 2400, 2520]")
      << "three significant digits";
  EXPECT_NE(md.find("_No chart for 1 stage with fewer than two points: `new-stage`._\n", trend),
            std::string::npos);
}

TEST(ReportLayout, TrendLabelsCannotBreakOutOfTheirMermaidString) {
  Results base = history_base();
  Results r = history();
  r.history->series[0].stage = "a\"b\nc`d```e<f>g#h\r\x01 i";
  r.history->series[0].metric = "wall\"ms";
  r.history->series[0].unit = "m\"s\n<x>";
  r.history->commits[0].commit = "\"]\n```\n";
  std::string md = report(r, &base);
  std::vector<std::string> charts = mermaid_blocks(md.substr(md.find("<summary>Trend")));
  ASSERT_EQ(charts.size(), 4u);
  EXPECT_EQ(lines_of(charts[0]).size(), 5u) << charts[0];
  EXPECT_EQ(line_starting(charts[0], "title"), "    title \"a'b c'd'''e‹f›gno.h   i · wall'ms\"");
  EXPECT_EQ(line_starting(charts[0], "y-axis"), "    y-axis \"m's ‹x›\"");
  EXPECT_EQ(line_starting(charts[0], "x-axis").rfind("    x-axis [\"'] ''' \", \"b2c3d4e\"", 0), 0u)
      << charts[0];
  for (const auto& chart : charts) {
    for (const auto& line : lines_of(chart)) {
      EXPECT_EQ(line.find('<'), std::string::npos) << line;
      EXPECT_EQ(line.find('`'), std::string::npos) << line;
      // Quotes only around each label: an even count.
      EXPECT_EQ(std::count(line.begin(), line.end(), '"') % 2, 0) << line;
    }
  }
}

TEST(ReportLayout, ATerminalReadsTheTrendAsOneLinePerStage) {
  Results base = history_base();
  Results r = history();
  r.history->series[3].medians = {1234.5, 0.01234, 99.96, std::nullopt};
  r.history->series[3].head = 1e6;
  Markdown md = markdown(r, &base);
  EXPECT_EQ(md.terminal.find("xychart"), std::string::npos);
  EXPECT_EQ(md.terminal.find("```mermaid"), std::string::npos);
  for (const char* line : {"- config-load wall_ms (ms): 240 236 251 238 → this run 744\n",
                           "- orders-report wall_ms (ms): 84 — 83.2 86.5 → this run 85\n",
                           "- search \"fast\" <b>#1</b> \\`x\\` wall_ms (ms): 12.1 12.5 12.3 "
                           "12.3 → this run 12.4\n",
                           "- report-export wall_ms (ms): 1230 0.0123 100 — → this run 1000000\n",
                           "- new-stage wall_ms (ms): — — — — → this run 80\n"}) {
    EXPECT_NE(md.terminal.find(line), std::string::npos) << line << md.terminal;
  }
  EXPECT_NE(md.report.find("    line [1230, 0.0123, 100, 1000000]\n"), std::string::npos);
}

TEST(ReportLayout, ACutReportDropsTheTrendFirst) {
  // 60 stages × 100 commits: everything but the trend fits; stage 57 regressed.
  Results base = history_many_base(60);
  Markdown md = markdown(history_many(60, 100, {57}), &base);
  ASSERT_TRUE(md.cut);
  EXPECT_LE(md.report.size(), k_max_report_bytes);
  EXPECT_EQ(mermaid_blocks(md.full).size(), 60u);
  // What is not the trend is all there: every unchanged stage, every commit, every stage's
  // other metrics, and the footer.
  EXPECT_NE(md.report.find("<summary>59 stages unchanged</summary>"), std::string::npos);
  EXPECT_EQ(table(md.report, "| Stage | Gated metrics").size(), 59u);
  EXPECT_NE(md.report.find("<summary>More metrics of 60 stages</summary>"), std::string::npos);
  EXPECT_EQ(count(md.report, "- rows: 10 → 10 (1.00×, not gated)"), 60u);
  EXPECT_EQ(count(md.report, ": tune stage-"), 100u) << "every commit named";
  EXPECT_NE(md.report.find("- Commits: base `1000000` … `1000063` (`main`, 100 recorded commits)"),
            std::string::npos);
  // The trend keeps whole charts, the changed stage's first, and names the rest.
  std::vector<std::string> shown = mermaid_blocks(md.report);
  ASSERT_FALSE(shown.empty());
  EXPECT_LT(shown.size(), 60u);
  EXPECT_NE(shown[0].find("title \"stage-057 · wall_ms\""), std::string::npos) << shown[0];
  for (const auto& chart : shown) {
    EXPECT_EQ(std::count(chart.begin(), chart.end(), ','), 2 * 100) << "101 labels and points";
  }
  EXPECT_NE(md.report.find(fmt::format("_… {} more trends in `coldgate-out/report-full.md`._",
                                       60 - shown.size())),
            std::string::npos);
  // A terminal's lines are much shorter than the charts: here every stage's fits.
  EXPECT_LE(md.terminal.size(), k_max_report_bytes);
  EXPECT_EQ(count(md.terminal, " → this run "), 60u);
  EXPECT_NE(md.terminal.find("\n- stage-057 wall_ms (ms): 77 77.4 77.7 78.1 "), std::string::npos);
}

TEST(ReportLayout, TwoHundredStagesOfAHundredCommitsStayUnderTheLimit) {
  Results base = history_many_base(200);
  Markdown md = markdown(history_many(200, 100, {3, 150, 199}), &base);
  ASSERT_TRUE(md.cut);
  EXPECT_GT(md.full.size(), 5 * k_max_report_bytes);
  EXPECT_LE(md.report.size(), k_max_report_bytes);
  EXPECT_LE(md.terminal.size(), k_max_report_bytes);
  EXPECT_EQ(column(md.report, 0),
            (std::vector<std::string>{"stage-003", "stage-150", "stage-199"}));
  EXPECT_NE(md.report.find("ℹ️ base: the median of 100 recorded results of `main`"),
            std::string::npos);
  EXPECT_NE(md.report.find("- Commits: "), std::string::npos);
  for (const auto& chart : mermaid_blocks(md.report)) EXPECT_NE(chart, "unclosed");
  EXPECT_EQ(count(md.report, "```"), 2 * count(md.report, "```mermaid")) << "fences close";
}

TEST(RepoPath, ShortensWhatIsNotRepositoryRelative) {
  EXPECT_EQ(repo_path("snapshots/a.json"), "snapshots/a.json");
  EXPECT_EQ(repo_path("coldgate-out/snapshots/a.json.new"), "coldgate-out/snapshots/a.json.new");
  EXPECT_EQ(repo_path("coldgate-out/ab/head/snapshots/a.json"), "snapshots/a.json");
  EXPECT_EQ(repo_path("coldgate-out/ab/base/snapshots/a.json"), "snapshots/a.json");
  EXPECT_EQ(repo_path("/w/repo/coldgate-out/ab/head/snapshots/a.json"), "snapshots/a.json");
  EXPECT_EQ(repo_path("/tmp/wt-1/coldgate-out/snapshots/a.json.new"),
            "coldgate-out/snapshots/a.json.new");
  EXPECT_EQ(repo_path("/home/runner/work/shop/shop/db/snapshots/a.json",
                      {"db/snapshots/a.json.new", "db/snapshots/a.json"}),
            "db/snapshots/a.json");
  EXPECT_EQ(repo_path("/tmp/t/db/a.json.new", {"db/a.json", "db/a.json.new"}), "db/a.json.new");
  EXPECT_EQ(repo_path("/home/runner/work/shop/shop/xdb/a.json", {"db/a.json"}), "…/a.json")
      << "an anchor matches whole path components only";
  EXPECT_EQ(repo_path("/tmp/x/a.json"), "…/a.json");
  EXPECT_EQ(repo_path("my-coldgate-out/ab/head/a.json"), "my-coldgate-out/ab/head/a.json");
}

}  // namespace
}  // namespace coldgate::report
