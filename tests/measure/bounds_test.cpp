// Resource bounds: a result larger than max_result_bytes, or a document nested a million
// levels deep, is a clear error — never an OOM kill or a stack overflow. The real binary on
// the suite's cluster (external provider), with small configured limits so the tests stay fast.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "canon/canon.hpp"
#include "config/config.hpp"
#include "measure/explain.hpp"
#include "results/json.hpp"
#include "support/cluster.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

namespace fs = std::filesystem;
using testing::run_coldgate;
using testing::slurp;
using testing::TempDir;

const std::string k_deep = std::string(1000000, '[') + std::string(1000000, ']');
// For the readers that build a whole nlohmann tree before they look at its shape (a million
// levels take ~40 s each under ASan; `coldgate compare` of a million levels was checked by hand).
const std::string k_deep_100k = std::string(100000, '[') + std::string(100000, ']');

struct Bounds : ::testing::Test {
  testing::RunResult run(const std::string& database, const std::string& defaults,
                         const std::string& stages) {
    dir.write("coldgate.yaml", "version: 1\n"
                               "database: { provider: external, url: \"${TEST_DB_URL}\" }\n"
                               "defaults: " + defaults + "\n"
                               "stages:\n" + stages);
    const std::string url = testing::fresh_database(database).url();
    return run_coldgate({"run", "--no-ci", "--out", (dir / "out").string()}, dir.path(), "",
                        {"TEST_DB_URL=" + url});
  }
  std::string error_of(const std::string& stage) {
    Results r = results::from_json(slurp(dir / "out/results.json"), "results.json");
    for (const auto& s : r.stages)
      if (s.name == stage) return s.error;
    ADD_FAILURE() << "no stage " << stage;
    return "";
  }
  TempDir dir;
};

TEST_F(Bounds, AResultOverMaxResultBytesFailsTheStageBeforeDecoding) {
  auto r = run("coldgate_bounds_size", "{ runs: 1, warm: 0, max_result_bytes: 1MB }",
               "  - name: big-json\n"
               "    query: select to_json(repeat('x', 2000000))\n"
               "    decode: json\n"
               "    snapshot: { path: snapshots/big.json }\n"
               "  - name: many-rows\n"
               "    query: select repeat('y', 1000) from generate_series(1, 2000)\n"
               "  - name: allowed\n"
               "    query: select repeat('z', 2000000)\n"
               "    max_result_bytes: 4MiB\n"
               "  - name: big-stdout\n"
               "    command: head -c 2000000 /dev/zero\n"
               "    snapshot: { from: stdout }\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(error_of("big-json"),
            "cold run 1/1: stage big-json: the result is 2000002 bytes (1 rows), more than "
            "max_result_bytes (1000000); return less, or raise max_result_bytes for this stage");
  EXPECT_NE(error_of("many-rows").find("the result is 2000000 bytes (2000 rows), more than "
                                       "max_result_bytes (1000000)"),
            std::string::npos);
  EXPECT_EQ(error_of("allowed"), "");
  EXPECT_EQ(error_of("big-stdout"),
            "cold run 1/1: its standard output (the snapshot document) exceeds max_result_bytes "
            "(1000000); print less, or raise max_result_bytes for this stage");
  EXPECT_FALSE(fs::exists(dir / "snapshots/big.json.new"));
}

TEST_F(Bounds, AMillionLevelsFromTheServerAreADepthErrorNotACrash) {
  auto r = run("coldgate_bounds_deep", "{ runs: 1, warm: 0 }",
               "  - name: deep\n"
               "    query: select repeat('[', 1000000) || repeat(']', 1000000)\n"
               "    decode: json\n"
               "    snapshot: { path: snapshots/deep.json }\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(error_of("deep"),
            "cold run 1/1: the snapshot document is not valid: cold run 1 document: byte 128: "
            "nesting deeper than 128 levels (limit max_depth); if it really is that deep, raise "
            "snapshot.max_depth for this stage (at most 10000)");
}

TEST(BoundsDefaults, MaxResultBytesDefaultsTo256MiBAndIsChecked) {
  TempDir dir;
  auto base = "version: 1\nstages:\n  - name: q\n    query: select 1\n";
  config::Config c = config::parse(base, dir / "c.yaml");
  EXPECT_EQ(c.stages[0].max_result_bytes, std::uint64_t{256} << 20);
  c = config::parse(std::string("version: 1\ndefaults: { max_result_bytes: 1GB }\n") +
                        "stages:\n  - name: q\n    query: select 1\n"
                        "  - name: r\n    query: select 1\n    max_result_bytes: 2KiB\n",
                    dir / "c.yaml");
  EXPECT_EQ(c.stages[0].max_result_bytes, 1000000000u);
  EXPECT_EQ(c.stages[1].max_result_bytes, 2048u);
  try {
    config::parse("version: 1\ndefaults: { max_result_bytes: 0 }\n", "c.yaml");
    ADD_FAILURE() << "0 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "c.yaml:2:31: defaults.max_result_bytes: must be more than 0 bytes, "
                           "e.g. 256MiB");
  }
}

TEST(BoundsDeep, AMillionLevelsAreAClearErrorInEveryJsonReader) {
  // canon: the max_depth limit (default 128).
  try {
    canon::canonicalize(k_deep, {}, "deep.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "deep.json: byte 128: nesting deeper than 128 levels (limit max_depth)");
  }
  // The results reader and the EXPLAIN reader parse with nlohmann, whose parser and
  // destructor do not recurse: the shape is wrong, and said so.
  for (const std::string& doc :
       {k_deep_100k, R"({"schema": "coldgate-results/1", "tool": )" + k_deep_100k + "}"}) {
    try {
      results::from_json(doc, "results.json");
      ADD_FAILURE();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage);
      EXPECT_EQ(e.where().rfind("results.json", 0), 0u) << e.message();
    }
  }
  try {
    parse_explain("[{\"Plan\": " + k_deep_100k + "}]", "stage deep: EXPLAIN");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "stage deep: EXPLAIN");
  }
  EXPECT_TRUE(plan_relations(k_deep_100k).empty());
  try {
    plan_text(k_deep_100k, "stage deep: EXPLAIN");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "stage deep: EXPLAIN: unexpected EXPLAIN output: expected a "
                           "one-element array of an object");
  }
}

TEST(BoundsDeep, APlanThousandsOfNodesDeepIsRenderedWithoutRecursion) {
  constexpr int k_depth = 2000;
  std::string plan;
  for (int i = 0; i < k_depth; ++i) plan += R"({"Node Type": "Limit", "Plans": [)";
  plan += R"({"Node Type": "Result"})";
  for (int i = 0; i < k_depth; ++i) plan += "]}";
  const std::string text = plan_text("[{\"Plan\": " + plan + "}]", "stage deep: EXPLAIN");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), k_depth + 1);
  EXPECT_EQ(text.rfind("Limit\n  ->  Limit\n        ->  Limit\n", 0), 0u);
  // The node at depth d has its arrow 2 + 6 (d - 1) spaces in.
  EXPECT_TRUE(text.ends_with(std::string(2 + 6 * (k_depth - 1), ' ') + "->  Result\n"));
}

TEST(BoundsDeep, DeepYamlIsALocatedConfigError) {
  std::string deep_map;
  for (int i = 0; i < 10000; ++i) deep_map += "{a: ";
  for (const std::string& yaml : {"version: 1\nstages: " + k_deep_100k + "\n",
                                  "version: 1\nstages: " + deep_map + "\n"}) {
    try {
      config::parse(yaml, "deep.yaml");
      ADD_FAILURE();
    } catch (const Error& e) {
      EXPECT_EQ(e.message().rfind("deep.yaml:2:", 0), 0u) << e.message();
      EXPECT_NE(e.message().find("invalid YAML: nested deeper than yaml-cpp parses (500 levels)"),
                std::string::npos)
          << e.message();
    }
  }
}

TEST(BoundsDeep, CanonCommandReportsTheDepthAndAcceptsALargerLimit) {
  TempDir dir;
  dir.write("deep.json", std::string(200, '[') + std::string(200, ']'));
  auto r = run_coldgate({"canon", "--max-depth", "100", "deep.json"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: deep.json: byte 100: nesting deeper than 100 levels (limit max_depth)\n");
  EXPECT_EQ(run_coldgate({"canon", "--max-depth", "200", "deep.json"}, dir.path()).exit_code, 0);
}

}  // namespace
}  // namespace coldgate::measure
