// What a stage's clients leave on the server: the real binary on the suite's cluster (external
// provider, a fresh database per test), so the server outlives the run and pg_stat_activity can
// be read the moment coldgate has exited.
#include <gtest/gtest.h>

#include <filesystem>

#include "db/connection.hpp"
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
    db = database;
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: external, url: \"${TEST_DB_URL}\" }\n"
              "defaults: { runs: 1, warm: 0 }\n"
              "stages:\n" +
                  stages);
    const std::string url = testing::fresh_database(database).url();
    return run_coldgate({"run", "--no-ci", "--out", (dir / "out").string()}, dir.path(), "",
                        {"TEST_DB_URL=" + url});
  }
  Results results() { return results::from_json(slurp(dir / "out/results.json"), "r.json"); }
  // Backends of the test's database other than this one: their application_name, query.
  std::vector<std::string> backends() {
    db::Connection conn(testing::shared_cluster().socket_info(db));
    auto rows = conn.exec_params(
        "SELECT coalesce(application_name, '') || ': ' || coalesce(query, '') "
        "FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        {db});
    std::vector<std::string> out;
    for (const auto& row : rows) out.emplace_back(row[0].c_str());
    return out;
  }
  TempDir dir;
  std::string db;
};

TEST_F(ServerSessions, ATimedOutSqlStageLeavesNoQueryRunningOnTheServer) {
  auto r = run("coldgate_sessions_sql",
               "  - name: sleepy\n"
               "    query: select pg_sleep(30)\n"
               "    timeout: 1s\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // Asked right after the run: coldgate waited until the server no longer listed them.
  EXPECT_EQ(backends(), std::vector<std::string>{});
  EXPECT_EQ(results().stages.at(0).error.rfind(
                "cold run 1/1: timed out after 1000 ms; its process group was killed; its query "
                "was still running on the server and was ",
                0),
            0u)
      << results().stages.at(0).error;
}

TEST_F(ServerSessions, ATimedOutCommandStageLeavesNoQueryRunningOnTheServer) {
  auto r = run("coldgate_sessions_cmd",
               "  - name: sleepy-client\n"
               "    command: [psql, -XAtc, 'select pg_sleep(30)']\n"
               "    timeout: 1s\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(backends(), std::vector<std::string>{});
  EXPECT_EQ(results().stages.at(0).error.rfind(
                "cold run 1/1: timed out after 1000 ms; its process group was killed; its query "
                "was still running on the server and was ",
                0),
            0u)
      << results().stages.at(0).error;
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
  std::string app = slurp(dir / "app.txt");
  auto second = app.find("\ncoldgate/client-name/2/");
  EXPECT_EQ(app.rfind("coldgate/client-name/1/", 0), 0u) << app;
  EXPECT_NE(second, std::string::npos) << app;
  // The same coldgate process: the pids match.
  std::string pid1 = app.substr(std::string("coldgate/client-name/1/").size(),
                                app.find('\n') - std::string("coldgate/client-name/1/").size());
  EXPECT_EQ(app.substr(second + std::string("\ncoldgate/client-name/2/").size()), pid1 + "\n");
}

}  // namespace
}  // namespace coldgate::measure
