// `coldgate history record` and `run --baseline history` as a user runs them: the real binary
// in a temporary git repository. Recording reads a results file and measures nothing, so these
// tests write the results of each commit themselves; the gate against the history on a real
// server is tests/history/history_run_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "history/history_fixtures.hpp"
#include "history/record.hpp"
#include "results/json.hpp"
#include "support/support.hpp"

namespace coldgate::history {
namespace {

using testing::run_coldgate;
using testing::run_git;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

struct HistoryCli : ::testing::Test {
  HistoryCli() {
    run_git(repo.path(), {"init", "-q", "-b", "main"});
    repo.write("coldgate.yaml",
               "version: 1\nstages:\n  - name: load\n    query: select 1\n");
    run_git(repo.path(), {"add", "coldgate.yaml"});
    run_git(repo.path(), {"commit", "-qm", "config"});
  }

  // A commit of its own (subject `subject`) and the results of a run of it in out/.
  std::string commit(const std::string& subject, double wall_ms) {
    return fixtures::commit_with_results(repo, subject, wall_ms);
  }

  testing::RunResult record(const std::string& sha, std::vector<std::string> extra = {}) {
    return fixtures::record(repo, sha, extra);
  }

  testing::TempDir repo;
};

TEST_F(HistoryCli, RecordsTwentyCommitsIntoTheBranchAndThenIntoAFolder) {
  std::vector<std::string> shas;
  for (int i = 0; i < 20; ++i) shas.push_back(commit("change " + std::to_string(i), 10 + i));
  const std::string head = run_git(repo.path(), {"rev-parse", "HEAD"});
  for (const auto& sha : shas) {
    auto r = record(sha);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("recorded " + sha.substr(0, 7) + " (main, 1 stages) in git:coldgate-history", 0), 0u)
        << r.out;
  }
  // One commit per record on the branch, one file per commit; the checkout untouched.
  EXPECT_EQ(run_git(repo.path(), {"rev-list", "--count", "coldgate-history"}), "20");
  auto files = lines(run_git(repo.path(), {"ls-tree", "--name-only", "coldgate-history"}));
  ASSERT_EQ(files.size(), 20u);
  for (const auto& sha : shas) {
    const std::string text = run_git(repo.path(), {"show", "coldgate-history:" + sha + ".json"});
    Record rec = from_json(text + "\n", sha);
    EXPECT_EQ(rec.commit, sha);
    EXPECT_EQ(rec.branch, "main");
    EXPECT_EQ(rec.subject, "change " + std::to_string(&sha - shas.data()));
    EXPECT_EQ(rec.parent.size(), 40u);
    EXPECT_EQ(rec.fingerprint.size(), 16u);
  }
  EXPECT_EQ(run_git(repo.path(), {"rev-parse", "HEAD"}), head);
  EXPECT_EQ(run_git(repo.path(), {"status", "--porcelain", "--untracked-files=no"}), "");
  EXPECT_EQ(run_git(repo.path(), {"symbolic-ref", "--short", "HEAD"}), "main");

  // Recording a commit again replaces its file: still 20 files, one commit more.
  ASSERT_EQ(record(shas[3]).exit_code, 0);
  EXPECT_EQ(lines(run_git(repo.path(), {"ls-tree", "--name-only", "coldgate-history"})).size(), 20u);
  EXPECT_EQ(run_git(repo.path(), {"rev-list", "--count", "coldgate-history"}), "21");

  // A folder store: the same 20, one file each, whole.
  for (const auto& sha : shas) {
    auto r = record(sha, {"--store", "hist"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(" in "), std::string::npos);
  }
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(repo / "hist")) {
    ++n;
    EXPECT_EQ(e.path().extension(), ".json") << e.path();
    Record rec = from_json(testing::slurp(e.path()), e.path().string());
    EXPECT_EQ(e.path().filename().string(), rec.commit + ".json");
  }
  EXPECT_EQ(n, 20u);
}

TEST_F(HistoryCli, TwoRecordsAtOnceBothLand) {
  // Two main-branch builds finishing together: whoever loses the race retries.
  std::vector<std::string> shas;
  for (int i = 0; i < 6; ++i) shas.push_back(commit("change " + std::to_string(i), 10));
  std::vector<testing::RunResult> out(shas.size());
  {
    std::vector<std::thread> writers;
    for (std::size_t i = 0; i < shas.size(); ++i) {
      writers.emplace_back([&, i] { out[i] = record(shas[i]); });
    }
    for (auto& t : writers) t.join();
  }
  for (const auto& r : out) EXPECT_EQ(r.exit_code, 0) << r.err;
  auto files = lines(run_git(repo.path(), {"ls-tree", "--name-only", "coldgate-history"}));
  EXPECT_EQ(files.size(), shas.size());
  EXPECT_EQ(run_git(repo.path(), {"rev-list", "--count", "coldgate-history"}),
            std::to_string(shas.size()));
  // Linear: every record commit has one parent (none force-replaced another).
  EXPECT_EQ(run_git(repo.path(), {"rev-list", "--merges", "--count", "coldgate-history"}), "0");
}

TEST_F(HistoryCli, TwoClonesPushingAtOnceBothLand) {
  testing::TempDir remote;
  run_git(remote.path(), {"init", "-q", "--bare", "-b", "main"});
  run_git(repo.path(), {"remote", "add", "origin", remote.path().string()});
  std::vector<std::string> shas = {commit("a", 10), commit("b", 11), commit("c", 12),
                                   commit("d", 13)};
  run_git(repo.path(), {"push", "-q", "origin", "main"});
  testing::TempDir other;
  run_git(other.path(), {"clone", "-q", remote.path().string(), "clone"});
  const auto clone = other / "clone";
  // The other build has the same results files (its own run of the same commits).
  std::filesystem::copy(repo / "out", clone / "out");
  std::vector<testing::RunResult> out(shas.size());
  {
    std::vector<std::thread> writers;
    for (std::size_t i = 0; i < shas.size(); ++i) {
      writers.emplace_back([&, i] {
        out[i] = run_coldgate({"history", "record", "--push", "--results",
                               "out/results-" + shas[i] + ".json"},
                              i % 2 ? clone : repo.path(), "", {"CI="});
      });
    }
    for (auto& t : writers) t.join();
  }
  for (const auto& r : out) EXPECT_EQ(r.exit_code, 0) << r.err;
  auto files = lines(run_git(remote.path(), {"ls-tree", "--name-only", "coldgate-history"}));
  EXPECT_EQ(files.size(), shas.size());
  EXPECT_EQ(run_git(remote.path(), {"rev-list", "--count", "coldgate-history"}),
            std::to_string(shas.size()));
}

TEST_F(HistoryCli, RefusesWhatCannotBeRecordedSayingWhatToDo) {
  auto missing = run_coldgate({"history", "record"}, repo.path(), "", {"CI="});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("coldgate-out/results.json: no results to record: run `coldgate run` "
                             "first"),
            std::string::npos)
      << missing.err;
  const std::string sha = commit("x", 1);
  auto page_flag = record(sha, {"-o", "site"});
  EXPECT_EQ(page_flag.exit_code, 2);
  EXPECT_NE(page_flag.err.find("only `history page` writes a page"), std::string::npos);
  auto page_push = run_coldgate({"history", "page", "--push", "-o", "site"}, repo.path(), "", {"CI="});
  EXPECT_EQ(page_push.exit_code, 2);
  EXPECT_NE(page_push.err.find("only `history record` pushes"), std::string::npos) << page_push.err;
  auto push_folder = record(sha, {"--store", "hist", "--push"});
  EXPECT_EQ(push_folder.exit_code, 2);
  EXPECT_NE(push_folder.err.find("is a folder store: only a git: store is pushed"),
            std::string::npos)
      << push_folder.err;
  // Results of a commit this checkout does not have.
  std::string foreign = testing::slurp(repo / ("out/results-" + sha + ".json"));
  foreign.replace(foreign.find(sha), 40, std::string(40, 'e'));
  repo.write("out/foreign.json", foreign);
  auto unknown = run_coldgate({"history", "record", "--results", "out/foreign.json"}, repo.path(),
                              "", {"CI="});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("commit eeeeeeeeeeee is not in the repository"), std::string::npos)
      << unknown.err;
  EXPECT_EQ(run_git(repo.path(), {"branch", "--list", "coldgate-history"}), "");
}

}  // namespace
}  // namespace coldgate::history

namespace coldgate::history {
namespace {

TEST_F(HistoryCli, APushCarriesTheRecordsMadeHereWithoutPush) {
  testing::TempDir remote;
  run_git(remote.path(), {"init", "-q", "--bare", "-b", "main"});
  run_git(repo.path(), {"remote", "add", "origin", remote.path().string()});
  const std::string a = commit("a", 10);
  const std::string b = commit("b", 11);
  ASSERT_EQ(record(a).exit_code, 0);  // local only
  auto pushed = record(b, {"--push"});
  ASSERT_EQ(pushed.exit_code, 0) << pushed.err;
  EXPECT_NE(pushed.out.find("(pushed to origin)"), std::string::npos) << pushed.out;
  auto files = lines(run_git(remote.path(), {"ls-tree", "--name-only", "coldgate-history"}));
  std::vector<std::string> both = {a + ".json", b + ".json"};
  std::sort(both.begin(), both.end());  // a tree lists its files by name
  EXPECT_EQ(files, both);
  EXPECT_EQ(lines(run_git(repo.path(), {"ls-tree", "--name-only", "coldgate-history"})), files);
}

}  // namespace
}  // namespace coldgate::history

namespace coldgate::history {
namespace {

TEST_F(HistoryCli, AStoreThatIsNotThereIsSaidToBeEmpty) {
  auto page = run_coldgate({"history", "page", "--store", "nowhere", "-o", "site"}, repo.path(),
                           "", {"CI="});
  EXPECT_EQ(page.exit_code, 0) << page.err;
  EXPECT_NE(page.err.find("warning: history page: the history store nowhere does not exist (an "
                          "empty store): coldgate history record --store nowhere creates it"),
            std::string::npos)
      << page.err;
  auto git_page = run_coldgate({"history", "page", "-o", "site"}, repo.path(), "", {"CI="});
  EXPECT_NE(git_page.err.find("the history store git:coldgate-history does not exist here: no "
                              "branch coldgate-history and no origin/coldgate-history"),
            std::string::npos)
      << git_page.err;
  // Once a record is there: no such warning, and a --branch nobody recorded is named.
  ASSERT_EQ(record(commit("x", 1)).exit_code, 0);
  auto other = run_coldgate({"history", "page", "--branch", "develop", "-o", "site"}, repo.path(),
                            "", {"CI="});
  EXPECT_EQ(other.err.find("does not exist"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("no record of branch develop in git:coldgate-history (its records are "
                           "of main)"),
            std::string::npos)
      << other.err;
}

TEST_F(HistoryCli, AMistypedHistoryBaselineIsNamedAndKeepsTheLastOutputs) {
  repo.write("coldgate-out/results.json", "{}");
  for (const char* typo : {"histroy:5", "History", "hisotry"}) {
    auto r = run_coldgate({"run", "--baseline", typo}, repo.path(), "", {"CI="});
    EXPECT_EQ(r.exit_code, 2) << typo;
    EXPECT_NE(r.err.find(std::string("--baseline: '") + typo + "' is no file; did you mean history "
                         "or history:N"),
              std::string::npos)
        << r.err;
  }
  auto file = run_coldgate({"run", "--baseline", "base/results.json"}, repo.path(), "", {"CI="});
  EXPECT_NE(file.err.find("--baseline: 'base/results.json' is no file: give a results.json, or "
                          "history[:N]"),
            std::string::npos)
      << file.err;
  EXPECT_EQ(testing::slurp(repo / "coldgate-out/results.json"), "{}");
}

}  // namespace
}  // namespace coldgate::history
