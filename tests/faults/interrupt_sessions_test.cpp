// SIGINT to `coldgate run` while a stage's query runs: the run ends with 130 and no query of it
// is left executing on the server. Nor, with `settings_via: role`, the role's settings.
// The real binary on the suite's cluster (external provider), which outlives the run, so
// pg_stat_activity and pg_db_role_setting are read the moment coldgate has exited.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <functional>
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
  // Runs `stage` against a fresh database `db` (`coldgate run` plus `extra` arguments), sends
  // `signal` once `ready()` (polled, up to 60 s) and returns coldgate's exit code.
  int interrupt_when(const std::string& db, const std::string& stage,
                     const std::function<bool()>& ready, int signal = SIGINT,
                     const std::vector<std::string>& extra = {}) {
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: external, url: \"${TEST_DB_URL}\" }\n"
              "defaults: { runs: 1, warm: 0 }\n"
              "stages:\n" +
                  stage);
    const std::string url = testing::fresh_database(db).url();
    std::vector<std::string> argv = {COLDGATE_BINARY, "run", "--no-ci", "--out",
                                     (dir / "out").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    util::SpawnOptions o{
        .argv = argv,
        .cwd = dir.path(),
        .env = {"TEST_DB_URL=" + url, "CI=", "GITHUB_ACTIONS="},
        .capture_stdout = false,
        .capture_stderr = false,
        .stdout_path = dir / "stdout.txt",
        .stderr_path = dir / "stderr.txt"};
    util::Process coldgate(o);
    // Waiting for the precondition, not for the result.
    auto until = std::chrono::steady_clock::now() + 60s;
    bool is_ready = false;
    while (!(is_ready = ready()) && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(is_ready) << testing::slurp(dir / "stderr.txt");
    ::kill(coldgate.pid(), signal);
    util::ExitStatus s = coldgate.wait(120s);
    return s.signal ? 128 + s.signal : s.exit_code;
  }
  // interrupt_when() the stage's pg_sleep(60) runs on the server.
  int interrupt_while_running(const std::string& db, const std::string& stage) {
    return interrupt_when(db, stage, [&] {
      for (const auto& b : testing::backends_of(db))
        if (b.find("pg_sleep(60)") != std::string::npos) return true;
      return false;
    });
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
  EXPECT_EQ(testing::backends_of(db), std::vector<std::string>{});
}

TEST_F(InterruptSessions, SigintDuringACommandStageLeavesNoQueryRunning) {
  const std::string db = "coldgate_interrupt_cmd";
  EXPECT_EQ(interrupt_while_running(db,
                                    "  - name: sleepy-client\n"
                                    "    command: [psql, -XAtc, 'select pg_sleep(60)']\n"),
            130)
      << testing::slurp(dir / "stderr.txt");
  EXPECT_EQ(testing::backends_of(db), std::vector<std::string>{});
}

TEST_F(InterruptSessions, SigintDuringASettingsViaRoleStagePutsTheRoleBack) {
  const std::string db = "coldgate_interrupt_role";
  std::string during;
  EXPECT_EQ(interrupt_when(db,
                           "  - name: driver\n"
                           "    command: [sh, -c, 'touch started; exec sleep 60']\n"
                           "    settings: { jit: \"off\" }\n"
                           "    settings_via: role\n",
                           [&] {
                             if (!std::filesystem::exists(dir / "started")) return false;
                             during = testing::role_settings_of(db);
                             return true;
                           }),
            130)
      << testing::slurp(dir / "stderr.txt");
  EXPECT_EQ(during, "jit=off");
  EXPECT_EQ(testing::role_settings_of(db), "");
}

// A remedy trial of a `settings_via: role` application: its own run is quick (JIT on, the
// server's default); the "jit = off" variant finds jit off and stays until it is stopped.
const std::string k_trial_stage =
    "  - name: driver\n"
    "    command: [sh, -c, 'if [ \"$(psql -XAtc \"show jit\")\" = off ]; then touch trying; "
    "exec sleep 60; fi']\n"
    "    settings_via: role\n"
    "    try_runs: 1\n"
    "    remedies: [ { name: no jit, settings: { jit: \"off\" } } ]\n";

TEST_F(InterruptSessions, SigintAndSigtermDuringATrialPutTheRoleBack) {
  for (int signal : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(signal);
    const std::string db = "coldgate_interrupt_trial";
    std::filesystem::remove(dir / "trying");
    std::string during;
    EXPECT_EQ(interrupt_when(
                  db, k_trial_stage,
                  [&] {
                    if (!std::filesystem::exists(dir / "trying")) return false;
                    during = testing::role_settings_of(db);
                    return true;
                  },
                  signal, {"--try"}),
              130)
        << testing::slurp(dir / "stderr.txt");
    EXPECT_EQ(during, "jit=off");
    EXPECT_EQ(testing::role_settings_of(db), "");
    EXPECT_EQ(testing::backends_of(db), std::vector<std::string>{});
  }
}

TEST_F(InterruptSessions, ATimeoutDuringATrialFailsThatVariantAndPutsTheRoleBack) {
  const std::string db = "coldgate_trial_timeout";
  dir.write("coldgate.yaml", "version: 1\n"
                             "database: { provider: external, url: \"${TEST_DB_URL}\" }\n"
                             // 10 s: the measured run (psql's `show jit`) must end well
                             // inside it on a loaded machine; the trial's sleep never does.
                             "defaults: { runs: 1, warm: 0, timeout: 10s }\n"
                             "stages:\n" + k_trial_stage);
  const std::string url = testing::fresh_database(db).url();
  auto r = testing::run_coldgate({"run", "--no-ci", "--try"}, dir.path(), "",
                                 {"TEST_DB_URL=" + url, "CI=", "GITHUB_ACTIONS="});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // a failed remedy does not fail the gate
  EXPECT_NE(r.out.find("| no jit | — | — | — | failed: cold run 1/1: timed out after 10000 ms"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(testing::role_settings_of(db), "");
  EXPECT_EQ(testing::backends_of(db), std::vector<std::string>{});
}

TEST_F(InterruptSessions, SigintAndSigtermLeaveNoDatabaseTemplateOrCopy) {
  // `isolation: run`: the database kept as setup left it, and made again before the run.
  for (int signal : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(signal);
    const std::string db = "coldgate_interrupt_isolation";
    EXPECT_EQ(interrupt_when(
                  db,
                  "  - name: sleepy\n"
                  "    query: select pg_sleep(60)\n"
                  "    isolation: run\n",
                  [&] {
                    for (const auto& b : testing::backends_of(db))
                      if (b.find("pg_sleep(60)") != std::string::npos) return true;
                    return false;
                  },
                  signal),
              130)
        << testing::slurp(dir / "stderr.txt");
    db::Connection admin(testing::shared_cluster().socket_info("postgres"));
    auto left = admin.exec("SELECT string_agg(datname, ' ' ORDER BY datname) FROM pg_database "
                           "WHERE datname LIKE 'coldgate_interrupt_isolation%'");
    EXPECT_EQ(std::string(left[0][0].c_str()), db);
    EXPECT_EQ(testing::backends_of(db), std::vector<std::string>{});
  }
}

}  // namespace
}  // namespace coldgate
