#include "gate/merge.hpp"

#include <gtest/gtest.h>

#include "util/error.hpp"

namespace coldgate::gate {
namespace {

using namespace coldgate::results;

Results shard(std::vector<std::string> stages, const std::string& started,
              const std::string& finished) {
  Results r;
  r.git.commit = "abc";
  r.environment.provider = "local";
  r.environment.postgres_version_num = 150008;
  r.started_at = started;
  r.finished_at = finished;
  for (const auto& name : stages) {
    StageResult s;
    s.name = name;
    s.metrics.emplace_back("wall_ms", Metric{"ms", {1}, {}});
    r.stages.push_back(s);
    r.diagnoses.push_back({name, results::DiagnosisKind::jit_dominates, "m", {}});
  }
  r.obsolete_snapshots = {"snapshots/old.json"};
  return r;
}

std::vector<std::string> names(const Results& r) {
  std::vector<std::string> out;
  for (const auto& s : r.stages) out.push_back(s.name);
  return out;
}

std::string merge_error(const std::vector<NamedResults>& inputs, MergeOptions options = {}) {
  try {
    merge(inputs, options);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.message();
  }
  return "no error";
}

TEST(GateMerge, JoinsShardsInConfigOrder) {
  std::vector<NamedResults> in{
      {"1.json", shard({"a", "c", "e"}, "2026-01-01T00:00:05Z", "2026-01-01T00:01:00Z")},
      {"2.json", shard({"b", "d"}, "2026-01-01T00:00:03Z", "2026-01-01T00:02:00Z")}};
  MergeOptions options;
  options.stage_order = {"a", "b", "c", "d", "e"};
  Results r = merge(in, options);
  EXPECT_EQ(names(r), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(r.started_at, "2026-01-01T00:00:03Z");
  EXPECT_EQ(r.finished_at, "2026-01-01T00:02:00Z");
  EXPECT_EQ(r.obsolete_snapshots, std::vector<std::string>{"snapshots/old.json"});
  ASSERT_EQ(r.diagnoses.size(), 5u);
  EXPECT_EQ(r.diagnoses[1].stage, "b");
  // Without a config: order of appearance.
  EXPECT_EQ(names(merge(in, {})), (std::vector<std::string>{"a", "c", "e", "b", "d"}));
  // Stages the config does not know go last.
  options.stage_order = {"e", "d"};
  EXPECT_EQ(names(merge(in, options)), (std::vector<std::string>{"e", "d", "a", "c", "b"}));
}

TEST(GateMerge, RejectsDuplicateStagesAndOtherCommitsOrEnvironmentsUnlessForced) {
  Results a = shard({"a"}, "", "");
  EXPECT_EQ(merge_error({{"1.json", a}, {"2.json", shard({"b", "a"}, "", "")}}),
            "2.json: stage 'a' is also in 1.json; shards of one run hold disjoint stages (was a "
            "shard merged twice?)");
  MergeOptions force;
  force.force = true;
  EXPECT_NE(merge_error({{"1.json", a}, {"1.json", a}}, force), "no error");  // even with --force

  Results other = shard({"b"}, "", "");
  other.git.commit = "def";
  EXPECT_EQ(merge_error({{"1.json", a}, {"2.json", other}}),
            "2.json: measured commit def, but 1.json measured abc; shards of one run share a "
            "commit (pass --force to merge anyway)");
  EXPECT_EQ(merge_error({{"1.json", a}, {"2.json", other}}, force), "no error");

  other = shard({"b"}, "", "");
  other.environment.postgres_version_num = 160001;
  other.environment.host = "another runner";  // hosts differ between shards: fine
  EXPECT_EQ(merge_error({{"1.json", a}, {"2.json", other}}),
            "2.json: measured in another environment than 1.json (postgres major version: 15 → "
            "16); pass --force to merge anyway");
  EXPECT_EQ(merge_error({{"1.json", a}, {"2.json", other}}, force), "no error");
  EXPECT_EQ(merge_error({}), "merge: no results files given");
}

TEST(GateMerge, KeepsGateBlocksOnlyWhenAllHaveOneAgainstTheSameBaseline) {
  Results a = shard({"a"}, "", "");
  Results b = shard({"b"}, "", "");
  a.gate = GateResult{
      "base.json", {},      {"kernel: x → y (info)"}, {{"a", "wall_ms", "ms", Verdict::same, 1, 1, 1, ""}},
      {},          {"gone"}};
  b.gate = GateResult{"base.json",
                      {},
                      {"kernel: x → y (info)"},
                      {{"b", "wall_ms", "ms", Verdict::slower, 1, 3, 3, ""}},
                      {},
                      {"gone"}};
  Results r = merge({{"1.json", a}, {"2.json", b}}, {});
  ASSERT_TRUE(r.gate);
  EXPECT_EQ(r.gate->metrics.size(), 2u);
  EXPECT_EQ(r.gate->stages_removed, std::vector<std::string>{"gone"});
  EXPECT_EQ(r.gate->environment_differences.size(), 1u);
  b.gate->baseline = "other.json";
  EXPECT_FALSE(merge({{"1.json", a}, {"2.json", b}}, {}).gate);
  b.gate.reset();
  EXPECT_FALSE(merge({{"1.json", a}, {"2.json", b}}, {}).gate);
}

}  // namespace
}  // namespace coldgate::gate
