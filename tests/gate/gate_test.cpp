#include "gate/gate.hpp"

#include <gtest/gtest.h>

namespace coldgate::gate {
namespace {

using namespace coldgate::measure;

Results two_stages() {
  Results r;
  StageResult a;
  a.name = "config-load-jit";
  a.snapshot = SnapshotResult{"match", "snapshots/a.json", "", "", "", ""};
  r.stages.push_back(a);
  StageResult b;
  b.name = "config|load";
  b.snapshot = SnapshotResult{"changed", "snapshots/b.json", "snapshots/b.json.new", "", "", ""};
  r.stages.push_back(b);
  return r;
}

TEST(Gate, VerdictCountsFailuresAndPasses) {
  Results r = two_stages();
  EXPECT_EQ(verdict(r), "failed: 1 snapshot changed (config|load)");
  EXPECT_FALSE(passed(r));

  r.stages[1].snapshot->status = "match";
  EXPECT_EQ(verdict(r), "passed: 2 stages, 2 snapshots match");
  EXPECT_TRUE(passed(r));
  r.stages[1].snapshot->status = "updated";
  EXPECT_EQ(verdict(r), "passed: 2 stages, 1 snapshot match, 1 updated");
  EXPECT_TRUE(passed(r));
  r.stages[0].error = "cold run 1/3: exit status 1";
  r.stages[0].snapshot.reset();
  EXPECT_EQ(verdict(r), "failed: 1 stage failed (config-load-jit)");
  EXPECT_FALSE(passed(r));
}

}  // namespace
}  // namespace coldgate::gate
