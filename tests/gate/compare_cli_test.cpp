// `coldgate compare` and `coldgate merge` end to end on fixture files (no database).
#include <gtest/gtest.h>

#include "results/json.hpp"
#include "support/support.hpp"

namespace coldgate::testing {
namespace {

std::string fixture(const std::string& name) {
  return (source_dir() / "tests/gate/fixtures" / name).string();
}

TEST(CliCompare, FixturesFailTheGateWithTheVerdictAndWriteResults) {
  TempDir dir;
  auto r = run_coldgate({"compare", fixture("base.json"), fixture("head.json"), "--out", "out"},
                        dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string verdict =
      "failed: 1 stage failed (broken), 4 regressions (config-load wall_ms 10.4×, jit "
      "jit_total_ms from 0, single wall_ms 13.3×, memory peak_rss_bytes 12.0×), 1 snapshot "
      "changed (config-load)";
  EXPECT_NE(r.out.find("**" + verdict + "**"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "coldgate: " + verdict + "; results in out/results.json\n");
  auto results = results::from_json(slurp(dir / "out/results.json"), "results.json");
  ASSERT_TRUE(results.gate);
  EXPECT_EQ(results.gate->baseline, fixture("base.json"));
  EXPECT_EQ(results.git.base, "1111111111111111111111111111111111111111");
  EXPECT_EQ(slurp(dir / "out/report.md"), r.out);
}

// The report's entities are for GitHub: report.md keeps them, the terminal gets the characters.
TEST(CliCompare, TheTerminalReportHasNoHtmlEntities) {
  TempDir dir;
  results::Results head = results::from_json(slurp(fixture("head.json")), "head.json");
  head.title = "Orders > 10 & <b>";
  for (auto& s : head.stages) {
    if (s.name == "broken") s.error = "ERROR: operator does not exist: integer > text [at 1]";
  }
  dir.write("head.json", results::to_json(head));
  auto r = run_coldgate({"compare", fixture("base.json"), "head.json", "--out", "out"}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string md = slurp(dir / "out/report.md");
  EXPECT_NE(md.find("\n## Orders &gt; 10 &amp; &lt;b&gt;\n"), std::string::npos) << md;
  EXPECT_NE(md.find(" | ERROR: operator does not exist: integer &gt; text &#91;at 1&#93; |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(r.out.find("\n## Orders > 10 & <b>\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" | ERROR: operator does not exist: integer > text [at 1] |\n"),
            std::string::npos)
      << r.out;
  for (const char* entity : {"&gt;", "&lt;", "&amp;", "&quot;", "&#91;", "&#93;"}) {
    EXPECT_EQ(r.out.find(entity), std::string::npos) << entity << " in\n" << r.out;
  }
}

TEST(CliCompare, SameFileTwicePassesAndAConfigSetsTheThresholds) {
  TempDir dir;
  auto r = run_coldgate({"compare", fixture("base.json"), fixture("base.json")}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("passed: 11 stages, 1 snapshot match, no regression;"), std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "coldgate-out/results.json"));

  // ./coldgate.yaml is read when present: max_ratio 14 lets 10.4×, 12× and 13.3× pass, and
  // the stage `memory` overrides it with 11.
  dir.write("coldgate.yaml",
            "version: 1\nstages:\n  - name: memory\n    command: [\"true\"]\n"
            "    gate: { max_ratio: 11 }\n"
            "gate: { max_ratio: 14, require_same_environment: false }\n");
  r = run_coldgate({"compare", fixture("base.json"), fixture("head.json")}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("2 regressions (jit jit_total_ms from 0, memory peak_rss_bytes 12.0×)"),
            std::string::npos)
      << r.err;
  // require_same_environment: the fixtures differ in PostgreSQL major version.
  dir.write("strict.yaml",
            "version: 1\nstages:\n  - name: a\n    command: [\"true\"]\n"
            "gate: { require_same_environment: true }\n");
  r = run_coldgate({"compare", fixture("base.json"), fixture("head.json"), "-c", "strict.yaml"},
                   dir.path());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err,
            "coldgate: error: " + fixture("base.json") +
                ": measured in another environment (postgres major version: 15 → 16) and "
                "gate.require_same_environment is true; compare results from matching runners\n");
  // -c names a file that must exist.
  r = run_coldgate({"compare", fixture("base.json"), fixture("head.json"), "-c", "nope.yaml"},
                   dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("coldgate: error: nope.yaml: config file not found", 0), 0u) << r.err;
}

TEST(CliCompare, BadFilesAreUsageErrors) {
  TempDir dir;
  auto error = [&](const std::string& base, const std::string& head) {
    auto r = run_coldgate({"compare", base, head}, dir.path());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    return r.err;
  };
  EXPECT_EQ(error(fixture("base.json"), fixture("negative.json")),
            "coldgate: error: " + fixture("negative.json") +
                ": stage 'steady', metric query_ms: warm sample 2 is -3.5 (a time or size cannot "
                "be negative)\n");
  EXPECT_EQ(error(fixture("wrong-schema.json"), fixture("head.json")),
            "coldgate: error: " + fixture("wrong-schema.json") +
                ": not a coldgate-results/1 file (its \"schema\" member differs)\n");
  EXPECT_EQ(error("missing.json", fixture("head.json"))
                .rfind("coldgate: error: missing.json: cannot read file", 0),
            0u);
  EXPECT_EQ(run_coldgate({"compare", fixture("base.json")}, dir.path()).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir / "coldgate-out"));
}

TEST(CliMerge, JoinsFilesAtomicallyAndRefusesDuplicates) {
  TempDir dir;
  auto r = run_coldgate({"merge", fixture("base.json"), fixture("head.json"), "-o", "all.json"},
                        dir.path());
  EXPECT_EQ(r.exit_code, 2);  // the fixtures share stage names (and commits differ)
  EXPECT_EQ(r.err, "coldgate: error: " + fixture("head.json") +
                       ": stage 'config-load' is also in " + fixture("base.json") +
                       "; shards of one run hold disjoint stages (was a shard merged twice?)\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "all.json"));
  r = run_coldgate({"merge", fixture("base.json"), "-o", "all.json"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "coldgate: merged 1 file (11 stages) into all.json\n");
  EXPECT_EQ(results::from_json(slurp(dir / "all.json"), "all.json").stages.size(), 11u);
  r = run_coldgate({"merge", fixture("base.json")}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is required"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace coldgate::testing
