// SIGINT, SIGTERM and SIGKILL at chosen points of `coldgate db up` — starting the server, running
// setup, holding the server while it waits — and `coldgate db down` while it waits, on the real
// binary with a real PostgreSQL (local provider). After each: the exit code, and nothing left —
// no process under the test folder, TMPDIR empty, no unfinished write in the cache, no state
// file, and the URL it printed no longer answers; for SIGKILL, once the next `db up` (stopped
// with SIGINT once it is up) or `db down` has run. (`db up` has no --detach: it holds the server
// in the foreground, so the waiting `db up` is the server's owner.)
//
// Each signal is sent the moment the test sees its state (a folder, a process, a marker file, a
// line), never after a delay; what a delivery saw and how coldgate ended is printed with it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>

#include "support/faults.hpp"
#include "support/support.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

struct DbUpFaults : ::testing::Test {
  void SetUp() override {
    const std::string head = "version: 1\ndatabase: { provider: local }\n";
    const std::string stage = "stages: [ { name: q, query: 'select 1' } ]\n";
    f.dir.write("coldgate.yaml", head + stage);
    f.dir.write("setup-cmd.yaml",
                head + "setup: [ { command: [sh, -c, 'touch setup.started; exec sleep 60'] } ]\n" + stage);
  }

  // The URL `db up` printed (its first stdout line), or "".
  static std::string url_of(const Running& r) {
    std::string out = read_all(r.out);
    auto nl = out.find('\n');
    return nl == std::string::npos ? "" : out.substr(0, nl);
  }

  // The server at `url` answers (or rejects) connections.
  static bool answers(const std::string& url) {
    std::string conninfo = url + (url.find('?') == std::string::npos ? "?" : "&") + "connect_timeout=2";
    return PQping(conninfo.c_str()) != PQPING_NO_RESPONSE;
  }

  // State files of running (or killed) `db up`s in our cache.
  std::vector<std::string> state_files() const {
    std::vector<std::string> out;
    for (const auto& e : entries_of(f.cache / "coldgate" / "up")) {
      if (e.ends_with(".state")) out.push_back(e);
    }
    return out;
  }

  // `db up -c config` until it printed its URL, then SIGINT: exit 0, nothing left of it.
  void up_and_stop(const std::string& config) {
    Running r = f.start({"db", "up", "-c", config});
    Delivered d = deliver_at(
        r, [&] { return !url_of(r).empty() && r.said("press Ctrl-C"); }, SIGINT,
        "the next db up, stopped once it is up");
    EXPECT_EQ(d.code, 0) << d.err;
    EXPECT_FALSE(answers(url_of(r))) << url_of(r);
  }

  void expect_nothing_left(const std::string& why, const std::string& url) {
    f.expect_nothing_left(why);
    EXPECT_EQ(list(state_files()), " none") << why;
    if (!url.empty()) {
      EXPECT_FALSE(answers(url)) << why << ": " << url << " still answers";
    }
  }

  FaultFolder f;
};

enum class Phase { server_start, setup, waiting };

const char* name(Phase p) {
  switch (p) {
    case Phase::server_start: return "server start";
    case Phase::setup: return "setup";
    case Phase::waiting: return "waiting with the server up";
  }
  return "?";
}

// What ends the `db up`: a signal, or `coldgate db down` (0).
constexpr int k_db_down = 0;

void deliver(DbUpFaults& t, Phase phase, int sig, int delivery) {
  FaultFolder& f = t.f;
  std::string config = "coldgate.yaml";
  std::function<bool(const Running&)> reached;
  std::string state;
  switch (phase) {
    case Phase::server_start:
      // Before "ready": the cluster folder made, the template being copied in (the first
      // delivery); the postmaster started (the second). A server that is ready before the
      // signal arrives makes `db up` print its URL and wait: the signal then ends that wait.
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
      reached = [&](const Running& r) {
        return fs::exists(f.dir / "setup.started") && children_recorded(r.process->pid(), f.tmp);
      };
      break;
    case Phase::waiting:
      state = "the URL printed";
      reached = [&](const Running& r) { return !DbUpFaults::url_of(r).empty() && r.said("press Ctrl-C"); };
      break;
  }
  fs::remove(f.dir / "setup.started");
  const std::string by = sig == k_db_down ? "coldgate db down" : sig_name(sig);
  const std::string what = by + " during " + name(phase) + " of db up, delivery " +
                           std::to_string(delivery + 1) + ", at " + state + " (" + config + ")";
  SCOPED_TRACE(what);
  Running r = f.start({"db", "up", "-c", config});
  std::string url;
  if (sig == k_db_down) {
    ASSERT_TRUE(wait_for([&] { return reached(r) || r.process->wait_exited(0ms); }, 120s));
    url = DbUpFaults::url_of(r);
    ASSERT_FALSE(url.empty()) << read_all(r.err);
    auto down = run_coldgate({"db", "down", "-c", config}, f.dir.path(), "",
                             {"TMPDIR=" + f.tmp.string(), "XDG_CACHE_HOME=" + f.cache.string()});
    EXPECT_EQ(down.exit_code, 0) << down.err;
    EXPECT_NE(down.err.find("coldgate: stopped"), std::string::npos) << down.err;
    std::string err;
    EXPECT_EQ(r.finish(&err), 0) << err;
    std::cout << "[ fault    ] " << what << ": stopped, exit " << down.exit_code << std::endl;
    t.expect_nothing_left("after db down", url);
    return;
  }
  Delivered d = deliver_at(r, [&] { return reached(r); }, sig, what);
  if (!d.reached) return;
  url = DbUpFaults::url_of(r);
  // `db up` prints its URL once the server is up and set up, then only waits: a URL printed
  // means the signal came in that wait (during server start: the server was ready first).
  const bool was_waiting = !url.empty();
  if (phase == Phase::waiting) {
    EXPECT_TRUE(was_waiting);
  } else if (phase == Phase::setup) {
    EXPECT_FALSE(was_waiting) << "printed a URL although its setup command never ended: " << url;
  } else if (was_waiting) {
    std::cout << "[ fault    ] " << what << ": the server was ready first; db up was waiting"
              << std::endl;
  }
  if (sig == SIGKILL) {
    EXPECT_EQ(d.code, 128 + SIGKILL) << d.err;
    // A SIGKILLed db up cannot remove its state file, written before the URL is printed.
    const bool left_state = t.state_files().size() == 1u;
    if (was_waiting) {
      EXPECT_TRUE(left_state) << "a SIGKILLed db up cannot remove its state file";
    }
    // The next command of the same kind: `db up` after the first kill, `db down` after the
    // second (without a state file it says "none is running", exit 2).
    if (delivery % 2 == 1) {
      auto down = run_coldgate({"db", "down", "-c", config}, f.dir.path(), "",
                               {"TMPDIR=" + f.tmp.string(), "XDG_CACHE_HOME=" + f.cache.string()});
      if (left_state) {
        EXPECT_EQ(down.exit_code, 0) << down.err;
        EXPECT_NE(down.err.find("had ended without stopping (killed?)"), std::string::npos) << down.err;
      } else {
        EXPECT_EQ(down.exit_code, 2) << down.err;
        EXPECT_NE(down.err.find("no `coldgate db up` is running"), std::string::npos) << down.err;
      }
    } else {
      t.up_and_stop("coldgate.yaml");  // without the setup command that sleeps
    }
    t.expect_nothing_left("after the next command", url);
    return;
  }
  // Ctrl-C is how a waiting `db up` is meant to end: exit 0. Before, the start is interrupted.
  if (was_waiting) {
    EXPECT_EQ(d.code, 0) << d.err;
    EXPECT_NE(d.err.find("coldgate: database stopped"), std::string::npos) << d.err;
  } else {
    EXPECT_EQ(d.code, 130) << d.err;
    EXPECT_NE(d.err.find(sig == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"),
              std::string::npos)
        << d.err;
  }
  t.expect_nothing_left("right after db up", url);
}

void deliver_twice(DbUpFaults& t, Phase phase, int sig) {
  for (int i = 0; i < 2 && !::testing::Test::HasFatalFailure(); ++i) deliver(t, phase, sig, i);
}

// 3 phases × 3 signals × 2, and `db down` twice while it waits: 20 deliveries.
TEST_F(DbUpFaults, SigintDuringServerStart) { deliver_twice(*this, Phase::server_start, SIGINT); }
TEST_F(DbUpFaults, SigtermDuringServerStart) { deliver_twice(*this, Phase::server_start, SIGTERM); }
TEST_F(DbUpFaults, SigkillDuringServerStart) { deliver_twice(*this, Phase::server_start, SIGKILL); }
TEST_F(DbUpFaults, SigintDuringSetup) { deliver_twice(*this, Phase::setup, SIGINT); }
TEST_F(DbUpFaults, SigtermDuringSetup) { deliver_twice(*this, Phase::setup, SIGTERM); }
TEST_F(DbUpFaults, SigkillDuringSetup) { deliver_twice(*this, Phase::setup, SIGKILL); }
TEST_F(DbUpFaults, SigintWhileWaiting) { deliver_twice(*this, Phase::waiting, SIGINT); }
TEST_F(DbUpFaults, SigtermWhileWaiting) { deliver_twice(*this, Phase::waiting, SIGTERM); }
TEST_F(DbUpFaults, SigkillWhileWaiting) { deliver_twice(*this, Phase::waiting, SIGKILL); }
TEST_F(DbUpFaults, DbDownWhileWaiting) { deliver_twice(*this, Phase::waiting, k_db_down); }

// SIGINT/SIGTERM while `postgres --version` of database.bindir runs (a slow disk, a wrapper
// script): the command ends with 130, not with "no runnable postgres" (exit 2), nothing left.
TEST_F(DbUpFaults, AnInterruptWhileTheServerBinariesAreProbedEndsTheCommand) {
  const fs::path started = f.dir / "probe.started";
  f.dir.write("slow-bin/postgres", "#!/bin/sh\ntouch '" + started.string() + "'\nexec sleep 60\n");
  f.dir.write("slow-bin/initdb", "#!/bin/sh\nexit 1\n");
  for (const char* name : {"postgres", "initdb"}) {
    fs::permissions(f.dir / "slow-bin" / name, fs::perms::owner_all | fs::perms::group_read |
                                                   fs::perms::group_exec | fs::perms::others_read |
                                                   fs::perms::others_exec);
  }
  f.dir.write("probe.yaml", "version: 1\ndatabase: { provider: local, bindir: '" +
                                (f.dir / "slow-bin").string() +
                                "' }\nstages: [ { name: q, query: 'select 1' } ]\n");
  for (int sig : {SIGINT, SIGTERM}) {
    fs::remove(started);
    const std::string what = std::string(sig_name(sig)) + " while database.bindir is probed";
    SCOPED_TRACE(what);
    Running r = f.start({"db", "up", "-c", "probe.yaml"});
    Delivered d = deliver_at(r, [&] { return fs::exists(started); }, sig, what);
    ASSERT_TRUE(d.reached) << d.err;  // the probe waits 60 s: coldgate cannot end before
    EXPECT_EQ(d.code, 130) << d.err;
    EXPECT_NE(d.err.find(sig == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"),
              std::string::npos)
        << d.err;
    EXPECT_EQ(d.err.find("no runnable postgres"), std::string::npos) << d.err;
    expect_nothing_left("after the interrupted probe", "");
  }
}

// A write cut short by SIGKILL leaves `<name>.tmp-XXXXXX` (util::write_file_atomic), which no
// one holds a lock on any more; a template copy a killed run was putting into place is
// `templates/<key>.tmp-<pid>`, whose `<key>.lock` is free. Those go with the next command that
// cleans up — here `db url` and `run` — and what a live writer holds stays.
std::vector<std::string> temp_files_under(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.path().filename().string().find(".tmp-") != std::string::npos) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(DbUpFaults, TheTempFilesOfKilledWritersGoWithTheNextCommand) {
  const fs::path c = f.cache / "coldgate";
  f.dir.write("cache/coldgate/up/0123456789abcdef.state.tmp-aB3xYz", "pid=1\nurl=postgresql://u:secret@h/d\n");
  f.dir.write("cache/coldgate/server-journal/0123456789abcdef-1.json.tmp-aB3xYz", "{\"kind\"");
  f.dir.write("cache/coldgate/runs/coldgate-pg-1-xxxxxx.run.tmp-aB3xYz", "owner_pid=1\n");
  const fs::path live = f.dir.write("cache/coldgate/runs/coldgate-pg-2-xxxxxx.run.tmp-Qw3rTy", "owner_pid=2\n");
  f.dir.write("coldgate-out/explain/q.json.tmp-aB3xYz", "{");
  // A writer still at work holds its temp file's lock, as write_file_atomic does.
  int held = ::open(live.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  // The shared template folder is not ours to litter: a private one for `db url` (which starts
  // no server), the shared one again for `run`.
  const fs::path shared = fs::read_symlink(c / "templates");
  fs::remove(c / "templates");
  f.dir.write("cache/coldgate/templates/pg15-0123456789abcdef.lock", "");
  f.dir.write("cache/coldgate/templates/pg15-0123456789abcdef.tmp-4242/PG_VERSION", "15\n");
  f.dir.write("cache/coldgate/templates/pg15-fedcba9876543210.lock", "");
  f.dir.write("cache/coldgate/templates/pg15-fedcba9876543210.tmp-4343/PG_VERSION", "15\n");
  // That one is being built: its lock is held.
  int building = ::open((c / "templates/pg15-fedcba9876543210.lock").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(building, 0);
  ASSERT_EQ(::flock(building, LOCK_EX), 0);

  auto url = run_coldgate({"db", "url"}, f.dir.path(), "",
                          {"TMPDIR=" + f.tmp.string(), "XDG_CACHE_HOME=" + f.cache.string()});
  EXPECT_EQ(url.exit_code, 2) << url.err;  // none is running
  EXPECT_EQ(list(temp_files_under(f.cache)),
            list({(c / "runs/coldgate-pg-2-xxxxxx.run.tmp-Qw3rTy").string(),
                  (c / "templates/pg15-fedcba9876543210.tmp-4343").string()}));
  EXPECT_EQ(list(temp_files_under(f.dir / "coldgate-out")),
            list({(f.dir / "coldgate-out/explain/q.json.tmp-aB3xYz").string()}))
      << "--out is run's and ab's to clear";
  ::close(building);
  fs::remove_all(c / "templates");
  fs::create_directory_symlink(shared, c / "templates");
  f.dir.write("cache/coldgate/up/0123456789abcdef.state.tmp-aB3xYz", "pid=1\n");
  Running r = f.start({"run", "-c", "coldgate.yaml"});
  std::string err;
  EXPECT_EQ(r.finish(&err), 0) << err;
  EXPECT_EQ(list(temp_files_under(f.cache)), list({live.string()}));
  EXPECT_EQ(list(temp_files_under(f.dir / "coldgate-out")), " none");
  ::close(held);
}

}  // namespace
}  // namespace coldgate
