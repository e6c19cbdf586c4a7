// Signals delivered to the real `coldgate history record` while it writes: into a git store
// (branch coldgate-history) without and with --push to a local bare remote, and into a folder
// store. After each (for SIGKILL: after the next record, which must succeed): the branch is at
// its old commit or at complete new ones (each adds one record, every record file reads with the
// history reader, each finished command's record is there, no other's but the killed one's),
// `git fsck` is clean, no `*.lock` is left in either repository, no temp file in the folder store,
// nothing in TMPDIR, no process under the test folder, and the checkout (HEAD, index, working
// tree) is as it was.
//
// Each phase is reached for certain: git's reference-transaction hook sleeps while git holds the
// branch's lock (`update`) or the remote-tracking ref's (`fetch`), the remote's pre-receive hook
// sleeps while the push waits (`push`), and a `git` first on PATH sleeps before it runs
// commit-tree (`commit-tree`) or tells when `git log` (the commit's facts) is done, right before
// the record of 300 stages is made and written (`write`). Each hook sleeps once per arming. The
// signal follows after a delay drawn from a seed per test, printed with every failure. `tree`
// is SIGKILL to coldgate and to the git it runs at once (a runner that kills the job's process
// tree): git's lock stays, and the next record must remove it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "history/history.hpp"
#include "history/history_fixtures.hpp"
#include "results/json.hpp"
#include "support/faults.hpp"
#include "support/support.hpp"
#include "util/process.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

const std::string k_branch = "coldgate-history";
const std::string k_ref = "refs/heads/" + k_branch;
constexpr int k_tree = -1;  // the "signal" SIGKILL to coldgate and its git's process group

enum class Store { local, pushed, folder };
enum class Phase { update, commit_tree, fetch, push, write };

const char* name(Phase p) {
  switch (p) {
    case Phase::update: return "update";
    case Phase::commit_tree: return "commit-tree";
    case Phase::fetch: return "fetch";
    case Phase::push: return "push";
    case Phase::write: return "write";
  }
  return "?";
}

Store store_of(Phase p) {
  switch (p) {
    case Phase::update:
    case Phase::commit_tree: return Store::local;
    case Phase::fetch:
    case Phase::push: return Store::pushed;
    case Phase::write: return Store::folder;
  }
  return Store::local;
}

// `text` with every @KEY@ replaced.
std::string filled(std::string text, const std::vector<std::pair<std::string, std::string>>& keys) {
  for (const auto& [key, value] : keys) {
    const std::string token = "@" + key + "@";
    for (auto pos = text.find(token); pos != std::string::npos; pos = text.find(token, pos)) {
      text.replace(pos, token.size(), value);
    }
  }
  return text;
}

void write_executable(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
}

// git in `dir`: exit status and output, for checks that must not stop the test.
util::RunOutput git_in(const fs::path& dir, const std::vector<std::string>& args) {
  util::SpawnOptions o;
  o.argv = {"git"};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.cwd = dir;
  return util::run(o, std::chrono::seconds(60));
}

struct HistoryFaultTest : ::testing::Test {
  void SetUp() override {
    fs::create_directories(tmp);
    fs::create_directories(marks);
    fs::create_directories(dir / "results");
    auto real_git = util::find_program("git");
    ASSERT_TRUE(real_git) << "git is not installed";
    run_git(dir.path(), {"init", "-q", "--bare", bare.string()});
    run_git(dir.path(), {"init", "-q", repo.string()});
    run_git(repo, {"remote", "add", "origin", bare.string()});
    const std::vector<std::pair<std::string, std::string>> keys{{"MARKS", marks.string()},
                                                                {"GIT", real_git->string()}};
    write_executable(repo / ".git/hooks/reference-transaction", filled(R"(#!/bin/sh
[ "$1" = prepared ] || exit 0
refs=$(cat)
case "$refs" in
  *" refs/heads/coldgate-history"*) arm=update ;;
  *" refs/remotes/origin/coldgate-history"*) arm=fetch ;;
  *) exit 0 ;;
esac
mv "@MARKS@/arm-$arm" "@MARKS@/taken-$arm" 2>/dev/null || exit 0
touch "@MARKS@/reached-$arm"
sleep 1
)", keys));
    write_executable(bare / "hooks/pre-receive", filled(R"(#!/bin/sh
cat > /dev/null
mv "@MARKS@/arm-push" "@MARKS@/taken-push" 2>/dev/null || exit 0
touch "@MARKS@/reached-push"
sleep 1
)", keys));
    write_executable(bin / "git", filled(R"(#!/bin/sh
case "$1" in
  commit-tree)
    if mv "@MARKS@/arm-commit-tree" "@MARKS@/taken-commit-tree" 2>/dev/null; then
      touch "@MARKS@/reached-commit-tree"
      sleep 1
    fi ;;
  log)
    if mv "@MARKS@/arm-write" "@MARKS@/taken-write" 2>/dev/null; then
      "@GIT@" "$@"; rc=$?
      touch "@MARKS@/reached-write"
      exit $rc
    fi ;;
esac
exec "@GIT@" "$@"
)", keys));
    dir.write("repo/.gitignore", "stdout-*.txt\nstderr-*.txt\n");
    for (int i = 0; i < 6; ++i) {
      dir.write("repo/app.txt", "version " + std::to_string(i) + "\n");
      run_git(repo, {"add", "-A"});
      run_git(repo, {"commit", "-qm", "change " + std::to_string(i)});
      shas.push_back(run_git(repo, {"rev-parse", "HEAD"}));
    }
    checkout = state();
  }

  // The results of a run of each commit on main, in results/<sha>.json: `stages` stages of six
  // metrics (300: a record that takes a while to make and write).
  void write_results(int stages) {
    for (const auto& sha : shas) write_results(sha, stages);
  }
  void write_results(const std::string& sha, int stages) {
    results::Results r = history::fixtures::results_of_main(sha);
    for (int s = 0; s < stages; ++s) {
      results::StageResult stage;
      stage.name = "stage-" + std::to_string(s);
      stage.runs = 3;
      for (const char* m : {"wall_ms", "cpu_ms", "connect_ms", "query_ms", "decode_ms"}) {
        stage.metric(m, "ms").cold = {10.0 + s, 11.0 + s, 12.5 + s};
      }
      stage.metric("peak_rss_bytes", "bytes").cold = {1e6, 1.1e6, 1.2e6};
      r.stages.push_back(stage);
    }
    dir.write("results/" + sha + ".json", results::to_json(r));
  }

  // HEAD, the index's entries and `git status`: what recording must leave as it was.
  std::string state() {
    return run_git(repo, {"rev-parse", "HEAD"}) + "\n" + run_git(repo, {"ls-files", "--stage"}) +
           "\n" +
           run_git(repo, {"--no-optional-locks", "status", "--porcelain", "--untracked-files=all"});
  }

  std::string store_arg(Store s) const {
    return s == Store::folder ? (dir / "folder-store").string() : "git:" + k_branch;
  }

  history::StoreSpec spec(Store s) const {
    return history::parse_store(store_arg(s), repo, "--store");
  }

  // `coldgate history record` of `sha` into `s`, with the sleeping hooks' git first on PATH.
  Running start(const std::string& sha, Store s) {
    std::vector<std::string> args{"history", "record", "--results",
                                  (dir / "results" / (sha + ".json")).string(), "--branch", "main",
                                  "--store", store_arg(s)};
    if (s == Store::pushed) args.push_back("--push");
    const char* path = std::getenv("PATH");
    return start_coldgate(repo, tmp, args,
                          {"PATH=" + bin.string() + ":" + (path ? path : "/usr/bin:/bin"),
                           "XDG_CACHE_HOME=" + (dir / "cache").string(), "GITHUB_REF_NAME=",
                           "CI_COMMIT_BRANCH="});
  }

  // Records `sha` to the end; fails the test unless it exits 0.
  void record(const std::string& sha, Store s, std::string* err = nullptr) {
    Running r = start(sha, s);
    std::string text;
    EXPECT_EQ(r.finish(&text), 0) << text;
    if (err) *err = text;
  }

  // The commits of the records `s` holds, read with the history reader (no file skipped), as
  // the checkout sees it and, for a pushed store, as the remote holds it.
  std::set<std::string> recorded(Store s) {
    std::set<std::string> out;
    std::vector<fs::path> where{repo};
    if (s == Store::pushed) where.push_back(bare);
    for (const auto& at : where) {
      history::Loaded loaded = history::read_records(spec(s), at, "origin");
      EXPECT_EQ(list(loaded.warnings), " none") << "records the reader skipped, in " << at;
      for (const auto& rec : loaded.records) out.insert(rec.commit);
    }
    return out;
  }

  // Every commit of the branch in `git_dir` adds or replaces exactly one file.
  void expect_one_file_per_commit(const fs::path& git_dir) {
    auto commits = git_in(git_dir, {"rev-list", k_ref});
    if (!commits.status.ok()) return;  // no branch yet
    std::istringstream lines(commits.out);
    for (std::string c; std::getline(lines, c);) {
      auto changed = git_in(git_dir, {"diff-tree", "--root", "--no-commit-id", "--name-only", "-r", c});
      EXPECT_TRUE(changed.status.ok()) << changed.err;
      EXPECT_EQ(std::count(changed.out.begin(), changed.out.end(), '\n'), 1)
          << "commit " << c << " in " << git_dir << " changes:\n" << changed.out;
    }
  }

  // What every delivery must leave; `must` are the commits whose record has to be in the store
  // (their command finished), `may` the ones that may be (an interrupted or killed command).
  void expect_clean(Store s, const std::set<std::string>& must, const std::set<std::string>& may,
                    const std::string& why) {
    SCOPED_TRACE(why);
    testing::expect_nothing_left(dir.path(), tmp, why);
    std::vector<std::string> locks, temps;
    std::error_code ec;
    for (const auto& git_dir : {repo / ".git", bare}) {
      for (const auto& e : fs::recursive_directory_iterator(git_dir, ec)) {
        if (e.path().extension() == ".lock") locks.push_back(e.path().string());
      }
      auto fsck = git_in(git_dir, {"fsck", "--no-dangling", "--no-progress"});
      EXPECT_TRUE(fsck.status.ok()) << "git fsck in " << git_dir << ":\n" << fsck.out << fsck.err;
    }
    EXPECT_EQ(list(locks), " none") << "lock files left";
    if (s == Store::folder) {
      for (const auto& e : fs::directory_iterator(dir / "folder-store", ec)) {
        if (e.path().filename().string().find(".tmp-") != std::string::npos) {
          temps.push_back(e.path().string());
        }
      }
      EXPECT_EQ(list(temps), " none") << "temp files left in the folder store";
    } else {
      expect_one_file_per_commit(repo);
      if (s == Store::pushed) expect_one_file_per_commit(bare);
    }
    const std::set<std::string> got = recorded(s);
    for (const auto& c : must) EXPECT_TRUE(got.count(c)) << "no record of finished " << c;
    for (const auto& c : got) {
      EXPECT_TRUE(must.count(c) || may.count(c)) << "a record of " << c << " nobody made";
    }
    EXPECT_EQ(state(), checkout) << "the checkout changed";
  }

  TempDir dir;
  fs::path tmp = dir / "tmp";
  fs::path repo = dir / "repo";
  fs::path bare = dir / "remote.git";
  fs::path bin = dir / "bin";
  fs::path marks = dir / "marks";
  std::vector<std::string> shas;  // main's commits, each with its results
  std::string checkout;           // state() after SetUp
};

// The git `coldgate` runs right now, or 0.
pid_t git_child(pid_t coldgate) {
  for (pid_t c : children_of(coldgate)) {
    auto argv = argv_of(c);
    if (!argv.empty() && fs::path(argv[0]).filename() == "git") return c;
  }
  return 0;
}

// Deliveries into one store: the first commit is recorded whole first (the branch exists, on the
// remote too), then each delivery records the next commit, signalled in `phase`.
void deliver(HistoryFaultTest& t, Phase phase, int sig, int deliveries, int seed) {
  const Store store = store_of(phase);
  std::mt19937 rng(static_cast<std::mt19937::result_type>(seed));
  std::set<std::string> must, may;
  t.write_results(phase == Phase::write ? 300 : 3);
  t.record(t.shas[0], store);
  must.insert(t.shas[0]);
  std::size_t next = 1;
  for (int d = 0; d < deliveries && !::testing::Test::HasFatalFailure(); ++d) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(t.marks, ec)) fs::remove(e.path(), ec);
    const int max_delay_ms = phase == Phase::write ? 80 : 200;  // the hooks sleep 1 s
    const int delay_ms = std::uniform_int_distribution<int>(0, max_delay_ms)(rng);
    const std::string sha = t.shas[next++];
    const std::string what =
        std::string(sig == k_tree ? "SIGKILL to coldgate and its git" : sig_name(sig)) +
        " during " + name(phase) + ", delivery " + std::to_string(d + 1) + " of seed " +
        std::to_string(seed) + ": delay " + std::to_string(delay_ms) + " ms after the phase began";
    SCOPED_TRACE(what);
    t.dir.write("marks/arm-" + std::string(name(phase)), "");
    const fs::path reached = t.marks / ("reached-" + std::string(name(phase)));

    Running r = t.start(sha, store);
    ASSERT_TRUE(wait_for([&] { return fs::exists(reached) || r.process->wait_exited(0ms); }, 60s))
        << "never reached the phase";
    ASSERT_FALSE(r.process->wait_exited(0ms))
        << "coldgate ended before the phase; stderr:\n" << read_all(r.err);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    const bool ended_before = r.process->wait_exited(0ms);
    pid_t git = sig == k_tree ? git_child(r.process->pid()) : 0;
    ::kill(r.process->pid(), sig == k_tree ? SIGKILL : sig);
    if (git > 0) ::kill(-git, SIGKILL);
    std::string err;
    const int code = r.finish(&err);
    std::cout << "[ fault    ] " << what << ": "
              << (ended_before ? "coldgate had ended before the signal" : "delivered")
              << ", exit " << code << std::endl;

    if (ended_before || code == 0) {
      EXPECT_EQ(code, 0) << err;  // it finished: the signal came after the record landed
      must.insert(sha);
      t.expect_clean(store, must, may, "after a record that finished");
      continue;
    }
    may.insert(sha);
    if (sig == SIGKILL || sig == k_tree) {
      EXPECT_EQ(code, 128 + SIGKILL) << err;
      if (sig == k_tree) {
        EXPECT_GT(git, 0) << "no git ran in the phase";
      }
      // A SIGKILLed coldgate's git and hooks finish what they were doing by themselves.
      EXPECT_TRUE(wait_for([&] { return processes_under(t.dir.path()).empty(); }, 30s))
          << list(processes_under(t.dir.path()));
      const std::string after = t.shas[next++];
      std::string next_err;
      t.record(after, store, &next_err);
      must.insert(after);
      if (sig == k_tree && phase == Phase::update) {
        EXPECT_NE(next_err.find("removed .git/refs/heads/coldgate-history.lock, left by the git "
                                "of a coldgate history writer that was killed"),
                  std::string::npos)
            << next_err;
      }
      t.expect_clean(store, must, may, "after the next record");
      continue;
    }
    EXPECT_EQ(code, 130) << err;
    EXPECT_NE(err.find(sig == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"),
              std::string::npos)
        << err;
    t.expect_clean(store, must, may, "right after the interrupted record");
  }
}

// 16 cases, 24 signals.
TEST_F(HistoryFaultTest, SigintWhileUpdatingTheBranch) { deliver(*this, Phase::update, SIGINT, 2, 3101); }
TEST_F(HistoryFaultTest, SigtermWhileUpdatingTheBranch) { deliver(*this, Phase::update, SIGTERM, 2, 3102); }
TEST_F(HistoryFaultTest, SigkillWhileUpdatingTheBranch) { deliver(*this, Phase::update, SIGKILL, 2, 3103); }
TEST_F(HistoryFaultTest, TreeKilledWhileUpdatingTheBranch) { deliver(*this, Phase::update, k_tree, 2, 3104); }
TEST_F(HistoryFaultTest, SigintWhileMakingTheCommit) { deliver(*this, Phase::commit_tree, SIGINT, 1, 3201); }
TEST_F(HistoryFaultTest, SigtermWhileMakingTheCommit) { deliver(*this, Phase::commit_tree, SIGTERM, 1, 3202); }
TEST_F(HistoryFaultTest, SigkillWhileMakingTheCommit) { deliver(*this, Phase::commit_tree, SIGKILL, 1, 3203); }
TEST_F(HistoryFaultTest, SigintWhileFetching) { deliver(*this, Phase::fetch, SIGINT, 1, 3301); }
TEST_F(HistoryFaultTest, SigtermWhileFetching) { deliver(*this, Phase::fetch, SIGTERM, 1, 3302); }
TEST_F(HistoryFaultTest, SigkillWhileFetching) { deliver(*this, Phase::fetch, SIGKILL, 1, 3303); }
TEST_F(HistoryFaultTest, SigintWhilePushing) { deliver(*this, Phase::push, SIGINT, 1, 3401); }
TEST_F(HistoryFaultTest, SigtermWhilePushing) { deliver(*this, Phase::push, SIGTERM, 1, 3402); }
TEST_F(HistoryFaultTest, SigkillWhilePushing) { deliver(*this, Phase::push, SIGKILL, 2, 3403); }
TEST_F(HistoryFaultTest, SigintWhileWritingAFolderStore) { deliver(*this, Phase::write, SIGINT, 2, 3501); }
TEST_F(HistoryFaultTest, SigtermWhileWritingAFolderStore) { deliver(*this, Phase::write, SIGTERM, 2, 3502); }
TEST_F(HistoryFaultTest, SigkillWhileWritingAFolderStore) { deliver(*this, Phase::write, SIGKILL, 2, 3503); }

}  // namespace
}  // namespace coldgate
