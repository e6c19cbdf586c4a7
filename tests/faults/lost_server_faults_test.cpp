// Faults of the machine under a run of the real binary (local provider), injected as a hostile
// operator or an unlucky CI machine would: the server stopped under a command stage, a
// SIGSTOPped postmaster when a SIGTERM comes, a TMPDIR too small for the data. After each: the
// exit code blames the machine (3) or the signal (130), never the change (1); the stage's own
// error is kept; the cold runs made are kept; nothing of the run is left.
//
// Each fault is placed by a state (the stage itself stops the server on its nth cold run, a
// connection waiting in the stopped postmaster's accept queue), never by a delay.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "results/json.hpp"
#include "support/faults.hpp"
#include "support/support.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;
using testing::slurp;
using testing::TempDir;

// The cold run number (COLDGATE_RUN) and the server's postmaster PID, for the stages' scripts.
const char* k_postmaster = "pid=$(head -n 1 \"$(psql -Atc 'show data_directory')/postmaster.pid\")";

struct LostServer : ::testing::Test {
  void SetUp() override { testing::make_server_tmpdir(dir, tmp); }

  Running start(const std::string& config, std::vector<std::string> args = {}) {
    std::vector<std::string> argv{"run", "-c", config};
    argv.insert(argv.end(), args.begin(), args.end());
    return start_coldgate(dir.path(), tmp, argv);
  }

  results::Results results() {
    return results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  }

  TempDir dir;
  fs::path tmp = dir / "tmp";
  const std::string head = "version: 1\ndatabase: { provider: local, plans: false }\n"
                           "defaults: { warm: 0 }\n";
};

// The number of cold samples of `metric` in `stage`.
std::size_t cold_samples(const results::StageResult& stage, const std::string& metric) {
  const results::Metric* m = stage.find(metric);
  return m ? m->cold.size() : 0;
}

TEST_F(LostServer, ServerStoppedByACommandStageKeepsTheStagesOwnErrorAndItsFinishedColdRuns) {
  // Cold run 2 stops the server (immediate shutdown, as a crash or an OOM kill would), waits
  // until it no longer answers, says why on stderr as a driver would and fails.
  dir.write("lose.sh", std::string(k_postmaster) + "\n"
                       "if [ \"$COLDGATE_RUN\" = 2 ]; then\n"
                       "  kill -QUIT \"$pid\"\n"
                       "  while psql -Atc 'select 1' >/dev/null 2>&1; do sleep 0.05; done\n"
                       "  echo 'Traceback (most recent call last):' >&2\n"
                       "  echo 'psycopg2.OperationalError: server closed the connection unexpectedly' >&2\n"
                       "  echo '  (the app lost its database on cold run 2)' >&2\n"
                       "  exit 1\n"
                       "fi\n");
  dir.write("lose.yaml", head + "stages:\n"
                                "  - { name: loses, command: [sh, lose.sh], runs: 3 }\n"
                                "  - { name: after, command: [sh, -c, 'touch after.ran'] }\n");
  Running r = start("lose.yaml");
  std::string err;
  EXPECT_EQ(r.finish(&err), 3) << err;
  EXPECT_NE(err.find("coldgate: error: stage loses: the PostgreSQL server stopped answering during "
                     "cold run 2/3; the run stops. The stage's own error: exit status 1; stderr "
                     "ends:\n"),
            std::string::npos)
      << err;
  // What the stage said is there, its cause line first.
  EXPECT_NE(err.find("psycopg2.OperationalError: server closed the connection unexpectedly"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("(the app lost its database on cold run 2)"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir / "after.ran"));

  auto res = results();
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 3);
  EXPECT_NE(res.stopped->error.find("(the app lost its database on cold run 2)"), std::string::npos)
      << res.stopped->error;
  EXPECT_EQ(res.stopped->not_run, std::vector<std::string>{"after"});
  // Cold run 1 finished: its samples are kept, with the error of cold run 2.
  ASSERT_EQ(res.stages.size(), 1u);
  EXPECT_EQ(res.stages[0].name, "loses");
  EXPECT_EQ(cold_samples(res.stages[0], "wall_ms"), 1u);
  EXPECT_EQ(res.stages[0].error.rfind("cold run 2/3: exit status 1; stderr ends:\n", 0), 0u)
      << res.stages[0].error;
  expect_nothing_left(dir.path(), tmp, "after the server was lost under a command stage");
}

TEST_F(LostServer, AbKeepsBothSidesFinishedColdRunsAndSaysWhoseRunLostTheServer) {
  // Interleaved: base 1, head 1, base 2, head 2. Head's second cold run stops the server, after
  // base has made all its cold runs.
  const fs::path repo = dir / "repo";
  dir.write("repo/coldgate.yaml", head + "stages: [ { name: work, command: [sh, work.sh], runs: 2 } ]\n");
  dir.write("repo/.gitignore", "coldgate-out/\nstdout-*.txt\nstderr-*.txt\n");
  dir.write("repo/work.sh", "true\n");
  run_git(repo, {"init", "-q"});
  run_git(repo, {"add", "-A"});
  run_git(repo, {"commit", "-qm", "base"});
  run_git(repo, {"checkout", "-qb", "head"});
  dir.write("repo/work.sh", std::string(k_postmaster) + "\n"
                            "if [ \"$COLDGATE_RUN\" = 2 ]; then\n"
                            "  kill -QUIT \"$pid\"\n"
                            "  while psql -Atc 'select 1' >/dev/null 2>&1; do sleep 0.05; done\n"
                            "  echo 'Error: Connection terminated unexpectedly' >&2\n"
                            "  exit 1\n"
                            "fi\n");
  run_git(repo, {"commit", "-qam", "head"});
  Running r = start_coldgate(repo, tmp, {"ab", "--base", "base"},
                             {"XDG_CACHE_HOME=" + (dir / "cache").string(), "GITHUB_BASE_REF=",
                              "GITHUB_HEAD_REF=", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME="});
  std::string err;
  EXPECT_EQ(r.finish(&err), 3) << err;
  EXPECT_NE(err.find("stage work: the PostgreSQL server stopped answering during head's cold run "
                     "2/2; the run stops. The stage's own error: exit status 1; stderr ends:\n"
                     "Error: Connection terminated unexpectedly"),
            std::string::npos)
      << err;
  auto res = results::from_json(slurp(repo / "coldgate-out/results.json"), "results.json");
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 3);
  EXPECT_TRUE(res.stopped->not_run.empty());
  ASSERT_EQ(res.stages.size(), 1u);
  EXPECT_EQ(cold_samples(res.stages[0], "wall_ms"), 1u);  // head's cold run 1
  EXPECT_EQ(res.stages[0].error.rfind("cold run 2/2: exit status 1", 0), 0u) << res.stages[0].error;
  expect_nothing_left(dir.path(), tmp, "after the server was lost in ab");
}

// Connections waiting in the accept queue of the server listening on 127.0.0.1:`port` (for a
// listening socket /proc/net/tcp's rx_queue is its accept backlog: the kernel's tcp4_seq_show).
int accept_queue(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // the heading
  char local[64];
  std::snprintf(local, sizeof local, "0100007F:%04X", port);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string sl, address, remote, state, queues;
    fields >> sl >> address >> remote >> state >> queues;
    if (address != local || state != "0A") continue;  // 0A: TCP_LISTEN
    return static_cast<int>(std::stoul(queues.substr(queues.find(':') + 1), nullptr, 16));
  }
  return -1;
}

// Connections waiting in the accept queue of the server's Unix socket `.s.PGSQL.<port>`, where
// coldgate's own connections to its local cluster go: in /proc/net/unix a connection not yet
// accepted has no inode (no file made for it yet), one accepted has.
int unix_accept_queue(int port) {
  std::ifstream in("/proc/net/unix");
  std::string line;
  std::getline(in, line);  // the heading
  const std::string name = "/.s.PGSQL." + std::to_string(port);
  int queued = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string num, refs, protocol, flags, type, state, inode, path;
    fields >> num >> refs >> protocol >> flags >> type >> state >> inode >> path;
    if (inode == "0" && path.size() > name.size() && path.ends_with(name)) ++queued;
  }
  return queued;
}

TEST_F(LostServer, SigtermWhileConnectingToAStoppedPostmasterEndsTheRunWith130) {
  // Cold run 1 writes (so `isolation: run` copies the database before cold run 2), then
  // SIGSTOPs the postmaster: the copy's connection waits in its accept queue (its Unix
  // socket's: coldgate's own connections to its local cluster go there), unanswered.
  dir.write("stop.sh", std::string(k_postmaster) + "\n"
                       "psql -qc 'create table if not exists written (n int); insert into written values (1)'\n"
                       "if [ \"$COLDGATE_RUN\" = 1 ]; then echo \"$PGPORT\" > port; kill -STOP \"$pid\"; touch stopped; fi\n");
  dir.write("stop.yaml", head + "stages:\n"
                                "  - { name: hangs, command: [sh, stop.sh], runs: 2, isolation: run }\n");
  Running r = start("stop.yaml");
  Delivered d = deliver_at(
      r,
      [&] {
        if (!fs::exists(dir / "stopped")) return false;
        const int port = std::stoi(slurp(dir / "port"));
        return accept_queue(port) > 0 || unix_accept_queue(port) > 0;
      },
      SIGTERM,
      "SIGTERM while coldgate waits for a stopped postmaster");
  ASSERT_TRUE(d.reached) << d.err;
  EXPECT_EQ(d.code, 130) << d.err;
  EXPECT_NE(d.err.find("interrupted by SIGTERM"), std::string::npos) << d.err;
  EXPECT_EQ(d.err.find("timeout expired"), std::string::npos) << d.err;
  auto res = results();
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 130);
  // Cold run 1 was made: it is in the report of what was finished.
  ASSERT_EQ(res.stages.size(), 1u);
  EXPECT_EQ(cold_samples(res.stages[0], "wall_ms"), 1u);
  expect_nothing_left(dir.path(), tmp, "after the SIGTERM at a stopped postmaster");
}

TEST_F(LostServer, ADiskThatFillsDuringTheLoadIsTheMachinesFaultExit3NamingTheRoomThereWas) {
  // The cluster (~40 MB) fits in TMPDIR; 200 MB of rows do not.
  SmallTmpfs small(tmp, "120m", "1777");
  ASSERT_TRUE(small.mounted()) << "mount tmpfs: " << small.error() << " (run the suite as root)";
  dir.write("load.sql", "create table big (n int, pad text);\n"
                        "insert into big select g, repeat('x', 1000) from generate_series(1, 200000) g;\n");
  dir.write("full.yaml", head + "setup: [ { psql: load.sql } ]\n"
                                "stages: [ { name: quick, command: [\"true\"], runs: 1 } ]\n");
  Running r = start("full.yaml");
  std::string err;
  EXPECT_EQ(r.finish(&err), 3) << err;
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  EXPECT_NE(err.find("The disk filled: the cluster "), std::string::npos) << err;
  EXPECT_NE(err.find("on a filesystem of 120.0 MiB with "), std::string::npos) << err;
  EXPECT_NE(err.find("a full disk is the machine's fault, not the change's"), std::string::npos)
      << err;
  EXPECT_EQ(err.find("CREATE DATABASE"), std::string::npos) << err;
  auto res = results();
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 3);
  EXPECT_EQ(res.stopped->phase, results::StopPhase::setup);
  EXPECT_EQ(res.stopped->not_run, std::vector<std::string>{"quick"});
  expect_nothing_left(dir.path(), tmp, "after the full disk");
}

TEST_F(LostServer, ADiskFullThatOnlyTheServersLogSaysIsTheMachinesFaultToo) {
  // An application's seed command sees only the aftermath (a dropped connection, "not yet
  // accepting connections" after a PANIC on a WAL write) and says nothing of the disk: the
  // server's log does.
  SmallTmpfs small(tmp, "120m", "1777");
  ASSERT_TRUE(small.mounted()) << "mount tmpfs: " << small.error() << " (run the suite as root)";
  dir.write("load.sql", "create table big (n int, pad text);\n"
                        "insert into big select g, repeat('x', 1000) from generate_series(1, 200000) g;\n");
  dir.write("seed.sh", "psql -v ON_ERROR_STOP=1 -f load.sql >/dev/null 2>&1 && exit 0\n"
                       "echo 'seed: lost the database, giving up' >&2\n"
                       "exit 1\n");
  dir.write("seed.yaml", head + "setup: [ { command: [sh, seed.sh] } ]\n"
                                "stages: [ { name: quick, command: [\"true\"], runs: 1 } ]\n");
  Running r = start("seed.yaml");
  std::string err;
  EXPECT_EQ(r.finish(&err), 3) << err;
  EXPECT_NE(err.find("seed: lost the database, giving up"), std::string::npos) << err;
  EXPECT_NE(err.find("The server's log says: "), std::string::npos) << err;
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  EXPECT_NE(err.find("The disk filled: the cluster "), std::string::npos) << err;
  auto res = results();
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 3);
  expect_nothing_left(dir.path(), tmp, "after the full disk the seed command met");
}

}  // namespace
}  // namespace coldgate
