// SIGINT, SIGTERM and SIGKILL at chosen points of `coldgate explain` and `coldgate explain --try`
// on the real binary with a real PostgreSQL (local provider). After each: the exit code, nothing
// printed or all of it, and nothing left — no process under the test folder, TMPDIR empty, no
// unfinished write in the cache; for SIGKILL, once the next command of the same kind has run.
//
// Each delivery waits for its phase (a folder, a marker file, a process title, a stderr line),
// then sends the signal after a delay drawn from the case's seed; the line printed per delivery
// and every failure name the seed, the delivery and the delay, so a failure reproduces. A signal
// that comes after coldgate ended is allowed: then the command ran to its end.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <random>
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

bool has_explain_backend(pid_t coldgate) {
  pid_t server = server_of(coldgate);
  if (server == 0) return false;
  for (pid_t c : children_of(server)) {
    // The backend's title: "postgres: coldgate: postgres coldgate 127.0.0.1(port) EXPLAIN".
    if (joined(argv_of(c)).find(") EXPLAIN") != std::string::npos) return true;
  }
  return false;
}

// One delivery of `sig` in `phase` of `explain` (`--try` when `trial`), with its checks.
void deliver(ExplainFaults& t, bool trial, Phase phase, int sig, int delivery, int seed,
             std::mt19937& rng) {
  FaultFolder& f = t.f;
  std::string config;
  std::function<bool(const Running&)> reached;
  int max_delay_ms = 300;
  bool server_seen = false;
  switch (phase) {
    case Phase::server_start:
      // From the cluster folder's creation (the template copied in) to "ready".
      config = "sleepy.yaml";
      reached = [&](const Running& r) { return f.starting_server(r); };
      max_delay_ms = 150;
      break;
    case Phase::setup:
      config = "setup-cmd.yaml";
      reached = [&](const Running&) { return fs::exists(f.dir / "setup.started"); };
      break;
    case Phase::explain:
      config = "sleepy.yaml";
      reached = [&](const Running& r) { return has_explain_backend(r.process->pid()); };
      break;
    case Phase::first_run:
      // The profiled cold run that finds the diagnoses: a probe in pg_sleep, or a command.
      if (delivery % 2 == 0) {
        config = "sleepy.yaml";
        reached = [&](const Running& r) { return has_probe_child(r.process->pid()); };
      } else {
        config = "first-cmd.yaml";
        reached = [&](const Running&) { return fs::exists(f.dir / "first.started"); };
      }
      break;
    case Phase::variants:
      if (delivery % 2 == 0) {
        config = "variant-cmd.yaml";
        reached = [&](const Running&) { return fs::exists(f.dir / "trying"); };
      } else {
        config = "variant-sql.yaml";
        reached = [&](const Running& r) {
          return r.said("try as is: cold run 1/1") && has_probe_child(r.process->pid());
        };
      }
      break;
    case Phase::finishing:
      if (trial) {
        // After the last variant's run: the server stops, the table is printed (≈ 60 ms).
        config = "variant-quick.yaml";
        reached = [&](const Running& r) { return r.said("try more memory: cold run 1/1"); };
        max_delay_ms = 40;
      } else {
        // The EXPLAIN is over once the server that was ready is gone: the plan is being made
        // and printed. (Before "ready", a postgres child may be the template's `--single` one.)
        config = "big.yaml";
        reached = [&](const Running& r) {
          if (!r.said(") ready in ")) return false;
          bool up = server_of(r.process->pid()) != 0;
          server_seen = server_seen || up;
          return server_seen && !up;
        };
      }
      if (!trial) max_delay_ms = 150;
      break;
  }
  for (const char* marker : {"setup.started", "first.started", "trying"}) fs::remove(f.dir / marker);
  const int delay_ms = std::uniform_int_distribution<int>(0, max_delay_ms)(rng);
  const std::string what = std::string(sig_name(sig)) + " during " + name(phase) + " of explain" +
                           (trial ? " --try" : "") + ", delivery " + std::to_string(delivery + 1) +
                           " of seed " + std::to_string(seed) + ": delay " +
                           std::to_string(delay_ms) + " ms after the phase began (" + config + ")";
  SCOPED_TRACE(what);
  std::vector<std::string> args{"explain", "q", "-c", config};
  if (trial) args.push_back("--try");
  Running r = f.start(args);
  Delivered d = deliver_at(r, [&] { return reached(r); }, std::chrono::milliseconds(delay_ms), sig, what);
  if (!d.reached) return;
  const std::string out = read_all(r.out);

  if (sig == SIGKILL) {
    if (!d.ended_before) {
      EXPECT_EQ(d.code, 128 + SIGKILL) << d.err;
    }
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
  // While printing, a signal after the last check, as coldgate exits, finds its work done: exit
  // 0 with the whole output. Otherwise 130, with nothing printed or (while printing) all of it.
  const bool as_it_exited = phase == Phase::finishing && d.code == 0;
  if (!d.ended_before && !as_it_exited) {
    EXPECT_EQ(d.code, 130) << d.err;
    EXPECT_NE(d.err.find(sig == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"),
              std::string::npos)
        << d.err;
  }
  if (d.code == 0) {
    EXPECT_NE(out, "") << "exit 0 without output";
  }
  if (d.code == 130 && phase != Phase::finishing) {
    EXPECT_EQ(out, "") << "printed although interrupted";
  } else if (!out.empty()) {
    // The last block is there, to its last line.
    const char* last = trial ? "| more memory |" : "\nDiagnoses:\n";
    EXPECT_TRUE(out.find(last) != std::string::npos && out.ends_with("\n"))
        << "not whole:\n" << out.substr(out.size() > 400 ? out.size() - 400 : 0);
  }
  f.expect_nothing_left("right after the command");
}

// Two deliveries of `sig` in `phase`, delays from `seed`.
void deliver_twice(ExplainFaults& t, bool trial, Phase phase, int sig, int seed) {
  std::mt19937 rng(static_cast<std::mt19937::result_type>(seed));
  for (int i = 0; i < 2 && !::testing::Test::HasFatalFailure(); ++i) {
    deliver(t, trial, phase, sig, i, seed, rng);
  }
}

// explain: 4 phases × 3 signals × 2 deliveries = 24.
TEST_F(ExplainFaults, SigintDuringServerStart) { deliver_twice(*this, false, Phase::server_start, SIGINT, 2101); }
TEST_F(ExplainFaults, SigtermDuringServerStart) { deliver_twice(*this, false, Phase::server_start, SIGTERM, 2102); }
TEST_F(ExplainFaults, SigkillDuringServerStart) { deliver_twice(*this, false, Phase::server_start, SIGKILL, 2103); }
TEST_F(ExplainFaults, SigintDuringSetup) { deliver_twice(*this, false, Phase::setup, SIGINT, 2201); }
TEST_F(ExplainFaults, SigtermDuringSetup) { deliver_twice(*this, false, Phase::setup, SIGTERM, 2202); }
TEST_F(ExplainFaults, SigkillDuringSetup) { deliver_twice(*this, false, Phase::setup, SIGKILL, 2203); }
TEST_F(ExplainFaults, SigintDuringTheExplain) { deliver_twice(*this, false, Phase::explain, SIGINT, 2301); }
TEST_F(ExplainFaults, SigtermDuringTheExplain) { deliver_twice(*this, false, Phase::explain, SIGTERM, 2302); }
TEST_F(ExplainFaults, SigkillDuringTheExplain) { deliver_twice(*this, false, Phase::explain, SIGKILL, 2303); }
TEST_F(ExplainFaults, SigintWhilePrinting) { deliver_twice(*this, false, Phase::finishing, SIGINT, 2401); }
TEST_F(ExplainFaults, SigtermWhilePrinting) { deliver_twice(*this, false, Phase::finishing, SIGTERM, 2402); }
TEST_F(ExplainFaults, SigkillWhilePrinting) { deliver_twice(*this, false, Phase::finishing, SIGKILL, 2403); }

// explain --try: 4 phases × 3 signals × 2 deliveries = 24.
TEST_F(ExplainFaults, TrySigintDuringSetup) { deliver_twice(*this, true, Phase::setup, SIGINT, 3101); }
TEST_F(ExplainFaults, TrySigtermDuringSetup) { deliver_twice(*this, true, Phase::setup, SIGTERM, 3102); }
TEST_F(ExplainFaults, TrySigkillDuringSetup) { deliver_twice(*this, true, Phase::setup, SIGKILL, 3103); }
TEST_F(ExplainFaults, TrySigintDuringTheMeasuredRun) { deliver_twice(*this, true, Phase::first_run, SIGINT, 3201); }
TEST_F(ExplainFaults, TrySigtermDuringTheMeasuredRun) { deliver_twice(*this, true, Phase::first_run, SIGTERM, 3202); }
TEST_F(ExplainFaults, TrySigkillDuringTheMeasuredRun) { deliver_twice(*this, true, Phase::first_run, SIGKILL, 3203); }
TEST_F(ExplainFaults, TrySigintDuringTheVariants) { deliver_twice(*this, true, Phase::variants, SIGINT, 3301); }
TEST_F(ExplainFaults, TrySigtermDuringTheVariants) { deliver_twice(*this, true, Phase::variants, SIGTERM, 3302); }
TEST_F(ExplainFaults, TrySigkillDuringTheVariants) { deliver_twice(*this, true, Phase::variants, SIGKILL, 3303); }
TEST_F(ExplainFaults, TrySigintWhileFinishing) { deliver_twice(*this, true, Phase::finishing, SIGINT, 3401); }
TEST_F(ExplainFaults, TrySigtermWhileFinishing) { deliver_twice(*this, true, Phase::finishing, SIGTERM, 3402); }
TEST_F(ExplainFaults, TrySigkillWhileFinishing) { deliver_twice(*this, true, Phase::finishing, SIGKILL, 3403); }

// The clean-up after a SIGKILL is not only the next command of the same kind's: a `run` ends
// the setup command a killed `explain` had left running and removes its work folder.
TEST_F(ExplainFaults, WhatASigkilledExplainLeftEndsWithTheNextRun) {
  f.dir.write("run.yaml", "version: 1\ndatabase: { provider: local }\n"
                          "stages: [ { name: q, command: [\"true\"], runs: 1, warm: 0 } ]\n");
  Running r = f.start({"explain", "q", "-c", "setup-cmd.yaml"});
  Delivered d = deliver_at(r, [&] { return fs::exists(f.dir / "setup.started"); }, 0ms, SIGKILL,
                           "SIGKILL during setup of explain, then run");
  ASSERT_TRUE(d.reached);
  EXPECT_NE(list(processes_under(f.dir.path())), " none") << "the setup command outlives it";
  Running next = f.start({"run", "-c", "run.yaml"});
  std::string err;
  EXPECT_EQ(next.finish(&err), 0) << err;
  f.expect_nothing_left("after the next run");
}

}  // namespace
}  // namespace coldgate
