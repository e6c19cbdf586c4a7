// `coldgate ab` with the trend of its base branch's recorded results, end to end: main commits
// recorded with `history record` (from results files written here: recording measures nothing),
// a feature branch, and `ab --base main` measured for real on the local provider.
#include <gtest/gtest.h>

#include <sstream>

#include "history/history_fixtures.hpp"
#include "results/json.hpp"
#include "support/support.hpp"

namespace coldgate::history {
namespace {

using results::Results;
using testing::run_coldgate;
using testing::run_git;
using testing::slurp;

// How many lines of `text` contain `word`.
std::size_t lines_with(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find(word) != std::string::npos;
  return n;
}

struct HistoryAb : ::testing::Test {
  HistoryAb() {
    run_git(repo.path(), {"init", "-q", "-b", "main"});
    repo.write(".gitignore", "coldgate-out/\nout/\nhist/\nnot-a-folder\n");
    repo.write("coldgate.yaml",
               "version: 1\n"
               "database: { provider: local }\n"
               "defaults: { runs: 2, warm: 0 }\n"
               "stages:\n"
               "  - name: steady\n    query: select 1\n"
               // Gated on the row count alone: the outcome cannot depend on the machine's speed.
               "gate: { metrics: [rows] }\n");
    run_git(repo.path(), {"add", "-A"});
    run_git(repo.path(), {"commit", "-qm", "config"});
  }

  std::string commit(const std::string& subject, double wall_ms) {
    return fixtures::commit_with_results(repo, subject, wall_ms, "steady");
  }
  testing::RunResult coldgate(std::vector<std::string> args) {
    return run_coldgate(args, repo.path(), "",
                        {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_HEAD_REF=",
                         "GITHUB_REF_NAME=", "CI_COMMIT_BRANCH=",
                         "CI_MERGE_REQUEST_TARGET_BRANCH_NAME="});
  }
  void record(const std::string& sha, const std::vector<std::string>& extra = {}) {
    auto r = fixtures::record(repo, sha, extra);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  Results results() {
    return results::from_json(slurp(repo / "coldgate-out/results.json"), "results.json");
  }
  std::string report() { return slurp(repo / "coldgate-out/report.md"); }

  testing::TempDir repo;
};

TEST_F(HistoryAb, ThePullRequestReportShowsTheLastMainPointsAndThisRun) {
  // main: m1 … m3 recorded; the feature branches off m3; then main moves on to m4, recorded too
  // but no ancestor of the merge-base.
  std::vector<std::string> main_commits;
  for (int i = 1; i <= 3; ++i) {
    main_commits.push_back(commit("main " + std::to_string(i), 10.0 * i));
    record(main_commits.back());
  }
  run_git(repo.path(), {"checkout", "-qb", "feature"});
  const std::string feature = commit("feature: a change", 0);
  run_git(repo.path(), {"checkout", "-q", "main"});
  const std::string m4 = commit("main 4", 40);
  record(m4);
  run_git(repo.path(), {"checkout", "-q", "feature"});

  auto first = coldgate({"ab", "--base", "main"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.err.find("warning"), std::string::npos) << first.err;
  Results r = results();
  EXPECT_EQ(r.git.commit, feature);
  ASSERT_TRUE(r.gate);
  EXPECT_EQ(r.gate->base_source, results::BaseSource::interleaved);
  EXPECT_EQ(r.gate->base_git.commit, main_commits[2]);
  ASSERT_TRUE(r.history) << first.err;
  EXPECT_EQ(r.history->store, "git:coldgate-history");
  EXPECT_EQ(r.history->asked, 5);
  // Oldest first, the base commit's own record the newest; m4 is not reachable from the base.
  ASSERT_EQ(r.history->commits.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.history->commits[i].commit, main_commits[i]);
    EXPECT_EQ(r.history->commits[i].subject, "main " + std::to_string(i + 1));
  }
  ASSERT_EQ(r.history->series.size(), 1u);
  EXPECT_EQ(r.history->series[0].stage, "steady");
  EXPECT_EQ(r.history->series[0].metric, "wall_ms");
  EXPECT_EQ(r.history->series[0].medians,
            (std::vector<std::optional<double>>{11, 21, 31}));
  ASSERT_TRUE(r.history->series[0].head);
  EXPECT_EQ(*r.history->series[0].head, results::median(r.stages[0].find("wall_ms")->cold));
  std::string md = report();
  EXPECT_NE(md.find("<summary>Trend: 3 recorded commits of main and this run (head)</summary>"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("```mermaid\nxychart-beta\n    title \"steady · wall_ms\"\n    x-axis [\"" +
                    main_commits[0].substr(0, 7) + "\", \"" + main_commits[1].substr(0, 7) +
                    "\", \"" + main_commits[2].substr(0, 7) + "\", \"this run\"]\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("History baseline"), std::string::npos) << "the base is not the history";
  EXPECT_EQ(md.find(m4.substr(0, 7)), std::string::npos);
  // The terminal's form: one line for the stage, this run last.
  EXPECT_NE(first.out.find("- steady wall_ms (ms): 11 21 31 → this run "), std::string::npos)
      << first.out;

  // --no-trend: the store is not read, the outcome is the same (base now from the cache).
  auto no_trend = coldgate({"ab", "--base", "main", "--no-trend"});
  EXPECT_EQ(no_trend.exit_code, first.exit_code) << no_trend.err;
  r = results();
  ASSERT_TRUE(r.gate);
  EXPECT_EQ(r.gate->base_source, results::BaseSource::cache);
  EXPECT_FALSE(r.history);
  EXPECT_EQ(report().find("Trend"), std::string::npos);

  // A store named that is not there: no trend, the same exit code, and it is said, once.
  auto empty = coldgate({"ab", "--base", "main", "--store", "hist"});
  EXPECT_EQ(empty.exit_code, first.exit_code) << empty.err;
  EXPECT_NE(empty.err.find("warning: the history store hist does not exist (an empty store)"),
            std::string::npos)
      << empty.err;
  EXPECT_EQ(empty.err.find("warning"), empty.err.rfind("warning")) << empty.err;
  EXPECT_FALSE(results().history);
  EXPECT_EQ(report().find("Trend"), std::string::npos);

  // A store that cannot be read: one warning line, no trend, the same exit code.
  repo.write("not-a-folder", "x\n");
  auto unreadable = coldgate({"ab", "--base", "main", "--store", "not-a-folder"});
  EXPECT_EQ(unreadable.exit_code, first.exit_code) << unreadable.err;
  EXPECT_EQ(lines_with(unreadable.err, "warning"), 1u) << unreadable.err;
  EXPECT_NE(unreadable.err.find("coldgate: warning: no trend in the report: "), std::string::npos)
      << unreadable.err;
  EXPECT_FALSE(results().history);

  // A folder store with a file that is no record: skipped with a warning, the rest drawn.
  for (const auto& sha : main_commits) record(sha, {"--store", "hist"});
  repo.write("hist/junk.json", "{\"schema\": ");
  auto folder = coldgate({"ab", "--base", "main", "--store", "hist"});
  EXPECT_EQ(folder.exit_code, first.exit_code) << folder.err;
  EXPECT_NE(folder.err.find("coldgate: warning: skipped hist/junk.json"), std::string::npos)
      << folder.err;
  r = results();
  ASSERT_TRUE(r.history);
  EXPECT_EQ(r.history->store, "hist");
  EXPECT_EQ(r.history->commits.size(), 3u);
  EXPECT_NE(report().find("`hist`, oldest first, then head: this run."), std::string::npos)
      << report();

  // --store with --no-trend contradicts itself: refused before anything is measured.
  auto both = coldgate({"ab", "--base", "main", "--store", "hist", "--no-trend"});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("--store: --no-trend reads no history store"), std::string::npos)
      << both.err;
}

}  // namespace
}  // namespace coldgate::history
