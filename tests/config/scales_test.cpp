// `scales:` (top level and per stage), `production_scale:` and `gate.growth:`: how they load,
// what a stage inherits, which scale the stages' database is loaded at, and the errors, each
// at its file:line:col.
#include <gtest/gtest.h>

#include "config/config.hpp"
#include "util/error.hpp"

namespace coldgate::config {
namespace {

struct Failure {
  std::string where;
  std::string what;
};

Failure failure(const std::string& yaml) {
  try {
    parse(yaml, "coldgate.yaml");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return {e.where(), e.what()};
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return {};
}

TEST(ConfigScales, TopLevelAndPerStage) {
  Config c = parse(R"(version: 1
scales: [1, 4, 16]
production_scale: 250
stages:
  - name: a
    query: select 1
  - name: b
    query: select 2
    scales: [1, 2.5]
  - name: c
    query: select 3
    scales: [1]
gate: { growth: warn }
)",
                   "coldgate.yaml");
  EXPECT_EQ(c.scales, (std::vector<double>{1, 4, 16}));
  EXPECT_EQ(c.production_scale, 250.0);
  EXPECT_EQ(c.stages[0].scales, (std::vector<double>{1, 4, 16}));
  EXPECT_EQ(c.stages[1].scales, (std::vector<double>{1, 2.5}));
  EXPECT_EQ(c.stages[2].scales, (std::vector<double>{1}));
  EXPECT_EQ(c.load_scale(), 1);
  EXPECT_EQ(c.extra_scales(c.stages), (std::vector<double>{2.5, 4, 16}));
  EXPECT_EQ(c.extra_scales({c.stages[1]}), (std::vector<double>{2.5}));
  EXPECT_TRUE(c.extra_scales({c.stages[2]}).empty());
  EXPECT_EQ(c.gate.growth, GrowthGate::warn);
  EXPECT_EQ(c.stages[0].gate.growth, GrowthGate::warn);
}

TEST(ConfigScales, WithoutScalesEverythingIsAtScaleOne) {
  Config c = parse("version: 1\nstages: [ { name: a, query: select 1, gate: { growth: off } } ]\n",
                   "coldgate.yaml");
  EXPECT_TRUE(c.scales.empty());
  EXPECT_FALSE(c.production_scale);
  EXPECT_TRUE(c.stages[0].scales.empty());
  EXPECT_EQ(c.load_scale(), 1);
  EXPECT_TRUE(c.extra_scales(c.stages).empty());
  EXPECT_EQ(c.gate.growth, GrowthGate::fail);
  EXPECT_EQ(c.stages[0].gate.growth, GrowthGate::off);
  // Only a stage's own list: it decides the load scale.
  Config d = parse("version: 1\nstages: [ { name: a, query: select 1, scales: [2, 8] } ]\n",
                   "coldgate.yaml");
  EXPECT_EQ(d.load_scale(), 2);
  EXPECT_EQ(d.extra_scales(d.stages), (std::vector<double>{8}));
}

TEST(ConfigScales, Errors) {
  Failure f = failure("version: 1\nscales: [1, 4, 4]\n");
  EXPECT_EQ(f.where, "coldgate.yaml:2:16");
  EXPECT_EQ(f.what, "scales[2]: 4 is listed twice; list the scales ascending, each once (e.g. [1, 4, 16])");
  f = failure("version: 1\nscales: [4, 1]\n");
  EXPECT_EQ(f.where, "coldgate.yaml:2:13");
  EXPECT_EQ(f.what, "scales[1]: 1 does not follow 4; list the scales ascending, each once (e.g. [1, 4, 16])");
  f = failure("version: 1\nscales: [0, 1]\n");
  EXPECT_EQ(f.where, "coldgate.yaml:2:10");
  EXPECT_EQ(f.what, "scales[0]: expected a number above 0, got '0'");
  f = failure("version: 1\nscales: []\n");
  EXPECT_EQ(f.where, "coldgate.yaml:2:9");
  EXPECT_EQ(f.what, "scales: is empty; give the data scales, e.g. [1, 4, 16]");
  f = failure("version: 1\nscales: 4\n");
  EXPECT_EQ(f.what, "scales: expected a list");
  f = failure("version: 1\nproduction_scale: lots\n");
  EXPECT_EQ(f.where, "coldgate.yaml:2:19");
  EXPECT_EQ(f.what, "production_scale: expected a number above 0, got 'lots'");
  f = failure("version: 1\ngate: { growth: fial }\n");
  EXPECT_EQ(f.where, "coldgate.yaml:2:17");
  EXPECT_EQ(f.what, "gate.growth: expected one of 'fail', 'warn' or 'off', got 'fial' (did you mean 'fail'?)");
  // Every list starts at the scale the stages' database is loaded at.
  f = failure(R"(version: 1
scales: [1, 4]
stages:
  - name: a
    query: select 1
    scales: [2, 8]
)");
  EXPECT_EQ(f.where, "coldgate.yaml:6:13");
  EXPECT_EQ(f.what,
            "stages[0].scales: starts at 2, scales at 1; every scales list starts at the scale "
            "setup loads the stages' database at (the one gated and snapshotted)");
  f = failure(R"(version: 1
stages:
  - { name: a, query: select 1, scales: [1, 4] }
  - { name: b, query: select 1, scales: [3, 4] }
)");
  EXPECT_EQ(f.where, "coldgate.yaml:4:41");
  EXPECT_EQ(f.what,
            "stages[1].scales: starts at 3, stages[0].scales at 1; every scales list starts at "
            "the scale setup loads the stages' database at (the one gated and snapshotted)");
}

}  // namespace
}  // namespace coldgate::config
