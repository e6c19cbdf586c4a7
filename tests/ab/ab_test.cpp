// `coldgate ab` on a real stack of commits: base ← feature-1 (a stage 10× slower through
// pg_sleep) ← feature-2 (fixed again), measured by the real binary on the local provider.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <optional>

#include "ab/git.hpp"
#include "config/config.hpp"
#include "gate/decide.hpp"
#include "results/json.hpp"
#include "support/dumps.hpp"
#include "support/support.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::ab {
namespace {

namespace fs = std::filesystem;
using testing::run_coldgate;
using testing::run_git;
using testing::ScopedEnv;
using testing::slurp;
using testing::TempDir;

// The stack: branch base (stage sleeps 50 ms), feature-1 on it (500 ms), feature-2 on that
// (50 ms again). Gated on query_ms, the time of the query itself, with max_ratio 3: feature-1's
// ~9.5× is then outside max_ratio/2 … 2 × max_ratio, where ab would measure both sides up to 10
// more times (gate.max_extra_runs: ExtraRunsTest's subject).
struct AbTest : ::testing::Test {
  void SetUp() override {
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: local }\n"
              "setup: [ { sql: schema.sql } ]\n"
              "build: [ \"echo built $COLDGATE_AB_SIDE > built.txt\", \"cat built.txt\" ]\n"
              "defaults: { runs: 3, warm: 0 }\n"
              "stages:\n"
              "  - name: load\n"
              "    sql: stage.sql\n"
              "gate: { max_ratio: 3, warn_ratio: 2, min_delta: 100ms, metrics: [query_ms] }\n");
    dir.write("schema.sql", "CREATE TABLE item (id int);\n");
    dir.write(".gitignore", "coldgate-out/\n");
    commit_stage("base", 0.05, "base: fast");
    run_git(dir.path(), {"checkout", "-q", "-b", "feature-1"});
    commit_stage("feature-1", 0.5, "feature-1: 10x slower");
    run_git(dir.path(), {"checkout", "-q", "-b", "feature-2"});
    commit_stage("feature-2", 0.05, "feature-2: fast again");
  }
  void commit_stage(const std::string& branch, double seconds, const std::string& message) {
    dir.write("stage.sql",
              "SELECT pg_sleep(" + std::to_string(seconds) + "), count(*) FROM item;\n");
    if (branch == "base") run_git(dir.path(), {"init", "-q"});
    run_git(dir.path(), {"add", "-A"});
    run_git(dir.path(), {"commit", "-q", "-m", message});
    sha[branch] = run_git(dir.path(), {"rev-parse", "HEAD"});
  }
  testing::RunResult ab(std::vector<std::string> args, std::vector<std::string> env = {}) {
    args.insert(args.begin(), "ab");
    for (const char* name : {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_HEAD_REF=",
                             "CI_MERGE_REQUEST_TARGET_BRANCH_NAME="}) {
      env.emplace_back(name);
    }
    return run_coldgate(args, dir.path(), "", env);
  }
  results::Results results(const std::string& file = "coldgate-out/results.json") {
    return results::from_json(slurp(dir / file), file);
  }
  std::string verdict(const results::Results& r, const std::string& metric) {
    if (!r.gate) return "(no gate)";
    for (const auto& m : r.gate->metrics) {
      if (m.stage == "load" && m.metric == metric) return std::string(results::to_string(m.verdict));
    }
    return "(none)";
  }
  TempDir dir;
  std::map<std::string, std::string> sha;
};

// Outside CI, ab's candidate is on this machine: its message says where the file is, from the
// folder ab ran in (the config in app/, ab run there), and how to take it from there — not "in
// the job's artifacts", and not the repository's path app/snapshots/… seen from app/.
TEST(AbSnapshots, OutsideCiTheMessageSaysWhereTheCandidateIsOnDisk) {
  TempDir dir;
  dir.write("app/coldgate.yaml",
            "version: 1\n"
            "database: { provider: local }\n"
            "defaults: { runs: 1, warm: 0 }\n"
            "stages:\n"
            "  - name: one\n"
            "    query: select 1 as one\n"
            "    snapshot: { path: snapshots/one.json }\n");
  dir.write(".gitignore", "coldgate-out/\n");
  run_git(dir.path(), {"init", "-q"});
  run_git(dir.path(), {"add", "-A"});
  run_git(dir.path(), {"commit", "-q", "-m", "base"});
  const std::string base = run_git(dir.path(), {"rev-parse", "HEAD"});
  dir.write("app/README.md", "docs only\n");
  run_git(dir.path(), {"add", "-A"});
  run_git(dir.path(), {"commit", "-q", "-m", "head: docs"});
  const std::vector<std::string> local{"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=",
                                       "GITHUB_HEAD_REF=", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME="};
  auto r = run_coldgate({"ab", "--base", base, "--allow-no-baseline"}, dir / "app", "", local);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto res = results::from_json(slurp(dir / "app/coldgate-out/results.json"), "results.json");
  ASSERT_EQ(res.stages.size(), 1u);
  ASSERT_TRUE(res.stages[0].snapshot);
  EXPECT_EQ(res.stages[0].snapshot->message,
            "snapshot missing: snapshots/one.json does not exist; review "
            "coldgate-out/snapshots/app/snapshots/one.json, then run: coldgate accept one --from "
            "coldgate-out");
  EXPECT_TRUE(fs::is_regular_file(dir / "app/coldgate-out/snapshots/app/snapshots/one.json"));
  // What it says to run takes the candidate.
  auto accept = run_coldgate({"accept", "one", "--from", "coldgate-out"}, dir / "app", "", local);
  EXPECT_EQ(accept.exit_code, 0) << accept.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "app/snapshots/one.json")) << accept.out << accept.err;
}

TEST_F(AbTest, EachPullRequestOfTheStackIsGatedAgainstTheBranchBelowIt) {
  // feature-1 against base: 10× slower → regression, exit 1, both commits named.
  run_git(dir.path(), {"checkout", "-q", "feature-1"});
  auto first = ab({"--base", "base"});
  ASSERT_EQ(first.exit_code, 1) << first.out << first.err;
  results::Results r = results();
  EXPECT_EQ(r.git.commit, sha["feature-1"]);
  EXPECT_EQ(r.git.branch, "feature-1");
  EXPECT_EQ(r.git.base, sha["base"]);
  ASSERT_TRUE(r.gate);
  EXPECT_EQ(r.gate->base_git.commit, sha["base"]);
  EXPECT_EQ(r.gate->base_git.branch, "base");
  EXPECT_EQ(r.gate->baseline, "coldgate-out/base/results.json");
  EXPECT_EQ(verdict(r, "query_ms"), "regression");
  results::Results base = results("coldgate-out/base/results.json");
  EXPECT_EQ(base.git.commit, sha["base"]);
  ASSERT_EQ(base.stages.size(), 1u);
  ASSERT_EQ(r.stages.size(), 1u);
  // 3 cold runs each, and as many more of both as a verdict near its threshold took
  // (gate.max_extra_runs, ExtraRunsTest).
  const std::size_t n = r.stages[0].find("query_ms")->cold.size();
  EXPECT_EQ(base.stages[0].find("query_ms")->cold.size(), n);
  EXPECT_GE(n, 3u);
  EXPECT_LE(n, 3u + 10u);
  std::string report = slurp(dir / "coldgate-out/report.md");
  EXPECT_NE(report.find(sha["base"].substr(0, 7)), std::string::npos) << report;
  EXPECT_NE(report.find(sha["feature-1"].substr(0, 7)), std::string::npos) << report;
  EXPECT_NE(report.find("`base`"), std::string::npos) << report;
  EXPECT_NE(first.err.find("merge-base with base"), std::string::npos) << first.err;
  // Interleaved: base run 1, head run 1, base run 2, …
  auto b1 = first.err.find("base: cold run 1/3");
  auto h1 = first.err.find("head: cold run 1/3");
  auto b2 = first.err.find("base: cold run 2/3");
  auto h3 = first.err.find("head: cold run 3/3");
  ASSERT_NE(b1, std::string::npos) << first.err;
  EXPECT_LT(b1, h1);
  EXPECT_LT(h1, b2);
  EXPECT_LT(b2, h3);
  // Each side was built in its own worktree; the worktrees are gone afterwards.
  EXPECT_EQ(slurp(dir / "coldgate-out/ab/head-build.log"), "built head\n");
  EXPECT_EQ(slurp(dir / "coldgate-out/ab/base-build.log"), "built base\n");
  EXPECT_EQ(run_git(dir.path(), {"worktree", "list", "--porcelain"}).find("coldgate-out"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "coldgate-out/ab/head"));
  EXPECT_FALSE(fs::exists(dir / "coldgate-out/ab/base"));

  // feature-2 against feature-1, both measured: faster, exit 0.
  run_git(dir.path(), {"checkout", "-q", "feature-2"});
  auto second = ab({"--base", "feature-1", "--no-cache"});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  r = results();
  EXPECT_EQ(r.git.commit, sha["feature-2"]);
  EXPECT_EQ(r.gate->base_git.commit, sha["feature-1"]);
  EXPECT_EQ(r.gate->base_git.branch, "feature-1");
  EXPECT_EQ(verdict(r, "query_ms"), "faster");
  EXPECT_EQ(second.err.find("from the cache"), std::string::npos) << second.err;

  // Again: feature-1 was measured (as head) by the first run in this environment → cached.
  auto third = ab({"--base", "feature-1"});
  ASSERT_EQ(third.exit_code, 0) << third.out << third.err;
  EXPECT_NE(third.err.find("base " + sha["feature-1"].substr(0, 12) + " from the cache"),
            std::string::npos)
      << third.err;
  EXPECT_EQ(third.err.find("base: cold run"), std::string::npos) << third.err;
  r = results();
  EXPECT_EQ(verdict(r, "query_ms"), "faster");
  EXPECT_EQ(r.gate->base_git.commit, sha["feature-1"]);
  EXPECT_NE(r.gate->baseline.find("coldgate-out/cache/" + sha["feature-1"] + "-"),
            std::string::npos)
      << r.gate->baseline;
  EXPECT_EQ(results("coldgate-out/base/results.json").git.commit, sha["feature-1"]);
}

// A commit on a new branch `name` from the current one, with `files` written.
std::string commit_files(AbTest& t, const std::string& name,
                         const std::vector<std::pair<std::string, std::string>>& files) {
  run_git(t.dir.path(), {"checkout", "-q", "-b", name});
  for (const auto& [file, text] : files) t.dir.write(file, text);
  run_git(t.dir.path(), {"add", "-A"});
  run_git(t.dir.path(), {"commit", "-q", "-m", name});
  return t.sha[name] = run_git(t.dir.path(), {"rev-parse", "HEAD"});
}

// Once head's config loaded, every way out has reports: a head whose setup fails fails the
// gate (exit 1), a base whose setup fails cannot be compared against (exit 3).
TEST_F(AbTest, AFailingSetupOfEitherSideIsReportedWithTheCodeOfItsSide) {
  run_git(dir.path(), {"checkout", "-q", "feature-2"});
  commit_files(*this, "broken-head", {{"schema.sql", "CREATE TABLE item (id int);\nINSERT INTO item VALUES ('x');\n"}});
  auto head = ab({"--base", "feature-2", "--no-cache"});
  EXPECT_EQ(head.exit_code, 1) << head.err;
  const std::string verdict = "failed: setup step sql schema.sql at schema.sql:2:26: SQLSTATE "
                              "22P02: invalid input syntax for type integer: \"x\"; 1 stage not run";
  EXPECT_NE(head.err.find("\ncoldgate: " + verdict + "; results in coldgate-out/results.json\n"),
            std::string::npos)
      << head.err;
  EXPECT_NE(slurp(dir / "coldgate-out/report.md").find("\n❌ **" + verdict + "**\n"),
            std::string::npos);
  EXPECT_NE(slurp(dir / "coldgate-out/junit.xml").find("<skipped message=\"not run: setup failed\"/>"),
            std::string::npos);
  results::Results r = results();
  ASSERT_TRUE(r.stopped);
  EXPECT_EQ(r.stopped->step, "sql schema.sql");
  EXPECT_EQ(r.git.commit, sha["broken-head"]);
  EXPECT_FALSE(fs::exists(dir / "coldgate-out/base/results.json"));
  EXPECT_FALSE(fs::exists(dir / "coldgate-out/ab/head"));  // worktrees gone on this way out too

  // The broken commit as base: nothing to compare against.
  commit_files(*this, "fixed-head", {{"schema.sql", "CREATE TABLE item (id int);\n"}});
  auto base = ab({"--base", "broken-head", "--no-cache"});
  EXPECT_EQ(base.exit_code, 3) << base.err;
  const std::string base_verdict =
      "infrastructure error at setup (base " + sha["broken-head"].substr(0, 12) +
      "): schema.sql:2:26: SQLSTATE 22P02: invalid input syntax for type integer: \"x\"; the base "
      "cannot be measured; 1 stage not run";
  EXPECT_NE(base.err.find("\ncoldgate: " + base_verdict + "; results in coldgate-out/results.json\n"),
            std::string::npos)
      << base.err;
  r = results();
  ASSERT_TRUE(r.stopped);
  EXPECT_EQ(r.stopped->step, "base: sql schema.sql");
  EXPECT_EQ(r.stopped->exit_code, 3);
  EXPECT_NE(slurp(dir / "coldgate-out/junit.xml")
                .find("<testcase classname=\"setup\" name=\"base: sql schema.sql\""),
            std::string::npos);
}

// The checkout's own untracked dependencies (node_modules/, ignored) are not in a worktree:
// a `build:` that expects them fails on both sides alike. That is the machine's or the
// config's doing, not the pull request's: exit 3, naming both sides, the command and what to
// check.
TEST_F(AbTest, ABuildThatFailsOnBothSidesIsAnInfrastructureFailure) {
  const std::string needs_deps =
      "test -d node_modules || { echo 'Error: Cannot find module express' >&2; exit 7; }";
  std::string config = slurp(dir / "coldgate.yaml");
  config.replace(config.find("build: ["), config.find("defaults:") - config.find("build: ["),
                 "build: [ 'echo installing', \"" + needs_deps + "\" ]\n");
  dir.write(".gitignore", "coldgate-out/\nnode_modules/\n");
  dir.write("node_modules/express/index.js", "module.exports = {};\n");  // the checkout has it
  run_git(dir.path(), {"checkout", "-q", "feature-2"});
  const std::string base = commit_files(*this, "deps-base", {{"coldgate.yaml", config}});
  run_git(dir.path(), {"checkout", "-q", "-b", "deps-head"});
  commit_stage("deps-head", 0.06, "head: a little slower");
  const std::string head = sha["deps-head"];
  auto r = ab({"--base", "deps-base", "--no-cache"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const std::string error =
      "build of head " + head.substr(0, 12) + " and base " + base.substr(0, 12) + ": `" +
      needs_deps + "` failed (exit status 7) and base " + base.substr(0, 12) +
      " fails the same way (exit status 7), so it is not the pull request's doing: check what "
      "the build needs on this machine — each side is a fresh git worktree without the "
      "checkout's untracked files (node_modules/, a virtualenv, vendor/bundle), so the `build:` "
      "steps must install them (npm ci, pip install -r requirements.txt, bundle install); logs "
      "coldgate-out/ab/head-build.log and coldgate-out/ab/base-build.log, ends: installing | "
      "Error: Cannot find module express";
  EXPECT_NE(r.err.find("\ncoldgate: error: " + error + "\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\ncoldgate: infrastructure error at " + error +
                       "; 1 stage not run; results in coldgate-out/results.json\n"),
            std::string::npos)
      << r.err;
  results::Results res = results();
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 3);
  EXPECT_EQ(res.stopped->phase, results::StopPhase::build);
  EXPECT_EQ(slurp(dir / "coldgate-out/ab/base-build.log"),
            "installing\nError: Cannot find module express\n");
  EXPECT_FALSE(fs::exists(dir / "coldgate-out/ab/head"));  // worktrees gone on this way out too
  EXPECT_FALSE(fs::exists(dir / "coldgate-out/ab/base"));
}

// A head whose build fails while base's builds: the pull request broke it, exit 1, the message
// naming head, the command, how it ended and its output's last lines.
TEST_F(AbTest, AHeadThatDoesNotBuildWhileBaseDoesFailsTheGate) {
  const std::string compile = "echo compiling; echo 'src/app.ts(3,7): error TS2322' >&2; exit 2";
  std::string config = slurp(dir / "coldgate.yaml");
  config.replace(config.find("build: ["), config.find("defaults:") - config.find("build: ["),
                 "build: [ 'echo installing', \"" + compile + "\" ]\n");
  run_git(dir.path(), {"checkout", "-q", "feature-2"});
  const std::string head = commit_files(*this, "breaks-build", {{"coldgate.yaml", config}});
  auto r = ab({"--base", "feature-2", "--no-cache"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string error = "build of head " + head.substr(0, 12) + ": `" + compile +
                            "` failed (exit status 2); log coldgate-out/ab/head-build.log, ends: "
                            "installing | compiling | src/app.ts(3,7): error TS2322; base " +
                            sha["feature-2"].substr(0, 12) +
                            " builds, so the pull request breaks the build";
  EXPECT_NE(r.err.find("\ncoldgate: error: " + error + "\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\ncoldgate: failed: " + error +
                       "; 1 stage not run; results in coldgate-out/results.json\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(slurp(dir / "coldgate-out/report.md").find("\n❌ **failed: build of head "),
            std::string::npos);
  EXPECT_EQ(slurp(dir / "coldgate-out/ab/base-build.log"), "built base\n");
  results::Results res = results();
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 1);
}

// The pull request adds a dependency to package.json but not to package-lock.json, the usual
// way `npm ci` breaks. npm prints its usage text after its error, so the log's last lines say
// nothing of why: the message quotes npm's own line too. A real npm, offline (a `file:`
// dependency needs no registry).
TEST_F(AbTest, ABuildThatNpmRefusesSaysNpmsErrorNotJustItsUsageText) {
  const std::string npm_ci = "npm ci --offline --no-audit --no-fund --cache '" +
                             (dir / ".npm-cache").string() + "'";
  std::string config = slurp(dir / "coldgate.yaml");
  config.replace(config.find("build: ["), config.find("defaults:") - config.find("build: ["),
                 "build: [ \"" + npm_ci + "\" ]\n");
  run_git(dir.path(), {"checkout", "-q", "feature-2"});
  commit_files(*this, "npm-base",
               {{"coldgate.yaml", config},
                {".gitignore", "coldgate-out/\nnode_modules/\n.npm-cache/\n"},
                {"package.json", R"({"name": "app", "version": "1.0.0"})"},
                {"package-lock.json",
                 R"({"name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
                     "packages": {"": {"name": "app", "version": "1.0.0"}}})"},
                {"dep/package.json", R"({"name": "dep", "version": "1.0.0"})"}});
  const std::string head = commit_files(
      *this, "npm-head",
      {{"package.json",
        R"({"name": "app", "version": "1.0.0", "dependencies": {"dep": "file:./dep"}})"}});
  auto r = ab({"--base", "npm-base", "--no-cache"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string failed = "build of head " + head.substr(0, 12) + ": `" + npm_ci +
                             "` failed (exit status 1); log coldgate-out/ab/head-build.log, says: ";
  const std::size_t at = r.err.find("\ncoldgate: error: " + failed);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string line = r.err.substr(at + 1, r.err.find('\n', at + 1) - at - 1);
  // npm 9 prints "npm ERR! …", npm 10 and 11 "npm error …"; the message is the same.
  EXPECT_NE(line.find(" `npm ci` can only install packages when your package.json and "
                      "package-lock.json or npm-shrinkwrap.json are in sync. Please update your "
                      "lock file with `npm install` before continuing.; ends: "),
            std::string::npos)
      << line;
  EXPECT_NE(line.find(" builds, so the pull request breaks the build"), std::string::npos) << line;
}

// A dump that drops and creates the stages' database itself (psql: {database: postgres}) on both
// sides: base's is loaded first and renamed to <name>_base, so each side measures its own data.
TEST_F(AbTest, ScriptsThatMakeTheirOwnDatabaseAreMeasuredOnEachSide) {
  auto dump = [](int artists) { return testing::chinook_shaped_dump("chinook", artists, false); };
  const std::string config = "version: 1\n"
                             "database: { provider: local, name: chinook }\n"
                             "setup:\n"
                             "  - psql: { file: chinook.sql, database: postgres }\n"
                             "defaults: { runs: 1, warm: 0 }\n"
                             "stages:\n"
                             "  - name: artists\n"
                             "    query: select * from artist\n";
  run_git(dir.path(), {"checkout", "-q", "feature-2"});
  commit_files(*this, "dump-base", {{"coldgate.yaml", config}, {"chinook.sql", dump(3)}});
  commit_files(*this, "dump-head", {{"chinook.sql", dump(5)}});
  auto r = ab({"--base", "dump-base", "--no-cache"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning:"), std::string::npos) << r.err;
  EXPECT_LT(r.err.find("setup base: psql chinook.sql"), r.err.find("setup head: psql chinook.sql"))
      << r.err;
  results::Results head = results();
  results::Results base = results("coldgate-out/base/results.json");
  ASSERT_EQ(head.stages.size(), 1u);
  ASSERT_EQ(base.stages.size(), 1u);
  EXPECT_EQ(head.stages[0].error, "");
  EXPECT_EQ(base.stages[0].error, "");
  EXPECT_EQ(head.stages[0].find("rows")->cold, std::vector<double>{5});
  EXPECT_EQ(base.stages[0].find("rows")->cold, std::vector<double>{3});
}

// A base that was named but cannot be had is no silent pass. At a terminal a --base that names
// no commit is most likely a typo: said at once, with the likely ref, before anything is
// measured. In CI head is measured and reported with "no baseline" first, and the run exits 3
// unless --allow-no-baseline.
TEST_F(AbTest, AnUnknownBaseIsReportedAsNoBaselineAndExits3UnlessAllowed) {
  auto typo = ab({"--base", "feature-l"});
  EXPECT_EQ(typo.exit_code, 3) << typo.err;
  EXPECT_NE(typo.err.find("coldgate: error: --base: base 'feature-l' is not a commit of this "
                          "checkout (did you mean 'feature-1'?) (tried feature-l)"),
            std::string::npos)
      << typo.err;
  EXPECT_EQ(typo.err.find("setup head"), std::string::npos) << "head measured for nothing";
  EXPECT_FALSE(fs::exists(dir / "coldgate-out/results.json"));

  auto unknown = ab({"--base", "no-such-branch", "--ci"});
  EXPECT_EQ(unknown.exit_code, 3) << unknown.err;
  EXPECT_NE(unknown.err.find("coldgate: no baseline: nothing was compared — measured head only "
                             "(base 'no-such-branch' is not a commit"),
            std::string::npos)
      << unknown.err;
  EXPECT_NE(unknown.err.find("coldgate: error: --base: no baseline: nothing was compared — base "
                             "'no-such-branch' is not a commit"),
            std::string::npos)
      << unknown.err;
  {
    results::Results r = results();
    EXPECT_FALSE(r.gate);
    EXPECT_NE(r.no_baseline.find("base 'no-such-branch' is not a commit"), std::string::npos)
        << r.no_baseline;
    EXPECT_NE(slurp(dir / "coldgate-out/report.md").find("no baseline"), std::string::npos);
  }

  auto none = ab({});
  EXPECT_EQ(none.exit_code, 3) << none.err;
  EXPECT_NE(none.err.find("pass --base REF"), std::string::npos) << none.err;

  run_git(dir.path(), {"checkout", "-q", "base"});
  auto alone = ab({"--base", "no-such-branch", "--allow-no-baseline"});
  ASSERT_EQ(alone.exit_code, 0) << alone.out << alone.err;
  EXPECT_NE(alone.err.find("no baseline: base 'no-such-branch'"), std::string::npos)
      << alone.err;
  results::Results r = results();
  EXPECT_EQ(r.git.commit, sha["base"]);
  EXPECT_FALSE(r.gate);
  EXPECT_FALSE(fs::exists(dir / "coldgate-out/base/results.json"));
  EXPECT_EQ(run_git(dir.path(), {"worktree", "list", "--porcelain"}).find("coldgate-out"),
            std::string::npos);
}

// The pull request that adds coldgate: its base commit has no config. With
// --allow-no-baseline head is measured alone (what the GitHub action passes); without it the
// base cannot be measured (head's config re-rooted there finds no stage.sql): exit 3.
TEST_F(AbTest, ABaseWithoutTheConfigRunsHeadAloneWhenNoBaselineIsAllowed) {
  TempDir repo;
  repo.write("README", "before coldgate\n");
  run_git(repo.path(), {"init", "-q"});
  run_git(repo.path(), {"add", "-A"});
  run_git(repo.path(), {"commit", "-q", "-m", "before coldgate"});
  const std::string before = run_git(repo.path(), {"rev-parse", "HEAD"});
  run_git(repo.path(), {"checkout", "-q", "-b", "adds-coldgate"});
  repo.write("coldgate.yaml",
             "version: 1\n"
             "database: { provider: local }\n"
             "defaults: { runs: 1, warm: 0 }\n"
             "stages: [ { name: load, sql: stage.sql } ]\n");
  repo.write("stage.sql", "SELECT 1;\n");
  repo.write(".gitignore", "coldgate-out/\n");
  run_git(repo.path(), {"add", "-A"});
  run_git(repo.path(), {"commit", "-q", "-m", "adds coldgate"});
  std::vector<std::string> env = {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF="};

  auto strict = run_coldgate({"ab", "--base", "base"}, repo.path(), "", env);
  EXPECT_EQ(strict.exit_code, 3) << strict.out << strict.err;

  auto alone = run_coldgate({"ab", "--base", "base", "--allow-no-baseline"}, repo.path(), "", env);
  ASSERT_EQ(alone.exit_code, 0) << alone.out << alone.err;
  EXPECT_NE(alone.err.find("no baseline: base " + before.substr(0, 12) +
                           " has no coldgate.yaml (--allow-no-baseline: head runs alone)"),
            std::string::npos)
      << alone.err;
  results::Results r = results::from_json(slurp(repo / "coldgate-out/results.json"), "results.json");
  EXPECT_FALSE(r.gate);
  EXPECT_TRUE(r.git.base.empty()) << r.git.base;
  ASSERT_EQ(r.stages.size(), 1u);
  EXPECT_FALSE(r.stages[0].failed()) << r.stages[0].error;
  EXPECT_EQ(run_git(repo.path(), {"worktree", "list", "--porcelain"}).find("coldgate-out"),
            std::string::npos);
}

TEST_F(AbTest, TheBaseDefaultsToGithubBaseRefPreferringOrigin) {
  ScopedEnv gitlab("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", nullptr);
  {
    ScopedEnv github("GITHUB_BASE_REF", "feature-1");
    Commits c = resolve_commits(dir.path(), {});
    EXPECT_EQ(c.head, sha["feature-2"]);
    EXPECT_EQ(c.head_branch, "feature-2");
    EXPECT_EQ(c.base, sha["feature-1"]);
    EXPECT_EQ(c.base_ref, "feature-1");
    EXPECT_EQ(c.base_from, BaseFrom::github);

    // origin/<ref> wins over a local branch of that name; the base is the merge-base.
    run_git(dir.path(), {"update-ref", "refs/remotes/origin/feature-1", sha["feature-2"]});
    run_git(dir.path(), {"checkout", "-q", "-b", "side", sha["base"]});
    c = resolve_commits(dir.path(), {});
    EXPECT_EQ(c.base_ref, "origin/feature-1");
    EXPECT_EQ(c.base_branch, "feature-1");
    EXPECT_EQ(c.base, sha["base"]);
  }
  ScopedEnv github("GITHUB_BASE_REF", nullptr);
  ScopedEnv gitlab_set("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "base");
  BaseRequest request;
  request.head = "feature-2";
  Commits c = resolve_commits(dir.path(), request);
  EXPECT_EQ(c.base, sha["base"]);
  EXPECT_EQ(c.base_from, BaseFrom::gitlab);
}

TEST_F(AbTest, AShallowCloneWithoutTheMergeBaseSaysToFetchTheHistory) {
  ScopedEnv github("GITHUB_BASE_REF", nullptr);
  ScopedEnv gitlab("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", nullptr);
  TempDir clone;
  run_git(clone.path(), {"clone", "-q", "--depth", "1", "--no-single-branch",
                         "file://" + dir.path().string(), "repo"});
  try {
    BaseRequest request;
    request.base = "origin/base";
    resolve_commits(clone / "repo", request);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_NE(e.message().find("fetch-depth: 0"), std::string::npos) << e.message();
  }
  BaseRequest allowed;
  allowed.base = "origin/base";
  allowed.allow_missing_base = true;
  Commits c = resolve_commits(clone / "repo", allowed);
  EXPECT_EQ(c.base, "");
  EXPECT_NE(c.base_error.find("shallow clone"), std::string::npos) << c.base_error;
}

}  // namespace
}  // namespace coldgate::ab

namespace coldgate::ab {
namespace {

// A stack where feature-2 was merged into feature-1's branch name: --base feature-2 --head
// feature-1 after both point at one commit resolves base and head to the same commit.
TEST_F(AbTest, BaseAndHeadOnOneCommitIsAnErrorNotAPass) {
  auto same = ab({"--base", "feature-2", "--head", "feature-2"});
  EXPECT_EQ(same.exit_code, 2) << same.err;
  EXPECT_NE(same.err.find("nothing to compare: base and head are both " +
                          sha["feature-2"].substr(0, 7) + " (both refs name the same commit)"),
            std::string::npos)
      << same.err;
  // feature-1 is an ancestor of feature-2: their merge-base is feature-1 itself.
  auto ancestor = ab({"--base", "feature-2", "--head", "feature-1"});
  EXPECT_EQ(ancestor.exit_code, 2) << ancestor.err;
  EXPECT_NE(ancestor.err.find("nothing to compare: base and head are both " +
                              sha["feature-1"].substr(0, 7) +
                              " (head is an ancestor of feature-2: swapped refs, or already "
                              "merged?)"),
            std::string::npos)
      << ancestor.err;
  EXPECT_FALSE(fs::exists(dir / "coldgate-out/results.json"));
}

// ab measures commits: an edit of the checkout is named (not measured), and an error in CI.
TEST_F(AbTest, UncommittedChangesAreNamedAndAnErrorInCiMode) {
  dir.write("stage.sql", "SELECT pg_sleep(5);\n");  // would be a regression if it were measured
  dir.write("notes.txt", "untracked\n");
  auto ci = ab({"--base", "feature-1", "--ci"});
  EXPECT_EQ(ci.exit_code, 2) << ci.err;
  EXPECT_NE(ci.err.find("uncommitted changes (M stage.sql, ?? notes.txt)"), std::string::npos)
      << ci.err;
  EXPECT_NE(ci.err.find("in CI mode the checkout must be clean"), std::string::npos) << ci.err;
  EXPECT_FALSE(fs::exists(dir / "coldgate-out/results.json"));

  auto local = ab({"--base", "feature-1"});
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_NE(local.err.find("warning: 2 uncommitted changes in the checkout, not measured (ab "
                           "measures commit " + sha["feature-2"].substr(0, 12) +
                           "): M stage.sql, ?? notes.txt"),
            std::string::npos)
      << local.err;
  EXPECT_NE(slurp(dir / "coldgate-out/report.md")
                .find("⚠️ 2 uncommitted changes in the checkout not measured: this is commit `" +
                      sha["feature-2"].substr(0, 7) + "` as committed"),
            std::string::npos);
  results::Results r = results();
  EXPECT_EQ(r.git.dirty, (std::vector<std::string>{"M stage.sql", "?? notes.txt"}));
  EXPECT_FALSE(r.git.dirty_measured);
  EXPECT_EQ(verdict(r, "query_ms"), "faster");  // the commit was measured, not the edit
  // coldgate's own --out folder is never an uncommitted change, though git does not ignore it.
  fs::remove(dir / "notes.txt");
  run_git(dir.path(), {"checkout", "-q", "--", "stage.sql"});
  auto ok = ab({"--base", "feature-1", "--ci", "--out", "out-here"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(results("out-here/results.json").git.dirty.empty());
}

// The push of a branch tip records it; the pull request stacked on that branch then takes
// its base from the cache, and the report says it was not interleaved.
TEST_F(AbTest, ARecordedBranchTipIsTheCachedBaseOfTheNextPullRequest) {
  auto record = ab({"--record", "--head", "feature-1"});
  ASSERT_EQ(record.exit_code, 0) << record.err;
  EXPECT_NE(record.err.find("recorded for the cache, nothing compared"), std::string::npos)
      << record.err;
  results::Results recorded = results();
  EXPECT_FALSE(recorded.gate);
  EXPECT_TRUE(recorded.no_baseline.empty()) << recorded.no_baseline;
  EXPECT_EQ(recorded.git.commit, sha["feature-1"]);
  bool cached = false;
  for (const auto& e : fs::directory_iterator(dir / "coldgate-out/cache")) {
    cached = cached || e.path().filename().string().rfind(sha["feature-1"] + "-", 0) == 0;
  }
  EXPECT_TRUE(cached);

  auto pr = ab({"--base", "feature-1"});  // checkout is at feature-2
  ASSERT_EQ(pr.exit_code, 0) << pr.err;
  EXPECT_NE(pr.err.find("from the cache"), std::string::npos) << pr.err;
  EXPECT_EQ(pr.err.find("base: cold run"), std::string::npos) << pr.err;
  results::Results r = results();
  ASSERT_TRUE(r.gate);
  EXPECT_EQ(r.gate->base_source, results::BaseSource::cache);
  EXPECT_EQ(r.gate->base_measured_at, recorded.finished_at);
  EXPECT_EQ(r.gate->base_host, recorded.environment.host);
  EXPECT_EQ(verdict(r, "query_ms"), "faster");

  auto interleaved = ab({"--base", "feature-1", "--no-cache"});
  ASSERT_EQ(interleaved.exit_code, 0) << interleaved.err;
  EXPECT_EQ(results().gate->base_source, results::BaseSource::interleaved);

  EXPECT_EQ(ab({"--record", "--no-cache"}).exit_code, 2);
  EXPECT_EQ(ab({"--record", "--base", "base"}).exit_code, 2);
}

// Outputs an earlier run left (a plan of another base, a pr-number, a candidate) do not pass
// for this run's; the cache and files that are not coldgate's stay.
TEST_F(AbTest, StaleOutputsAreClearedAndNothingElse) {
  dir.write("coldgate-out/explain/old-stage.json", "{}");
  dir.write("coldgate-out/pr-number", "41\n");
  dir.write("coldgate-out/snapshots/snapshots/old.json.new", "{}");
  dir.write("coldgate-out/report-full.md", "old\n");
  dir.write("coldgate-out/cache/keep.json", "{}");
  dir.write("coldgate-out/mine.txt", "not coldgate's\n");
  auto same = ab({"--base", "feature-2", "--head", "feature-2"});  // stops early: exit 2
  EXPECT_EQ(same.exit_code, 2) << same.err;
  for (const char* gone : {"explain/old-stage.json", "pr-number", "snapshots", "report-full.md"}) {
    EXPECT_FALSE(fs::exists(dir / "coldgate-out" / gone)) << gone;
  }
  EXPECT_TRUE(fs::exists(dir / "coldgate-out/cache/keep.json"));
  EXPECT_TRUE(fs::exists(dir / "coldgate-out/mine.txt"));
}

// A `run` into the folder of an earlier `ab` (and `stack`) leaves none of their outputs to pass
// for its own — base/'s results and plans, the build logs, a stack's reports, candidates and
// summary — and keeps what is not coldgate's, also inside those folders.
TEST_F(AbTest, ARunAfterAnAbLeavesNoneOfItsOutputsAndKeepsOthers) {
  run_git(dir.path(), {"checkout", "-q", "feature-2"});
  auto ab_run = ab({"--base", "feature-1"});  // a fresh --out: both measured, both cached
  ASSERT_EQ(ab_run.exit_code, 0) << ab_run.err;
  for (const char* made : {"base/results.json", "base/explain/load.json", "ab/head-build.log",
                           "ab/base-build.log"}) {
    ASSERT_TRUE(fs::exists(dir / "coldgate-out" / made)) << made;
  }
  for (const char* stack_file : {"stack/summary.md", "stack/build/1-s1.log",
                                 "stack/0-main/results.json", "stack/1-s1/results.json",
                                 "stack/1-s1/report.md", "stack/1-s1/junit.xml",
                                 "stack/1-s1/explain/load.json",
                                 "stack/1-s1/snapshots/snapshots/x.json"}) {
    dir.write(std::string("coldgate-out/") + stack_file, "{}");
  }
  for (const char* mine : {"mine.txt", "base/mine.txt", "stack/notes/mine.txt"}) {
    dir.write(std::string("coldgate-out/") + mine, "not coldgate's\n");
  }
  auto run = run_coldgate({"run"}, dir.path(), "", {"CI=", "GITHUB_ACTIONS="});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> left;  // what is in coldgate-out/ besides ab's cache entries
  std::size_t cached = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "coldgate-out")) {
    std::string path = e.path().lexically_relative(dir / "coldgate-out").string();
    if (path.starts_with("cache/")) {
      ++cached;
    } else {
      left.push_back(path);
    }
  }
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{".lock", "base", "base/mine.txt", "cache", "explain",
                                            "explain/load.json", "junit.xml", "mine.txt",
                                            "report.md", "results.json", "stack", "stack/notes",
                                            "stack/notes/mine.txt"}));
  EXPECT_EQ(cached, 2u);  // the cache is ab's to keep: base's and head's results
}

// A SIGKILLed ab (here by its own build step) leaves its work folder; the next ab removes it.
TEST_F(AbTest, ASigkilledAbLeavesNothingOnceTheNextOneStarts) {
  std::string killer = slurp(dir / "coldgate.yaml");
  killer.replace(killer.find("build: ["), 0,
                 "build: [ 'echo $PPID > \"$KILLED_PID_FILE\"; kill -9 $PPID' ]\n#");
  run_git(dir.path(), {"checkout", "-q", "-b", "killer"});
  dir.write("coldgate.yaml", killer);
  run_git(dir.path(), {"commit", "-q", "-am", "a build step that kills coldgate"});
  const fs::path pid_file = dir / "killed.pid";
  auto killed = ab({"--base", "feature-1"}, {"KILLED_PID_FILE=" + pid_file.string()});
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.err;
  std::string pid = slurp(pid_file);
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  ASSERT_FALSE(pid.empty());
  // The killed run's work folder: the one whose owner file names its PID.
  auto left_by_killed = [&] {
    std::vector<fs::path> found;
    const char* base = std::getenv("TMPDIR");
    for (const auto& e : fs::directory_iterator(base && *base ? base : "/tmp")) {
      if (e.path().filename().string().rfind("coldgate-ab-", 0) != 0) continue;
      std::error_code ec;
      if (!fs::exists(e.path() / "owner", ec)) continue;
      if (slurp(e.path() / "owner").find("owner_pid=" + pid + "\n") == 0) found.push_back(e.path());
    }
    return found;
  };
  ASSERT_EQ(left_by_killed().size(), 1u);
  run_git(dir.path(), {"checkout", "-q", "feature-2"});
  auto next = ab({"--base", "feature-1"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_TRUE(left_by_killed().empty());
  EXPECT_EQ(run_git(dir.path(), {"worktree", "list", "--porcelain"}).find("coldgate-out/ab"),
            std::string::npos);
}

// ab keeps run's promise on secrets: the server's password and secret environment values
// that stages quote are masked in stdout, stderr and every file ab writes, both sides'.
TEST_F(AbTest, TheServerPasswordAndSecretValuesAreMaskedInEveryOutput) {
  constexpr const char* k_token = "ghp_AbTestToken0123456789abcdef";
  std::string config = slurp(dir / "coldgate.yaml");
  config.replace(config.find("gate:"), 0,
                 "  - name: leaky\n"
                 "    command: 'echo \"pw=$PGPASSWORD url=$DATABASE_URL token=$GITHUB_TOKEN\" >&2; "
                 "exit 3'\n");
  run_git(dir.path(), {"checkout", "-q", "-b", "leaky-base"});
  dir.write("coldgate.yaml", config);
  run_git(dir.path(), {"commit", "-q", "-am", "a stage that quotes secrets"});
  run_git(dir.path(), {"checkout", "-q", "-b", "leaky-head"});
  commit_stage("leaky-head", 0.06, "head");
  auto r = ab({"--base", "leaky-base"}, {std::string("GITHUB_TOKEN=") + k_token});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the leaky stage fails on head
  results::Results head = results();
  results::Results base = results("coldgate-out/base/results.json");
  for (const results::Results* side : {&head, &base}) {
    ASSERT_EQ(side->stages.size(), 2u);
    // The leak happened and was masked: a test that cannot fail would find no "***".
    EXPECT_NE(side->stages[1].error.find("pw=*** url=postgresql://"), std::string::npos)
        << side->stages[1].error;
    EXPECT_NE(side->stages[1].error.find("token=***"), std::string::npos) << side->stages[1].error;
  }
  // The URL's password field is masked too, and the token is in no output at all.
  EXPECT_NE(head.stages[1].error.find(":***@"), std::string::npos) << head.stages[1].error;
  std::vector<std::pair<std::string, std::string>> all{{"stdout", r.out}, {"stderr", r.err}};
  for (const auto& e : fs::recursive_directory_iterator(dir / "coldgate-out")) {
    if (e.is_regular_file()) all.emplace_back(e.path().string(), slurp(e.path()));
  }
  for (const auto& [name, text] : all) EXPECT_EQ(text.find(k_token), std::string::npos) << name;
}

// Time verdicts that noise does not decide (gate.max_extra_runs): a stage that sleeps 0.1 s on
// main and 0.25 s on each pull request, judged with max_ratio 3 — a ratio near 2.5 lies in the
// band max_ratio/2 … 2 × max_ratio where a few runs could turn the verdict. Whether a verdict
// is undecided depends on the timing, so each test computes gate::undecided from the samples
// in results.json and asserts what must follow from it, whatever the timing was.
struct ExtraRunsTest : ::testing::Test {
  static constexpr int k_runs = 3;
  static constexpr int k_extra = 4;
  void SetUp() override {
    testing::make_server_tmpdir(dir, tmp);
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: local }\n"
              "setup: [ { sql: schema.sql } ]\n"
              "defaults: { runs: 3, warm: 0 }\n"
              "stages:\n"
              "  - name: wait\n"
              "    command: sleep $(cat delay.txt)\n"
              "gate: { max_ratio: 3, warn_ratio: 2, min_delta: 0ms, metrics: [wall_ms], "
              "max_extra_runs: 4 }\n");
    dir.write("schema.sql", "CREATE TABLE item (id int);\n");
    dir.write(".gitignore", "coldgate-out/\ntmp/\n");
    dir.write("delay.txt", "0.1\n");
    run_git(dir.path(), {"init", "-q"});
    commit("main");
    run_git(dir.path(), {"branch", "-m", "main"});
    dir.write("delay.txt", "0.25\n");
    commit("s1");
    dir.write("other.txt", "not measured\n");
    commit("s2");  // as slow as s1: an A/A pair above it
    gate.max_ratio = 3;
    gate.warn_ratio = 2;
    gate.min_delta = std::chrono::milliseconds(0);
    gate.metrics = {"wall_ms"};
    gate.max_extra_runs = k_extra;
  }
  void commit(const std::string& name) {
    if (name != "main") run_git(dir.path(), {"checkout", "-q", "-b", name});
    run_git(dir.path(), {"add", "-A"});
    run_git(dir.path(), {"commit", "-q", "-m", name});
  }
  testing::RunResult coldgate(std::vector<std::string> args) {
    return run_coldgate(args, dir.path(), "",
                        {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_HEAD_REF=",
                         "GITHUB_STEP_SUMMARY=", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=",
                         "TMPDIR=" + tmp.string()});
  }
  results::Results results(const std::string& file) {
    return results::from_json(slurp(dir / file), file);
  }
  static const results::StageResult& wait(const results::Results& r) {
    EXPECT_EQ(r.stages.size(), 1u);
    return r.stages.at(0);
  }
  static std::size_t samples(const results::Results& r) {
    const results::Metric* m = wait(r).find("wall_ms");
    EXPECT_NE(m, nullptr);
    return m ? m->cold.size() : 0;
  }
  // The stage with only its first `n` cold samples: what decide() judged before any extra run.
  static results::StageResult first(const results::Results& r, std::size_t n) {
    results::StageResult s = wait(r);
    for (auto& [name, m] : s.metrics) {
      if (m.cold.size() > n) m.cold.resize(n);
    }
    return s;
  }
  bool undecided(const results::StageResult& head, const results::StageResult& base) const {
    return !gate::undecided_metrics(head, base, gate).empty();
  }
  static const results::MetricVerdict& verdict(const results::Results& r) {
    EXPECT_TRUE(r.gate);
    EXPECT_EQ(r.gate->metrics.size(), 1u);
    return r.gate->metrics.at(0);
  }
  static bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  }
  // What a pair's verdict says of its extra runs, `n` of each side.
  static void expect_decided_after(const results::MetricVerdict& v, std::size_t n) {
    EXPECT_EQ(v.extra_runs, static_cast<int>(n));
    EXPECT_TRUE(ends_with(v.reason, fmt::format("; decided after {} more run{} each", n,
                                                n == 1 ? "" : "s")))
        << v.reason;
  }
  TempDir dir;
  fs::path tmp = dir / "tmp";
  config::Gate gate;
};

TEST_F(ExtraRunsTest, AbMeasuresBothSidesAgainWhileTheVerdictIsNearItsThreshold) {
  run_git(dir.path(), {"checkout", "-q", "s1"});
  auto r = coldgate({"ab", "--base", "main"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;  // slower or regression
  results::Results head = results("coldgate-out/results.json");
  results::Results base = results("coldgate-out/base/results.json");
  const std::size_t n = samples(head);
  // Both sides alike, interleaved, at most max_extra_runs more; `runs` stays the stage's.
  EXPECT_EQ(samples(base), n);
  EXPECT_GE(n, std::size_t{k_runs});
  EXPECT_LE(n, std::size_t{k_runs + k_extra});
  EXPECT_EQ(wait(head).runs, k_runs);
  EXPECT_EQ(wait(base).runs, k_runs);
  EXPECT_EQ(head.gate->thresholds.max_extra_runs, k_extra);
  // Extra runs exactly when the first runs left the verdict undecided …
  EXPECT_EQ(n > k_runs, undecided(first(head, k_runs), first(base, k_runs)))
      << r.err << verdict(head).reason;
  // … and they stopped early only once it was decided.
  if (n < k_runs + k_extra) {
    EXPECT_FALSE(undecided(wait(head), wait(base))) << r.err;
  }
  const results::MetricVerdict& v = verdict(head);
  if (n > k_runs) {
    expect_decided_after(v, n - k_runs);
    // Interleaved: base, head, base, head …
    auto b4 = r.err.find("base: cold run 4 (extra 1)");
    auto h4 = r.err.find("head: cold run 4 (extra 1)");
    ASSERT_NE(b4, std::string::npos) << r.err;
    ASSERT_NE(h4, std::string::npos) << r.err;
    EXPECT_LT(r.err.find("head: cold run 3/3"), b4);
    EXPECT_LT(b4, h4);
    if (n > k_runs + 1) {
      EXPECT_LT(h4, r.err.find("base: cold run 5 (extra 2)")) << r.err;
    }
    EXPECT_NE(r.err.find("stage wait: wall_ms near the threshold"), std::string::npos) << r.err;
  } else {
    EXPECT_EQ(v.extra_runs, 0);
    EXPECT_EQ(v.reason.find("decided after"), std::string::npos) << v.reason;
    EXPECT_EQ(r.err.find("(extra 1)"), std::string::npos) << r.err;
  }

  // Again with the base from the cache: it cannot be measured again, so head runs its own
  // runs only, and a verdict still near its threshold says why nothing more was done.
  auto again = coldgate({"ab", "--base", "main"});
  ASSERT_TRUE(again.exit_code == 0 || again.exit_code == 1) << again.out << again.err;
  ASSERT_NE(again.err.find("from the cache"), std::string::npos) << again.err;
  head = results("coldgate-out/results.json");
  EXPECT_EQ(samples(head), std::size_t{k_runs});
  EXPECT_EQ(again.err.find("(extra 1)"), std::string::npos) << again.err;
  const results::MetricVerdict& c = verdict(head);
  EXPECT_EQ(c.extra_runs, 0);
  EXPECT_EQ(c.reason.find("decided after"), std::string::npos) << c.reason;
  // The cached base is the one measured above, its extra samples included.
  EXPECT_EQ(head.gate->base_source, results::BaseSource::cache);
  ASSERT_TRUE(c.base_median);
  EXPECT_NEAR(*c.base_median, results::median(base.stages.at(0).find("wall_ms")->cold), 0.01);
  const bool near =
      gate::undecided(c, *wait(head).find("wall_ms"), *base.stages.at(0).find("wall_ms"), gate);
  EXPECT_EQ(c.reason.find("near its threshold, but base came from the cache: no extra runs") !=
                std::string::npos,
            near)
      << c.reason;
}

TEST_F(ExtraRunsTest, StackMeasuresAgainOnlyThePairsNearTheirThreshold) {
  auto r = coldgate({"stack", "main", "s1", "s2", "--no-cache"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  std::vector<results::Results> c{results("coldgate-out/stack/0-main/results.json"),
                                  results("coldgate-out/stack/1-s1/results.json"),
                                  results("coldgate-out/stack/2-s2/results.json")};
  std::vector<std::size_t> n;
  for (const auto& x : c) {
    n.push_back(samples(x));
    EXPECT_GE(n.back(), std::size_t{k_runs});
    EXPECT_LE(n.back(), std::size_t{k_runs + k_extra});
    EXPECT_EQ(wait(x).runs, k_runs);
  }
  for (std::size_t k = 1; k < c.size(); ++k) {
    SCOPED_TRACE(fmt::format("pull request {}", k));
    const bool at_first = undecided(first(c[k], k_runs), first(c[k - 1], k_runs));
    const results::MetricVerdict& v = verdict(c[k]);
    if (at_first) {
      // Both sides of an undecided pair were measured again, and the verdict says so.
      EXPECT_GT(n[k - 1], std::size_t{k_runs});
      EXPECT_GT(n[k], std::size_t{k_runs});
      EXPECT_GT(v.extra_runs, 0) << v.reason;
      EXPECT_NE(v.reason.find("; decided after"), std::string::npos) << v.reason;
      if (n[k] == n[k - 1]) expect_decided_after(v, n[k] - k_runs);
    }
    // A side's extra runs come from a pair that was undecided: its own, or the one below or
    // above; and a pair stops only once decided or out of runs.
    if (v.extra_runs > 0) {
      EXPECT_EQ(v.extra_runs, static_cast<int>(n[k] - k_runs));
    }
    if (std::max(n[k - 1], n[k]) < std::size_t{k_runs + k_extra}) {
      EXPECT_FALSE(undecided(wait(c[k]), wait(c[k - 1]))) << v.reason;
    }
  }
}

}  // namespace
}  // namespace coldgate::ab
