#include "util/process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "support/faults.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::util {
namespace {

using namespace std::chrono_literals;
using coldgate::testing::TempDir;

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

TEST(Process, CapturesOutputAndExitStatus) {
  auto r = run({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
  EXPECT_EQ(r.status.exit_code, 3);
  EXPECT_EQ(r.status.signal, 0);
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.status.describe(), "exit status 3");
}

TEST(Process, ReportsRusage) {
  // Touch 64 MiB so peak RSS is clearly above the shell's own.
  auto r = run({.argv = {"python3", "-c", "b = bytearray(64 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1"}});
  ASSERT_TRUE(r.status.ok()) << r.err;
  EXPECT_GT(r.status.peak_rss_bytes, 64ll << 20);
  EXPECT_GT(r.status.user_ms + r.status.sys_ms, 0.0);
  EXPECT_GE(r.status.wall_ms, r.status.user_ms * 0.5);
}

TEST(Process, EnvironmentIsAddedAndUnset) {
  ::setenv("COLDGATE_TEST_GONE", "x", 1);
  auto r = run({.argv = {"sh", "-c", "echo \"$A|${COLDGATE_TEST_GONE:-unset}\""},
                .env = {"A=1=2"},
                .env_unset = {"COLDGATE_TEST_GONE"}});
  EXPECT_EQ(r.out, "1=2|unset\n");
}

TEST(Process, WorkingFolderAndStdinFile) {
  TempDir dir;
  auto in = dir.write("in.txt", "hello\n");
  auto r = run({.argv = {"sh", "-c", "pwd; cat"}, .cwd = dir.path(), .stdin_path = in});
  EXPECT_EQ(r.out, dir.path().string() + "\nhello\n");
}

TEST(Process, MissingProgramIsAnInfrastructureError) {
  try {
    Process p({.argv = {"coldgate-no-such-program"}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_EQ(e.message(), "coldgate-no-such-program: command not found in PATH");
  }
}

TEST(Process, BadWorkingFolderIsReportedFromTheChild) {
  try {
    run({.argv = {"true"}, .cwd = "/nonexistent/folder"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "true: cannot start (working folder /nonexistent/folder): No such file or directory");
  }
}

TEST(Process, TimeoutKillsTheWholeGroupIncludingADaemonIgnoringSigterm) {
  TempDir dir;
  auto pidfile = dir / "daemon.pid";
  // The child starts a grandchild that ignores SIGTERM, then waits forever.
  Process child({.argv = {"sh", "-c",
                          "sh -c 'trap \"\" TERM; echo $$ > " + pidfile.string() +
                              ".tmp; mv " + pidfile.string() + ".tmp " + pidfile.string() +
                              "; while :; do sleep 1; done' & wait"}});
  // The timeout starts once the grandchild exists (its PID written whole), however slow the
  // machine: a survivor would loop forever, so the bound only ends a failing test.
  for (int i = 0; i < 3000 && !std::filesystem::exists(pidfile); ++i) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(std::filesystem::exists(pidfile)) << "the grandchild never started";
  pid_t daemon = std::stoi(coldgate::testing::slurp(pidfile));
  ExitStatus r = child.wait(300ms);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.describe(), "timed out after 300 ms");
  // Killed, it is gone once the kernel has reaped it: wait for that (a survivor loops forever,
  // so the bound only ends a failing test; it says nothing about how fast reaping is).
  for (int i = 0; i < 3000 && alive(daemon); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(alive(daemon)) << "grandchild " << daemon << " outlived the timeout";
}

TEST(Process, KillEscapedKillsADaemonInItsOwnSessionAndSparesOtherChildren) {
  TempDir dir;
  auto pidfile = dir / "daemon.pid";
  Process server({.argv = {"sleep", "30"}});  // a child of ours that must survive the sweep
  // setsid: a session and process group of its own, so the group kill cannot reach it; it
  // ignores SIGTERM; the child exits as soon as the daemon has written its PID.
  auto r = run({.argv = {"sh", "-c",
                         "setsid sh -c 'trap \"\" TERM; echo $$ > " + pidfile.string() +
                             "; exec sleep 300' </dev/null >/dev/null 2>&1 & "
                             "while [ ! -s " + pidfile.string() + " ]; do sleep 0.01; done"},
                .kill_escaped = true});
  EXPECT_TRUE(r.status.ok()) << r.status.describe();
  pid_t daemon = std::stoi(coldgate::testing::slurp(pidfile));
  EXPECT_FALSE(alive(daemon)) << "daemon " << daemon << " outlived its parent's Process";
  EXPECT_TRUE(alive(server.pid()));
}

TEST(Process, KilledBySignalIsReported) {
  auto r = run({.argv = {"sh", "-c", "kill -SEGV $$"}});
  EXPECT_EQ(r.status.signal, SIGSEGV);
  EXPECT_EQ(r.status.describe(), "killed by SIGSEGV");
}

TEST(Process, DestructorKillsAndReapsAForgottenChild) {
  pid_t pid;
  {
    Process p({.argv = {"sleep", "30"}});
    pid = p.pid();
    EXPECT_TRUE(alive(pid));
  }
  EXPECT_FALSE(alive(pid));
}

TEST(Process, CaptureIsBounded) {
  auto r = run({.argv = {"sh", "-c", "head -c 1000000 /dev/zero"}, .max_capture_bytes = 1000});
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.out.size(), 1000u);
}

// What the next command does for a SIGKILLed one: the groups its children were recorded in are
// killed — the leader, and members its leader left behind — and a record whose PID now names
// another process (its start time differs) is not.
TEST(RecordedChildren, TheirGroupsAreKilledAndTheRecordsGoWhenReaped) {
  TempDir dir;
  const std::filesystem::path records = dir / "children";
  const std::filesystem::path before = record_children_in(records);
  Process leader({.argv = {"sleep", "60"}});
  Process reaped({.argv = {"true"}});
  EXPECT_TRUE(reaped.wait().ok());
  record_children_in(before);
  EXPECT_TRUE(std::filesystem::exists(records / std::to_string(leader.pid())));
  EXPECT_FALSE(std::filesystem::exists(records / std::to_string(reaped.pid())));
  // A group whose leader has exited, its member left running, as a killed owner recorded it.
  // The leader waits until its start time is read (`release` closed): one that had exited by
  // then would be recorded as no process at all.
  int pipe_fds[2];
  int release[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_EQ(::pipe(release), 0);
  pid_t group = ::fork();
  if (group == 0) {
    ::setpgid(0, 0);
    ::close(release[1]);
    pid_t member = ::fork();
    if (member == 0) {
      ::execlp("sleep", "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    [[maybe_unused]] ssize_t n = ::write(pipe_fds[1], &member, sizeof member);
    char byte = 0;
    [[maybe_unused]] ssize_t r = ::read(release[0], &byte, 1);  // 0 once the parent closes it
    ::_exit(0);
  }
  ::close(release[0]);
  pid_t member = 0;
  ASSERT_EQ(::read(pipe_fds[0], &member, sizeof member), static_cast<ssize_t>(sizeof member));
  const long long group_start = process_start_time(group);
  ASSERT_GT(group_start, 0);
  ::close(release[1]);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ::waitpid(group, nullptr, 0);
  ASSERT_GT(process_start_time(member), 0);
  { std::ofstream(records / std::to_string(group)) << "start=" << group_start << "\n"; }
  // This very process, recorded with a start time it does not have: a reused PID.
  { std::ofstream(records / std::to_string(::getpid())) << "start=1\n"; }

  EXPECT_EQ(kill_recorded_groups(records), 2);
  EXPECT_EQ(leader.wait().signal, SIGKILL);
  EXPECT_EQ(process_start_time(member), -1) << "the leaderless group's member lives";
  EXPECT_TRUE(std::filesystem::is_empty(records));
}

// What no record names is found by the variable every recorded child inherits: a child whose
// record a SIGKILL of ours came before (here: its record removed), and a daemon that left its
// group with setsid. Both die; a process that does not carry the folder's tag is left alone.
TEST(RecordedChildren, WhatNoRecordNamesIsKilledByItsInheritedTag) {
  TempDir dir;
  const std::filesystem::path records = dir / "children";
  const std::string pidfile = (dir / "daemon.pid").string();
  const std::filesystem::path before = record_children_in(records);
  Process unrecorded({.argv = {"sleep", "60"}});
  // It waits for the daemon's PID file: its end kills its group, which the daemon leaves only
  // at setsid.
  Process starter({.argv = {"sh", "-c", "setsid sh -c 'echo $$ > " + pidfile + ".new && mv " +
                                            pidfile + ".new " + pidfile + " && exec sleep 60' & " +
                                            "until [ -e " + pidfile + " ]; do sleep 0.01; done"}});
  EXPECT_TRUE(starter.wait().ok());  // its record goes when it is reaped
  record_children_in(before);
  Process untagged({.argv = {"sleep", "60"}});
  pid_t daemon = 0;
  ASSERT_TRUE(bool(std::ifstream(pidfile) >> daemon)) << "the daemon never wrote its PID";
  ASSERT_EQ(::getsid(daemon), daemon) << "not a session of its own";
  std::filesystem::remove(records / std::to_string(unrecorded.pid()));
  ASSERT_TRUE(std::filesystem::is_empty(records));

  EXPECT_EQ(kill_recorded_groups(records), 2);
  EXPECT_EQ(unrecorded.wait().signal, SIGKILL);
  EXPECT_TRUE(testing::wait_for([&] { return process_start_time(daemon) < 0; }, 60s))
      << "the setsid daemon lives";
  EXPECT_GT(process_start_time(untagged.pid()), 0) << "a process without the tag was killed";
}

// /proc/<pid>/stat puts the command name in parentheses, and a name may hold ") (" and
// spaces itself: the fields after it are read from the last ')'.
TEST(RecordedChildren, ACommandWhoseNameHoldsParenthesesIsReadAndKilled) {
  TempDir dir;
  const std::filesystem::path odd = dir / "z) S 1 (2";
  std::filesystem::copy_file(find_program("sleep").value(), odd);
  std::filesystem::permissions(odd, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  const std::filesystem::path records = dir / "children";
  const std::filesystem::path before = record_children_in(records);
  Process child({.argv = {odd.string(), "60"}});
  record_children_in(before);
  std::ifstream stat("/proc/" + std::to_string(child.pid()) + "/stat");
  std::string line;
  ASSERT_TRUE(bool(std::getline(stat, line)));
  ASSERT_NE(line.find("(z) S 1 (2)"), std::string::npos) << line;
  // proc(5): starttime is field 22, the 20th after the name's closing parenthesis.
  std::istringstream after(line.substr(line.rfind(')') + 2));
  std::vector<std::string> fields{std::istream_iterator<std::string>(after), {}};
  ASSERT_GE(fields.size(), 20u) << line;
  EXPECT_EQ(process_start_time(child.pid()), std::stoll(fields[19])) << line;
  EXPECT_EQ(kill_recorded_groups(records), 1);
  EXPECT_EQ(child.wait().signal, SIGKILL);
}

TEST(TailLines, KeepsTheLastLines) {
  EXPECT_EQ(tail_lines("a\nb\nc\nd\n", 2), "c\nd");
  EXPECT_EQ(tail_lines("a\nb", 5), "a\nb");
  EXPECT_EQ(tail_lines("", 3), "");
  EXPECT_EQ(tail_lines("only\n", 1), "only");
}

TEST(FindProgram, SearchesPath) {
  EXPECT_TRUE(find_program("sh").has_value());
  EXPECT_FALSE(find_program("coldgate-no-such-program").has_value());
  EXPECT_EQ(find_program("/bin/sh"), std::filesystem::path("/bin/sh"));
}

}  // namespace
}  // namespace coldgate::util
