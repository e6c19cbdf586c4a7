// Whole-command tests: the built binary, run as a user would.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/support.hpp"

namespace coldgate::testing {
namespace {

TEST(Cli, VersionPrintsNameAndVersion) {
  auto r = run_coldgate({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("coldgate ") + COLDGATE_VERSION + "\n");
}

TEST(Cli, HelpListsEverySubcommandOfTheDesign) {
  auto r = run_coldgate({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* sub : {"run", "compare", "accept", "review", "init", "canon", "diff", "explain",
                          "comment", "ab", "merge", "db"}) {
    EXPECT_NE(r.out.find(std::string("  ") + sub + " "), std::string::npos) << sub << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("probe"), std::string::npos) << "internal subcommand shown in --help";
}

TEST(Cli, NoSubcommandIsAUsageError) {
  auto r = run_coldgate({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("coldgate: error: ", 0), 0u) << r.err;
}

TEST(Cli, UnknownSubcommandSuggestsTheClosest) {
  auto r = run_coldgate({"canno", "x.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: unknown command 'canno' (did you mean 'canon'?); see coldgate --help\n");
  EXPECT_EQ(r.out, "");
}

TEST(Cli, UnknownSubcommandFarFromAllHasNoSuggestion) {
  auto r = run_coldgate({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: unknown command 'frobnicate'; see coldgate --help\n");
}

TEST(Cli, EverySubcommandIsBuilt) {
  // Each command of docs/architecture.md "Command line" answers --help with its own options (no placeholder left).
  for (const char* sub : {"run", "compare", "accept", "review", "init", "canon", "diff", "explain",
                          "comment", "ab", "merge", "db"}) {
    auto r = run_coldgate({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.err;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << sub << ": " << r.out;
    EXPECT_EQ(r.out.find("not built yet"), std::string::npos) << sub;
  }
}

TEST(Cli, RunWithoutAConfigSaysWhereToFindOne) {
  TempDir dir;
  auto r = run_coldgate({"run"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: coldgate.yaml: config file not found; pass -c FILE, or run in "
                   "the folder of your coldgate.yaml (docs/configuration.md of coldgate describes "
                   "one)\n");
  // A bad --shard or --baseline fails before the config is even read.
  auto shard = run_coldgate({"run", "--shard", "x"}, dir.path());
  EXPECT_EQ(shard.exit_code, 2);
  EXPECT_EQ(shard.err, "coldgate: error: --shard: expected I/N such as 2/4 (the I-th of N shards), got 'x'\n");
  shard = run_coldgate({"run", "--shard", "3/2"}, dir.path());
  EXPECT_EQ(shard.err, "coldgate: error: --shard: '3/2': I must be between 1 and N (N ≥ 1), e.g. 1/2\n");
  shard = run_coldgate({"run", "--shard", "0/0"}, dir.path());
  EXPECT_EQ(shard.err, "coldgate: error: --shard: '0/0': I must be between 1 and N (N ≥ 1), e.g. 1/1\n");
  auto baseline = run_coldgate({"run", "--baseline", "x"}, dir.path());
  EXPECT_EQ(baseline.exit_code, 2);
  EXPECT_EQ(baseline.err,
            "coldgate: error: --baseline: 'x' is no file: give a results.json, or history[:N]\n");
}

TEST(Cli, BadOptionIsAUsageErrorNamingTheSubcommand) {
  auto r = run_coldgate({"diff", "a.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("coldgate: error: diff: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("see coldgate diff --help"), std::string::npos) << r.err;
}

TEST(CliCanon, PrintsCanonicalFormFromFileAndStdinAlike) {
  TempDir dir;
  auto file = dir.write("doc.json", R"({"b":[3,1,2],"a":{"y":1.50,"x":-0}})");
  const std::string expected =
      "{\n  \"a\": {\n    \"x\": 0,\n    \"y\": 1.5\n  },\n  \"b\": [\n    1,\n    2,\n    3\n  ]\n}\n";
  auto from_file = run_coldgate({"canon", file.string()});
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(from_file.out, expected);
  auto from_stdin = run_coldgate({"canon", "-"}, {}, slurp(file));
  EXPECT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  EXPECT_EQ(from_stdin.out, expected);
  auto no_arg = run_coldgate({"canon"}, {}, slurp(file));
  EXPECT_EQ(no_arg.out, expected);
}

TEST(CliCanon, ByteIdenticalAcrossTenRunsAndEqualToItsOwnCanon) {
  TempDir dir;
  auto file = dir.write("doc.json", R"([{"id":10,"v":"é"},{"id":2,"v":"\u0001"},{"$id":"z","n":1e3},
    null,true,false,"s",12345678901234567890.123,[],{}])");
  auto first = run_coldgate({"canon", file.string()});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  for (int i = 0; i < 9; ++i) EXPECT_EQ(run_coldgate({"canon", file.string()}).out, first.out);
  auto again = run_coldgate({"canon", "-"}, {}, first.out);
  EXPECT_EQ(again.out, first.out);
  EXPECT_NE(first.out.find("12345678901234567890.123"), std::string::npos);
}

TEST(CliCanon, CheckExitsOneWhenNotCanonical) {
  TempDir dir;
  auto ugly = dir.write("ugly.json", "{\"b\":1,\"a\":2}");
  auto fine = dir.write("fine.json", "{\n  \"a\": 2,\n  \"b\": 1\n}\n");
  auto bad = run_coldgate({"canon", "--check", ugly.string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find("not in canonical form"), std::string::npos) << bad.err;
  auto good = run_coldgate({"canon", "--check", fine.string()});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(good.out, "");
}

TEST(CliCanon, OutputFileIsWrittenWhole) {
  TempDir dir;
  auto in = dir.write("in.json", "[2,1]");
  auto r = run_coldgate({"canon", "-o", (dir / "out/c.json").string(), in.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(slurp(dir / "out/c.json"), "[\n  1,\n  2\n]\n");
}

TEST(CliCanon, PatternOptionsTakeOneValueEachSoTheFileMayFollow) {
  // docs/commands.md's example: options first, then the file.
  TempDir dir;
  auto in = dir.write("in.json", R"({"log":[3,1],"x":{"updated_at":"t"},"s":[2,1]})");
  auto r = run_coldgate({"canon", "-o", (dir / "out.json").string(), "--ordered", "/log", "--redact",
                         "/**/updated_at", "--redact", "/nothing", in.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(dir / "out.json"),
            "{\n  \"log\": [\n    3,\n    1\n  ],\n  \"s\": [\n    1,\n    2\n  ],\n"
            "  \"x\": {\n    \"updated_at\": \"[redacted]\"\n  }\n}\n");
}

TEST(CliCanon, AFolderIsAUsageError) {
  TempDir dir;
  auto r = run_coldgate({"canon", dir.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: " + dir.path().string() + ": is a folder; expected a file\n");
}

TEST(CliCanon, InvalidJsonNamesFileAndByteOffset) {
  TempDir dir;
  auto file = dir.write("bad.json", "{\"a\": [1, 2,, 3]}");
  auto r = run_coldgate({"canon", file.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("coldgate: error: " + file.string() + ": byte 12: ", 0), 0u) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(CliCanon, MissingFileIsAUsageError) {
  auto r = run_coldgate({"canon", "/nonexistent/doc.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: /nonexistent/doc.json: cannot read file: No such file or directory\n");
}

TEST(CliDiff, EqualDocumentsExitZeroAndPrintNothing) {
  TempDir dir;
  auto a = dir.write("a.json", R"({"x":[1,2],"y":1.0})");
  auto b = dir.write("b.json", R"({"y":1,"x":[2,1]})");
  auto r = run_coldgate({"diff", a.string(), b.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(CliDiff, EqualDocumentsEmptyAnEarlierFullDiffFile) {
  TempDir dir;
  auto a = dir.write("a.json", "[1]");
  auto out = dir.write("full.diff", "stale");
  auto r = run_coldgate({"diff", "-o", out.string(), a.string(), a.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(out), "");
}

TEST(CliDiff, DifferentDocumentsShowPathSummaryThenHunks) {
  TempDir dir;
  auto a = dir.write("a.json", R"({"a":{"b":[{"id":1,"c":10}]},"gone":true})");
  auto b = dir.write("b.json", R"({"a":{"b":[{"id":1,"c":11}]},"new":"x"})");
  auto r = run_coldgate({"diff", "--color", "never", a.string(), b.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.rfind("3 paths differ: 1 changed, 1 added, 1 removed\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("/a/b/0/c: 10 → 11"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--- " + a.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+++ " + b.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-        \"c\": 10,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+        \"c\": 11,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "colour with --color never";
}

TEST(CliDiff, NoColourWhenNoColorIsSetEvenIfForcedAuto) {
  TempDir dir;
  auto a = dir.write("a.json", "[1]");
  auto b = dir.write("b.json", "[2]");
  auto r = run_coldgate({"diff", a.string(), b.string()}, {}, {}, {"NO_COLOR=1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos);
  auto forced = run_coldgate({"diff", "--color", "always", a.string(), b.string()});
  EXPECT_NE(forced.out.find("\x1b["), std::string::npos);
}

TEST(CliDiff, CapsHunksAndNamesTheFullDiffFile) {
  TempDir dir;
  std::string a = "[", b = "[";
  for (int i = 0; i < 500; ++i) {
    if (i > 0) {
      a += ',';
      b += ',';
    }
    a += std::to_string(i * 2);
    b += std::to_string(i * 2 + 1);
  }
  auto fa = dir.write("a.json", a + "]");
  auto fb = dir.write("b.json", b + "]");
  auto full = dir / "full.diff";
  auto r = run_coldgate({"diff", "--max-lines", "50", "-o", full.string(), fa.string(), fb.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("full diff: " + full.string()), std::string::npos) << r.out;
  EXPECT_GT(slurp(full).size(), r.out.size());
}

}  // namespace
}  // namespace coldgate::testing
