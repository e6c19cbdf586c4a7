// `coldgate accept` through the binary: promotes pending snapshots, refuses in CI mode, and
// reports config errors with file:line:col.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/support.hpp"

namespace coldgate::testing {
namespace {

const char* k_config = R"(version: 1
stages:
  - name: config-load
    query: select 1
    snapshot: { path: snapshots/config-load.json }
  - name: plugins
    command: [./measure]
    snapshot: { path: snapshots/plugins.json, from: out/plugins.json }
)";

class AcceptCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.write("coldgate.yaml", k_config);
    dir_.write("snapshots/config-load.json", "{\n  \"a\": 1\n}\n");
    dir_.write("snapshots/config-load.json.new", "{\n  \"a\": 2\n}\n");
  }
  TempDir dir_;
};

TEST_F(AcceptCommand, PromotesThePendingSnapshot) {
  auto r = run_coldgate({"accept", "--no-ci"}, dir_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "accepted config-load: snapshots/config-load.json\n");
  EXPECT_EQ(slurp(dir_ / "snapshots/config-load.json"), "{\n  \"a\": 2\n}\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "snapshots/config-load.json.new"));
}

TEST_F(AcceptCommand, RefusesInCiModeAndWritesNothing) {
  auto r = run_coldgate({"accept"}, dir_.path(), {}, {"CI=true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("coldgate: error: accept: refusing to write snapshots in CI mode", 0), 0u) << r.err;
  EXPECT_EQ(slurp(dir_ / "snapshots/config-load.json"), "{\n  \"a\": 1\n}\n");
  EXPECT_TRUE(std::filesystem::exists(dir_ / "snapshots/config-load.json.new"));
  auto flag = run_coldgate({"accept", "--ci"}, dir_.path(), {}, {"CI=false"});
  EXPECT_EQ(flag.exit_code, 2);
}

TEST_F(AcceptCommand, UnknownStageSuggestsTheClosest) {
  auto r = run_coldgate({"accept", "--no-ci", "config-lod"}, dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: accept: unknown stage 'config-lod' (did you mean 'config-load'?)\n");
}

TEST_F(AcceptCommand, NothingPendingIsAnError) {
  auto r = run_coldgate({"accept", "--no-ci", "plugins"}, dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nothing to accept"), std::string::npos) << r.err;
}

// `--from DIR`: the candidates `run --ci` or `ab` wrote under DIR/snapshots/ go over the
// committed files (atomically) and leave DIR; the local .new files are not touched.
TEST_F(AcceptCommand, FromTakesTheCandidatesARunWroteInItsOutputFolder) {
  dir_.write("snapshots/plugins.json", "[]\n");
  dir_.write("coldgate-out/snapshots/snapshots/plugins.json", "[\n  \"auth\"\n]\n");
  dir_.write("coldgate-out/snapshots/snapshots/plugins.json.diff", "the run's whole diff\n");
  auto r = run_coldgate({"accept", "--no-ci", "--from", "coldgate-out"}, dir_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "accepted plugins: snapshots/plugins.json\n");
  EXPECT_EQ(slurp(dir_ / "snapshots/plugins.json"), "[\n  \"auth\"\n]\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "coldgate-out/snapshots/snapshots/plugins.json"));
  EXPECT_FALSE(
      std::filesystem::exists(dir_ / "coldgate-out/snapshots/snapshots/plugins.json.diff"));
  EXPECT_EQ(slurp(dir_ / "snapshots/config-load.json"), "{\n  \"a\": 1\n}\n");
  EXPECT_TRUE(std::filesystem::exists(dir_ / "snapshots/config-load.json.new"));

  // A candidate that is not canonical: refused, nothing written.
  dir_.write("coldgate-out/snapshots/snapshots/config-load.json", "{\"a\": 3}\n");
  r = run_coldgate({"accept", "--no-ci", "--from", "coldgate-out"}, dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("refusing coldgate-out/snapshots/snapshots/config-load.json (stage "
                       "'config-load')"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(slurp(dir_ / "snapshots/config-load.json"), "{\n  \"a\": 1\n}\n");
  std::filesystem::remove(dir_ / "coldgate-out/snapshots/snapshots/config-load.json");

  // Nothing left there, or no such folder: exit 2 saying which.
  r = run_coldgate({"accept", "--no-ci", "--from", "coldgate-out"}, dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: accept: nothing to accept: no candidate of the config's "
                   "snapshots under coldgate-out/snapshots (coldgate run --ci and coldgate ab "
                   "write them there)\n");
  r = run_coldgate({"accept", "--no-ci", "--from", "elsewhere"}, dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("coldgate: error: --from: elsewhere is not a folder", 0), 0u) << r.err;
  // CI mode still never writes snapshots.
  dir_.write("coldgate-out/snapshots/snapshots/plugins.json", "[]\n");
  r = run_coldgate({"accept", "--from", "coldgate-out"}, dir_.path(), {}, {"CI=true"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(AcceptConfig, MissingConfigSaysHowToPassOne) {
  TempDir dir;
  auto r = run_coldgate({"accept", "--no-ci"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("coldgate: error: coldgate.yaml: config file not found; pass -c FILE", 0), 0u) << r.err;
}

TEST(AcceptConfig, BadConfigNamesFileLineAndColumn) {
  TempDir dir;
  dir.write("bad.yaml", "version: 1\nstages:\n  - name: a\n    query: select 1\n    snapshot: { pth: x.json }\n");
  auto r = run_coldgate({"accept", "--no-ci", "-c", "bad.yaml"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "coldgate: error: bad.yaml:5:17: stages[0].snapshot: unknown key 'pth' (did you mean 'path'?)\n");
}

}  // namespace
}  // namespace coldgate::testing
