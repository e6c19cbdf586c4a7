// Fault injection on the real binary with a real PostgreSQL (local provider): signals at chosen
// points of `coldgate run`, the server killed under a stage, a full disk while writing, a daemon
// that escapes its stage's process group. After each: the exit code, no process of the run, no
// temp folder, no partial file under coldgate-out/ or snapshots/.
//
// Each test's coldgate runs with a private TMPDIR inside the test folder, so its temp folders
// and servers (`postgres -D <TMPDIR>/coldgate-pg-*/data`) are told apart from those of other
// coldgate processes on the machine. Each signal is sent the moment the test sees a state of its
// phase (a marker file, a process, a line), never after a delay; the state is printed with every
// delivery and failure.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "results/json.hpp"
#include "support/faults.hpp"
#include "support/support.hpp"
#include "util/process.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::slurp;
using testing::TempDir;
using namespace coldgate::testing;

// ---------------------------------------------------------------------------------------------
// The project and a running coldgate

const char* k_committed = "{\n  \"n\": 1\n}\n";  // snapshots/last.json, as coldgate writes it

struct FaultTest : ::testing::Test {
  void SetUp() override {
    // The server account (postgres) must reach its cluster folder under tmp/.
    testing::make_server_tmpdir(dir, tmp);
    dir.write("sleep.sql", "select pg_sleep(60);\n");
    dir.write("setup-cmd.yaml", head + "setup: [ { command: [sh, -c, 'touch setup.started; exec sleep 60'] } ]\n"
                                       "stages: [ { name: last, command: [\"true\"] } ]\n");
    dir.write("setup-sql.yaml", head + "setup: [ { sql: sleep.sql } ]\n"
                                       "stages: [ { name: last, command: [\"true\"] } ]\n");
    dir.write("run-sql.yaml", head + "stages: [ { name: sleepy, query: 'select pg_sleep(60)' } ]\n");
    dir.write("run-cmd.yaml", head + "stages: [ { name: sleepy, command: [sh, -c, 'touch stage.started; exec sleep 60'] } ]\n");
    // Every cold run's command says it is there and waits for `go`, which it takes: a run
    // cannot go past the restart before the next cold run until the test lets it. Without its
    // coldgate (SIGKILLed) it stops waiting.
    dir.write("restart.yaml", head + "stages: [ { name: bounce, cold: restart, command: [sh, -c, "
                                     "'touch bounce.waiting; while [ ! -e go ] && kill -0 $PPID; "
                                     "do sleep 0.01; done; rm -f go bounce.waiting'] } ]\n");
    // The last stage reports 3000 metrics, so building and writing the results takes a while.
    dir.write("write.yaml", head + "stages:\n"
              "  - name: snap\n"
              "    query: select json_build_object('n', 1)\n"
              "    decode: json\n"
              "    runs: 1\n"
              "    snapshot: { path: snapshots/last.json }\n"
              "  - name: last\n"
              "    command: [sh, metrics.sh]\n"
              "    runs: 1\n");
    dir.write("metrics.sh", "seq 1 3000 | awk '{ printf \"{\\\"metric\\\":\\\"m%d\\\",\\\"value\\\":%d}\\n\", $1, $1 }' "
                            "> \"$COLDGATE_METRICS\"\n");
    dir.write("quick.yaml", head + "stages: [ { name: quick, command: [\"true\"], runs: 1 } ]\n");
    dir.write("snapshots/last.json", k_committed);
  }

  // Starts `coldgate run -c <config> [args]` in the project; stdout and stderr go to files.
  Running start(const std::string& config, std::vector<std::string> args = {}) {
    std::vector<std::string> argv{"run", "-c", config};
    argv.insert(argv.end(), args.begin(), args.end());
    return start_coldgate(dir.path(), tmp, argv);
  }

  // Runs to the end; returns the exit code (128 + signal when killed) and stderr in `err`.
  int finish(Running& r, std::string* err = nullptr) { return r.finish(err); }

  // Every file under coldgate-out/ and snapshots/ is whole: JSON parses (results.json as
  // results), the committed snapshot is unchanged, and (unless `tmp_allowed`) no temp file of
  // an unfinished atomic write is left.
  void expect_no_partial_files(bool tmp_allowed, const std::string& why) {
    SCOPED_TRACE(why);
    expect_whole_files(dir / "coldgate-out", tmp_allowed);
    expect_whole_files(dir / "snapshots", tmp_allowed);
    EXPECT_EQ(slurp(dir / "snapshots/last.json"), k_committed);
  }

  // What a run that was not interrupted leaves: exit 0, stderr's last line saying it passed,
  // whole reports of every stage, none failed.
  void expect_passed_run(int code, const std::string& err) {
    SCOPED_TRACE("a run to its end");
    EXPECT_EQ(code, 0) << err;
    const auto last = err.rfind("\ncoldgate: passed: ");
    EXPECT_TRUE(last != std::string::npos &&
                err.substr(last).ends_with("; results in coldgate-out/results.json\n"))
        << err;
    auto res = results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
    EXPECT_FALSE(res.stopped);
    EXPECT_FALSE(res.stages.empty());
    for (const auto& stage : res.stages) EXPECT_FALSE(stage.failed()) << stage.name << ": " << stage.error;
    EXPECT_NE(slurp(dir / "coldgate-out/report.md").find("\n✅ **passed: "), std::string::npos);
    EXPECT_NE(slurp(dir / "coldgate-out/junit.xml").find("<testsuites"), std::string::npos);
  }

  // Nothing of the run is left: no process, no temp folder.
  void expect_nothing_left(const std::string& why) { testing::expect_nothing_left(dir.path(), tmp, why); }

  TempDir dir;
  fs::path tmp = dir / "tmp";
  const std::string head = "version: 1\ndatabase: { provider: local }\n"
                           "defaults: { runs: 2, warm: 0 }\n";
};

// ---------------------------------------------------------------------------------------------
// Signals

enum class Phase { setup, cold_run, restart, writing };

const char* name(Phase p) {
  switch (p) {
    case Phase::setup: return "setup";
    case Phase::cold_run: return "cold run";
    case Phase::restart: return "restart";
    case Phase::writing: return "writing results";
  }
  return "?";
}

// Starts a run, sends `sig` the moment a state of `phase` is seen, then checks what is left;
// for SIGKILL, after the next run.
void deliver(FaultTest& t, Phase phase, int sig, int delivery) {
  const bool kill9 = sig == SIGKILL;
  std::string config;
  std::string state;
  std::function<bool(const Running&)> reached;
  auto stderr_has = [](const Running& r, const char* text) {
    return read_all(r.err).find(text) != std::string::npos;
  };
  pid_t first_server = 0;
  switch (phase) {
    case Phase::setup:
      // A setup command is interrupted with its process group; under SIGKILL a command would
      // outlive coldgate (nothing runs in a SIGKILLed process), so that case sleeps in SQL.
      if (kill9) {
        config = "setup-sql.yaml";
        state = "the setup's SELECT pg_sleep(60) at work";
        reached = [&](const Running& r) {
          return stderr_has(r, ") ready in ") && backend_runs(server_of(r.process->pid()), "SELECT");
        };
      } else {
        config = "setup-cmd.yaml";
        state = "the setup command waiting";
        reached = [&](const Running&) { return fs::exists(t.dir / "setup.started"); };
      }
      break;
    case Phase::cold_run:
      if (kill9 || delivery % 2 == 0) {
        config = "run-sql.yaml";  // the probe is in pg_sleep
        state = "the probe started";
        reached = [&](const Running& r) {
          return has_probe_child(r.process->pid()) && children_recorded(r.process->pid(), t.tmp);
        };
      } else {
        config = "run-cmd.yaml";
        state = "the stage's command waiting";
        reached = [&](const Running&) { return fs::exists(t.dir / "stage.started"); };
      }
      break;
    case Phase::restart:
      // Cold run 1's command waits against the server it was restarted into; the test lets it
      // end, and signals once that server is gone (the first delivery: the fast shutdown) or
      // once the next postmaster runs (the second: its start). Cold run 2's command waits for
      // `go` again, so coldgate is still there either way.
      config = "restart.yaml";
      state = delivery % 2 == 0 ? "the server of cold run 1 gone" : "the server of cold run 2 started";
      reached = [&](const Running& r) {
        const pid_t now = server_of(r.process->pid());
        if (first_server == 0) {
          if (now == 0 || !fs::exists(t.dir / "bounce.waiting")) return false;
          first_server = now;
          t.dir.write("go", "");
          return false;
        }
        // Whatever runs then is recorded, so the next run ends what a SIGKILL leaves.
        return now != first_server && (delivery % 2 == 0 || now != 0) &&
               children_recorded(r.process->pid(), t.tmp);
      };
      break;
    case Phase::writing:
      // After the last stage: the server stops, then results.json, report.md and junit.xml
      // (3000 metrics) are built and written. Nothing there waits for the test, so coldgate
      // may end before the signal.
      config = "write.yaml";
      if (delivery % 2 == 0) {
        state = "the last stage's done line";
        reached = [&](const Running& r) { return stderr_has(r, "] last: done"); };
      } else {
        state = "the server gone after the last stage";
        reached = [&](const Running& r) {
          return stderr_has(r, "] last: done") && server_of(r.process->pid()) == 0;
        };
      }
      break;
  }
  std::error_code ec;
  for (const char* marker : {"setup.started", "stage.started", "bounce.waiting", "go"}) {
    fs::remove(t.dir / marker, ec);
  }
  const std::string what = std::string(sig_name(sig)) + " during " + name(phase) + ", delivery " +
                           std::to_string(delivery + 1) + ", at " + state + " (" + config + ")";
  SCOPED_TRACE(what);

  Running r = t.start(config);
  const bool may_end = phase == Phase::writing;
  Delivered d = deliver_at(r, [&] { return reached(r); }, sig, what, may_end);
  if (!d.reached && !(may_end && d.ended_before)) return;
  const int code = d.code;
  const std::string& err = d.err;

  // Ended before the signal, or the signal came after its last check, as it exited: a run to
  // its end. (Every other phase waits for the test: there, 0 would be a lost signal.)
  if (may_end && (d.ended_before || code == 0)) {
    t.expect_passed_run(code, err);
    t.expect_nothing_left("after a run to its end");
    t.expect_no_partial_files(false, "after a run to its end");
    return;
  }
  if (kill9) {
    EXPECT_EQ(code, 128 + SIGKILL) << err;
    t.expect_no_partial_files(true, "right after the SIGKILL");
    // The next run removes the killed run's server, temp folders and temp files, and ends a
    // command it left waiting (its process group was recorded).
    Running next = t.start("quick.yaml");
    std::string next_err;
    EXPECT_EQ(t.finish(next, &next_err), 0) << next_err;
    // A probe left in pg_sleep ends when the next run stops its server: allow it a moment.
    wait_for([&] { return processes_under(t.dir.path()).empty(); }, 15s);
    t.expect_nothing_left("after the next run");
    t.expect_no_partial_files(false, "after the next run");
    return;
  }
  EXPECT_EQ(code, 130) << err;
  EXPECT_NE(err.find(sig == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"),
            std::string::npos)
      << err;
  t.expect_nothing_left("right after the run");
  t.expect_no_partial_files(false, "right after the run");
}

// Two deliveries per phase and signal, each at its own state of the phase where it has two.
void deliver_twice(FaultTest& t, Phase phase, int sig) {
  for (int i = 0; i < 2 && !::testing::Test::HasFatalFailure(); ++i) deliver(t, phase, sig, i);
}

// 12 cases × 2 deliveries = 24 signals.
TEST_F(FaultTest, SigintDuringSetup) { deliver_twice(*this, Phase::setup, SIGINT); }
TEST_F(FaultTest, SigtermDuringSetup) { deliver_twice(*this, Phase::setup, SIGTERM); }
TEST_F(FaultTest, SigkillDuringSetup) { deliver_twice(*this, Phase::setup, SIGKILL); }
TEST_F(FaultTest, SigintDuringColdRun) { deliver_twice(*this, Phase::cold_run, SIGINT); }
TEST_F(FaultTest, SigtermDuringColdRun) { deliver_twice(*this, Phase::cold_run, SIGTERM); }
TEST_F(FaultTest, SigkillDuringColdRun) { deliver_twice(*this, Phase::cold_run, SIGKILL); }
TEST_F(FaultTest, SigintDuringRestart) { deliver_twice(*this, Phase::restart, SIGINT); }
TEST_F(FaultTest, SigtermDuringRestart) { deliver_twice(*this, Phase::restart, SIGTERM); }
TEST_F(FaultTest, SigkillDuringRestart) { deliver_twice(*this, Phase::restart, SIGKILL); }
TEST_F(FaultTest, SigintWhileWritingResults) { deliver_twice(*this, Phase::writing, SIGINT); }
TEST_F(FaultTest, SigtermWhileWritingResults) { deliver_twice(*this, Phase::writing, SIGTERM); }
TEST_F(FaultTest, SigkillWhileWritingResults) { deliver_twice(*this, Phase::writing, SIGKILL); }

// SIGINT in the third of a stage's five cold runs (its command holds it until the signal): the
// message names that stage and how far it got, not the next one; results.json keeps the two
// cold runs made and marks the stage not complete (failed), so that no report or gate takes it
// for a whole one; the next stage is "not run".
TEST_F(FaultTest, SigintInAStagesThirdColdRunNamesItAndKeepsItNotComplete) {
  dir.write("partial.yaml", head + "stages:\n"
            "  - name: first\n"
            "    command: [sh, -c, 'echo x >> first.runs; if [ $(wc -l < first.runs) -ge 3 ]; "
            "then touch stage.started; exec sleep 60; fi']\n"
            "    runs: 5\n"
            "  - name: second\n"
            "    command: [\"true\"]\n");
  Running r = start("partial.yaml");
  Delivered d = deliver_at(r, [&] { return fs::exists(dir / "stage.started"); }, SIGINT,
                           "SIGINT in stage first's cold run 3 of 5 (its command waiting)");
  ASSERT_TRUE(d.reached) << d.err;
  EXPECT_EQ(d.code, 130) << d.err;
  EXPECT_NE(d.err.find("interrupted by SIGINT during stage first, after cold run 2 of 5; 1 stage "
                       "not run"),
            std::string::npos)
      << d.err;

  auto res = results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 130);
  EXPECT_EQ(res.stopped->where, "stage first, after cold run 2 of 5");
  EXPECT_EQ(res.stopped->not_run, std::vector<std::string>{"second"});
  ASSERT_EQ(res.stages.size(), 1u);
  const auto& first = res.stages[0];
  EXPECT_EQ(first.name, "first");
  EXPECT_EQ(first.runs, 5);
  const results::Metric* wall = first.find("wall_ms");
  ASSERT_NE(wall, nullptr);
  EXPECT_EQ(wall->cold.size(), 2u);  // cold runs 1 and 2; the third was interrupted
  EXPECT_TRUE(first.failed());
  EXPECT_EQ(first.error.rfind("not complete: the run stopped after cold run 2 of 5", 0), 0u)
      << first.error;
  EXPECT_NE(slurp(dir / "coldgate-out/report.md").find("not complete"), std::string::npos);
  expect_nothing_left("after the interrupt in cold run 3");
  expect_no_partial_files(false, "after the interrupt in cold run 3");
}

// An interrupted run has reports too: what it was doing and what it did not run.
TEST_F(FaultTest, SigintDuringASetupCommandWritesReportsSayingSo) {
  Running r = start("setup-cmd.yaml");
  ASSERT_TRUE(wait_for([&] { return fs::exists(dir / "setup.started") || r.process->wait_exited(0ms); },
                       120s));
  ASSERT_FALSE(r.process->wait_exited(0ms)) << read_all(r.err);  // the command sleeps 60 s
  ::kill(r.process->pid(), SIGINT);
  std::string err;
  EXPECT_EQ(finish(r, &err), 130) << err;
  const std::string step = "command sh -c touch setup.started; exec sleep 60";
  const std::string verdict = "interrupted by SIGINT during setup step " + step + "; 1 stage not run";
  EXPECT_EQ(err.substr(err.rfind("coldgate: interrupted")),
            "coldgate: " + verdict + "; results in coldgate-out/results.json\n");
  EXPECT_NE(slurp(dir / "coldgate-out/report.md").find("\n❌ **" + verdict + "**\n"), std::string::npos);
  auto res = results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 130);
  EXPECT_EQ(res.stopped->step, step);
  EXPECT_EQ(res.stopped->not_run, std::vector<std::string>{"last"});
  std::string xml = slurp(dir / "coldgate-out/junit.xml");
  EXPECT_NE(xml.find("<error type=\"setup error\" message=\"" + step +
                     ": interrupted by SIGINT\">interrupted by SIGINT</error>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"not run: interrupted\"/>"), std::string::npos) << xml;
  expect_nothing_left("after the interrupted setup");
  expect_no_partial_files(false, "after the interrupted setup");
}

// ---------------------------------------------------------------------------------------------
// The server killed under a running stage

TEST_F(FaultTest, ServerStoppedImmediatelyUnderAStageEndsTheRunWithExit3) {
  dir.write("killed.yaml", head + "stages:\n"
                                  "  - name: sleepy\n"
                                  "    query: select pg_sleep(5)\n"
                                  "  - name: after\n"
                                  "    command: [sh, -c, 'touch after.ran']\n");
  Running r = start("killed.yaml");
  pid_t pid = r.process->pid();
  ASSERT_TRUE(wait_for([&] { return has_probe_child(pid) || r.process->wait_exited(0ms); }, 120s));
  pid_t postmaster = server_of(pid);
  ASSERT_GT(postmaster, 0) << read_all(r.err);
  ASSERT_EQ(stop_server_immediately(postmaster), "");

  std::string err;
  EXPECT_EQ(finish(r, &err), 3) << err;
  EXPECT_NE(err.find("coldgate: error: stage sleepy: the PostgreSQL server stopped answering "
                     "during cold run 1/2; the run stops. The stage's own error: "),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(dir / "after.ran")) << "a stage ran after the server was lost";
  // The reports say so: the stage it stopped in and the one after it were not run.
  auto res = results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 3);
  EXPECT_EQ(res.stopped->phase, results::StopPhase::stages);
  EXPECT_EQ(res.stopped->where, "stage sleepy");
  EXPECT_EQ(res.stopped->not_run, (std::vector<std::string>{"sleepy", "after"}));
  EXPECT_NE(slurp(dir / "coldgate-out/report.md")
                .find("\n❌ **infrastructure error at stage sleepy: the PostgreSQL server stopped "
                      "answering during cold run 1/2; the run stops. "),
            std::string::npos);
  expect_nothing_left("after the lost server");
  expect_no_partial_files(false, "after the lost server");
}

// ---------------------------------------------------------------------------------------------
// A full disk

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    out.push_back(e.path().lexically_relative(dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(FaultTest, FullDiskWhileWritingResultsFailsNamingTheFileAndLeavesNothingPartial) {
  // results.json of 3000 metrics is ~0.5 MB; the out folder holds 64 KiB.
  dir.write("full.yaml", head + "stages: [ { name: last, command: [sh, metrics.sh], runs: 1 } ]\n");
  SmallTmpfs out(dir / "coldgate-out");
  ASSERT_TRUE(out.mounted()) << "mount tmpfs: " << out.error() << " (run the suite as root)";
  Running r = start("full.yaml");
  std::string err;
  EXPECT_EQ(finish(r, &err), 3) << err;
  EXPECT_NE(err.find("coldgate: error: coldgate-out/results.json: write failed: No space left on "
                     "device (nothing was replaced)"),
            std::string::npos)
      << err;
  // Only the folder's lock (report::lock_outputs), which a run holds from its start.
  EXPECT_EQ(list(files_in(dir / "coldgate-out")), list({".lock"}));
  expect_nothing_left("after the full disk");
}

TEST_F(FaultTest, SnapshotThatDoesNotFitLeavesTheCommittedOneUnchanged) {
  // The candidate, 20000 numbers one per line (~150 KB), differs from the committed [1].
  dir.write("big.sh", "seq 1 20000 | awk 'BEGIN { printf \"[\" } { printf \"%s%d\", (NR > 1 ? \",\" : \"\"), $1 } "
                      "END { print \"]\" }'\n");
  dir.write("bigsnap.yaml", head + "stages:\n"
                                   "  - name: big\n"
                                   "    command: [sh, big.sh]\n"
                                   "    runs: 1\n"
                                   "    snapshot: { from: stdout, path: bigsnap/big.json }\n");
  SmallTmpfs snaps(dir / "bigsnap");
  ASSERT_TRUE(snaps.mounted()) << "mount tmpfs: " << snaps.error() << " (run the suite as root)";
  const std::string committed = "[\n  1\n]\n";
  dir.write("bigsnap/big.json", committed);
  for (std::vector<std::string> args : {std::vector<std::string>{}, {"--update-snapshots"}}) {
    SCOPED_TRACE(args.empty() ? "candidate (.new)" : "--update-snapshots");
    Running r = start("bigsnap.yaml", args);
    std::string err;
    EXPECT_EQ(finish(r, &err), 3) << err;
    EXPECT_NE(err.find("No space left on device (nothing was replaced)"), std::string::npos) << err;
    EXPECT_NE(err.find("bigsnap/big.json"), std::string::npos) << err;
    EXPECT_EQ(slurp(dir / "bigsnap/big.json"), committed);
    EXPECT_EQ(list(files_in(dir / "bigsnap")), list({"big.json"}));
    expect_nothing_left("after the snapshot that did not fit");
  }
}

// ---------------------------------------------------------------------------------------------
// A daemon that escapes its stage's process group

TEST_F(FaultTest, DaemonThatCallsSetsidAndIgnoresSigtermDiesWithItsStage) {
  // `setsid` puts the daemon in a session (and process group) of its own, out of reach of the
  // group kill; it ignores SIGTERM. One stage hangs until its timeout, one exits at once. A
  // loaded machine may reach the timeout before the hanging stage's daemon has written its pid:
  // then the timeout is longer the next time (2 s, 8 s, 30 s), each attempt held to the same
  // outcome.
  pid_t hang = 0;
  for (int seconds : {2, 8, 30}) {
    SCOPED_TRACE(seconds);
    fs::remove(dir / "hang.pid");
    fs::remove(dir / "exit.pid");
    dir.write("daemon.yaml",
              head + "stages:\n"
                     "  - name: hangs\n"
                     "    command: [sh, -c, 'setsid sh -c \"trap \\\"\\\" TERM; echo \\$\\$ > hang.pid.new; "
                     "mv hang.pid.new hang.pid; exec sleep 300\" & sleep 300']\n"
                     "    timeout: " + std::to_string(seconds) + "s\n"
                     "    runs: 1\n"
                     "  - name: exits\n"
                     "    command: [sh, -c, 'setsid sh -c \"trap \\\"\\\" TERM; echo \\$\\$ > exit.pid; exec sleep 300\" "
                     "</dev/null >/dev/null 2>&1 & while [ ! -s exit.pid ]; do sleep 0.05; done']\n"
                     "    runs: 1\n");
    Running r = start("daemon.yaml");
    std::string err;
    EXPECT_EQ(finish(r, &err), 1) << err;
    auto res = results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
    ASSERT_EQ(res.stages.size(), 2u);
    EXPECT_EQ(res.stages[0].error, "cold run 1/1: timed out after " +
                                       std::to_string(seconds * 1000) +
                                       " ms; its process group was killed");
    EXPECT_FALSE(res.stages[1].failed()) << res.stages[1].error;
    std::ifstream exited(dir / "exit.pid");
    pid_t pid = 0;
    exited >> pid;
    ASSERT_GT(pid, 0) << "exit.pid";
    EXPECT_EQ(::kill(pid, 0), -1) << "exit.pid: the daemon " << pid << " is still running";
    EXPECT_EQ(errno, ESRCH) << "exit.pid";
    std::ifstream hung(dir / "hang.pid");
    if (hung >> hang) break;
  }
  ASSERT_GT(hang, 0) << "the hanging stage's daemon had not started within a 30 s timeout";
  EXPECT_EQ(::kill(hang, 0), -1) << "hang.pid: the daemon " << hang << " is still running";
  EXPECT_EQ(errno, ESRCH) << "hang.pid";
  expect_nothing_left("after the daemon stages");
}


// ---------------------------------------------------------------------------------------------
// Data scales: a failure or an interrupt in an extra scale's setup

// The setup command makes the data of $COLDGATE_SCALE; at scale 4 it waits (a marker tells the
// test it is there) or fails, as a generator that runs out of disk or time would.
std::string scales_config(const std::string& head, const std::string& at_scale_4) {
  return head + "scales: [1, 4]\n"
                "setup: [ { command: [sh, -c, 'if [ \"$COLDGATE_SCALE\" = 4 ]; then " + at_scale_4 + "; fi'] } ]\n"
                "stages: [ { name: items, query: 'select 1' } ]\n";
}

TEST_F(FaultTest, AGeneratorFailingAtTheSecondScaleFailsTheRunNamingTheScale) {
  dir.write("scales-fail.yaml", scales_config(head, "echo out of disk at scale $COLDGATE_SCALE >&2; exit 3"));
  Running r = start("scales-fail.yaml");
  std::string err;
  EXPECT_EQ(finish(r, &err), 1) << err;
  const std::string step = "setup step scale 4: command sh -c if [ \"$COLDGATE_SCALE\" = 4 ]; then echo out of "
                           "disk at scale $COLDGATE_SCALE >&2; exit 3; fi";
  EXPECT_NE(err.find("coldgate: failed: " + step + " at scales-fail.yaml:5:"), std::string::npos) << err;
  EXPECT_NE(err.find("(exit status 3): out of disk at scale 4"), std::string::npos) << err;
  // Scale 1 was measured before: its figures are kept, only the growth is missing.
  auto res = results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  ASSERT_EQ(res.stages.size(), 1u);
  EXPECT_FALSE(res.stages[0].failed()) << res.stages[0].error;
  ASSERT_NE(res.stages[0].find("wall_ms"), nullptr);
  EXPECT_EQ(res.stages[0].find("wall_ms")->cold.size(), 2u);
  EXPECT_FALSE(res.stages[0].growth);
  expect_nothing_left("after the failed setup at scale 4");
  expect_no_partial_files(false, "after the failed setup at scale 4");
}

TEST_F(FaultTest, SigintDuringTheSecondScalesSetupStopsTheRunAndLeavesNothing) {
  dir.write("scales-wait.yaml", scales_config(head, "touch setup.started; exec sleep 60"));
  Running r = start("scales-wait.yaml");
  ASSERT_TRUE(wait_for([&] { return fs::exists(dir / "setup.started") || r.process->wait_exited(0ms); },
                       300s));
  ASSERT_FALSE(r.process->wait_exited(0ms)) << read_all(r.err);  // the command sleeps 60 s
  ::kill(r.process->pid(), SIGINT);
  std::string err;
  EXPECT_EQ(finish(r, &err), 130) << err;
  const std::string step = "scale 4: command sh -c if [ \"$COLDGATE_SCALE\" = 4 ]; then touch setup.started; "
                           "exec sleep 60; fi";
  EXPECT_EQ(err.substr(err.rfind("coldgate: interrupted")),
            "coldgate: interrupted by SIGINT during setup step " + step + "; results in coldgate-out/results.json\n");
  auto res = results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 130);
  EXPECT_EQ(res.stopped->step, step);
  expect_nothing_left("after the interrupted setup at scale 4");
  expect_no_partial_files(false, "after the interrupted setup at scale 4");
}

}  // namespace
}  // namespace coldgate
