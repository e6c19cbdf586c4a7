// SpawnOptions::own_peak_rss: a measured child started through coldgate-exec reports its own
// peak RSS, not the parent's, and otherwise behaves as a child started directly (exit codes,
// signals, output, exec failures, timeouts).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "support/faults.hpp"
#include "support/support.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::util {
namespace {

using namespace std::chrono_literals;
using coldgate::testing::TempDir;

constexpr std::int64_t k_mib = 1 << 20;

// Makes this process's peak RSS at least `bytes` higher than before: maps, touches and unmaps
// them (the high-water mark stays).
void grow_peak_by(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                   -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* bytes_p = static_cast<volatile char*>(p);
  for (std::size_t i = 0; i < bytes; i += 4096) bytes_p[i] = 1;
  ::munmap(p, bytes);
}

SpawnOptions measured(std::vector<std::string> argv) {
  return {.argv = std::move(argv), .own_peak_rss = true};
}

TEST(OwnPeakRss, AChildAfterTheParentGrewReadsItsOwnPeak) {
  grow_peak_by(600 * k_mib);
  // The fault: started directly, `python3 -c pass` reads this process's 600 MB peak.
  auto direct = run({.argv = {"/usr/bin/python3", "-c", "pass"}});
  ASSERT_TRUE(direct.status.ok()) << direct.err;
  EXPECT_GT(direct.status.peak_rss_bytes, 600 * k_mib)
      << "the kernel no longer carries a parent's peak into a spawned child; own_peak_rss may go";
  auto own = run(measured({"/usr/bin/python3", "-c", "pass"}));
  ASSERT_TRUE(own.status.ok()) << own.err;
  EXPECT_GT(own.status.peak_rss_bytes, 1 * k_mib);
  EXPECT_LT(own.status.peak_rss_bytes, 100 * k_mib);
  EXPECT_GT(own.status.user_ms + own.status.sys_ms, 0.0);
}

TEST(OwnPeakRss, ThePeakIsTheProcessTrees) {
  // A child of the program, reaped by it, counts: its 200 MB is the stage's peak.
  auto r = run(measured({"sh", "-c",
                         "python3 -c 'b = bytearray(200 << 20)\nfor i in range(0, len(b), 4096): "
                         "b[i] = 1'; true"}));
  ASSERT_TRUE(r.status.ok()) << r.err;
  EXPECT_GT(r.status.peak_rss_bytes, 200 * k_mib);
  EXPECT_LT(r.status.peak_rss_bytes, 400 * k_mib);
}

TEST(OwnPeakRss, ExitCodesSignalsAndOutputPassThrough) {
  auto exited = run(measured({"sh", "-c", "echo out; echo err >&2; echo \"$A\"; exit 7"}));
  EXPECT_EQ(exited.status.exit_code, 7);
  EXPECT_EQ(exited.status.signal, 0);
  EXPECT_EQ(exited.out, "out\n\n");
  EXPECT_EQ(exited.err, "err\n");
  SpawnOptions with_env = measured({"sh", "-c", "echo \"$A\"; pwd"});
  TempDir dir;
  with_env.env = {"A=1"};
  with_env.cwd = dir.path();
  auto env = run(with_env);
  EXPECT_EQ(env.out, "1\n" + dir.path().string() + "\n");
  auto killed = run(measured({"sh", "-c", "kill -SEGV $$"}));
  EXPECT_EQ(killed.status.signal, SIGSEGV);
  EXPECT_EQ(killed.status.exit_code, -1);
  EXPECT_EQ(killed.status.describe(), "killed by SIGSEGV");
  EXPECT_GT(killed.status.peak_rss_bytes, 0);
}

TEST(OwnPeakRss, AProgramThatCannotBeExecutedIsTheSameErrorAsWithout) {
  TempDir dir;
  auto not_a_program = dir.write("garbage", "\x01\x02 not a program\n");
  std::filesystem::permissions(not_a_program, std::filesystem::perms::owner_all);
  auto message = [&](bool own) {
    try {
      run({.argv = {not_a_program.string()}, .own_peak_rss = own});
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::infrastructure);
      return e.message();
    }
    return std::string("started");
  };
  const std::string direct = message(false);
  EXPECT_NE(direct.find("cannot start (exec): Exec format error"), std::string::npos) << direct;
  EXPECT_EQ(message(true), direct);
  EXPECT_THROW(run(measured({"/no/such/program"})), Error);
}

TEST(OwnPeakRss, ATimeoutEndsTheProgramAndColdgateExec) {
  util::Process p(measured({"sh", "-c", "exec sleep 30"}));
  const pid_t helper = p.pid();
  // The program is coldgate-exec's child, in the same process group.
  ASSERT_TRUE(testing::wait_for([&] { return !testing::children_of(helper).empty(); }, 10s));
  const pid_t program = testing::children_of(helper).front();
  EXPECT_EQ(::getpgid(program), helper);
  auto status = p.wait(200ms);
  EXPECT_TRUE(status.timed_out);
  EXPECT_EQ(status.signal, SIGTERM);  // the program's: coldgate-exec ignores it and says so
  EXPECT_NE(::kill(program, 0), 0);
  EXPECT_NE(::kill(helper, 0), 0);
}

}  // namespace
}  // namespace coldgate::util
