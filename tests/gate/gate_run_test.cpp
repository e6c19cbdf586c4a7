// `coldgate run --baseline` and `--shard` end to end: the real binary, a real PostgreSQL from
// the local provider.
#include <gtest/gtest.h>

#include "results/json.hpp"
#include "support/support.hpp"

namespace coldgate::gate {
namespace {

using results::Results;
using testing::run_coldgate;
using testing::slurp;

struct GateRunTest : ::testing::Test {
  void config(const std::string& stages) {
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: local }\n"
              "defaults: { runs: 3, warm: 0 }\n"
              "stages:\n" +
                  stages);
  }
  testing::RunResult run(std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    return run_coldgate(args, dir.path(), "", {"CI=", "GITHUB_ACTIONS="});
  }
  Results results(const std::string& file) { return results::from_json(slurp(dir / file), file); }
  testing::TempDir dir;
};

std::string verdict_of(const Results& r, const std::string& stage, const std::string& metric) {
  if (!r.gate) return "no gate block";
  for (const auto& m : r.gate->metrics) {
    if (m.stage == stage && m.metric == metric) return std::string(results::to_string(m.verdict));
  }
  return "no verdict";
}

TEST_F(GateRunTest, AStageTenTimesSlowerIsARegressionAndAnUnchangedRerunIsNot) {
  const std::string steady = "  - name: steady\n    query: select 1\n";
  config("  - name: sleepy\n    query: select pg_sleep(0.05)\n" + steady);
  auto base = run({"--out", "base"});
  ASSERT_EQ(base.exit_code, 0) << base.err;

  // The same query, 20 times longer.
  config("  - name: sleepy\n    query: select pg_sleep(1)\n" + steady);
  auto slow = run({"--baseline", "base/results.json", "--out", "slow"});
  EXPECT_EQ(slow.exit_code, 1) << slow.out << slow.err;
  EXPECT_NE(slow.err.find("regression"), std::string::npos) << slow.err;
  EXPECT_NE(slow.err.find("sleepy query_ms "), std::string::npos) << slow.err;
  Results r = results("slow/results.json");
  EXPECT_EQ(verdict_of(r, "sleepy", "query_ms"), "regression");
  // select 1 took well under min_delta (20 ms) both times: `same`, whatever its ratio.
  EXPECT_EQ(verdict_of(r, "steady", "query_ms"), "same");
  EXPECT_EQ(r.gate->baseline, "base/results.json");
  EXPECT_TRUE(r.gate->stages_new.empty());
  EXPECT_TRUE(r.gate->stages_removed.empty());

  // Back to the original: the A/A comparison passes.
  config("  - name: sleepy\n    query: select pg_sleep(0.05)\n" + steady);
  auto same = run({"--baseline", "base/results.json", "--out", "same"});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.err.find(", no regression"), std::string::npos) << same.err;
  r = results("same/results.json");
  for (const auto& m : r.gate->metrics)
    EXPECT_NE(m.verdict, results::Verdict::regression) << m.stage << " " << m.metric << ": " << m.reason;
  // `coldgate compare` of the two files gives the same answer as run --baseline.
  auto compare = run_coldgate({"compare", "base/results.json", "slow/results.json", "--out", "cmp"},
                              dir.path());
  EXPECT_EQ(compare.exit_code, 1) << compare.err;
  EXPECT_EQ(verdict_of(results("cmp/results.json"), "sleepy", "query_ms"), "regression");
}

TEST_F(GateRunTest, ShardsRunEveryNthStageAndMergeBackInConfigOrder) {
  config(
      "  - name: a\n    command: [\"true\"]\n"
      "  - name: b\n    command: [\"true\"]\n"
      "  - name: c\n    command: [\"true\"]\n");
  auto one = run({"--shard", "1/2", "--out", "s1"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  // Shard 2 gated against shard 1's file: stages the shard did not run are not "removed".
  auto two = run({"--shard", "2/2", "--out", "s2", "--baseline", "s1/results.json"});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  Results r1 = results("s1/results.json");
  Results r2 = results("s2/results.json");
  ASSERT_EQ(r1.stages.size(), 2u);
  EXPECT_EQ(r1.stages[0].name, "a");
  EXPECT_EQ(r1.stages[1].name, "c");
  ASSERT_EQ(r2.stages.size(), 1u);
  EXPECT_EQ(r2.stages[0].name, "b");
  ASSERT_TRUE(r2.gate);
  EXPECT_EQ(r2.gate->stages_new, std::vector<std::string>{"b"});
  EXPECT_TRUE(r2.gate->stages_removed.empty());

  auto merged =
      run_coldgate({"merge", "s2/results.json", "s1/results.json", "-o", "all.json"}, dir.path());
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_NE(merged.err.find("gate blocks left out"), std::string::npos) << merged.err;
  Results all = results("all.json");
  ASSERT_EQ(all.stages.size(), 3u);
  EXPECT_EQ(all.stages[0].name, "a");
  EXPECT_EQ(all.stages[1].name, "b");
  EXPECT_EQ(all.stages[2].name, "c");
  EXPECT_FALSE(all.gate);
}

}  // namespace
}  // namespace coldgate::gate
