// What a SIGKILLed coldgate leaves on a server that outlives it — the suite's cluster as an
// `external` server — and the next command puts right: a `settings_via: role` stage's role
// settings, from the journal under <cache>/server-journal (a journal whose owner still runs is
// not touched, so that a run in parallel keeps its settings); a remedy trial's copy of the
// database, which the next trial drops (its owner is in its comment). The real binary;
// pg_db_role_setting and pg_database read by the test.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "db/connection.hpp"
#include "support/cluster.hpp"
#include "support/faults.hpp"
#include "support/support.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

struct ServerJournal : ::testing::Test {
  // `config` names the stages; the server is the suite's cluster, database `db`.
  void use(const std::string& db) {
    url = fresh_database(db).url();
    this->db = db;
  }
  void write(const std::string& name, const std::string& stages, const std::string& setup = "") {
    f.dir.write(name, "version: 1\n"
                      "database: { provider: external, url: \"${TEST_DB_URL}\" }\n"
                      "defaults: { runs: 1, warm: 0, try_runs: 1 }\n" +
                          setup + "stages:\n" + stages);
  }
  Running start(const std::vector<std::string>& args) {
    return f.start(args, {"TEST_DB_URL=" + url});
  }
  // Runs to the end; its exit code, stderr in `err`.
  int run(const std::vector<std::string>& args, std::string* err = nullptr) {
    Running r = start(args);
    return r.finish(err);
  }
  // A stage that sets `settings` through the role, touches `marker` and sleeps (or waits for
  // the file `go`).
  static std::string role_stage(const std::string& name, const std::string& settings,
                                const std::string& marker, bool until_go = false) {
    const std::string wait = until_go ? "while [ ! -e go ]; do sleep 0.05; done" : "exec sleep 60";
    return "  - name: " + name + "\n    command: [sh, -c, 'touch " + marker + "; " + wait +
           "']\n    settings: " + settings + "\n    settings_via: role\n";
  }
  std::vector<std::string> journals() const {
    std::vector<std::string> out;
    for (const auto& e : entries_of(f.cache / "coldgate" / "server-journal")) {
      if (e.ends_with(".json")) out.push_back(e);
    }
    return out;
  }
  // Starts `args`, waits for `marker` and for the command that made it to be recorded for the
  // next command's clean-up (a moment after its start), and returns the running coldgate.
  Running start_until(const std::vector<std::string>& args, const std::string& marker) {
    fs::remove(f.dir / marker);
    Running r = start(args);
    EXPECT_TRUE(wait_for(
        [&] {
          return (fs::exists(f.dir / marker) && children_recorded(r.process->pid(), f.tmp)) ||
                 r.process->wait_exited(0ms);
        },
        120s));
    EXPECT_FALSE(r.process->wait_exited(0ms)) << read_all(r.err);
    return r;
  }
  // SIGKILLs `r` and reaps it; returns the PID it had.
  pid_t kill9(Running& r) {
    pid_t pid = r.process->pid();
    ::kill(pid, SIGKILL);
    EXPECT_EQ(r.finish(), 128 + SIGKILL);
    return pid;
  }

  FaultFolder f;
  std::string url, db;
};

TEST_F(ServerJournal, ARoleSettingLeftByASigkilledRunIsPutBackByTheNextRun) {
  use("coldgate_journal_kill");
  {
    db::Connection admin(shared_cluster().socket_info("postgres"));
    admin.exec("ALTER ROLE postgres IN DATABASE coldgate_journal_kill SET work_mem = '7MB'");
  }
  ASSERT_EQ(role_settings_of(db), "work_mem=7MB");
  write("role.yaml", role_stage("driver", "{ jit: \"off\", work_mem: 9MB }", "started"));
  write("quick.yaml", "  - name: quick\n    command: [\"true\"]\n");

  Running r = start_until({"run", "-c", "role.yaml"}, "started");
  EXPECT_EQ(role_settings_of(db), "jit=off work_mem=9MB");
  EXPECT_EQ(journals().size(), 1u);
  const pid_t killed = kill9(r);
  EXPECT_EQ(role_settings_of(db), "jit=off work_mem=9MB") << "nothing runs in a SIGKILLed process";

  std::string err;
  EXPECT_EQ(run({"run", "-c", "quick.yaml"}, &err), 0) << err;
  EXPECT_NE(err.find("coldgate: put back what a killed coldgate (pid " + std::to_string(killed) +
                     ") had left on postgresql://postgres:***@"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(": the settings of role postgres in database coldgate_journal_kill (jit, work_mem)"),
            std::string::npos)
      << err;
  EXPECT_EQ(role_settings_of(db), "work_mem=7MB");
  EXPECT_EQ(list(journals()), " none");
  f.expect_nothing_left("after the next run (the killed stage's command too)");
}

// A run (A) is measuring with its role settings while others come and go: the next command
// leaves A's journal alone, and undoes a killed run's journal only when that run's change came
// after A's (its "before" is A's value); one that came before A's waits until A has ended.
TEST_F(ServerJournal, AJournalWhoseOwnerRunsIsNotTouchedAndAKilledRunsWaitsForIt) {
  use("coldgate_journal_live");
  write("a.yaml", role_stage("a", "{ work_mem: 9MB }", "a.started", /*until_go=*/true));
  write("k.yaml", role_stage("k", "{ work_mem: 11MB }", "k.started"));
  write("quick.yaml", "  - name: quick\n    command: [\"true\"]\n");

  // A first, then K over it, killed: K's journal holds A's 9MB as "before".
  Running a = start_until({"run", "-c", "a.yaml", "--out", "out-a"}, "a.started");
  Running k = start_until({"run", "-c", "k.yaml", "--out", "out-k"}, "k.started");
  EXPECT_EQ(role_settings_of(db), "work_mem=11MB");
  kill9(k);
  std::string err;
  EXPECT_EQ(run({"run", "-c", "quick.yaml", "--out", "out-q"}, &err), 0) << err;
  EXPECT_NE(err.find("put back what a killed coldgate"), std::string::npos) << err;
  EXPECT_EQ(role_settings_of(db), "work_mem=9MB") << "A's own value, while A runs";
  EXPECT_EQ(journals().size(), 1u) << "A's";
  f.dir.write("go", "");
  EXPECT_EQ(a.finish(&err), 0) << err;
  EXPECT_EQ(role_settings_of(db), "");
  EXPECT_EQ(list(journals()), " none");
  fs::remove(f.dir / "go");

  // K first, then A over it; K killed while A runs: A found K's 11MB as "before".
  k = start_until({"run", "-c", "k.yaml", "--out", "out-k"}, "k.started");
  a = start_until({"run", "-c", "a.yaml", "--out", "out-a"}, "a.started");
  const pid_t killed = kill9(k);
  EXPECT_EQ(run({"run", "-c", "quick.yaml", "--out", "out-q"}, &err), 0) << err;
  EXPECT_EQ(err.find("put back what a killed coldgate"), std::string::npos) << err;
  EXPECT_EQ(role_settings_of(db), "work_mem=9MB") << "A's own value, while A runs";
  EXPECT_EQ(journals().size(), 2u);
  f.dir.write("go", "");
  EXPECT_EQ(a.finish(&err), 0) << err;
  EXPECT_EQ(role_settings_of(db), "work_mem=11MB") << "what A found";
  EXPECT_EQ(run({"run", "-c", "quick.yaml", "--out", "out-q"}, &err), 0) << err;
  EXPECT_NE(err.find("put back what a killed coldgate (pid " + std::to_string(killed)),
            std::string::npos)
      << err;
  EXPECT_EQ(role_settings_of(db), "");
  EXPECT_EQ(list(journals()), " none");
  f.expect_nothing_left("after the runs");
}

// explain --try's ANALYZE variant measures in a copy of the database: a signal while it runs
// there drops the copy at once (SIGINT, SIGTERM) or with the next trial (SIGKILL).
TEST_F(ServerJournal, ARemedyTrialsDatabaseCopyIsDroppedAfterEverySignal) {
  use("coldgate_journal_copy");
  f.dir.write("t.sql", "create table if not exists t as select generate_series(1, 10) as i;\n");
  // Quick as is; in the copy (the ANALYZE variant) it sleeps.
  write("copy.yaml",
        "  - name: q\n"
        "    query: \"select pg_sleep(case when current_database() like '%\\\\_try\\\\_analyze\\\\_%' "
        "then 60 else 0 end), count(*) from t\"\n",
        "setup: [ { sql: t.sql } ]\n");
  // The same trial, quick in the copy too.
  write("copy-quick.yaml", "  - name: q\n    query: select count(*) from t\n",
        "setup: [ { sql: t.sql } ]\n");
  auto copies = [&] {
    db::Connection admin(shared_cluster().socket_info("postgres"));
    return admin.exec("SELECT count(*) FROM pg_database WHERE datname LIKE '%\\_try\\_analyze\\_%'")[0][0]
        .as<int>();
  };
  for (int sig : {SIGINT, SIGTERM, SIGKILL}) {
    SCOPED_TRACE(sig_name(sig));
    use("coldgate_journal_copy");
    Running r = start({"explain", "q", "-c", "copy.yaml", "--try"});
    const std::string copy = db + "_try_analyze_" + std::to_string(r.process->pid()) + "_";
    auto copy_backends = [&] {
      db::Connection admin(shared_cluster().socket_info("postgres"));
      return admin.exec_params("SELECT count(*) FROM pg_stat_activity WHERE starts_with(datname, $1) "
                               "AND query LIKE '%pg_sleep%'",
                               {copy})[0][0]
          .as<int>();
    };
    Delivered d = deliver_at(
        r,
        [&] { return copy_backends() > 0; },
        sig, std::string(sig_name(sig)) + " during the ANALYZE variant of explain --try");
    if (!d.reached) return;
    if (sig != SIGKILL) {
      EXPECT_EQ(d.code, 130) << d.err;
      EXPECT_EQ(copies(), 0);
      f.expect_nothing_left("right after the signal");
      continue;
    }
    EXPECT_EQ(copies(), 1) << "nothing runs in a SIGKILLed process";
    std::string err;
    EXPECT_EQ(run({"explain", "q", "-c", "copy-quick.yaml", "--try"}, &err), 0) << err;
    EXPECT_NE(err.find("try ANALYZE: cold run 1/1"), std::string::npos) << err;
    EXPECT_EQ(copies(), 0);
    EXPECT_EQ(list(journals()), " none");
    f.expect_nothing_left("after the next command (the killed trial's probe too)");
  }
}

}  // namespace
}  // namespace coldgate
