// A stage's client sessions on the server — what they leave behind (a timed-out query), what
// they are named, which settings they get: the real binary on the suite's cluster (external
// provider, a fresh database per test), so the server outlives the run and pg_stat_activity or
// pg_db_role_setting can be read the moment coldgate has exited.
#include <gtest/gtest.h>

#include <filesystem>

#include "db/connection.hpp"
#include "measure/command_settings.hpp"
#include "results/json.hpp"
#include "support/cluster.hpp"
#include "support/support.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

using testing::run_coldgate;
using testing::slurp;
using testing::TempDir;

struct ServerSessions : ::testing::Test {
  // `coldgate run` of `stages` against a fresh database `database` on the suite's cluster.
  testing::RunResult run(const std::string& database, const std::string& stages) {
    fresh(database);
    return run(stages);
  }
  // Creates the database `database` (dropped first) that the next run() uses.
  void fresh(const std::string& database) {
    db = database;
    url = testing::fresh_database(database).url();
  }
  // `coldgate run` of `stages` against the database of the last fresh().
  testing::RunResult run(const std::string& stages) {
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: external, url: \"${TEST_DB_URL}\" }\n"
              "defaults: { runs: 1, warm: 0 }\n"
              "stages:\n" +
                  stages);
    return run_coldgate({"run", "--no-ci", "--out", (dir / "out").string()}, dir.path(), "",
                        {"TEST_DB_URL=" + url});
  }
  Results results() { return results::from_json(slurp(dir / "out/results.json"), "r.json"); }
  // Runs `statement` on the test's database as the suite's superuser (postgres).
  pqxx::result sql(const std::string& statement) {
    db::Connection conn(testing::shared_cluster().socket_info(db));
    return conn.exec(statement);
  }
  std::vector<std::string> backends() { return testing::backends_of(db); }
  // The error of `stage` (with "{timeout}" where its timeout goes) once it timed out with its
  // query on the server. A loaded machine can take longer than the first timeout to start the
  // client and send the query, so the stage runs at 1 s, then 4 s and 16 s while coldgate says
  // its timeout came first; every attempt is held to exit 1, no session left and one of the two
  // messages, so no attempt's verdict depends on the machine's speed.
  std::string timed_out_on_server(const std::string& database, const std::string& stage) {
    fresh(database);
    for (int seconds : {1, 4, 16}) {
      std::string text = stage;
      text.replace(text.find("{timeout}"), 9, std::to_string(seconds) + "s");
      auto r = run(text);
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_EQ(backends(), std::vector<std::string>{});
      std::string error = results().stages.at(0).error;
      const std::string killed = "cold run 1/1: timed out after " + std::to_string(seconds * 1000) +
                                 " ms; its process group was killed";
      if (error.rfind(killed + k_on_server, 0) == 0) {
        // Cancelled, or ended when a cancel did not end it in time: both leave nothing.
        const std::string how = error.substr(killed.size() + std::string(k_on_server).size());
        EXPECT_TRUE(how == "cancelled" || how == "ended with pg_terminate_backend") << error;
        return error;
      }
      EXPECT_EQ(error, killed) << "neither on the server nor before it";
      if (HasFailure()) return error;
    }
    ADD_FAILURE() << "the query was not on the server within a 16 s timeout";
    return "";
  }
  static constexpr const char* k_on_server = "; its query was still running on the server and was ";
  std::string role_settings() { return testing::role_settings_of(db); }
  TempDir dir;
  std::string db;
  std::string url;
};

TEST_F(ServerSessions, ATimedOutSqlStageLeavesNoQueryRunningOnTheServer) {
  std::string error = timed_out_on_server("coldgate_sessions_sql",
                                          "  - name: sleepy\n"
                                          "    query: select pg_sleep(100)\n"
                                          "    timeout: {timeout}\n");
  // Asked right after each run, the server listed none of its sessions: coldgate waited for that.
  EXPECT_NE(error, "");
}

TEST_F(ServerSessions, ATimedOutCommandStageLeavesNoQueryRunningOnTheServer) {
  std::string error = timed_out_on_server("coldgate_sessions_cmd",
                                          "  - name: sleepy-client\n"
                                          "    command: [psql, -XAtc, 'select pg_sleep(100)']\n"
                                          "    timeout: {timeout}\n");
  EXPECT_NE(error, "");
}

TEST_F(ServerSessions, EveryRunsClientsCarryTheRunsApplicationName) {
  auto r = run("coldgate_sessions_name",
               "  - name: probe-name\n"
               "    query: select json_build_object('app', current_setting('application_name'))\n"
               "    decode: json\n"
               "    snapshot: true\n"
               "  - name: client-name\n"
               "    command: [sh, -c, 'psql -XAtc \"show application_name\" >> app.txt']\n"
               "    runs: 2\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;  // no committed snapshot
  std::string doc = slurp(dir / "snapshots/probe-name.json.new");
  EXPECT_NE(doc.find("\"app\": \"coldgate/probe-name/1/"), std::string::npos) << doc;
  const std::string first = "coldgate/client-name/1/", second = "\ncoldgate/client-name/2/";
  std::string app = slurp(dir / "app.txt");
  ASSERT_EQ(app.rfind(first, 0), 0u) << app;
  auto at = app.find(second);
  ASSERT_NE(at, std::string::npos) << app;
  // Both runs' names end with the same pid: coldgate's.
  std::string pid = app.substr(first.size(), app.find('\n') - first.size());
  EXPECT_EQ(app.substr(at + second.size()), pid + "\n");
}

TEST_F(ServerSessions, CommandStageSettingsReachLibpqClientsThroughPgoptions) {
  // A value with a space and a backslash: escaped as libpq's `options` wants.
  dir.write("client.sh",
            "psql -XAtc 'show coldgate.note' >> note.txt\n"
            "psql -XAtc \"select json_build_object('jit', current_setting('jit'))\"\n");
  auto r = run("coldgate_settings_pgoptions",
               "  - name: app\n"
               "    command: [sh, client.sh]\n"
               "    settings: { jit: \"off\", coldgate.note: 'a b\\c' }\n"
               "    runs: 2\n"
               "    snapshot: { from: stdout }\n"
               "  - name: plain\n"
               "    command: [sh, -c, 'psql -XAtc \"show jit\" > plain.txt']\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;  // no committed snapshot
  EXPECT_EQ(slurp(dir / "snapshots/app.json.new"), "{\n  \"jit\": \"off\"\n}\n");
  EXPECT_EQ(slurp(dir / "note.txt"), "a b\\c\na b\\c\n");
  EXPECT_EQ(slurp(dir / "plain.txt"), "on\n");  // the server's default, for the other stage
  Results res = results();
  EXPECT_EQ(res.stages.at(0).settings,
            (std::map<std::string, std::string>{{"coldgate.note", "a b\\c"}, {"jit", "off"}}));
  EXPECT_TRUE(res.stages.at(1).settings.empty());
  EXPECT_EQ(role_settings(), "");
}

TEST_F(ServerSessions, SettingsViaRoleReachClientsThatIgnorePgoptionsAndLeaveNothingBehind) {
  fresh("coldgate_settings_role");
  auto r =
      run("  - name: driver\n"
          "    command: [sh, -c, 'echo \"$${PGOPTIONS-unset}\" >> pgoptions.txt; env -u "
          "PGOPTIONS psql -XAt -c \"show jit\" -c \"show search_path\" >> seen.txt']\n"
          "    settings: { jit: \"off\", search_path: '\"$user\", app, public' }\n"
          "    settings_via: role\n"
          "    runs: 2\n");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(slurp(dir / "pgoptions.txt"), "unset\nunset\n");
  EXPECT_EQ(slurp(dir / "seen.txt"), "off\n\"$user\", app, public\noff\n\"$user\", app, public\n");
  EXPECT_EQ(results().stages.at(0).settings,
            (std::map<std::string, std::string>{{"jit", "off"},
                                                {"search_path", "\"$user\", app, public"}}));
  EXPECT_EQ(role_settings(), "");  // no leftover entry
}

TEST_F(ServerSessions, SettingsViaRolePutsBackWhatTheRoleHadBefore) {
  fresh("coldgate_settings_role_before");
  sql("ALTER ROLE postgres IN DATABASE coldgate_settings_role_before SET jit = on");
  sql("ALTER ROLE postgres IN DATABASE coldgate_settings_role_before SET work_mem = '7MB'");
  sql("ALTER ROLE postgres IN DATABASE coldgate_settings_role_before SET search_path = b, 'C d'");
  const std::string before = role_settings();
  EXPECT_EQ(before, "jit=on search_path=b, \"C d\" work_mem=7MB");
  auto r =
      run("  - name: driver\n"
          "    command: [sh, -c, 'env -u PGOPTIONS psql -XAt -c \"show jit\" -c \"show "
          "search_path\" -c \"show work_mem\" > seen.txt']\n"
          "    settings: { jit: \"off\", search_path: app }\n"
          "    settings_via: role\n");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(slurp(dir / "seen.txt"), "off\napp\n7MB\n");
  EXPECT_EQ(role_settings(), before);
}

TEST_F(ServerSessions, SettingsViaRoleThatTheServerRefusesChangesNothing) {
  fresh("coldgate_settings_role_bad");
  // `run` sets the stage's settings once before any stage: a config error at the name, and the
  // role's settings are never touched.
  auto r =
      run("  - name: driver\n"
          "    command: [sh, -c, 'touch ran.txt']\n"
          "    settings: { jit: \"off\", no_such_setting: 1 }\n"
          "    settings_via: role\n");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("coldgate: config error at coldgate.yaml:7:29: stage driver: "
                       "settings.no_such_setting: the server refused it: SQLSTATE 42704: "
                       "unrecognized configuration parameter \"no_such_setting\""),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "ran.txt"));
  EXPECT_EQ(role_settings(), "");

  // A cold run's own ALTER ROLE … SET (what `ab` and `stack` reach): the one transaction
  // fails as a whole, jit's change included.
  config::Stage stage;
  stage.name = "driver";
  stage.settings = {{"jit", "off"}, {"no_such_setting", "1"}};
  stage.settings_via = config::SettingsVia::role;
  std::vector<std::string> env;
  try {
    CommandSettings applied(stage, testing::shared_cluster().socket_info(db), env);
    ADD_FAILURE() << "the server took no_such_setting";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::gate_failed);
    EXPECT_EQ(e.message(),
              "stage driver: settings_via: role: SQLSTATE 42704: unrecognized configuration "
              "parameter \"no_such_setting\"");
  }
  EXPECT_EQ(role_settings(), "");
}

TEST_F(ServerSessions, SettingsViaRoleIsPutBackAfterATimeout) {
  fresh("coldgate_settings_role_timeout");
  auto r =
      run("  - name: driver\n"
          "    command: [psql, -XAtc, 'select pg_sleep(30)']\n"
          "    settings: { jit: \"off\" }\n"
          "    settings_via: role\n"
          "    timeout: 1s\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(role_settings(), "");
  EXPECT_EQ(backends(), std::vector<std::string>{});
}

// The server-side profile counts what the database ran between its reset and its read: the
// role's ALTER ROLE … SET and its restore stay outside, so the stage's figures are its client's.
TEST_F(ServerSessions, SettingsViaRoleStatementsAreNotInTheStagesProfile) {
  dir.write("coldgate.yaml",
            "version: 1\n"
            "database: { provider: local }\n"
            "defaults: { runs: 2, warm: 0 }\n"
            "stages:\n"
            "  - name: driver\n"
            "    command: [env, -u, PGOPTIONS, psql, -XAtq, -c, 'select 1']\n"
            "    settings: { jit: \"off\" }\n"
            "    settings_via: role\n");
  auto r = run_coldgate({"run", "--no-ci", "--out", (dir / "out").string()}, dir.path(), "",
                        {"CI=", "GITHUB_ACTIONS="});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const StageResult s = results().stages.at(0);
  ASSERT_NE(s.find("db_queries"), nullptr);
  EXPECT_EQ(s.find("db_queries")->cold, (std::vector<double>{1, 1}));
  std::vector<std::string> texts;
  for (const auto& q : s.queries) texts.push_back(q.query);
  EXPECT_EQ(texts, std::vector<std::string>{"select $1"});
}

}  // namespace
}  // namespace coldgate::measure
