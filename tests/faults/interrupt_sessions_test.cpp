// SIGINT to `coldgate run` while a stage's query runs: the run ends with 130 and no query of it
// is left executing on the server. The real binary on the suite's cluster (external provider),
// which outlives the run, so pg_stat_activity is read the moment coldgate has exited.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "db/connection.hpp"
#include "support/cluster.hpp"
#include "support/support.hpp"
#include "util/process.hpp"

namespace coldgate {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;

struct InterruptSessions : ::testing::Test {
  // Backends of `db` other than this one, as "application_name: query".
  std::vector<std::string> backends(const std::string& db) {
    db::Connection conn(testing::shared_cluster().socket_info(db));
    auto rows = conn.exec_params(
        "SELECT coalesce(application_name, '') || ': ' || coalesce(query, '') "
        "FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        {db});
    std::vector<std::string> out;
    for (const auto& row : rows) out.emplace_back(row[0].c_str());
    return out;
  }

  // Runs `stage` against a fresh database `db`, interrupts coldgate with SIGINT once the stage's
  // query runs on the server, and returns coldgate's exit code.
  int interrupt_while_running(const std::string& db, const std::string& stage) {
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: external, url: \"${TEST_DB_URL}\" }\n"
              "defaults: { runs: 1, warm: 0 }\n"
              "stages:\n" +
                  stage);
    const std::string url = testing::fresh_database(db).url();
    util::SpawnOptions o{
        .argv = {COLDGATE_BINARY, "run", "--no-ci", "--out", (dir / "out").string()},
        .cwd = dir.path(),
        .env = {"TEST_DB_URL=" + url, "CI=", "GITHUB_ACTIONS="},
        .capture_stdout = false,
        .capture_stderr = false,
        .stdout_path = dir / "stdout.txt",
        .stderr_path = dir / "stderr.txt"};
    util::Process coldgate(o);
    // Waiting for the precondition, not for the result: the query is on the server.
    auto until = std::chrono::steady_clock::now() + 60s;
    bool running = false;
    while (!running && std::chrono::steady_clock::now() < until) {
      for (const auto& b : backends(db)) running |= b.find("pg_sleep(60)") != std::string::npos;
      if (!running) std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(running) << testing::slurp(dir / "stderr.txt");
    ::kill(coldgate.pid(), SIGINT);
    util::ExitStatus s = coldgate.wait(120s);
    return s.signal ? 128 + s.signal : s.exit_code;
  }
  TempDir dir;
};

TEST_F(InterruptSessions, SigintDuringASqlStageLeavesNoQueryRunning) {
  const std::string db = "coldgate_interrupt_sql";
  EXPECT_EQ(interrupt_while_running(db,
                                    "  - name: sleepy\n"
                                    "    query: select pg_sleep(60)\n"),
            130)
      << testing::slurp(dir / "stderr.txt");
  EXPECT_EQ(backends(db), std::vector<std::string>{});
}

TEST_F(InterruptSessions, SigintDuringACommandStageLeavesNoQueryRunning) {
  const std::string db = "coldgate_interrupt_cmd";
  EXPECT_EQ(interrupt_while_running(db,
                                    "  - name: sleepy-client\n"
                                    "    command: [psql, -XAtc, 'select pg_sleep(60)']\n"),
            130)
      << testing::slurp(dir / "stderr.txt");
  EXPECT_EQ(backends(db), std::vector<std::string>{});
}

}  // namespace
}  // namespace coldgate
