// `coldgate run` that stops before its stages — a failing setup step, a config that names what
// is not there, a server that does not start — still writes its reports, with why as the
// verdict and the exit code of the cause. The real binary, a real PostgreSQL (local provider).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "results/json.hpp"
#include "support/dumps.hpp"
#include "support/support.hpp"
#include "util/process.hpp"

namespace coldgate::session {
namespace {

namespace fs = std::filesystem;
using testing::run_coldgate;
using testing::slurp;
using testing::TempDir;

// junit.xml read by a real XML parser (Python's xml.etree, Debian's python3): one line per
// testcase, "suite/case: outcome type: message" ("suite/case: passed" for a passing one).
std::string junit_cases(const fs::path& file) {
  const char* script =
      "import sys, xml.etree.ElementTree as E\n"
      "root = E.parse(sys.argv[1]).getroot()\n"
      "assert root.tag == 'testsuites', root.tag\n"
      "for suite in root.iter('testsuite'):\n"
      "    for case in suite.iter('testcase'):\n"
      "        kids = [k for k in case if k.tag in ('failure', 'error', 'skipped')]\n"
      "        if not kids:\n"
      "            print(suite.get('name') + '/' + case.get('name') + ': passed')\n"
      "        for k in kids:\n"
      "            kind = (' ' + k.get('type')) if k.get('type') else ''\n"
      "            print(suite.get('name') + '/' + case.get('name') + ': ' + k.tag + kind + ': ' + k.get('message'))\n";
  auto r = util::run({.argv = {"/usr/bin/python3", "-c", script, file.string()}});
  EXPECT_TRUE(r.status.ok()) << r.err;
  return r.out;
}

struct StoppedRunTest : ::testing::Test {
  void config(const std::string& setup, const std::string& database = "{ provider: local }") {
    dir.write("coldgate.yaml", "version: 1\n"
                               "database: " + database + "\n"
                               "setup:\n" + setup +
                               "defaults: { runs: 1, warm: 0 }\n"
                               "stages:\n"
                               "  - name: items\n"
                               "    query: select 1\n"
                               "  - name: other\n"
                               "    query: select 2\n");
  }
  testing::RunResult run(std::vector<std::string> args = {}) {
    args.insert(args.begin(), "run");
    return run_coldgate(args, dir.path(), "", {"CI=", "GITHUB_ACTIONS=", "GITHUB_STEP_SUMMARY="});
  }
  // The verdict: report.md's line after the marker, the title and a blank line.
  std::string report_verdict() {
    std::string md = slurp(dir / "coldgate-out/report.md");
    std::size_t start = md.find("\n\n");
    if (start == std::string::npos) return "";
    return md.substr(start + 2, md.find('\n', start + 2) - start - 2);
  }
  // The last line of `text` (which ends with a newline), without it.
  std::string last_line(const std::string& text) {
    if (text.size() < 2) return "";
    std::size_t start = text.rfind('\n', text.size() - 2);
    return text.substr(start == std::string::npos ? 0 : start + 1, text.size() - 1 - (start + 1));
  }
  results::Results results() {
    return results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  }
  TempDir dir;
};

TEST_F(StoppedRunTest, SetupSqlErrorFailsTheGateWithTheStepItsPlaceAndItsErrorAsTheVerdict) {
  dir.write("schema.sql", "CREATE TABLE t (id int);\n\nSELECT id FROM t WHERE nam = 1;\n");
  config("  - sql: schema.sql\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string verdict = "failed: setup step sql schema.sql at schema.sql:3:24: SQLSTATE "
                              "42703: column \"nam\" does not exist; 2 stages not run";
  EXPECT_EQ(report_verdict(), "❌ **" + verdict + "**");
  EXPECT_EQ(last_line(r.err), "coldgate: " + verdict + "; results in coldgate-out/results.json");
  EXPECT_NE(r.err.find("coldgate: error: schema.sql:3:24: SQLSTATE 42703: column \"nam\" does not "
                       "exist\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(slurp(dir / "coldgate-out/report.md")
                .find("<details open><summary>setup step sql schema.sql failed at "
                      "schema.sql:3:24</summary>\n\n```\nSQLSTATE 42703: column \"nam\" does not "
                      "exist\n```\n\nStages not run: setup failed: `items`, `other`\n</details>\n"),
            std::string::npos);
  EXPECT_EQ(r.out, slurp(dir / "coldgate-out/report.md"));
  auto res = results();
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 1);
  EXPECT_EQ(res.stopped->phase, results::StopPhase::setup);
  EXPECT_EQ(res.stopped->step, "sql schema.sql");
  EXPECT_EQ(res.stopped->where, "schema.sql:3:24");
  EXPECT_EQ(res.stopped->error, "SQLSTATE 42703: column \"nam\" does not exist");
  EXPECT_EQ(res.stopped->not_run, (std::vector<std::string>{"items", "other"}));
  EXPECT_TRUE(res.stages.empty());
  EXPECT_EQ(res.environment.provider, "local");
  EXPECT_EQ(junit_cases(dir / "coldgate-out/junit.xml"),
            "setup/sql schema.sql: failure setup failed: sql schema.sql at schema.sql:3:24: "
            "SQLSTATE 42703: column \"nam\" does not exist\n"
            "items/run: skipped: not run: setup failed\n"
            "other/run: skipped: not run: setup failed\n");
}

TEST_F(StoppedRunTest, PsqlScriptErrorAndAFailingCommandFailTheGateToo) {
  dir.write("schema.sql", "CREATE TABLE t (id int);\n");
  dir.write("seed.sql", "INSERT INTO t VALUES (1);\nINSERT INTO missing VALUES (2);\n");
  config("  - sql: schema.sql\n  - psql: seed.sql\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string psql = "failed: setup step psql seed.sql at seed.sql:2:13: psql -f seed.sql "
                           "failed (exit status 3): psql:seed.sql:2: ERROR:  relation \"missing\" "
                           "does not exist; 2 stages not run";
  EXPECT_EQ(report_verdict(), "❌ **" + psql + "**");
  EXPECT_EQ(last_line(r.err), "coldgate: " + psql + "; results in coldgate-out/results.json");
  EXPECT_EQ(junit_cases(dir / "coldgate-out/junit.xml"),
            "setup/sql schema.sql: passed\n"
            "setup/psql seed.sql: failure setup failed: psql seed.sql at seed.sql:2:13: psql -f "
            "seed.sql failed (exit status 3): psql:seed.sql:2: ERROR:  relation \"missing\" does "
            "not exist\n"
            "items/run: skipped: not run: setup failed\n"
            "other/run: skipped: not run: setup failed\n");
  EXPECT_EQ(results().setup.size(), 1u);  // the step before the failed one, as run

  dir.write("seed.sh", "echo loading\necho no seeds here >&2\nexit 1\n");
  config("  - command: [sh, seed.sh]\n");
  r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string command = "failed: setup step command sh seed.sh at coldgate.yaml:4:5: setup "
                              "command `sh seed.sh` failed (exit status 1): no seeds here; 2 "
                              "stages not run";
  EXPECT_EQ(report_verdict(), "❌ **failed: setup step command sh seed.sh at coldgate.yaml:4:5: "
                              "setup command \\`sh seed.sh\\` failed (exit status 1): no seeds "
                              "here; 2 stages not run**");
  EXPECT_EQ(last_line(r.err), "coldgate: " + command + "; results in coldgate-out/results.json");
  EXPECT_EQ(junit_cases(dir / "coldgate-out/junit.xml"),
            "setup/command sh seed.sh: failure setup failed: command sh seed.sh at "
            "coldgate.yaml:4:5: setup command `sh seed.sh` failed (exit status 1): no seeds here\n"
            "items/run: skipped: not run: setup failed\n"
            "other/run: skipped: not run: setup failed\n");
}

TEST_F(StoppedRunTest, AMissingSetupFileOrProgramIsAConfigErrorBeforeAnyServerStarts) {
  config("  - sql: db/schema.sql\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.find(") ready in "), std::string::npos) << "a server was started:\n" << r.err;
  const std::string error = "coldgate.yaml:4:10: setup[0].sql: file not found: db/schema.sql "
                            "(relative to the config's folder " + dir.path().string() +
                            "); fix the path or add the file";
  EXPECT_EQ(r.err, "coldgate: error: " + error + "\ncoldgate: config error at " + error +
                      "; 2 stages not run; results in coldgate-out/results.json\n");
  EXPECT_EQ(report_verdict(), "❌ **config error at coldgate.yaml:4:10: setup\\[0\\].sql: file "
                              "not found: db/schema.sql (relative to the config's folder " +
                                  dir.path().string() +
                                  "); fix the path or add the file; 2 stages not run**");
  EXPECT_EQ(junit_cases(dir / "coldgate-out/junit.xml"),
            "coldgate/config: error run stopped: config error at " + error +
                "; 2 stages not run\n"
                "items/run: skipped: not run: config error\n"
                "other/run: skipped: not run: config error\n");
  EXPECT_EQ(results().stopped->phase, results::StopPhase::config);
  EXPECT_EQ(results().environment.provider, "");  // no server was asked for

  config("  - command: [coldgate-no-such-seeder, --all]\n");
  r = run();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.find(") ready in "), std::string::npos) << "a server was started:\n" << r.err;
  EXPECT_TRUE(r.err.starts_with(
      "coldgate: error: coldgate.yaml:4:15: setup[0].command[0]: program not found: "
      "coldgate-no-such-seeder (looked up on PATH, as the step runs it); install it, or name it "
      "by its path from the config's folder, e.g. ./tools/coldgate-no-such-seeder\n"))
      << r.err;
  EXPECT_EQ(report_verdict(),
            "❌ **config error at coldgate.yaml:4:15: setup\\[0\\].command\\[0\\]: program not "
            "found: coldgate-no-such-seeder (looked up on PATH, as the step runs it); install it, "
            "or name it by its path from the config's folder, e.g. "
            "./tools/coldgate-no-such-seeder; 2 stages not run**");
}

// A command stage whose program is not there is the config's mistake too: exit 2 before any
// server starts, one line naming the stage and its place, the reports saying so.
TEST_F(StoppedRunTest, AMissingStageProgramIsAConfigErrorBeforeAnyServerStarts) {
  dir.write("coldgate.yaml", "version: 1\n"
                             "database: { provider: local }\n"
                             "defaults: { runs: 1, warm: 0 }\n"
                             "stages:\n"
                             "  - name: items\n"
                             "    query: select 1\n"
                             "  - name: app\n"
                             "    command: [coldgate-no-such-app, --start]\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.find(") ready in "), std::string::npos) << "a server was started:\n" << r.err;
  const std::string error =
      "coldgate.yaml:8:15: stages[1].command[0] (stage app): program not found: "
      "coldgate-no-such-app (looked up on PATH, as the stage runs it); install it, or name it by "
      "its path from the config's folder, e.g. ./tools/coldgate-no-such-app";
  EXPECT_EQ(r.err, "coldgate: error: " + error + "\ncoldgate: config error at " + error +
                       "; 2 stages not run; results in coldgate-out/results.json\n");
  EXPECT_EQ(results().stopped->phase, results::StopPhase::config);
  EXPECT_EQ(results().stopped->exit_code, 2);
  EXPECT_EQ(results().environment.provider, "");  // no server was asked for

  // The shell form, by its path from the config's folder; `--stage items` does not run it.
  dir.write("coldgate.yaml", "version: 1\n"
                             "database: { provider: local }\n"
                             "defaults: { runs: 1, warm: 0 }\n"
                             "stages:\n"
                             "  - name: items\n"
                             "    query: select 1\n"
                             "  - name: app\n"
                             "    command: ./bin/app --start > out.json\n");
  r = run();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.find(") ready in "), std::string::npos) << "a server was started:\n" << r.err;
  EXPECT_TRUE(r.err.starts_with("coldgate: error: coldgate.yaml:8:14: stages[1].command (stage "
                                "app): program not found: ./bin/app (relative to the config's "
                                "folder "))
      << r.err;
  r = run({"--stage", "items"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(StoppedRunTest, AServerThatDoesNotStartIsExit3WithReportsSayingSo) {
  dir.write("schema.sql", "CREATE TABLE t (id int);\n");
  // A socket folder that does not exist: the server's log names a file, not the setting.
  config("  - sql: schema.sql\n",
         "{ provider: local, settings: { unix_socket_directories: /nonexistent } }");
  auto r = run();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  std::string verdict = report_verdict();
  // The verdict quotes the log's FATAL line: what went wrong, not a HINT or a later LOG line.
  EXPECT_TRUE(verdict.starts_with("❌ **infrastructure error at coldgate.yaml:2:11: database: "
                                  "PostgreSQL server did not start (exit status 1)"))
      << verdict;
  EXPECT_NE(verdict.find("FATAL:  could not create lock file \"/nonexistent/.s.PGSQL."),
            std::string::npos)
      << verdict;
  EXPECT_TRUE(verdict.ends_with(".lock\": No such file or directory; 2 stages not run**"))
      << verdict;
  EXPECT_TRUE(last_line(r.err).starts_with("coldgate: infrastructure error at coldgate.yaml:2:11: "
                                           "database: PostgreSQL server did not start"))
      << r.err;
  auto res = results();
  EXPECT_EQ(res.stopped->phase, results::StopPhase::server);
  EXPECT_EQ(res.stopped->exit_code, 3);
  EXPECT_EQ(last_line(junit_cases(dir / "coldgate-out/junit.xml")),
            "other/run: skipped: not run: the server did not start");
}

TEST_F(StoppedRunTest, ASettingTheServerRefusesIsAConfigErrorAtItsName) {
  dir.write("schema.sql", "CREATE TABLE t (id int);\n");
  const std::string database =
      "{ provider: local, settings: { work_mem: 8MB, shared_buffers: nonsense } }";
  config("  - sql: schema.sql\n", database);
  const std::string at =
      fmt::format("coldgate.yaml:2:{}", 11 + database.find("shared_buffers"));
  auto r = run();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const std::string why = "database.settings.shared_buffers: the server refused it: invalid "
                          "value for parameter \"shared_buffers\": \"nonsense\" — fix the value "
                          "or remove the setting";
  EXPECT_EQ(last_line(r.err), "coldgate: config error at " + at + ": " + why +
                                  "; 2 stages not run; results in coldgate-out/results.json")
      << r.err;
  EXPECT_EQ(report_verdict(), "❌ **config error at " + at + ": " + why + "; 2 stages not run**");
  auto res = results();
  EXPECT_EQ(res.stopped->phase, results::StopPhase::server);
  EXPECT_EQ(res.stopped->exit_code, 2);

  // A name the server does not know: the same place, told to check the name.
  config("  - sql: schema.sql\n", "{ provider: local, settings: { shared_bufers: 64MB } }");
  r = run();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(last_line(r.err),
            "coldgate: config error at coldgate.yaml:2:42: database.settings.shared_bufers: the "
            "server refused it: unrecognized configuration parameter \"shared_bufers\" — check "
            "the name (SHOW ALL lists the server's) or remove the setting; 2 stages not run; "
            "results in coldgate-out/results.json")
      << r.err;
}

// A stage's setting is checked as its runs will set it, once setup is done and before any
// stage runs: a misspelt name or a bad value is the config's error at that name, not a stage
// that fails its first cold run.
TEST_F(StoppedRunTest, AStageSettingTheServerRefusesStopsTheRunBeforeAnyStageAtItsName) {
  dir.write("schema.sql", "CREATE TABLE t (id int);\n");
  auto with_settings = [&](const std::string& settings) {
    dir.write("coldgate.yaml", "version: 1\n"
                               "setup: [ { sql: schema.sql } ]\n"
                               "defaults: { runs: 1, warm: 0 }\n"
                               "stages:\n"
                               "  - name: items\n"
                               "    query: select count(*) from t\n"
                               "  - name: tuned\n"
                               "    query: select 1\n"
                               "    settings: " + settings + "\n");
  };
  with_settings("{ work_mem: 4MB, jit_abvoe_cost: 10 }");
  auto r = run();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const std::string why =
      "config error at coldgate.yaml:9:32: stage tuned: settings.jit_abvoe_cost: the server "
      "refused it: SQLSTATE 42704: unrecognized configuration parameter \"jit_abvoe_cost\" — "
      "check the name (SHOW ALL lists the server's) or remove the setting; 2 stages not run";
  EXPECT_EQ(last_line(r.err), "coldgate: " + why + "; results in coldgate-out/results.json")
      << r.err;
  EXPECT_EQ(report_verdict(), "❌ **" + why + "**");
  EXPECT_EQ(r.err.find("[1/2] items"), std::string::npos) << "a stage ran:\n" << r.err;
  auto res = results();
  EXPECT_EQ(res.stopped->exit_code, 2);
  EXPECT_TRUE(res.stages.empty());

  with_settings("{ work_mem: lots }");
  r = run();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(last_line(r.err),
            "coldgate: config error at coldgate.yaml:9:17: stage tuned: settings.work_mem: the "
            "server refused it: SQLSTATE 22023: invalid value for parameter \"work_mem\": "
            "\"lots\" — fix the value or remove the setting; 2 stages not run; results in "
            "coldgate-out/results.json")
      << r.err;

  with_settings("{ work_mem: 4MB, jit: false }");
  r = run();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[2/2] tuned"), std::string::npos) << r.err;
}

TEST_F(StoppedRunTest, AnEarlierRunsReportNeverPassesForThisOnes) {
  config("  - command: [\"true\"]\n");
  ASSERT_EQ(run().exit_code, 0);
  ASSERT_TRUE(fs::exists(dir / "coldgate-out/report.md"));
  // A config that does not load: no report at all, rather than the last one.
  dir.write("coldgate.yaml", "version: 1\nstages:\n  - name: a\n    query: select a: b\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: coldgate.yaml:4:20: invalid YAML: illegal map value; a "
                   "plain value cannot hold ': ' — quote the value: \"select a: b\"\n");
  for (const char* name : {"report.md", "results.json", "junit.xml"}) {
    EXPECT_FALSE(fs::exists(dir / "coldgate-out" / name)) << name;
  }
  // An unknown --stage once the config loaded: reports of this run, saying so.
  config("  - command: [\"true\"]\n");
  r = run({"--stage", "itemz"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(report_verdict(), "❌ **usage error at --stage: no stage 'itemz' in coldgate.yaml "
                              "(did you mean 'items'?)**");
}

TEST_F(StoppedRunTest, AChinookShapedDumpLoadsWithPsqlStartingInPostgres) {
  dir.write("db/chinook.sql", testing::chinook_shaped_dump("chinook", 3, true));
  dir.write("coldgate.yaml",
            "version: 1\n"
            "database: { provider: local, name: chinook }\n"
            "setup:\n"
            "  - psql: { file: db/chinook.sql, database: postgres,\n"
            "            variables: { title: \"Let There Be Rock\", artist: 2 } }\n"
            "defaults: { runs: 1, warm: 0 }\n"
            "stages:\n"
            "  - name: albums\n"
            "    query: select json_agg(json_build_object('title', title, 'by', a.name)) from album "
            "join artist a using (artist_id)\n"
            "    decode: json\n"
            "    snapshot: true\n");
  auto r = run({"--update-snapshots"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(dir / "snapshots/albums.json"),
            "[\n  {\n    \"by\": \"Artist 2\",\n    \"title\": \"Let There Be Rock\"\n  }\n]\n");
  EXPECT_EQ(r.err.find("warning:"), std::string::npos) << r.err;
  EXPECT_EQ(last_line(r.err), "coldgate: passed: 1 stage, 0 snapshots match, 1 updated; results "
                              "in coldgate-out/results.json");
}

TEST_F(StoppedRunTest, AChinookShapedDumpInThePlainFormIsToldWhereItsTablesWent) {
  dir.write("db/chinook.sql", testing::chinook_shaped_dump("chinook", 3, false));
  dir.write("coldgate.yaml", "version: 1\n"
                             "database: { provider: local }\n"
                             "setup:\n"
                             "  - psql: db/chinook.sql\n"
                             "defaults: { runs: 1, warm: 0 }\n"
                             "stages:\n"
                             "  - name: albums\n"
                             "    query: select count(*) from album\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the stage meets no table album
  const std::string warning =
      "after setup the stages' database coldgate has no tables, but database chinook has 2 "
      "tables (did a setup script's \\c move there?); set database.name: chinook so the stages "
      "use it, with psql: {file: db/chinook.sql, database: postgres} if the script creates "
      "chinook";
  EXPECT_NE(r.err.find("\ncoldgate: warning: " + warning + "\n"), std::string::npos) << r.err;
  EXPECT_EQ(report_verdict(), "❌ **failed: 1 stage failed (albums)**");
  EXPECT_NE(slurp(dir / "coldgate-out/report.md")
                .find("❌ **failed: 1 stage failed (albums)**\n\n⚠️ after setup the stages' "
                      "database coldgate has no tables, but database chinook has 2 tables (did a "
                      "setup script's \\\\c move there?); set database.name: chinook so the "
                      "stages use it, with psql: {file: db/chinook.sql, database: postgres} if "
                      "the script creates chinook\n"),
            std::string::npos);
  EXPECT_EQ(results().warnings, std::vector<std::string>{warning});
}

TEST_F(StoppedRunTest, ASqlStepWithAMetaCommandSaysToUsePsql) {
  dir.write("db/chinook.sql", testing::chinook_shaped_dump("chinook", 3, false));
  config("  - sql: db/chinook.sql\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("\ncoldgate: error: db/chinook.sql:3:1: \\c is a psql meta-command, which "
                       "a sql: step cannot run (it sends the file to the server as SQL); load the "
                       "file with psql: db/chinook.sql\n"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace coldgate::session
