#include "report/report.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "report/junit.hpp"
#include "report/outputs.hpp"
#include "report/results_json.hpp"
#include "support/support.hpp"
#include "util/fs.hpp"

// Golden files: tests/report/golden/<case>.json (input, built by the fixtures below) →
// <case>.md (report.md) and <case>.xml (junit.xml), compared byte for byte.
// COLDGATE_UPDATE_GOLDEN=1 rewrites inputs and expectations; review the diff before committing.

namespace coldgate::report {
namespace {

using namespace coldgate::measure;
using coldgate::testing::slurp;

void common(Results& r, const std::string& title) {
  r.tool_version = "0.1.0";
  r.started_at = "2024-05-01T10:00:00Z";
  r.finished_at = "2024-05-01T10:01:05Z";
  r.config = "coldgate.yaml";
  r.title = title;
  r.git = {"5d6e7f8a9b0c1d2e3f405162738495a6b7c8d9e0", "feature/faster-load", "", {}};
  r.environment.host = "ci-runner-1";
  r.environment.cpus = 2;
  r.environment.cpu_model = "AMD EPYC 7B13";
  r.environment.kernel = "Linux 6.1.0-18-amd64";
  r.environment.os = "Debian GNU/Linux 12 (bookworm)";
  r.environment.provider = "local";
  r.environment.postgres_version = "16.4";
  r.environment.postgres_version_num = 160004;
}

StageResult jit_stage(double scale) {
  StageResult s;
  s.name = "config-load-jit";
  s.kind = "sql";
  s.cold_mode = "process";
  s.runs = 3;
  s.warm = 1;
  s.explain = Explain{};
  s.explain->jit = true;
  s.explain->execution_ms = 1911 * scale;
  s.metric("wall_ms", "ms") = {"ms", {2400 * scale, 2380 * scale, 2520 * scale}, {2100 * scale}};
  s.metric("execution_ms", "ms") = {"ms", {1911 * scale, 1900 * scale, 1950 * scale}, {}};
  s.metric("jit_functions", "count") = {"count", {1404, 1404, 1404}, {}};
  s.metric("jit_emission_ms", "ms") = {"ms", {242, 240, 250}, {}};
  s.metric("jit_total_ms", "ms") = {"ms", {703, 700, 710}, {}};
  s.snapshot = SnapshotResult{"match", "snapshots/config-load-jit.json", "", "ab12", "", ""};
  return s;
}

StageResult load_stage(double scale, const std::string& status) {
  StageResult s;
  s.name = "config-load";
  s.kind = "sql";
  s.cold_mode = "process";
  s.runs = 3;
  s.warm = 0;
  s.explain = Explain{};
  s.metric("wall_ms", "ms") = {"ms", {240 * scale, 231 * scale, 252 * scale}, {}};
  s.metric("cpu_ms", "ms") = {"ms", {100 * scale / 4, 98 * scale / 4, 104 * scale / 4}, {}};
  s.metric("peak_rss_bytes", "bytes") = {
      "bytes", {14.1 * 1024 * 1024, 14.2 * 1024 * 1024, 14.0 * 1024 * 1024}, {}};
  s.metric("jit_total_ms", "ms") = {"ms", {0, 0, 0}, {}};
  s.snapshot =
      SnapshotResult{status,
                     "snapshots/config-load.json",
                     status == "match" ? "" : "coldgate-out/snapshots/config-load.json.new",
                     "cd34",
                     status == "match" ? "" : "snapshot changed: 1 path differs",
                     status == "match" ? ""
                                       : "1 path differs: 1 changed, 0 added, 0 removed\n"
                                         "  /realms/0/name: \"north\" → \"nord\"\n\n"
                                         "--- snapshots/config-load.json\n"
                                         "+++ coldgate-out/snapshots/config-load.json.new\n"
                                         "@@ -2,3 +2,3 @@\n"
                                         "   \"realms\": [\n"
                                         "-    {\"name\": \"north\"}\n"
                                         "+    {\"name\": \"nord\"}\n"
                                         "   ]\n"};
  return s;
}

StageResult command_stage(const std::string& name, double wall) {
  StageResult s;
  s.name = name;
  s.kind = "command";
  s.cold_mode = "process";
  s.runs = 2;
  s.warm = 0;
  s.metric("wall_ms", "ms") = {"ms", {wall, wall * 1.1}, {}};
  s.metric("allocated_bytes", "bytes") = {"bytes", {4096, 4096}, {}};
  return s;
}

MetricVerdict verdict(const std::string& stage, const std::string& metric, const std::string& unit,
                      const std::string& v, std::optional<double> base, std::optional<double> head,
                      const std::string& reason = "") {
  std::optional<double> ratio;
  if (base && head && *base > 0) ratio = *head / *base;
  return {stage, metric, unit, v, base, head, ratio, reason};
}

Results no_baseline() {
  Results r;
  common(r, "Start-up");
  r.stages.push_back(jit_stage(1));
  r.stages.push_back(load_stage(1, "changed"));
  StageResult crash = command_stage("shop-client", 0);
  crash.metrics.clear();
  crash.error = "cold run 1/2: killed by SIGSEGV; stderr ends:\nabout to crash";
  r.stages.push_back(crash);
  r.obsolete_snapshots = {"snapshots/old.json"};
  r.diagnoses.push_back({"config-load-jit",
                         "jit_dominates",
                         "JIT compiled 1,404 functions in 703 ms of 1.91 s execution (cost "
                         "estimate 455,863 > jit_above_cost 100,000) — consider "
                         "`SET LOCAL jit = off` for this query (`settings: {jit: \"off\"}`)",
                         {{"jit_total_ms", 703}, {"execution_ms", 1911}}});
  return r;
}

Results baseline_base() {
  Results r;
  common(r, "Start-up");
  r.git = {"1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", "main", "", {}};
  r.environment.postgres_version = "15.8";
  r.environment.postgres_version_num = 150008;
  r.stages.push_back(jit_stage(1));
  r.stages.push_back(load_stage(1, "match"));
  r.stages.push_back(command_stage("old-stage", 50));
  return r;
}

Results baseline() {
  Results r;
  common(r, "Start-up");
  r.git.base = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d";
  r.stages.push_back(jit_stage(0.3));
  r.stages.push_back(load_stage(10.4, "changed"));
  r.stages.push_back(command_stage("new-stage", 80));
  GateResult g;
  g.baseline = "baseline/results.json";
  g.base_git = {"1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", "main", "", {}};
  g.environment_differences = {"postgres_version: 15.8 → 16.4"};
  g.metrics = {
      verdict("config-load-jit", "wall_ms", "ms", "faster", 2400, 720),
      verdict("config-load-jit", "execution_ms", "ms", "faster", 1911, 573.3),
      verdict("config-load-jit", "jit_total_ms", "ms", "same", 703, 703),
      verdict("config-load", "wall_ms", "ms", "regression", 240, 2496,
              "10.4× ≥ max_ratio 10, +2.26 s ≥ min_delta 20 ms, ranges apart"),
      verdict("config-load", "cpu_ms", "ms", "slower", 25, 260, "10.4× but +235 ms, ranges apart"),
      verdict("config-load", "peak_rss_bytes", "bytes", "same", 14.1 * 1024 * 1024,
              14.1 * 1024 * 1024),
      verdict("config-load", "jit_total_ms", "ms", "same", 0, 0),
      verdict("new-stage", "wall_ms", "ms", "new", std::nullopt, 80),
      verdict("old-stage", "wall_ms", "ms", "removed", 50, std::nullopt),
  };
  g.stages_new = {"new-stage"};
  g.stages_removed = {"old-stage"};
  r.gate = g;
  return r;
}

Results hostile() {
  Results r;
  common(r, "Evil --> <b>title</b> @team");
  r.git.branch = "x`y|z";
  std::string evil = "a|b <img src=x onerror=alert(1)> @octocat `tick` *bold* [link](http://e)";
  StageResult s = command_stage(evil, 12);
  s.error = "cold run 1/2: ERROR: syntax error\n```\n</details>\n@admin please <b>fix</b>\n";
  s.snapshot = SnapshotResult{"changed",
                              "snapshots/we|ird`name.json",
                              "out/we|ird`name.json.new",
                              "",
                              "snapshot changed @here <br> | x",
                              "1 path differs: </summary><script>x</script>\n"
                              "  /a: \"```\" → \"</details>\"\n\n-```\n+</details>\n"};
  r.stages.push_back(s);
  StageResult quote = command_stage("quote\"#x", 3);
  r.stages.push_back(quote);
  r.diagnoses.push_back({evil,
                         "never_analyzed",
                         "table `public.x` <i>never</i> analyzed — ask @dba | run `ANALYZE`",
                         {}});
  GateResult g;
  g.baseline = "base|line.json";
  g.base_git = {"<script>", "@main", "", {}};
  g.environment_differences = {"cpu_model: <b>A</b> → @B | C"};
  g.metrics = {verdict(evil, "wall_ms", "ms", "regression", 1, 12, "@someone said <so>"),
               verdict(evil, "weird|metric", "ms", "slower", 1, 3)};
  r.gate = g;
  return r;
}

Results huge(int stages, std::size_t diff_bytes) {
  Results r;
  common(r, "Huge");
  for (int i = 0; i < stages; ++i) {
    StageResult s;
    s.name = fmt::format("stage-{:04}", i);
    s.kind = "sql";
    s.explain = Explain{};
    GateResult& g = r.gate ? *r.gate : r.gate.emplace();
    for (const char* m : {"wall_ms", "cpu_ms", "connect_ms", "query_ms", "decode_ms", "planning_ms",
                          "execution_ms", "peak_rss_bytes"}) {
      std::string unit = std::string(m) == "peak_rss_bytes" ? "bytes" : "ms";
      bool regressed = i % 97 == 96 && std::string(m) == "wall_ms";
      s.metric(m, unit) = {
          unit,
          regressed ? std::vector<double>{2000, 2100, 2200} : std::vector<double>{20, 21, 22},
          {}};
      g.metrics.push_back(
          verdict(s.name, m, unit, regressed ? "regression" : "same", 20, regressed ? 2000 : 21));
    }
    if (i == stages - 1) s.error = "cold run 1/5: timed out after 10 min";
    if (i == stages / 2) {
      std::string diff = "1 path differs: 1 changed, 0 added, 0 removed\n\n";
      while (diff.size() < diff_bytes) diff += "-    \"line\": \"old value that is long enough\"\n";
      s.snapshot = SnapshotResult{"changed",
                                  "snapshots/big.json",
                                  "snapshots/big.json.new",
                                  "",
                                  "snapshot changed: 1 path differs",
                                  diff};
    }
    r.stages.push_back(std::move(s));
  }
  return r;
}

// --- golden files -------------------------------------------------------------------------

std::filesystem::path golden(const std::string& name) {
  return testing::source_dir() / "tests/report/golden" / name;
}

bool updating() {
  const char* v = std::getenv("COLDGATE_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

void expect_golden(const std::string& name, const std::string& actual) {
  if (updating()) {
    util::write_file_atomic(golden(name), actual);
    return;
  }
  EXPECT_EQ(actual, slurp(golden(name)))
      << "tests/report/golden/" << name << " differs (COLDGATE_UPDATE_GOLDEN=1 rewrites it)";
}

// The input file, checked against its fixture, read back as a run would read it.
Results input(const std::string& name, const Results& fixture) {
  expect_golden(name + ".json", to_json(fixture));
  return from_json(updating() ? to_json(fixture) : slurp(golden(name + ".json")), name);
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
}

TEST(ReportGolden, NoBaseline) {
  expect_outputs("no_baseline", no_baseline());
}

TEST(ReportGolden, Baseline) {
  expect_outputs("baseline", baseline(), baseline_base());
}

TEST(ReportGolden, Hostile) {
  expect_outputs("hostile", hostile());
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
  // Every regression (the last one is far down the stage list) and the failed stage made it.
  for (int i = 96; i < 2000; i += 97) {
    EXPECT_NE(md.report.find(fmt::format("| stage-{:04} | wall_ms | 20.0 ms | 2.00 s (2.00 s – "
                                         "2.20 s) | 🔴 100× regression |\n",
                                         i)),
              std::string::npos)
        << i;
  }
  EXPECT_NE(md.report.find("### stage-1999: failed"), std::string::npos);
  EXPECT_NE(md.report.find("### stage-1000: snapshot changed"), std::string::npos);
  EXPECT_NE(md.report.find("more table rows in"), std::string::npos);
  EXPECT_NE(md.report.find("- Commits: "), std::string::npos) << "the footer is kept";
  EXPECT_EQ(md.full.rfind("<!-- coldgate:report:Huge -->", 0), 0u);
  EXPECT_NE(md.full.find("| stage-1998 | cpu_ms |"), std::string::npos);
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

}  // namespace
}  // namespace coldgate::report
