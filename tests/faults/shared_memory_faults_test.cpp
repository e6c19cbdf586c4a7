// A local server ended by SIGKILL leaves its dynamic shared memory segments in /dev/shm
// (`/dev/shm/PostgreSQL.<handle>`, dynamic_shared_memory_type=posix): only a postmaster that
// shuts down removes them. Here, on the real binary with a real PostgreSQL: a `coldgate db up`
// SIGKILLed once its server is up (the next command ends the orphaned server with the killed
// run's process group, SIGKILL), and a server SIGKILLed under a waiting `db up`. The segments
// its postmaster mapped, read from /proc/<postmaster>/maps before the kill, must be gone once
// the next command (or the `db up` itself, stopped with Ctrl-C) has run; a clean stop leaves
// none either. And those its other processes made later (the statistics', a parallel query's),
// read from the maps of all of them just before the kill, once coldgate alone or its whole
// process group was SIGKILLed with the server up.
//
// Each signal is sent the moment the test sees its state (the URL printed, the postmaster a
// zombie, a backend running its statement), never after a delay.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/faults.hpp"
#include "support/support.hpp"
#include "util/process.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

// The `/dev/shm/PostgreSQL.<digits>` files `pid` maps (its /proc/<pid>/maps), sorted.
std::vector<std::string> segments_mapped_by(pid_t pid) {
  std::set<std::string> out;
  std::ifstream in(proc(pid, "maps"));
  const std::string prefix = " /dev/shm/PostgreSQL.";
  for (std::string line; std::getline(in, line);) {
    auto at = line.find(prefix);
    if (at == std::string::npos) continue;
    std::string digits = line.substr(at + prefix.size());
    if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos) {
      out.insert(line.substr(at + 1));
    }
  }
  return {out.begin(), out.end()};
}

// Those of `paths` that still exist.
std::vector<std::string> existing(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& p : paths) {
    if (fs::exists(p, ec)) out.push_back(p);
  }
  return out;
}

// For a failure's message: each of `paths` still there, with the processes that map it now
// ("PID (command line)") or "mapped by none".
std::string who_maps(const std::vector<std::string>& paths) {
  std::string out;
  for (const auto& p : existing(paths)) {
    std::string mappers;
    for (pid_t pid : all_pids()) {
      if (read_all(proc(pid, "maps")).find(" " + p + "\n") != std::string::npos) {
        mappers += fmt::format(" {} ({})", pid, joined(argv_of(pid)));
      }
    }
    out += "\n  " + p + ": mapped by" + (mappers.empty() ? std::string(" none") : mappers);
  }
  return out;
}

struct SharedMemoryFaults : ::testing::Test {
  void SetUp() override {
    f.dir.write("coldgate.yaml",
                "version: 1\ndatabase: { provider: local }\n"
                "stages: [ { name: q, query: 'select 1' } ]\n");
  }

  // The URL `db up` printed (its first stdout line), or "".
  static std::string url_of(const Running& r) {
    std::string out = read_all(r.out);
    auto nl = out.find('\n');
    return nl == std::string::npos ? "" : out.substr(0, nl);
  }

  // Starts `db up` and waits until it printed its URL and waits; its postmaster's PID in `*pm`
  // and the segments that postmaster maps now in `*segments`.
  Running up(pid_t* pm, std::vector<std::string>* segments) {
    Running r = f.start({"db", "up"});
    bool is_up = wait_for(
        [&] {
          return (!url_of(r).empty() && r.said("press Ctrl-C")) || r.process->wait_exited(0ms);
        },
        120s);
    EXPECT_TRUE(is_up && !r.process->wait_exited(0ms)) << read_all(r.err);
    *pm = server_of(r.process->pid());
    EXPECT_GT(*pm, 0) << "no postmaster under the waiting db up";
    *segments = *pm > 0 ? segments_mapped_by(*pm) : std::vector<std::string>{};
    // The postmaster maps its control segment from its start, before it accepts connections.
    EXPECT_FALSE(segments->empty()) << "postmaster " << *pm << " maps no /dev/shm/PostgreSQL.*";
    std::cout << "[ shm      ] postmaster " << *pm << " maps" << list(*segments) << std::endl;
    // coldgate recorded them when the server became ready (its registry marker): what it
    // removes after a kill is what it recorded, so one missing here would be left.
    const std::string recorded = recorded_segments();
    for (const auto& path : *segments) {
      const std::string name = fs::path(path).filename().string();
      EXPECT_NE((" " + recorded + " ").find(" " + name + " "), std::string::npos)
          << name << " is not in the marker's shm_segments=" << recorded;
    }
    return r;
  }

  // The shm_segments= line of the one registry marker (`cache/coldgate/runs/*.run`), or "".
  std::string recorded_segments() const {
    std::vector<std::string> lines;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(f.cache / "coldgate/runs", ec)) {
      if (e.path().extension() != ".run") continue;
      std::istringstream in(read_all(e.path()));
      for (std::string line; std::getline(in, line);) {
        if (line.rfind("shm_segments=", 0) == 0) lines.push_back(line.substr(13));
      }
    }
    EXPECT_EQ(lines.size(), 1u) << "registry markers with shm_segments=:" << list(lines);
    return lines.empty() ? "" : lines.front();
  }

  // SIGKILLs the waiting `r`: its server, with nobody left to stop it, stays up.
  static void kill_up(Running& r) {
    ASSERT_EQ(::kill(r.process->pid(), SIGKILL), 0);
    std::string err;
    EXPECT_EQ(r.finish(&err), 128 + SIGKILL) << err;
  }

  // Ctrl-C to the waiting `r`: exit 0, the server stopped; returns what it said.
  static std::string stop_up(Running& r) {
    std::string err;
    EXPECT_EQ(::kill(r.process->pid(), SIGINT), 0);
    EXPECT_EQ(r.finish(&err), 0) << err;
    EXPECT_NE(err.find("coldgate: database stopped"), std::string::npos) << err;
    return err;
  }

  // SIGKILLs the postmaster `pm` under a waiting `db up` and waits until it is dead and not
  // reaped yet: a zombie of `db up` (process_start_time says -1 for zombies).
  static void kill_postmaster(pid_t pm) {
    ASSERT_EQ(::kill(pm, SIGKILL), 0);
    ASSERT_TRUE(wait_for([&] { return util::process_start_time(pm) == -1; }, 600s));
  }

  // Every /dev/shm/PostgreSQL.* a process of the server of postmaster `pm` maps now: the
  // postmaster's control segment and what its children map (background processes, backends,
  // parallel workers), the segments made since the marker recorded the postmaster's among them.
  static std::vector<std::string> server_segments(pid_t pm) {
    std::set<std::string> out;
    for (pid_t p : children_of(pm)) {
      for (auto& s : segments_mapped_by(p)) out.insert(std::move(s));
    }
    for (auto& s : segments_mapped_by(pm)) out.insert(std::move(s));
    return {out.begin(), out.end()};
  }

  // A psql on `url` (not coldgate's: no clean-up ends it) whose statement holds a parallel
  // query's segment, made by its backend after the marker was written; returned once a process
  // of the server of `pm` maps a segment that `before` does not hold.
  static std::unique_ptr<util::Process> parallel_query(const std::string& url, pid_t pm,
                                                       const std::vector<std::string>& before) {
    util::SpawnOptions o;
    o.argv = {"psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url,
              "-c", "create table held as select g from generate_series(1, 10000) g",
              "-c", "create function hold() returns int language plpgsql parallel safe as "
                    "$$ begin perform pg_sleep(600); return 1; end $$",
              "-c", "set max_parallel_workers_per_gather = 2; set parallel_setup_cost = 0; "
                    "set parallel_tuple_cost = 0; set min_parallel_table_scan_size = 0; "
                    "select count(*) from held where hold() = 1"};
    auto client = std::make_unique<util::Process>(o);
    std::vector<std::string> now;
    const bool made = wait_for(
        [&] {
          now = server_segments(pm);
          for (const auto& s : now) {
            if (std::find(before.begin(), before.end(), s) == before.end()) return true;
          }
          return client->wait_exited(0ms);
        },
        120s);
    EXPECT_TRUE(made && !client->wait_exited(0ms))
        << "no new segment of the parallel query; the server's:" << list(now);
    return client;
  }

  // A `db up` SIGKILLed (alone, or with its whole process group) while its server runs a
  // parallel query of a client of its own; then `next`, which must end what it left. Every
  // segment the killed server's processes mapped just before the kill must be gone after it.
  void killed_with_later_segments(bool whole_group, const std::vector<std::string>& next) {
    pid_t pm = 0;
    std::vector<std::string> recorded;
    Running first = up(&pm, &recorded);
    ASSERT_FALSE(HasFailure());
    auto client = parallel_query(url_of(first), pm, server_segments(pm));
    ASSERT_FALSE(HasFailure());
    const std::vector<std::string> killed = server_segments(pm);
    std::cout << "[ shm      ] the server's processes map" << list(killed) << std::endl;
    ASSERT_EQ(::kill(whole_group ? -first.process->pid() : first.process->pid(), SIGKILL), 0);
    std::string err;
    EXPECT_EQ(first.finish(&err), 128 + SIGKILL) << err;
    EXPECT_GT(util::process_start_time(pm), 0) << "the killed db up's server went with it";

    Running r = f.start(next);
    EXPECT_EQ(r.finish(&err), 0) << err;
    EXPECT_EQ(util::process_start_time(pm), -1) << "the killed db up's server still runs";
    EXPECT_EQ(list(existing(killed)), " none")
        << "the SIGKILLed server's segments, after " << joined(next) << ":" << who_maps(killed)
        << "\nit said:\n" << err;
    client->signal_group(SIGKILL);
    client->wait();
    f.expect_nothing_left("after " + joined(next));
  }

  FaultFolder f;
};

// The next `db up` ends what the killed one left (its process group: SIGKILL, then the
// registry's marker) before its own server starts: the killed server's segments are gone once
// it is up. Its own, after Ctrl-C, are gone too.
TEST_F(SharedMemoryFaults, SigkilledDbUpsSegmentsGoWithTheNextDbUp) {
  pid_t pm = 0;
  std::vector<std::string> killed;
  Running first = up(&pm, &killed);
  ASSERT_FALSE(HasFailure());
  kill_up(first);

  pid_t pm2 = 0;
  std::vector<std::string> clean;
  Running second = up(&pm2, &clean);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(util::process_start_time(pm), -1) << "the killed db up's server still runs";
  EXPECT_EQ(list(existing(killed)), " none")
      << "the SIGKILLed server's segments, after the next db up started:" << who_maps(killed)
      << "\nthe next db up said:\n" << read_all(second.err);
  stop_up(second);
  EXPECT_EQ(list(existing(clean)), " none") << "a db up stopped with Ctrl-C";
  f.expect_nothing_left("after the next db up");
}

// `db down` after a SIGKILLed `db up` ends what it left running: its server's segments too.
TEST_F(SharedMemoryFaults, SigkilledDbUpsSegmentsGoWithDbDown) {
  pid_t pm = 0;
  std::vector<std::string> killed;
  Running r = up(&pm, &killed);
  ASSERT_FALSE(HasFailure());
  kill_up(r);

  auto down = run_coldgate({"db", "down"}, f.dir.path(), "",
                           {"TMPDIR=" + f.tmp.string(), "XDG_CACHE_HOME=" + f.cache.string()});
  EXPECT_EQ(down.exit_code, 0) << down.err;
  EXPECT_NE(down.err.find("had ended without stopping (killed?)"), std::string::npos) << down.err;
  EXPECT_EQ(util::process_start_time(pm), -1) << "the killed db up's server still runs";
  EXPECT_EQ(list(existing(killed)), " none") << "the SIGKILLed server's segments, after db down";
  f.expect_nothing_left("after db down");
}

// The postmaster SIGKILLed from outside while `db up` waits (its backends follow it): Ctrl-C to
// `db up` reaps it, killed, and removes what it left in /dev/shm.
TEST_F(SharedMemoryFaults, KilledServersSegmentsGoWhenDbUpStops) {
  pid_t pm = 0;
  std::vector<std::string> segments;
  Running r = up(&pm, &segments);
  ASSERT_FALSE(HasFailure());
  kill_postmaster(pm);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(list(existing(segments)), list(segments)) << "a killed postmaster removes nothing";
  const std::string err = stop_up(r);
  EXPECT_EQ(list(existing(segments)), " none")
      << "the killed server's segments, after Ctrl-C:" << who_maps(segments) << "\ndb up said:\n" << err;
  f.expect_nothing_left("after Ctrl-C");
}

// A killed server's segment that a process other than the server's still maps (here this
// test's) cannot go: `db up` keeps it and says so on Ctrl-C, naming who maps it, instead of
// saying nothing of what it leaves in /dev/shm.
TEST_F(SharedMemoryFaults, ASegmentAnotherProcessMapsIsKeptAndNamed) {
  pid_t pm = 0;
  std::vector<std::string> segments;
  Running r = up(&pm, &segments);
  ASSERT_FALSE(HasFailure());
  const std::string held = segments.front();
  const int fd = ::open(held.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << held;
  void* map = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED) << held;
  kill_postmaster(pm);
  ASSERT_FALSE(HasFailure());
  const std::string err = stop_up(r);
  EXPECT_EQ(list(existing({held})), list({held})) << "a segment this test maps was removed";
  EXPECT_NE(err.find(fmt::format("coldgate: warning: could not remove {} (mapped by {} (", held,
                                 ::getpid())),
            std::string::npos)
      << err;
  std::vector<std::string> others;
  for (const auto& s : segments) {
    if (s != held) others.push_back(s);
  }
  EXPECT_EQ(list(existing(others)), " none") << "the killed server's other segments:" << who_maps(others);
  ::munmap(map, 4096);
  ::unlink(held.c_str());
  f.expect_nothing_left("after Ctrl-C");
}

// The same with a backend that cannot notice its postmaster's death (stopped, as a backend on a
// machine too busy to be scheduled): it still maps the segments when `db up` cleans up, and no
// wait for it to exit would be long enough for certain. Ctrl-C to `db up` ends it and removes
// them, with the segments only the backends map (made after the postmaster's start).
TEST_F(SharedMemoryFaults, AKilledServersStoppedBackendDoesNotKeepItsSegments) {
  pid_t pm = 0;
  std::vector<std::string> segments;
  Running r = up(&pm, &segments);
  ASSERT_FALSE(HasFailure());
  util::SpawnOptions o;
  o.argv = {"psql", "-X", "-q", url_of(r), "-c", "select pg_sleep(600)"};
  util::Process client(o);
  // Its backend, once it runs the statement (PostgreSQL's ps display ends with the command).
  pid_t backend = 0;
  ASSERT_TRUE(wait_for(
      [&] {
        for (pid_t c : children_of(pm)) {
          if (joined(argv_of(c)).find(" SELECT") != std::string::npos) backend = c;
        }
        return backend > 0 || client.wait_exited(0ms);
      },
      600s))
      << "no backend of postmaster " << pm << " ran the statement";
  ASSERT_GT(backend, 0) << "psql ended first";
  ASSERT_EQ(::kill(backend, SIGSTOP), 0);
  kill_postmaster(pm);
  ASSERT_FALSE(HasFailure());
  // The backend maps the postmaster's control segment and those made since (the statistics').
  const std::vector<std::string> mapped = segments_mapped_by(backend);
  for (const auto& name : segments) {
    EXPECT_NE(std::find(mapped.begin(), mapped.end(), name), mapped.end()) << name << " not in" << list(mapped);
  }
  std::cout << "[ shm      ] the stopped backend " << backend << " maps" << list(mapped) << std::endl;
  const std::string err = stop_up(r);
  EXPECT_EQ(util::process_start_time(backend), -1) << "the killed server's backend " << backend << " still runs";
  EXPECT_EQ(list(existing(mapped)), " none")
      << "the killed server's segments, after Ctrl-C:" << who_maps(mapped) << "\ndb up said:\n" << err;
  client.signal_group(SIGKILL);
  f.expect_nothing_left("after Ctrl-C");
}

// Only coldgate SIGKILLed, its server left up with a parallel query running: `db down` ends the
// server and removes every segment its processes had, not only the postmaster's control segment
// the marker recorded (the statistics' 1 MiB segment, the parallel query's).
TEST_F(SharedMemoryFaults, SigkilledDbUpsLaterSegmentsGoWithTheNextCommand) {
  killed_with_later_segments(false, {"db", "down"});
}

// The same with coldgate's whole process group SIGKILLed (a CI job cancelled), and `run` next.
TEST_F(SharedMemoryFaults, GroupKilledDbUpsLaterSegmentsGoWithTheNextRun) {
  killed_with_later_segments(true, {"run"});
}

// coldgate SIGKILLed while its server starts, before the marker records the server's segments
// (it does once the server accepts connections): the next `run` reads them from the server's
// processes before it ends them, and removes them. coldgate is held (SIGSTOP) from the moment
// its postmaster runs, so that it cannot record them first, until the server is ready.
TEST_F(SharedMemoryFaults, SegmentsOfAServerNotYetRecordedGoWithTheNextRun) {
  Running first = f.start({"db", "up"});
  ASSERT_TRUE(wait_for(
      [&] { return f.postmaster_starting(first) || first.process->wait_exited(0ms); }, 120s));
  ASSERT_EQ(::kill(first.process->pid(), SIGSTOP), 0) << read_all(first.err);
  ASSERT_EQ(recorded_segments(), "") << "coldgate recorded the segments before it was held";
  const pid_t pm = server_of(first.process->pid());
  ASSERT_GT(pm, 0) << "no postmaster under the held db up";
  // Until it accepts connections (postmaster.pid's status line): all its start made is there.
  const fs::path pid_file = fs::path(option_of(pm, "-D")) / "postmaster.pid";
  ASSERT_TRUE(wait_for(
      [&] { return read_all(pid_file).find("\nready") != std::string::npos; }, 120s))
      << pid_file << ":\n" << read_all(pid_file);
  const std::vector<std::string> killed = server_segments(pm);
  std::cout << "[ shm      ] the server's processes map" << list(killed) << std::endl;
  ASSERT_EQ(::kill(first.process->pid(), SIGKILL), 0);
  std::string err;
  EXPECT_EQ(first.finish(&err), 128 + SIGKILL) << err;

  Running r = f.start({"run"});
  EXPECT_EQ(r.finish(&err), 0) << err;
  EXPECT_EQ(util::process_start_time(pm), -1) << "the killed db up's server still runs";
  EXPECT_EQ(list(existing(killed)), " none")
      << "the SIGKILLed server's segments, after run:" << who_maps(killed) << "\nit said:\n" << err;
  f.expect_nothing_left("after run");
}

// The same once the server was restarted (`cold: restart`): coldgate SIGKILLed while cold run
// 2's command waits against the server it was restarted into, whose segments (read from all its
// processes) the next `run` removes. Each cold run's command says it waits and takes `go`.
TEST_F(SharedMemoryFaults, SigkilledRunsRestartedServersSegmentsGoWithTheNextRun) {
  f.dir.write("restart.yaml",
              "version: 1\ndatabase: { provider: local }\ndefaults: { runs: 2, warm: 0 }\n"
              "stages: [ { name: bounce, cold: restart, command: [sh, -c, "
              "'touch bounce.waiting; while [ ! -e go ] && kill -0 $PPID; "
              "do sleep 0.01; done; rm -f go bounce.waiting'] } ]\n");
  Running first = f.start({"run", "-c", "restart.yaml"});
  pid_t before = 0, pm = 0;
  ASSERT_TRUE(wait_for(
      [&] {
        const pid_t now = server_of(first.process->pid());
        if (before == 0) {
          if (now == 0 || !fs::exists(f.dir / "bounce.waiting")) return false;
          before = now;
          f.dir.write("go", "");
          return false;
        }
        pm = now;
        return (now != before && now != 0 && fs::exists(f.dir / "bounce.waiting") &&
                !fs::exists(f.dir / "go")) ||
               first.process->wait_exited(0ms);
      },
      300s));
  ASSERT_FALSE(first.process->wait_exited(0ms)) << read_all(first.err);
  ASSERT_NE(pm, before);
  const std::vector<std::string> killed = server_segments(pm);
  std::cout << "[ shm      ] the restarted server's processes map" << list(killed) << std::endl;
  ASSERT_FALSE(killed.empty());
  ASSERT_EQ(::kill(first.process->pid(), SIGKILL), 0);
  std::string err;
  EXPECT_EQ(first.finish(&err), 128 + SIGKILL) << err;

  Running r = f.start({"run"});
  EXPECT_EQ(r.finish(&err), 0) << err;
  EXPECT_EQ(util::process_start_time(pm), -1) << "the killed run's server still runs";
  EXPECT_EQ(list(existing(killed)), " none")
      << "the SIGKILLed server's segments, after run:" << who_maps(killed) << "\nit said:\n" << err;
  f.expect_nothing_left("after run");
}

}  // namespace
}  // namespace coldgate
