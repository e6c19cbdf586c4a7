// SIGINT, SIGTERM and SIGKILL at chosen points of `coldgate explain` and `coldgate explain --try`
// on the real binary with a real PostgreSQL (local provider). After each: the exit code, nothing
// printed or all of it, and nothing left — no process under the test folder, TMPDIR empty, no
// unfinished write in the cache; for SIGKILL, once the next command of the same kind has run.
//
// Each delivery waits for a state of its phase (a folder, a marker file, a process title, a
// stderr line) and sends the signal the moment it sees it; the line printed per delivery and
// every failure name the delivery and that state. Only the last phase, stopping the server and
// printing, does not wait for the test: when explain ended before the signal, it is checked as
// a run to its end (exit 0, the whole output).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "support/faults.hpp"
#include "support/support.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

// A query of 600 SELECTs: its plan takes a while to print, so that a signal can land between
// the server's stop and the output.
std::string big_query() {
  std::string q;
  for (int i = 0; i < 600; ++i) q += (i ? " union all select " : "select ") + std::to_string(i);
  return q;
}

struct ExplainFaults : ::testing::Test {
  void SetUp() override {
    const std::string head = "version: 1\ndatabase: { provider: local }\n"
                             "defaults: { runs: 1, warm: 0, try_runs: 1 }\n";
    const std::string remedy = "    remedies: [ { name: more memory, settings: { work_mem: 8MB } } ]\n";
    f.dir.write("quick.yaml", head + "stages: [ { name: q, query: 'select 1' } ]\n");
    f.dir.write("sleepy.yaml", head + "stages: [ { name: q, query: 'select pg_sleep(60)' } ]\n");
    f.dir.write("setup-cmd.yaml",
                head + "setup: [ { command: [sh, -c, 'touch setup.started; exec sleep 60'] } ]\n"
                       "stages: [ { name: q, query: 'select 1' } ]\n");
    f.dir.write("big.yaml", head + "stages: [ { name: q, query: '" + big_query() + "' } ]\n");
    f.dir.write("first-cmd.yaml",
                head + "stages: [ { name: q, command: [sh, -c, 'touch first.started; exec sleep 60'] } ]\n");
    // The remedy's run (its PGOPTIONS, or its work_mem) sleeps; "as is" does not.
    f.dir.write("variant-cmd.yaml",
                head + "stages:\n"
                       "  - name: q\n"
                       "    command: [sh, -c, 'case \"$PGOPTIONS\" in *work_mem*) touch trying; exec sleep 60;; esac']\n" +
                    remedy);
    f.dir.write("variant-sql.yaml",
                head + "stages:\n"
                       "  - name: q\n"
                       "    query: \"select pg_sleep(case when current_setting('work_mem') = '8MB' then 60 else 0 end)\"\n" +
                    remedy);
    f.dir.write("variant-quick.yaml",
                head + "stages:\n  - name: q\n    query: 'select 1'\n" + remedy);
  }
  FaultFolder f;
};

enum class Phase { server_start, setup, explain, first_run, variants, finishing };

const char* name(Phase p) {
  switch (p) {
    case Phase::server_start: return "server start";
    case Phase::setup: return "setup";
    case Phase::explain: return "the EXPLAIN";
    case Phase::first_run: return "the measured run";
    case Phase::variants: return "the remedy trial's variants";
    case Phase::finishing: return "stopping the server and printing";
  }
  return "?";
}

// What a whole explain printed: its last block, to its last line.
void expect_whole_output(const std::string& out, bool trial) {
  const char* last = trial ? "| more memory |" : "\nDiagnoses:\n";
  EXPECT_TRUE(out.rfind("stage q\n", 0) == 0 && out.find(last) != std::string::npos &&
              out.ends_with("\n"))
      << "not whole:\n" << out.substr(out.size() > 400 ? out.size() - 400 : 0);
}

// One delivery of `sig` in `phase` of `explain` (`--try` when `trial`), with its checks.
void deliver(ExplainFaults& t, bool trial, Phase phase, int sig, int delivery) {
  FaultFolder& f = t.f;
  std::string config;
  std::string state;
  std::function<bool(const Running&)> reached;
  bool server_seen = false;
  // A marker file is there, and the command that made it is recorded for the next command's
  // clean-up (the record follows its start by a moment).
  auto marked = [&](const char* marker) {
    return [&f, marker](const Running& r) {
      return fs::exists(f.dir / marker) && children_recorded(r.process->pid(), f.tmp);
    };
  };
  // The server that was ready is gone (before "ready", a postgres child may be the template's
  // `--single` one).
  auto server_gone = [&](const Running& r) {
    if (!r.said(") ready in ")) return false;
    bool up = server_of(r.process->pid()) != 0;
    server_seen = server_seen || up;
    return server_seen && !up;
  };
  switch (phase) {
    case Phase::server_start:
      // Before "ready": the cluster folder made, the template being copied in (the first
      // delivery); the postmaster started (the second). The EXPLAIN sleeps, so a signal that
      // comes once the server is ready still finds explain at work.
      config = "sleepy.yaml";
      if (delivery % 2 == 0) {
        state = "the cluster folder made";
        reached = [&](const Running& r) { return f.starting_server(r); };
      } else {
        state = "the postmaster started";
        reached = [&](const Running& r) { return f.postmaster_starting(r); };
      }
      break;
    case Phase::setup:
      config = "setup-cmd.yaml";
      state = "the setup command waiting";
      reached = marked("setup.started");
      break;
    case Phase::explain:
      config = "sleepy.yaml";
      state = "the EXPLAIN's backend at work";
      reached = [&](const Running& r) {
        return backend_runs(server_of(r.process->pid()), "EXPLAIN");
      };
      break;
    case Phase::first_run:
      // The profiled cold run that finds the diagnoses: a probe in pg_sleep, or a command.
      if (delivery % 2 == 0) {
        config = "sleepy.yaml";
        state = "the probe started";
        reached = [&](const Running& r) {
          return has_probe_child(r.process->pid()) && children_recorded(r.process->pid(), f.tmp);
        };
      } else {
        config = "first-cmd.yaml";
        state = "the stage's command waiting";
        reached = marked("first.started");
      }
      break;
    case Phase::variants:
      if (delivery % 2 == 0) {
        config = "variant-cmd.yaml";
        state = "the remedy's command waiting";
        reached = marked("trying");
      } else {
        config = "variant-sql.yaml";
        state = "the remedy's probe started";
        reached = [&](const Running& r) {
          return r.said("try as is: cold run 1/1") && has_probe_child(r.process->pid()) &&
                 children_recorded(r.process->pid(), f.tmp);
        };
      }
      break;
    case Phase::finishing:
      if (trial) {
        // After the last variant's run: the server stops, the table is printed (≈ 60 ms).
        config = "variant-quick.yaml";
        if (delivery % 2 == 0) {
          state = "the last variant's line";
          reached = [&](const Running& r) { return r.said("try more memory: cold run 1/1"); };
        } else {
          state = "the server gone after the last variant";
          reached = [&](const Running& r) {
            const bool gone = server_gone(r);  // called on every poll: it notes the server seen
            return gone && r.said("try more memory: cold run 1/1");
          };
        }
      } else {
        // The EXPLAIN is over once the server that was ready is gone: its cluster folder is
        // removed, the plan is made and printed.
        config = "big.yaml";
        if (delivery % 2 == 0) {
          state = "the server gone";
          reached = server_gone;
        } else {
          state = "the server and its folder gone";
          reached = [&](const Running& r) {
            if (!server_gone(r)) return false;
            for (const auto& e : entries_of(f.tmp)) {
              if (e.find("/coldgate-pg-") != std::string::npos) return false;
            }
            return true;
          };
        }
      }
      break;
  }
  for (const char* marker : {"setup.started", "first.started", "trying"}) fs::remove(f.dir / marker);
  const std::string what = std::string(sig_name(sig)) + " during " + name(phase) + " of explain" +
                           (trial ? " --try" : "") + ", delivery " + std::to_string(delivery + 1) +
                           ", at " + state + " (" + config + ")";
  SCOPED_TRACE(what);
  std::vector<std::string> args{"explain", "q", "-c", config};
  if (trial) args.push_back("--try");
  Running r = f.start(args);
  const bool may_end = phase == Phase::finishing;
  Delivered d = deliver_at(r, [&] { return reached(r); }, sig, what, may_end);
  if (!d.reached && !(may_end && d.ended_before)) return;
  const std::string out = read_all(r.out);

  // Ended before the signal, or the signal came after the last check, as explain exited: a
  // run to its end. (Every other phase waits for the test: there, 0 would be a lost signal.)
  if (may_end && (d.ended_before || d.code == 0)) {
    EXPECT_EQ(d.code, 0) << d.err;
    expect_whole_output(out, trial);
    f.expect_nothing_left("after an explain that ran to its end");
    return;
  }
  if (sig == SIGKILL) {
    EXPECT_EQ(d.code, 128 + SIGKILL) << d.err;
    // The next command of the same kind removes what the killed one left.
    std::vector<std::string> next{"explain", "q", "-c", "quick.yaml"};
    if (trial) next.push_back("--try");
    Running again = f.start(next);
    std::string again_err;
    EXPECT_EQ(again.finish(&again_err), 0) << again_err;
    // A probe left in pg_sleep ends when the next command stops the killed one's server.
    wait_for([&] { return processes_under(f.dir.path()).empty(); }, 15s);
    f.expect_nothing_left("after the next command");
    return;
  }
  // Interrupted: 130, with nothing printed or (while printing) all of it.
  EXPECT_EQ(d.code, 130) << d.err;
  EXPECT_NE(d.err.find(sig == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"),
            std::string::npos)
      << d.err;
  if (phase != Phase::finishing || out.empty()) {
    EXPECT_EQ(out, "") << "printed although interrupted";
  } else {
    expect_whole_output(out, trial);
  }
  f.expect_nothing_left("right after the command");
}

// Two deliveries of `sig` in `phase`, each at its own state of the phase where it has two.
void deliver_twice(ExplainFaults& t, bool trial, Phase phase, int sig) {
  for (int i = 0; i < 2 && !::testing::Test::HasFatalFailure(); ++i) {
    deliver(t, trial, phase, sig, i);
  }
}

// explain: 4 phases × 3 signals × 2 deliveries = 24.
TEST_F(ExplainFaults, SigintDuringServerStart) { deliver_twice(*this, false, Phase::server_start, SIGINT); }
TEST_F(ExplainFaults, SigtermDuringServerStart) { deliver_twice(*this, false, Phase::server_start, SIGTERM); }
TEST_F(ExplainFaults, SigkillDuringServerStart) { deliver_twice(*this, false, Phase::server_start, SIGKILL); }
TEST_F(ExplainFaults, SigintDuringSetup) { deliver_twice(*this, false, Phase::setup, SIGINT); }
TEST_F(ExplainFaults, SigtermDuringSetup) { deliver_twice(*this, false, Phase::setup, SIGTERM); }
TEST_F(ExplainFaults, SigkillDuringSetup) { deliver_twice(*this, false, Phase::setup, SIGKILL); }
TEST_F(ExplainFaults, SigintDuringTheExplain) { deliver_twice(*this, false, Phase::explain, SIGINT); }
TEST_F(ExplainFaults, SigtermDuringTheExplain) { deliver_twice(*this, false, Phase::explain, SIGTERM); }
TEST_F(ExplainFaults, SigkillDuringTheExplain) { deliver_twice(*this, false, Phase::explain, SIGKILL); }
TEST_F(ExplainFaults, SigintWhilePrinting) { deliver_twice(*this, false, Phase::finishing, SIGINT); }
TEST_F(ExplainFaults, SigtermWhilePrinting) { deliver_twice(*this, false, Phase::finishing, SIGTERM); }
TEST_F(ExplainFaults, SigkillWhilePrinting) { deliver_twice(*this, false, Phase::finishing, SIGKILL); }

// explain --try: 4 phases × 3 signals × 2 deliveries = 24.
TEST_F(ExplainFaults, TrySigintDuringSetup) { deliver_twice(*this, true, Phase::setup, SIGINT); }
TEST_F(ExplainFaults, TrySigtermDuringSetup) { deliver_twice(*this, true, Phase::setup, SIGTERM); }
TEST_F(ExplainFaults, TrySigkillDuringSetup) { deliver_twice(*this, true, Phase::setup, SIGKILL); }
TEST_F(ExplainFaults, TrySigintDuringTheMeasuredRun) { deliver_twice(*this, true, Phase::first_run, SIGINT); }
TEST_F(ExplainFaults, TrySigtermDuringTheMeasuredRun) { deliver_twice(*this, true, Phase::first_run, SIGTERM); }
TEST_F(ExplainFaults, TrySigkillDuringTheMeasuredRun) { deliver_twice(*this, true, Phase::first_run, SIGKILL); }
TEST_F(ExplainFaults, TrySigintDuringTheVariants) { deliver_twice(*this, true, Phase::variants, SIGINT); }
TEST_F(ExplainFaults, TrySigtermDuringTheVariants) { deliver_twice(*this, true, Phase::variants, SIGTERM); }
TEST_F(ExplainFaults, TrySigkillDuringTheVariants) { deliver_twice(*this, true, Phase::variants, SIGKILL); }
TEST_F(ExplainFaults, TrySigintWhileFinishing) { deliver_twice(*this, true, Phase::finishing, SIGINT); }
TEST_F(ExplainFaults, TrySigtermWhileFinishing) { deliver_twice(*this, true, Phase::finishing, SIGTERM); }
TEST_F(ExplainFaults, TrySigkillWhileFinishing) { deliver_twice(*this, true, Phase::finishing, SIGKILL); }

// The clean-up after a SIGKILL is not only the next command of the same kind's: a `run` ends
// the setup command a killed `explain` had left running and removes its work folder.
TEST_F(ExplainFaults, WhatASigkilledExplainLeftEndsWithTheNextRun) {
  f.dir.write("run.yaml", "version: 1\ndatabase: { provider: local }\n"
                          "stages: [ { name: q, command: [\"true\"], runs: 1, warm: 0 } ]\n");
  Running r = f.start({"explain", "q", "-c", "setup-cmd.yaml"});
  Delivered d = deliver_at(
      r,
      [&] {
        return fs::exists(f.dir / "setup.started") && children_recorded(r.process->pid(), f.tmp);
      },
      SIGKILL, "SIGKILL during setup of explain, then run");
  ASSERT_TRUE(d.reached);
  EXPECT_NE(list(processes_under(f.dir.path())), " none") << "the setup command outlives it";
  Running next = f.start({"run", "-c", "run.yaml"});
  std::string err;
  EXPECT_EQ(next.finish(&err), 0) << err;
  f.expect_nothing_left("after the next run");
}

// A SIGKILL in the moment between a child's start and its record (the record is written just
// after the start) leaves a child no record names: made certain here by removing the records
// the killed explain wrote. The next command still ends it, by the variable it inherited
// (COLDGATE_RECORDED_IN), and leaves nothing.
TEST_F(ExplainFaults, AChildStartedJustBeforeASigkillEndsWithTheNextCommand) {
  Running r = f.start({"explain", "q", "-c", "setup-cmd.yaml"});
  Delivered d = deliver_at(
      r,
      [&] {
        return fs::exists(f.dir / "setup.started") && children_recorded(r.process->pid(), f.tmp);
      },
      SIGKILL, "SIGKILL during setup of explain, its records then removed");
  ASSERT_TRUE(d.reached);
  int removed = 0;
  std::error_code ec;
  for (const auto& work : fs::directory_iterator(f.tmp, ec)) {
    for (const auto& e : fs::directory_iterator(work.path() / "children", ec)) {
      removed += fs::remove(e.path()) ? 1 : 0;
    }
  }
  ASSERT_GT(removed, 0) << "no record to remove: the setup command was not recorded";
  EXPECT_NE(list(processes_under(f.dir.path())), " none") << "the setup command outlives it";
  Running next = f.start({"explain", "q", "-c", "quick.yaml"});
  std::string err;
  EXPECT_EQ(next.finish(&err), 0) << err;
  // The clean-up is said, so that a killed run does not pass unnoticed.
  EXPECT_NE(err.find("removed what a killed coldgate command left: 1 server, "), std::string::npos)
      << err;
  EXPECT_NE(err.find(" it had started (ended)"), std::string::npos) << err;
  f.expect_nothing_left("after the next command");
}

}  // namespace
}  // namespace coldgate
