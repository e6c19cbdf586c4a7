// `coldgate run --baseline history:5` end to end: five main commits measured on a real server
// (the local provider) and recorded with `history record`, then a pull request ten times
// slower, and one that changes nothing; and the statement verdicts of a history baseline.
#include <gtest/gtest.h>

#include <map>

#include "results/json.hpp"
#include "util/process.hpp"
#include "support/support.hpp"

namespace coldgate::history {
namespace {

using results::Results;
using testing::run_coldgate;
using testing::run_git;
using testing::slurp;

struct HistoryRun : ::testing::Test {
  HistoryRun() { run_git(repo.path(), {"init", "-q", "-b", "main"}); }

  void commit_config(const std::string& sleep_s, const std::string& subject) {
    repo.write(".gitignore", "coldgate-out/\nsnapshots/\n");
    repo.write("coldgate.yaml",
               "version: 1\n"
               "database: { provider: local }\n"
               "defaults: { runs: 3, warm: 0 }\n"
               "stages:\n"
               "  - name: sleepy\n    query: select pg_sleep(" + sleep_s + ")\n"
               "  - name: steady\n    query: select 1\n");
    run_git(repo.path(), {"add", "-A"});
    run_git(repo.path(), {"commit", "-qm", subject, "--allow-empty"});
  }
  testing::RunResult coldgate(std::vector<std::string> args) {
    return run_coldgate(args, repo.path(), "",
                        {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_REF_NAME=",
                         "CI_MERGE_REQUEST_TARGET_BRANCH_NAME="});
  }
  Results results(const std::string& out) {
    return results::from_json(slurp(repo / out / "results.json"), out);
  }
  static std::string verdict_of(const Results& r, const std::string& stage) {
    if (!r.gate) return "no gate block";
    for (const auto& m : r.gate->metrics) {
      if (m.stage == stage && m.metric == "query_ms") return std::string(results::to_string(m.verdict));
    }
    return "no verdict";
  }
  testing::TempDir repo;
};

TEST_F(HistoryRun, GatesAPullRequestAgainstTheLastFiveRecordedResults) {
  std::vector<std::string> main_commits;
  for (int i = 0; i < 6; ++i) {
    commit_config("0.05", i == 5 ? "Title <img src=x onerror=alert(1)>" : "main " + std::to_string(i));
    main_commits.push_back(run_git(repo.path(), {"rev-parse", "HEAD"}));
    auto run = coldgate({"run"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto rec = coldgate({"history", "record"});
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
  }
  // A corrupt file and another tool's file in the store: skipped by name, never fatal.
  const std::string tip = run_git(repo.path(), {"rev-parse", "coldgate-history"});
  repo.write("bad.json", "{\"schema\": \"coldgate-history/1\", \"commit\": ");
  const std::string blob = run_git(repo.path(), {"hash-object", "-w", "bad.json"});
  std::filesystem::remove(repo / "bad.json");
  const std::string tree_text = run_git(repo.path(), {"ls-tree", "coldgate-history"});
  repo.write(".git/tree.txt", tree_text + "\n100644 blob " + blob + "\tcorrupt.json\n");
  util::SpawnOptions mk;
  mk.argv = {"git", "mktree"};
  mk.cwd = repo.path();
  mk.stdin_path = repo / ".git/tree.txt";
  std::string tree = util::run(mk).out;
  tree.erase(tree.find_last_not_of('\n') + 1);
  const std::string damaged = run_git(repo.path(), {"commit-tree", tree, "-p", tip, "-m", "damage"});
  run_git(repo.path(), {"update-ref", "refs/heads/coldgate-history", damaged});

  // The pull request: sleepy 20 times slower.
  run_git(repo.path(), {"checkout", "-qb", "feature"});
  commit_config("1", "Sleep longer");
  auto slow = coldgate({"run", "--baseline", "history:5", "--out", "slow"});
  EXPECT_EQ(slow.exit_code, 1) << slow.err;
  EXPECT_NE(slow.err.find("warning: skipped git:coldgate-history:corrupt.json: not JSON at byte"),
            std::string::npos)
      << slow.err;
  Results r = results("slow");
  // … and said in the report too, where the pull request's reviewers read it.
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].rfind("skipped git:coldgate-history:corrupt.json: not JSON at byte", 0), 0u);
  EXPECT_NE(slurp(repo / "slow/report.md").find("corrupt.json"), std::string::npos);
  EXPECT_EQ(verdict_of(r, "sleepy"), "regression");
  EXPECT_NE(verdict_of(r, "steady"), "regression");
  ASSERT_TRUE(r.gate);
  EXPECT_EQ(r.gate->base_source, results::BaseSource::history);
  EXPECT_EQ(r.gate->baseline, "history:5 (git:coldgate-history)");
  EXPECT_EQ(r.gate->base_git.commit, main_commits[5]);
  ASSERT_TRUE(r.history);
  ASSERT_EQ(r.history->commits.size(), 5u);  // the newest five, not main 0
  for (int i = 0; i < 5; ++i) EXPECT_EQ(r.history->commits[i].commit, main_commits[i + 1]);
  EXPECT_EQ(r.history->commits[4].subject, "Title <img src=x onerror=alert(1)>");
  ASSERT_FALSE(r.history->series.empty());
  EXPECT_EQ(r.history->series[0].stage, "sleepy");
  EXPECT_EQ(r.history->series[0].medians.size(), 5u);
  const std::string report = slurp(repo / "slow/report.md");
  for (int i = 1; i < 6; ++i) {
    EXPECT_NE(report.find(main_commits[i].substr(0, 7)), std::string::npos) << i << "\n" << report;
  }

  // A/A: the pull request changes nothing measured.
  commit_config("0.05", "Sleep as before");
  auto same = coldgate({"run", "--baseline", "history:5", "--out", "same"});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  r = results("same");
  for (const auto& m : r.gate->metrics) {
    EXPECT_NE(m.verdict, results::Verdict::regression) << m.stage << " " << m.metric << ": " << m.reason;
  }

  // No recorded result at all: exit 3 once the reports say so, or a run alone when allowed.
  auto none = coldgate({"run", "--baseline", "history", "--store", "empty", "--out", "none"});
  EXPECT_EQ(none.exit_code, 3) << none.err;
  EXPECT_NE(none.err.find("no recorded results in empty"), std::string::npos) << none.err;
  EXPECT_NE(results("none").no_baseline.find("no recorded results"), std::string::npos);
  EXPECT_NE(slurp(repo / "none/report.md").find("no recorded results"), std::string::npos);
  auto alone = coldgate({"run", "--baseline", "history", "--store", "empty",
                         "--allow-no-baseline", "--out", "alone"});
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_FALSE(results("alone").gate);
}

// The statements of a recorded run are a baseline too: a run of the same code against the
// history gets the verdicts a results-file baseline gives, every statement `same`.
TEST_F(HistoryRun, TheRecordedStatementsGateTheSameCodeAsSameStatementByStatement) {
  repo.write(".gitignore", "coldgate-out/\nsnapshots/\nmain-out/\nsame-out/\ncmp/\nhist/\n");
  repo.write("schema.sql",
             "CREATE TABLE item (id int PRIMARY KEY, name text, price numeric);\n"
             "INSERT INTO item SELECT g, 'item ' || g, g * 1.5 FROM generate_series(1, 40) g;\n");
  // A SQL stage, and a command stage whose client sends one statement, then one per item: an
  // N+1 of 6 calls per run.
  repo.write("coldgate.yaml",
             "version: 1\n"
             "database: { provider: local }\n"
             "setup: [ { sql: schema.sql }, { analyze: true } ]\n"
             "defaults: { runs: 3, warm: 0 }\n"
             "stages:\n"
             "  - name: priced\n    query: select count(*) from item where price > 3\n"
             "  - name: client\n"
             "    command: [sh, -c, '{ echo \"select count(*) from item;\"; for i in 1 2 3 4 5 6; do "
             "echo \"select name from item where id = $i;\"; done; } | psql -XAtq >/dev/null']\n");
  run_git(repo.path(), {"add", "-A"});
  run_git(repo.path(), {"commit", "-qm", "main"});
  auto main_run = coldgate({"run", "--out", "main-out"});
  ASSERT_EQ(main_run.exit_code, 0) << main_run.err;
  auto rec = coldgate({"history", "record", "--store", "hist", "--results", "main-out/results.json"});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const std::string main_sha = run_git(repo.path(), {"rev-parse", "HEAD"});
  const std::string recorded = slurp(repo / "hist" / (main_sha + ".json"));
  EXPECT_NE(recorded.find("\"queries\": ["), std::string::npos) << recorded;
  EXPECT_NE(recorded.find("\"blocks_per_call\": "), std::string::npos) << recorded;

  // The same code on a pull request's branch (a commit of its own: a run is not its own base).
  run_git(repo.path(), {"checkout", "-qb", "feature"});
  run_git(repo.path(), {"commit", "-qm", "Change nothing", "--allow-empty"});
  auto same = coldgate({"run", "--baseline", "history", "--store", "hist", "--out", "same-out"});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  Results r = results("same-out");
  ASSERT_TRUE(r.gate);
  EXPECT_EQ(r.gate->base_source, results::BaseSource::history);
  std::map<std::string, int> per_stage;
  for (const auto& v : r.gate->statements) {
    ++per_stage[v.stage];
    EXPECT_EQ(v.verdict, results::Verdict::same) << v.stage << " " << v.query << ": " << v.reason;
    EXPECT_TRUE(v.base && v.head) << v.stage << " " << v.query << ": " << v.reason;
  }
  EXPECT_GE(per_stage["priced"], 1);
  EXPECT_GE(per_stage["client"], 2);  // the count and the N+1
  bool n_plus_one = false;
  for (const auto& v : r.gate->statements) {
    if (v.stage == "client" && v.query.find("where id = $1") != std::string::npos) {
      n_plus_one = true;
      ASSERT_TRUE(v.base && v.head);
      EXPECT_EQ(v.base->calls, 6);
      EXPECT_EQ(v.head->calls, 6);
      EXPECT_TRUE(v.base->blocks_per_call) << "the record kept blocks per call";
    }
  }
  EXPECT_TRUE(n_plus_one);

  // The same two runs compared as results files: the same statement verdicts.
  auto cmp = run_coldgate({"compare", "main-out/results.json", "same-out/results.json", "--out", "cmp"},
                          repo.path(), "", {"CI=", "GITHUB_ACTIONS="});
  EXPECT_EQ(cmp.exit_code, 0) << cmp.err;
  Results by_file = results("cmp");
  ASSERT_TRUE(by_file.gate);
  auto verdicts = [](const Results& x) {
    std::vector<std::string> out;
    for (const auto& v : x.gate->statements) {
      out.push_back(v.stage + " | " + v.query + " | " + std::string(results::to_string(v.verdict)));
    }
    return out;
  };
  EXPECT_EQ(verdicts(r), verdicts(by_file));
}

}  // namespace
}  // namespace coldgate::history
