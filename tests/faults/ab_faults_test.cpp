// Signals delivered to the real `coldgate ab` (local provider) while it builds and while it
// measures each side: SIGINT and SIGTERM end it at once with exit 130 and nothing left; after a
// SIGKILL the next `coldgate ab` in the same repository leaves nothing either — no process
// under the test folder (the killed run's build or stage command included), an empty TMPDIR,
// no worktree but the checkout, no <out>/ab/* worktree folder, no temp file under --out (a cache
// entry is whole JSON or absent), the checkout's HEAD, index and working tree as they were.
//
// The repository has two commits, base and head, with one config: a `build:` command and a
// command stage that touch a marker per side (marks/build-<side>, marks/measure-<side>) and sleep
// when $FAULT_SLOW names that phase, so each phase is reached for certain; the signal is sent
// the moment the phase's marker is seen, while its command waits. Each test's coldgate has a
// private TMPDIR and XDG_CACHE_HOME inside the test folder.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "results/json.hpp"
#include "support/faults.hpp"
#include "support/support.hpp"
#include "util/fs.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

enum class Phase { build_head, build_base, measure_base, measure_head };

const char* name(Phase p) {
  switch (p) {
    case Phase::build_head: return "build-head";
    case Phase::build_base: return "build-base";
    case Phase::measure_base: return "measure-base";
    case Phase::measure_head: return "measure-head";
  }
  return "?";
}

struct AbFaultTest : ::testing::Test {
  void SetUp() override {
    make_server_tmpdir(dir, tmp);  // the server account reaches its cluster folder under tmp/
    fs::create_directories(marks);
    dir.write("repo/coldgate.yaml",
              "version: 1\n"
              "database: { provider: local }\n"
              "build: [ 'touch \"$FAULT_MARKS/build-$COLDGATE_AB_SIDE\"; "
              "if [ \"$FAULT_SLOW\" = \"build-$COLDGATE_AB_SIDE\" ]; then exec sleep 60; fi' ]\n"
              "defaults: { runs: 1, warm: 0 }\n"
              "stages:\n"
              "  - name: work\n"
              "    command: [sh, -c, 's=$(cat side.txt); touch \"$FAULT_MARKS/measure-$s\"; "
              "if [ \"$FAULT_SLOW\" = \"measure-$s\" ]; then exec sleep 60; fi']\n");
    // The outputs and coldgate's own stdout/stderr files are not changes of the checkout.
    dir.write("repo/.gitignore", "coldgate-out/\nother-out/\nstdout-*.txt\nstderr-*.txt\n");
    dir.write("repo/side.txt", "base\n");
    run_git(repo, {"init", "-q"});
    run_git(repo, {"add", "-A"});
    run_git(repo, {"commit", "-qm", "base"});  // on branch base (run_git's first branch)
    run_git(repo, {"checkout", "-qb", "head"});
    dir.write("repo/side.txt", "head\n");
    run_git(repo, {"commit", "-qam", "head"});
    checkout = state();
  }

  // HEAD, the index's entries and `git status`: what ab must leave as it was.
  std::string state() {
    return run_git(repo, {"rev-parse", "HEAD"}) + "\n" + run_git(repo, {"ls-files", "--stage"}) +
           "\n" + run_git(repo, {"--no-optional-locks", "status", "--porcelain", "--untracked-files=all"});
  }

  Running start(const std::string& slow, const std::string& out = "coldgate-out") {
    return start_coldgate(repo, tmp, {"ab", "--base", "base", "--out", out},
                          {"XDG_CACHE_HOME=" + (dir / "cache").string(),
                           "FAULT_MARKS=" + marks.string(), "FAULT_SLOW=" + slow,
                           "GITHUB_BASE_REF=", "GITHUB_HEAD_REF=",
                           "CI_MERGE_REQUEST_TARGET_BRANCH_NAME="});
  }

  // What every delivery must leave, in `outs` (the --out folders used).
  void expect_clean(const std::vector<std::string>& outs, const std::string& why) {
    SCOPED_TRACE(why);
    // Backends of a stopped server may take a moment to go after their postmaster.
    wait_for([&] { return processes_under(dir.path()).empty(); }, 15s);
    testing::expect_nothing_left(dir.path(), tmp, why);
    std::string worktrees = run_git(repo, {"worktree", "list", "--porcelain"});
    EXPECT_EQ(worktrees.find("\nworktree "), std::string::npos) << worktrees;
    for (const auto& out : outs) {
      for (const char* side : {"head", "base"}) {
        EXPECT_FALSE(fs::exists(repo / out / "ab" / side)) << out << "/ab/" << side;
      }
      expect_whole_files(repo / out);  // no temp file, every JSON whole
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(repo / out / "cache", ec)) {
        EXPECT_NO_THROW(results::from_json(read_all(e.path()), e.path().string()))
            << "a cache entry that is not whole results: " << e.path();
      }
    }
    EXPECT_EQ(state(), checkout) << "the checkout changed";
  }

  TempDir dir;
  fs::path tmp = dir / "tmp";
  fs::path repo = dir / "repo";
  fs::path marks = dir / "marks";
  std::string checkout;  // state() after SetUp
};

// Starts an ab that sleeps in `phase`, sends `sig` the moment it is there, then checks what is
// left — for SIGKILL after the next ab (in `next_out`).
void deliver(AbFaultTest& t, Phase phase, int sig, int delivery, const std::string& next_out) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(t.marks, ec)) fs::remove(e.path(), ec);
  // A cached base would not be measured again: every delivery measures both sides.
  fs::remove_all(t.repo / "coldgate-out" / "cache", ec);
  const fs::path marker = t.marks / name(phase);
  const std::string what = std::string(sig_name(sig)) + " during " + name(phase) + ", delivery " +
                           std::to_string(delivery + 1) + ", at its marker (recorded)";
  SCOPED_TRACE(what);

  Running r = t.start(name(phase));
  // The phase's command sleeps once its marker is there: coldgate cannot end before the signal.
  // It is recorded for the next ab's clean-up a moment after it started.
  Delivered d = deliver_at(
      r, [&] { return fs::exists(marker) && children_recorded(r.process->pid(), t.tmp); }, sig,
      what);
  if (!d.reached) return;
  const int code = d.code;
  const std::string& err = d.err;

  if (sig == SIGKILL) {
    EXPECT_EQ(code, 128 + SIGKILL) << err;
    std::vector<std::string> outs{"coldgate-out"};
    if (next_out == "coldgate-out") {
      // Half a cache entry, as a SIGKILL while the cache is written leaves one (that window is
      // too short to be hit for certain): the next ab with this --out removes it.
      t.dir.write("repo/coldgate-out/cache/" + std::string(40, '0') + "-0.json.tmp-Ab12Cd",
                  "{\"schema\": \"coldgate-res");
    } else {
      outs.push_back(next_out);  // the killed run's worktrees go with an ab in another --out too
    }
    Running next = t.start("", next_out);
    std::string next_err;
    EXPECT_EQ(next.finish(&next_err), 0) << next_err;
    t.expect_clean(outs, "after the next ab (--out " + next_out + ")");
    return;
  }
  EXPECT_EQ(code, 130) << err;
  EXPECT_NE(err.find(sig == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"),
            std::string::npos)
      << err;
  t.expect_clean({"coldgate-out"}, "right after the interrupted ab");
  // Nothing half-made: <out>/ab/ keeps the logs of the builds that finished and nothing else,
  // and is gone when none did (the interrupted build's log goes with it).
  const fs::path ab = t.repo / "coldgate-out" / "ab";
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(ab, ec)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  std::vector<std::string> finished;
  for (const std::string side : {"base", "head"}) {
    if (err.find("build " + side + " done") != std::string::npos) finished.push_back(side + "-build.log");
  }
  EXPECT_EQ(left, finished) << err;
  EXPECT_EQ(fs::exists(ab), !finished.empty()) << ab;
}

// `deliveries` per phase and signal; after a SIGKILL, the first next ab uses the same --out, the
// second another one.
void deliver_n(AbFaultTest& t, Phase phase, int sig, int deliveries) {
  for (int i = 0; i < deliveries && !::testing::Test::HasFatalFailure(); ++i) {
    deliver(t, phase, sig, i, i == 0 ? "coldgate-out" : "other-out");
  }
}

// 12 cases, 20 signals.
TEST_F(AbFaultTest, SigintWhileBuildingHead) { deliver_n(*this, Phase::build_head, SIGINT, 2); }
TEST_F(AbFaultTest, SigtermWhileBuildingHead) { deliver_n(*this, Phase::build_head, SIGTERM, 2); }
TEST_F(AbFaultTest, SigkillWhileBuildingHead) { deliver_n(*this, Phase::build_head, SIGKILL, 2); }
TEST_F(AbFaultTest, SigintWhileBuildingBase) { deliver_n(*this, Phase::build_base, SIGINT, 1); }
TEST_F(AbFaultTest, SigtermWhileBuildingBase) { deliver_n(*this, Phase::build_base, SIGTERM, 1); }
TEST_F(AbFaultTest, SigkillWhileBuildingBase) { deliver_n(*this, Phase::build_base, SIGKILL, 2); }
TEST_F(AbFaultTest, SigintWhileMeasuringBase) { deliver_n(*this, Phase::measure_base, SIGINT, 2); }
TEST_F(AbFaultTest, SigtermWhileMeasuringBase) { deliver_n(*this, Phase::measure_base, SIGTERM, 2); }
TEST_F(AbFaultTest, SigkillWhileMeasuringBase) { deliver_n(*this, Phase::measure_base, SIGKILL, 2); }
TEST_F(AbFaultTest, SigintWhileMeasuringHead) { deliver_n(*this, Phase::measure_head, SIGINT, 1); }
TEST_F(AbFaultTest, SigtermWhileMeasuringHead) { deliver_n(*this, Phase::measure_head, SIGTERM, 1); }
TEST_F(AbFaultTest, SigkillWhileMeasuringHead) { deliver_n(*this, Phase::measure_head, SIGKILL, 2); }

}  // namespace
}  // namespace coldgate
