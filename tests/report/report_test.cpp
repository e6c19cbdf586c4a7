#include "report/report.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "report/junit.hpp"
#include "report/outputs.hpp"
#include "report/report_fixtures.hpp"
#include "results/growth.hpp"
#include "results/json.hpp"
#include "support/golden.hpp"
#include "support/support.hpp"

// Golden files: tests/report/golden/<case>.json (input, built by the fixtures below) →
// <case>.md (report.md) and <case>.xml (junit.xml), compared byte for byte.
// COLDGATE_UPDATE_GOLDEN=1 rewrites inputs and expectations (support/golden.hpp); review the diff
// before committing.

namespace coldgate::report {
namespace {

using namespace coldgate::results;
using namespace coldgate::report::fixtures;
using coldgate::testing::slurp;

// --- golden files -------------------------------------------------------------------------

std::filesystem::path golden(const std::string& name) {
  return testing::source_dir() / "tests/report/golden" / name;
}

void expect_golden(const std::string& name, const std::string& actual) {
  testing::expect_golden(golden(name), actual);
}

// The input file, checked against its fixture, read back as a run would read it.
Results input(const std::string& name, const Results& fixture) {
  expect_golden(name + ".json", to_json(fixture));
  return from_json(testing::updating_goldens() ? to_json(fixture) : slurp(golden(name + ".json")),
                   name);
}

void expect_outputs(const std::string& name, const Results& fixture,
                    const std::optional<Results>& base_fixture = std::nullopt) {
  Results head = input(name, fixture);
  std::optional<Results> base;
  if (base_fixture) base = input(name + ".base", *base_fixture);
  Markdown md = markdown(head, base ? &*base : nullptr);
  EXPECT_FALSE(md.cut);
  EXPECT_EQ(md.report, md.full);
  expect_golden(name + ".md", md.report);
  expect_golden(name + ".xml", junit_xml(head));
  // The version for stdout: the same report, with characters where GitHub needs entities.
  for (const char* entity : {"&gt;", "&lt;", "&amp;", "&quot;", "&#91;", "&#93;"}) {
    EXPECT_EQ(md.terminal.find(entity), std::string::npos) << name << ": " << entity;
  }
}

TEST(ReportGolden, NoBaseline) {
  expect_outputs("no_baseline", no_baseline());
}

TEST(ReportGolden, Baseline) {
  expect_outputs("baseline", baseline(), baseline_base());
}

TEST(ReportGolden, Hostile) {
  expect_outputs("hostile", hostile());
  // hostile.terminal.md is hostile.md as a terminal shows it: `<img …>` and `&#91;link&#93;`
  // as written, the Markdown's backslash escapes as they are.
  expect_golden("hostile.terminal.md", markdown(input("hostile", hostile()), nullptr).terminal);
}

TEST(ReportGolden, Passing) {
  expect_outputs("passing", passing(), passing_base());
}

TEST(ReportGolden, Failing) {
  expect_outputs("failing", failing(), failing_base());
}

TEST(ReportGolden, HistoryBaseline) {
  expect_outputs("history", history(), history_base());
  // The terminal's trend is one line per stage, not Mermaid.
  Results base = input("history.base", history_base());
  expect_golden("history.terminal.md", markdown(input("history", history()), &base).terminal);
}

TEST(ReportGolden, AbWithTheTrendOfItsBaseBranch) {
  // An interleaved base with the branch's recorded points: the trend, no history baseline.
  expect_outputs("ab_trend", ab_trend(), passing_base());
  Results base = input("ab_trend.base", passing_base());
  expect_golden("ab_trend.terminal.md", markdown(input("ab_trend", ab_trend()), &base).terminal);
}

TEST(ReportGolden, FortyStages) {
  expect_outputs("forty", forty(), forty_base());
}

// A run whose setup failed: a step done, psql's error with its stderr tail, the stages not run,
// and the warning setup left.
Results setup_failed() {
  Results r;
  common(r, "Start-up");
  r.setup = {{"sql", "sql db/schema.sql", 42.5}};
  r.stopped = Stopped{1,
                      StopPhase::setup,
                      "psql db/seed.sql",
                      "db/seed.sql:3",
                      "psql -f db/seed.sql failed (exit status 3):\n"
                      "psql:db/seed.sql:3: ERROR:  relation \"artist\" does not exist\n"
                      "LINE 1: INSERT INTO artist VALUES (1, 'AC/DC');\n"
                      "                    ^",
                      {"config-load", "orders-report"}};
  r.warnings = {"after setup the stages' database app has no tables, but database chinook has "
                "11 tables (did a setup script's \\c move there?); set database.name: chinook so "
                "the stages use it, with psql: {file: db/seed.sql, database: postgres} if the "
                "script creates chinook"};
  return r;
}

TEST(ReportGolden, SetupFailed) {
  expect_outputs("setup_failed", setup_failed());
}

// Ctrl-C during a setup step: the step was interrupted, it did not fail.
TEST(ReportLayout, AnInterruptedSetupStepIsNotCalledFailed) {
  Results r = setup_failed();
  r.stopped->exit_code = 130;
  r.stopped->where.clear();
  r.stopped->error = "interrupted by SIGINT";
  const std::string md = markdown(r, nullptr).report;
  EXPECT_NE(md.find("<details open><summary>setup step psql db/seed.sql was interrupted</summary>"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Stages not run: interrupted: `config-load`, `orders-report`"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find(" failed"), std::string::npos) << md;
}

// --- properties ----------------------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Cell separators: pipes not escaped with a backslash.
std::size_t pipes(const std::string& line) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++n;
  }
  return n;
}

// Every fence opened is closed by a fence at least as long (GFM), and no table row has a cell
// too many or too few; returns what is wrong, or "".
std::string structure_problem(const std::string& md) {
  std::size_t open_fence = 0;
  std::size_t columns = 0;
  for (const auto& line : lines_of(md)) {
    std::size_t ticks = line.find_first_not_of('`');
    if (ticks == std::string::npos) ticks = line.size();
    if (open_fence > 0) {
      if (ticks >= open_fence && line.find_first_not_of('`') == std::string::npos) open_fence = 0;
      continue;
    }
    if (ticks >= 3) {
      open_fence = ticks;
      continue;
    }
    if (line.rfind("| ", 0) == 0 || line.rfind("|---", 0) == 0) {
      if (columns == 0) columns = pipes(line);
      if (pipes(line) != columns) return "row with a wrong cell count: " + line;
    } else {
      columns = 0;
    }
  }
  return open_fence ? "unclosed fence" : "";
}

// `line` without its code spans (whose text GitHub shows literally).
std::string without_code(const std::string& line) {
  std::string out;
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] != '`' || (i > 0 && line[i - 1] == '\\')) {
      out += line[i++];
      continue;
    }
    std::size_t n = line.find_first_not_of('`', i);
    n = (n == std::string::npos ? line.size() : n) - i;
    std::string ticks(n, '`');
    std::size_t close = line.find(ticks, i + n);
    while (close != std::string::npos && close + n < line.size() && line[close + n] == '`') {
      close = line.find(ticks, line.find_first_not_of('`', close));
    }
    if (close == std::string::npos) {
      out += ticks;
      i += n;
      continue;
    }
    i = close + n;
  }
  return out;
}

TEST(Report, HostileTextStaysInItsPlace) {
  Markdown md = markdown(hostile(), nullptr);
  EXPECT_EQ(structure_problem(md.report), "");
  std::size_t open_fence = 0;
  for (const auto& line : lines_of(md.report)) {
    std::size_t ticks = line.find_first_not_of('`');
    if (ticks == std::string::npos) ticks = line.size();
    if (open_fence > 0 || ticks >= 3) {
      if (open_fence == 0)
        open_fence = ticks;
      else if (ticks >= open_fence && ticks == line.size())
        open_fence = 0;
      continue;
    }
    std::string text = without_code(line);
    for (const char* bad :
         {"<img", "<script", "<b>", "<br>", "<i>", "</details><", "<so>", "@octocat", "@dba",
          "@team", "@here", "@admin", "@someone", "@B", "@main", "[link]("}) {
      EXPECT_EQ(text.find(bad), std::string::npos) << bad << " in: " << line;
    }
  }
  EXPECT_EQ(lines_of(md.report).front(), "<!-- coldgate:report:Evil-b-title-b-team -->");
  EXPECT_EQ(md.report.find("-->", 10), md.report.find(" -->\n") + 1) << "one comment end";
}

TEST(Report, MarkerKeyIsSafeInsideAnHtmlComment) {
  EXPECT_EQ(marker_key("Start-up"), "Start-up");
  EXPECT_EQ(marker_key("a --> b"), "a-b");
  EXPECT_EQ(marker_key("  "), "coldgate");
  EXPECT_EQ(marker_key("config.load_v2"), "config.load_v2");
  EXPECT_EQ(marker_key(std::string(300, 'x')).size(), 100u);
}

TEST(Report, HugeRunIsCutUnderTheLimitKeepingRegressionsAndFailures) {
  Results r = huge(2000, 400'000);
  Markdown md = markdown(r, nullptr, "coldgate-out/report-full.md");
  ASSERT_TRUE(md.cut);
  EXPECT_GT(md.full.size(), 400'000u);
  EXPECT_LE(md.report.size(), k_max_report_bytes);
  EXPECT_GT(md.report.size(), k_max_report_bytes - 2'000) << "the cut leaves room unused";
  EXPECT_EQ(structure_problem(md.report), "");
  EXPECT_EQ(md.report.rfind("<!-- coldgate:report:Huge -->\n## Huge\n\n❌ **failed: ", 0), 0u);
  EXPECT_NE(md.report.find("This report was cut to stay under 65,000 characters"),
            std::string::npos);
  EXPECT_NE(md.report.find("`coldgate-out/report-full.md`"), std::string::npos);
  // Every regression (the last one is far down the stage list) and the failed stage made it,
  // in the table of changes, before any unchanged stage.
  std::size_t unchanged = md.report.find("stages unchanged</summary>");
  ASSERT_NE(unchanged, std::string::npos);
  for (int i = 96; i < 2000; i += 97) {
    std::size_t row = md.report.find(fmt::format(
        "| stage-{:04} | wall_ms | 20.0 ms | 2.00 s (2.00 s – 2.20 s) | 🔴 100× regression | — |\n",
        i));
    EXPECT_LT(row, unchanged) << i;
  }
  EXPECT_LT(md.report.find("| stage-1999 | — | — | — | ❌ failed | cold run 1/5: timed out after "
                           "10 min |\n"),
            unchanged);
  EXPECT_LT(md.report.find("| stage-1000 | snapshot | — | — | ❌ changed | snapshot changed: 1 "
                           "path differs |\n"),
            unchanged);
  EXPECT_NE(md.report.find("<summary>stage-1000: diff of snapshots/big.json</summary>"),
            std::string::npos);
  // The big snapshot's diff is kept to 5,000 bytes in the report: room for 40 unchanged stages more.
  EXPECT_NE(md.report.find("_… 1,780 more unchanged stages in"), std::string::npos);
  // The chart is kept before the folds, of the stages whose wall time regressed.
  EXPECT_LT(md.report.find("### Cold wall time\n\nThe 20 most urgent of 22 changed stages."),
            unchanged);
  EXPECT_NE(md.report.find(", \"stage-1939\"]\n"), std::string::npos);
  EXPECT_EQ(md.report.find("\"stage-1000\""), std::string::npos) << "its wall time is the same";
  EXPECT_NE(md.report.find("- Commits: "), std::string::npos) << "the footer is kept";
  EXPECT_EQ(md.full.rfind("<!-- coldgate:report:Huge -->", 0), 0u);
  EXPECT_NE(md.full.find("| stage-1998 | wall_ms 20.0 ms → 21.0 ms · cpu_ms 20.0 ms → 21.0 ms"),
            std::string::npos);
}

TEST(Report, AHistoryReportKeepsItsStructureWholeOrCut) {
  Results base = history_base();
  EXPECT_EQ(structure_problem(markdown(history(), &base).report), "");
  Results many_base = history_many_base(200);
  Results many = history_many(200, 100, {3, 150, 199});
  for (std::size_t limit : {std::size_t{9'000}, std::size_t{30'000}, k_max_report_bytes}) {
    Markdown md = markdown(many, &many_base, "report-full.md", limit);
    EXPECT_LE(md.report.size(), limit);
    EXPECT_EQ(structure_problem(md.report), "") << limit;
    EXPECT_EQ(structure_problem(md.terminal), "") << limit;
    EXPECT_NE(md.report.find("**failed: 3 regressions"), std::string::npos) << limit;
  }
  // ab's trend beside an interleaved base is cut the same way: whole charts, the first to go.
  many.gate->base_source = BaseSource::interleaved;
  Markdown ab = markdown(many, &many_base);
  ASSERT_TRUE(ab.cut);
  EXPECT_LE(ab.report.size(), k_max_report_bytes);
  EXPECT_EQ(structure_problem(ab.report), "");
  EXPECT_EQ(ab.report.find("History baseline"), std::string::npos);
  EXPECT_NE(ab.report.find("**failed: 3 regressions"), std::string::npos);
  EXPECT_NE(ab.report.find(" more trends in `coldgate-out/report-full.md`._"), std::string::npos);
  EXPECT_NE(ab.full.find("<summary>Trend: 100 recorded commits of main and this run (head)"),
            std::string::npos);
}

TEST(Report, AnyLimitIsHonoured) {
  Results r = huge(300, 50'000);
  for (std::size_t limit : {6'000u, 9'000u, 20'000u, 40'000u}) {
    Markdown md = markdown(r, nullptr, "report-full.md", limit);
    EXPECT_TRUE(md.cut);
    EXPECT_LE(md.report.size(), limit);
    EXPECT_EQ(structure_problem(md.report), "") << limit;
    EXPECT_NE(md.report.find("**failed: "), std::string::npos) << limit;
  }
}

TEST(Report, OutputsAreWrittenAndAnnouncedOnGithub) {
  testing::TempDir dir;
  std::filesystem::path out = dir / "coldgate-out";
  dir.write("coldgate-out/report-full.md", "stale");
  dir.write("summary.md", "earlier step\n");
  ::setenv("GITHUB_STEP_SUMMARY", (dir / "summary.md").c_str(), 1);
  ::setenv("GITHUB_ACTIONS", "true", 1);
  Results r = baseline();
  Results base = baseline_base();
  std::ostringstream stdout_text;
  write_outputs(r, &base, out, stdout_text);
  ::unsetenv("GITHUB_STEP_SUMMARY");
  ::unsetenv("GITHUB_ACTIONS");

  Markdown md = markdown(r, &base, (out / "report-full.md").string());
  EXPECT_EQ(slurp(out / "report.md"), md.report);
  EXPECT_EQ(slurp(out / "junit.xml"), junit_xml(r));
  EXPECT_EQ(slurp(out / "results.json"), to_json(r));
  EXPECT_FALSE(std::filesystem::exists(out / "report-full.md")) << "a stale full report stays";
  EXPECT_EQ(slurp(dir / "summary.md"), "earlier step\n" + md.report + "\n");
  std::string text = stdout_text.str();
  ASSERT_EQ(text.rfind("::stop-commands::coldgate-", 0), 0u) << text;
  std::string token = text.substr(17, text.find('\n') - 17);
  std::string resume = "::" + token + "::\n";
  ASSERT_NE(text.find(resume), std::string::npos);
  EXPECT_EQ(text.substr(text.find('\n') + 1, md.report.size()), md.report);
  std::string after = text.substr(text.find(resume) + resume.size());
  EXPECT_NE(
      after.find("::error title=coldgate%3A regression::config-load wall_ms: regression 10.4×"),
      std::string::npos)
      << after;
  EXPECT_NE(
      after.find("::error file=snapshots/config-load.json,title=coldgate%3A snapshot changed::"),
      std::string::npos)
      << after;
}

TEST(Report, LocallyStdoutIsJustTheReportAndACutOneKeepsTheFullFile) {
  testing::TempDir dir;
  ::unsetenv("GITHUB_ACTIONS");
  ::unsetenv("GITHUB_STEP_SUMMARY");
  Results r = huge(600, 1000);
  std::ostringstream stdout_text;
  write_outputs(r, nullptr, dir.path(), stdout_text);
  EXPECT_EQ(stdout_text.str(), slurp(dir / "report.md"));
  EXPECT_LE(slurp(dir / "report.md").size(), k_max_report_bytes);
  EXPECT_EQ(slurp(dir / "report-full.md"), markdown(r, nullptr).full);
}


// An ORM's statements on one table at scales 1 → 4 → 16, as a Django app's stage records them.
StatementGrowth orm_statement(const std::string& query, std::vector<std::optional<double>> calls,
                              std::vector<std::optional<double>> blocks_per_call) {
  const std::vector<double> scales{1, 4, 16};
  StatementGrowth g;
  g.query = query;
  g.calls = results::fit_growth(scales, std::move(calls), 100);
  g.rows_per_call = results::fit_growth(scales, {1, 1, 1}, 100);
  g.blocks_per_call = results::fit_growth(scales, std::move(blocks_per_call), 100);
  g.time_ms = results::fit_growth(scales, {2, 8, 32}, 100);
  return g;
}

TEST(Report, TheGrowthSectionTellsAnOrmsStatementsApartAndMarksProjections) {
  const std::vector<double> scales{1, 4, 16};
  const std::string columns = R"(SELECT "boards_topic"."id", "boards_topic"."subject", "boards_topic"."last_updated", )"
                              R"("boards_topic"."board_id", "boards_topic"."starter_id", "boards_topic"."views" )";
  Results r;
  fixtures::common(r, "growth");
  StageResult profiled;
  profiled.name = "board-page";
  profiled.kind = StageKind::command;
  profiled.runs = 2;
  profiled.metric("wall_ms", "ms") = {"ms", {120, 124}, {}};
  StageGrowth g;
  g.scales = scales;
  g.production_scale = 100;
  g.queries = results::fit_growth(scales, {30, 102, 390}, 100);
  g.blocks = results::fit_growth(scales, {80, 300, 1190}, 100);
  g.wall_ms = results::fit_growth(scales, {120, 410, 1530}, 100);
  g.statements.push_back(orm_statement(columns + R"(FROM "boards_topic" WHERE "boards_topic"."board_id" = $1)",
                                       {24, 96, 384}, {3, 3, 3}));
  g.statements.push_back(orm_statement(columns + R"(FROM "boards_topic" WHERE "boards_topic"."id" = $1 LIMIT $2)",
                                       {1, 1, 1}, {3, 3, 3}));
  g.statements.push_back(orm_statement("BEGIN", {2, 2, 2}, {0, 0, 0}));
  g.statements.push_back(orm_statement(R"(INSERT INTO "boards_post" ("message", "topic_id", "created_at", )"
                                       R"("created_by_id", "updated_at") VALUES ($1, $2, $3, $4, $5) RETURNING "id")",
                                       {1, 1, 1}, {2, 2, 2}));
  profiled.growth = g;
  r.stages.push_back(profiled);
  // A program stage without a server-side profile: wall time only.
  StageResult unprofiled = profiled;
  unprofiled.name = "cli-export";
  StageGrowth u;
  u.scales = scales;
  u.queries = results::fit_growth(scales, {std::nullopt, std::nullopt, std::nullopt}, std::nullopt);
  u.blocks = u.queries;
  u.wall_ms = results::fit_growth(scales, {50, 52, 51}, std::nullopt);
  unprofiled.growth = u;
  r.stages.push_back(unprofiled);

  const std::string report = markdown(r, nullptr).report;
  const std::size_t at = report.find("### Growth");
  ASSERT_NE(at, std::string::npos) << report;
  const std::string growth = report.substr(at);
  // Long select lists are elided: the two SELECTs differ where they differ.
  EXPECT_NE(growth.find(R"(| `SELECT … FROM "boards_topic" WHERE "boards_topic"."board_id" = $1` | 24 → 96 → 384 · **linear** |)"),
            std::string::npos) << growth;
  EXPECT_NE(growth.find(R"(| `SELECT … FROM "boards_topic" WHERE "boards_topic"."id" = $1 LIMIT $2` | 1 → 1 → 1 · constant |)"),
            std::string::npos) << growth;
  EXPECT_NE(growth.find(R"(- `SELECT … FROM "boards_topic" WHERE "boards_topic"."board_id" = $1`: calls grow linearly with the data: an N+1 that grows)"),
            std::string::npos) << growth;
  EXPECT_NE(growth.find(R"(| `INSERT INTO "boards_post" (…) VALUES (…) RETURNING "id"` |)"), std::string::npos) << growth;
  // BEGIN's calls do not grow: a row for it would be noise, and it is counted as left out.
  EXPECT_EQ(growth.find("`BEGIN`"), std::string::npos) << growth;
  EXPECT_NE(growth.find("… 1 more in results.json (`stages[].growth.statements`), 1 of them transaction control or settings"),
            std::string::npos) << growth;
  // Projections: two significant digits, marked.
  EXPECT_NE(growth.find("| ≈ 2,400 calls · ≈ 7,200 blocks · ≈ 200 ms |"), std::string::npos) << growth;
  EXPECT_NE(growth.find("an estimate, not a measurement"), std::string::npos) << growth;
  // A stage without a profile says so instead of showing "– → –".
  EXPECT_NE(growth.find("**cli-export** at data scales ×1 → ×4 → ×16: statements and blocks not measured (no "
                        "server-side profile"),
            std::string::npos) << growth;
  EXPECT_EQ(growth.find("– → –"), std::string::npos) << growth;

  // A stage that failed at the first scale was not run at the others: it says so, nothing else.
  Results failed_run;
  fixtures::common(failed_run, "growth");
  StageResult failed = unprofiled;
  failed.name = "crashes";
  failed.error = "cold run 1/2: exit status 1";
  failed.growth = StageGrowth{};
  failed.growth->scales = scales;
  failed.growth->queries = results::fit_growth(scales, {std::nullopt, std::nullopt, std::nullopt}, std::nullopt);
  failed.growth->blocks = failed.growth->queries;
  failed.growth->wall_ms = failed.growth->queries;
  failed_run.stages.push_back(failed);
  const std::string failed_report = markdown(failed_run, nullptr).report;
  EXPECT_NE(failed_report.find("**crashes** at data scales ×1 → ×4 → ×16: not measured, the stage failed (its "
                               "error is above)\n"),
            std::string::npos)
      << failed_report;
  EXPECT_EQ(failed_report.find("no server-side profile"), std::string::npos) << failed_report;
}

}  // namespace
}  // namespace coldgate::report
