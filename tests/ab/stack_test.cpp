// `coldgate stack` on a real stack of four commits above main, measured by the real binary on
// the local provider: s1 makes a stage 10× slower (pg_sleep), s2 fixes it, s3 changes a
// snapshot value, s4 accepts that snapshot and changes nothing else.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <thread>

#include "results/json.hpp"
#include "support/support.hpp"
#include "util/process.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::run_coldgate;
using testing::run_git;
using testing::slurp;
using testing::TempDir;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

struct StackTest : ::testing::Test {
  void SetUp() override {
    // The server account (postgres) must reach its cluster folder under tmp/.
    testing::make_server_tmpdir(dir, tmp);
    // max_ratio 3: s1's ~9.5× is outside max_ratio/2 … 2 × max_ratio, where the stack would
    // measure main and s1 up to 10 more times each (gate.max_extra_runs: ExtraRunsTest's subject).
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: local }\n"
              "setup: [ { sql: schema.sql } ]\n"
              "build: [ \"echo built $COLDGATE_AB_SIDE > built.txt\" ]\n"
              "defaults: { runs: 3, warm: 0 }\n"
              "stages:\n"
              "  - name: load\n"
              "    sql: stage.sql\n"
              "  - name: snap\n"
              "    sql: snap.sql\n"
              "    decode: json\n"
              "    snapshot: { path: snapshots/snap.json }\n"
              "gate: { max_ratio: 3, warn_ratio: 2, min_delta: 100ms, metrics: [query_ms] }\n");
    dir.write("schema.sql", "CREATE TABLE item (id int);\n");
    dir.write(".gitignore", "coldgate-out/\ntmp/\n");
    dir.write("snap.sql", "SELECT json_build_object('n', 1);\n");
    dir.write("snapshots/snap.json", "{\n  \"n\": 1\n}\n");
    write_stage(0.05);
    run_git(dir.path(), {"init", "-q"});
    commit("main", "main: fast");
    run_git(dir.path(), {"branch", "-m", "main"});
  }
  void write_stage(double seconds) {
    dir.write("stage.sql",
              "SELECT pg_sleep(" + std::to_string(seconds) + "), count(*) FROM item;\n");
  }
  // Commits what is written on a new branch `name` (main: the first commit, on the current one).
  void commit(const std::string& name, const std::string& message) {
    if (name != "main") run_git(dir.path(), {"checkout", "-q", "-b", name});
    run_git(dir.path(), {"add", "-A"});
    run_git(dir.path(), {"commit", "-q", "-m", message});
    sha[name] = run_git(dir.path(), {"rev-parse", "HEAD"});
  }
  void four_commits() {
    write_stage(0.5);
    commit("s1", "s1: 10x slower");
    write_stage(0.05);
    commit("s2", "s2: fast again");
    dir.write("snap.sql", "SELECT json_build_object('n', 2);\n");
    commit("s3", "s3: another value");
    dir.write("snapshots/snap.json", "{\n  \"n\": 2\n}\n");
    commit("s4", "s4: accept the snapshot");
  }
  std::vector<std::string> env() const {
    return {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_HEAD_REF=",
            "GITHUB_STEP_SUMMARY=", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=",
            "TMPDIR=" + tmp.string()};
  }
  testing::RunResult stack(std::vector<std::string> args) {
    args.insert(args.begin(), "stack");
    return run_coldgate(args, dir.path(), "", env());
  }
  results::Results results(const std::string& folder) {
    const std::string file = "coldgate-out/stack/" + folder + "/results.json";
    return results::from_json(slurp(dir / file), file);
  }
  static std::string verdict(const results::Results& r, const std::string& stage) {
    if (!r.gate) return "(no gate)";
    for (const auto& m : r.gate->metrics) {
      if (m.stage == stage && m.metric == "query_ms") return std::string(results::to_string(m.verdict));
    }
    return "(none)";
  }
  static std::string snapshot(const results::Results& r) {
    for (const auto& s : r.stages) {
      if (s.name == "snap" && s.snapshot) return std::string(results::to_string(s.snapshot->status));
    }
    return "(none)";
  }
  // No worktree, server work folder or process of a run is left.
  void expect_nothing_left(const std::string& why) {
    SCOPED_TRACE(why);
    EXPECT_EQ(run_git(dir.path(), {"worktree", "list", "--porcelain"}).find("coldgate-out"),
              std::string::npos);
    std::error_code ec;
    EXPECT_TRUE(fs::is_empty(dir / "coldgate-out/stack/worktrees", ec) || ec);
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(tmp, ec)) left.push_back(e.path().string());
    EXPECT_TRUE(left.empty()) << left.front();
  }
  // Every file under coldgate-out/ is whole: no temp file of an unfinished write, results parse.
  void expect_no_partial_files() {
    for (const auto& e : fs::recursive_directory_iterator(dir / "coldgate-out")) {
      if (!e.is_regular_file()) continue;
      EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
      if (e.path().filename() == "results.json") {
        EXPECT_NO_THROW(results::from_json(slurp(e.path()), e.path().string())) << e.path();
      }
    }
  }
  TempDir dir;
  fs::path tmp = dir / "tmp";
  std::map<std::string, std::string> sha;
};

TEST_F(StackTest, EachPullRequestIsGatedAgainstTheCommitBelowItAndEachCommitMeasuredOnce) {
  four_commits();
  auto first = stack({"main", "s1", "s2", "s3", "s4"});
  ASSERT_EQ(first.exit_code, 1) << first.out << first.err;
  // Measured once each: 5 commits, not 8 measurements; every stage's cold runs as configured.
  EXPECT_EQ(count(first.err, "measuring commit "), 5u) << first.err;
  EXPECT_EQ(count(first.err, ") from the cache ("), 0u) << first.err;
  EXPECT_NE(first.err.find("5 of 5 commits measured, 0 from the cache"), std::string::npos);
  // Round-robin: commit 0 run 1, commit 1 run 1, …, commit 4 run 1, commit 0 run 2.
  std::vector<std::size_t> at;
  for (const char* l : {"0-main: cold run 1/3", "1-s1: cold run 1/3", "2-s2: cold run 1/3",
                        "3-s3: cold run 1/3", "4-s4: cold run 1/3", "0-main: cold run 2/3"}) {
    at.push_back(first.err.find(l));
    ASSERT_NE(at.back(), std::string::npos) << l << '\n' << first.err;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << first.err;

  const std::vector<std::string> refs{"main", "s1", "s2", "s3", "s4"};
  const std::vector<std::string> load{"", "regression", "faster", "same", "same"};
  const std::vector<std::string> snap{"", "match", "match", "changed", "match"};
  const std::string summary = slurp(dir / "coldgate-out/stack/summary.md");
  EXPECT_EQ(first.out, summary);
  EXPECT_EQ(results("0-main").git.commit, sha["main"]);
  for (std::size_t k = 1; k < refs.size(); ++k) {
    SCOPED_TRACE(refs[k]);
    const std::string folder = std::to_string(k) + "-" + refs[k];
    results::Results r = results(folder);
    EXPECT_EQ(r.git.commit, sha[refs[k]]);
    EXPECT_EQ(r.git.base, sha[refs[k - 1]]);
    ASSERT_TRUE(r.gate);
    EXPECT_EQ(r.gate->base_git.commit, sha[refs[k - 1]]);
    EXPECT_EQ(r.gate->base_source, results::BaseSource::interleaved);
    EXPECT_FALSE(r.gate->head_cached);
    EXPECT_EQ(verdict(r, "load"), load[k]);
    EXPECT_EQ(snapshot(r), snap[k]);
    ASSERT_EQ(r.stages.size(), 2u);
    // 3 cold runs, and those a verdict near its threshold took (gate.max_extra_runs).
    EXPECT_GE(r.stages[0].find("query_ms")->cold.size(), 3u);
    EXPECT_LE(r.stages[0].find("query_ms")->cold.size(), 3u + 10u);
    const std::string report = slurp(dir / "coldgate-out/stack" / folder / "report.md");
    EXPECT_NE(report.find(sha[refs[k]].substr(0, 7)), std::string::npos) << report;
    EXPECT_NE(report.find(sha[refs[k - 1]].substr(0, 7)), std::string::npos) << report;
    EXPECT_TRUE(fs::exists(dir / "coldgate-out/stack" / folder / "junit.xml"));
    EXPECT_NE(summary.find(refs[k]), std::string::npos) << summary;
    EXPECT_NE(summary.find(sha[refs[k]].substr(0, 7)), std::string::npos) << summary;
  }
  // s3's candidate is in its own folder, never in a worktree or under snapshots/.
  EXPECT_TRUE(fs::exists(dir / "coldgate-out/stack/3-s3/snapshots/snapshots/snap.json"));
  EXPECT_EQ(slurp(dir / "coldgate-out/stack/3-s3/snapshots/snapshots/snap.json"), "{\n  \"n\": 2\n}\n");
  EXPECT_EQ(slurp(dir / "snapshots/snap.json"), "{\n  \"n\": 2\n}\n");
  expect_nothing_left("after the stack");

  // Again: every commit from the cache but s3, whose snapshot does not match: it is measured
  // again so that its candidate is there to review; the same verdicts.
  auto second = stack({"main", "s1", "s2", "s3", "s4"});
  ASSERT_EQ(second.exit_code, 1) << second.err;
  EXPECT_EQ(count(second.err, "measuring commit "), 1u) << second.err;
  EXPECT_NE(second.err.find("measuring commit 3 "), std::string::npos) << second.err;
  EXPECT_EQ(count(second.err, ") from the cache ("), 4u) << second.err;
  EXPECT_NE(second.err.find("coldgate: 1 of 5 commits measured, 4 from the cache"),
            std::string::npos)
      << second.err;
  // Commits 0, 1, 2 and 4 from the cache, 3 measured: each side says where it came from.
  EXPECT_NE(slurp(dir / "coldgate-out/stack/summary.md")
                .find("3 of 4 bases and 3 of 4 heads from the cache (measured by an earlier run, "
                      "not interleaved)"),
            std::string::npos)
      << slurp(dir / "coldgate-out/stack/summary.md");
  EXPECT_EQ(slurp(dir / "coldgate-out/stack/3-s3/snapshots/snapshots/snap.json"),
            "{\n  \"n\": 2\n}\n");
  for (std::size_t k = 1; k < refs.size(); ++k) {
    results::Results r = results(std::to_string(k) + "-" + refs[k]);
    EXPECT_EQ(r.git.commit, sha[refs[k]]);
    EXPECT_EQ(verdict(r, "load"), load[k]) << refs[k];
    EXPECT_EQ(snapshot(r), snap[k]) << refs[k];
    ASSERT_TRUE(r.gate);
    EXPECT_EQ(r.gate->base_source, k == 4 ? results::BaseSource::interleaved
                                          : results::BaseSource::cache)
        << refs[k];
    EXPECT_EQ(r.gate->head_cached, k != 3) << refs[k];
    const std::string report =
        slurp(dir / "coldgate-out/stack" / (std::to_string(k) + "-" + refs[k]) / "report.md");
    EXPECT_EQ(report.find("base from cache") != std::string::npos, k != 4) << report;
    EXPECT_EQ(report.find("head from cache") != std::string::npos, k != 3) << report;
  }
  expect_nothing_left("after the cached stack");
}

TEST_F(StackTest, AnAAStackGivesNoRegression) {
  for (const char* name : {"a1", "a2", "a3"}) {
    dir.write("README", std::string("notes of ") + name + "\n");
    commit(name, std::string(name) + ": no measured code");
  }
  auto r = stack({"main", "a1", "a2", "a3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* folder : {"1-a1", "2-a2", "3-a3"}) {
    results::Results res = results(folder);
    EXPECT_NE(verdict(res, "load"), "regression") << folder;
    EXPECT_EQ(snapshot(res), "match") << folder;
  }
}

// A pull request whose build fails is named with its ref, the command, how it ended and its
// output's last lines (exit 1); the stack's base is its judge, built for that even when it came
// from the cache.
TEST_F(StackTest, APullRequestThatDoesNotBuildIsNamed) {
  dir.write("README", "notes\n");
  commit("ok", "ok: no measured code");
  auto first = stack({"main", "ok"});  // caches main and ok
  ASSERT_EQ(first.exit_code, 0) << first.err;
  // The config stays as it is (the cache's fingerprint holds the top commit's config): the
  // build's `> built.txt` fails where the pull request made built.txt a folder.
  dir.write("built.txt/keep", "a folder where the build writes a file\n");
  commit("broken", "broken: built.txt is a folder");
  auto r = stack({"main", "ok", "broken"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string main12 = sha["main"].substr(0, 12);
  const std::string broken12 = sha["broken"].substr(0, 12);
  EXPECT_NE(r.err.find("commit 0 " + main12 + " (main) from the cache"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("pull request 2 (broken " + broken12 + ") does not build: building base "
                       "(main " + main12 + ") too, to tell whether the pull request is the cause"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("\ncoldgate: 2-broken (" + broken12 + "): failed: build of pull request 2 "
                       "(broken " + broken12 + "): `echo built $COLDGATE_AB_SIDE > built.txt` "
                       "failed (exit status 2); log coldgate-out/stack/build/2-broken.log, ends: "
                       "/bin/sh: 1: cannot create built.txt: Is a directory; base (main " +
                       main12 + ") builds, so the pull request breaks the build; 2 stages not "
                       "run\n"),
            std::string::npos)
      << r.err;
  results::Results res = results("2-broken");
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 1);
  EXPECT_TRUE(fs::exists(dir / "coldgate-out/stack/build/0-main.log"));  // built to judge
  expect_nothing_left("after the failed build");
}

TEST_F(StackTest, BadRefsAreUsageErrorsNamingTheRef) {
  four_commits();
  // The last stack's outputs outlive a command that cannot start.
  dir.write("coldgate-out/stack/summary.md", "the last stack\n");
  auto unknown = stack({"main", "s1", "nope"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("nope: not a commit of"), std::string::npos) << unknown.err;
  auto same = stack({"main", "s1", "s1"});
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.err.find("s1: is the same commit as s1"), std::string::npos) << same.err;
  auto swapped = stack({"main", "s2", "s1"});
  EXPECT_EQ(swapped.exit_code, 2);
  EXPECT_NE(swapped.err.find("s1: does not descend from s2"), std::string::npos) << swapped.err;
  auto many = stack({"main", "s1", "s2", "--max-commits", "2"});
  EXPECT_EQ(many.exit_code, 2);
  EXPECT_NE(many.err.find("--max-commits"), std::string::npos) << many.err;
  expect_nothing_left("after the usage errors");
  EXPECT_EQ(slurp(dir / "coldgate-out/stack/summary.md"), "the last stack\n");
}

// SIGINT and SIGTERM while the commits are measured: exit 130, each pull request's results say
// so, nothing is left.
TEST_F(StackTest, AnInterruptWhileMeasuringLeavesNothingBehind) {
  four_commits();
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig);
    const fs::path err = dir / ("stderr-" + std::to_string(sig));
    std::vector<std::string> argv{COLDGATE_BINARY, "stack", "--no-cache", "main", "s1", "s2"};
    util::SpawnOptions o{.argv = argv,
                         .cwd = dir.path(),
                         .env = env(),
                         .capture_stdout = false,
                         .capture_stderr = false,
                         .stdout_path = dir / "stdout",
                         .stderr_path = err};
    util::Process p(o);
    // Polls until the first cold runs began (the run is not timed: it waits for a line; the
    // bound, ctest's timeout, only ends a failing test).
    for (int i = 0; i < 120000 && !p.wait_exited(0ms); ++i) {
      std::error_code ec;
      if (fs::exists(err, ec) && slurp(err).find("1-s1: cold run 1/3") != std::string::npos) break;
      std::this_thread::sleep_for(5ms);
    }
    ASSERT_FALSE(p.wait_exited(0ms)) << slurp(err);
    ::kill(p.pid(), sig);
    util::ExitStatus s = p.wait(180s);
    EXPECT_EQ(s.exit_code, 130) << slurp(err);
    for (const char* folder : {"1-s1", "2-s2"}) {
      results::Results r = results(folder);
      ASSERT_TRUE(r.stopped) << folder;
      EXPECT_EQ(r.stopped->exit_code, 130);
    }
    expect_nothing_left("after the interrupt");
    expect_no_partial_files();
  }
}

// A SIGKILLed stack (here by a build step of its top commit) leaves worktrees and its work
// folder; the next stack removes them.
TEST_F(StackTest, ASigkilledStackLeavesNothingOnceTheNextOneStarts) {
  four_commits();
  run_git(dir.path(), {"checkout", "-q", "s1"});
  std::string killer = slurp(dir / "coldgate.yaml");
  killer.replace(killer.find("build: ["), 0, "build: [ 'kill -9 $PPID' ]\n#");
  dir.write("coldgate.yaml", killer);
  commit("killer", "a build step that kills coldgate");
  auto killed = stack({"main", "s1", "killer"});
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.err;
  EXPECT_NE(run_git(dir.path(), {"worktree", "list", "--porcelain"}).find("coldgate-out/stack"),
            std::string::npos);
  auto next = stack({"main", "s1", "s2"});
  EXPECT_EQ(next.exit_code, 1) << next.err;
  expect_nothing_left("after the next stack");
}

}  // namespace
}  // namespace coldgate
