// Parked as .needs-canon so branch snap links without the canon module: once canon is on
// main, `git mv tests/snapshot/snapshot_test.cpp.needs-canon tests/snapshot/snapshot_test.cpp`.
// (17 tests; they pass against main 6f8c447 + canon fa517b6 + snap.)
#include "snapshot/snapshot.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "support/support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::snapshot {
namespace {

namespace fs = std::filesystem;
using coldgate::testing::slurp;
using coldgate::testing::TempDir;

const std::string k_old = "{\n  \"a\": 1,\n  \"b\": \"old\",\n  \"c\": [\n    1,\n    2\n  ]\n}\n";
const std::string k_new = "{\n  \"a\": 2,\n  \"c\": [\n    1,\n    2\n  ],\n  \"d\": true\n}\n";

// Runs the test body with the current folder set to a temp dir (pending paths are relative).
class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_old_cwd = fs::current_path();
    fs::current_path(m_dir.path());
  }
  void TearDown() override { fs::current_path(m_old_cwd); }

  Claim claim(const std::string& stage, const std::string& path) {
    return Claim{stage, fs::path(path), canon::Options{}};
  }

  // Every file under `dir`, relative, sorted.
  std::set<std::string> listing(const fs::path& dir) {
    std::set<std::string> out;
    if (!fs::exists(dir)) return out;
    for (auto& e : fs::recursive_directory_iterator(dir))
      out.insert(e.path().lexically_relative(dir).string());
    return out;
  }

  TempDir m_dir;
  fs::path m_old_cwd;
};

TEST(SnapshotStatus, ToStringNamesEveryStatus) {
  EXPECT_EQ(to_string(Status::match), "match");
  EXPECT_EQ(to_string(Status::changed), "changed");
  EXPECT_EQ(to_string(Status::missing), "missing");
  EXPECT_EQ(to_string(Status::obsolete), "obsolete");
  EXPECT_EQ(to_string(Status::malformed), "malformed");
  EXPECT_EQ(to_string(Status::nondeterministic), "nondeterministic");
  EXPECT_EQ(to_string(Status::rearranged), "rearranged");
}

TEST_F(SnapshotTest, MatchWritesNothingAndRemovesStalePendingFiles) {
  m_dir.write("snapshots/x.json", k_old);
  m_dir.write("snapshots/x.json.new", k_new);
  m_dir.write("snapshots/x.json.new.diff", "stale");
  Verdict v = check(claim("x", "snapshots/x.json"), k_old, {});
  EXPECT_EQ(v.status, Status::match);
  EXPECT_TRUE(v.pending.empty());
  EXPECT_TRUE(v.message.empty());
  EXPECT_TRUE(v.diff.empty());
  EXPECT_EQ(v.candidate_sha256, util::sha256_hex(k_old));
  EXPECT_EQ(listing("snapshots"), std::set<std::string>{"x.json"});
}

TEST_F(SnapshotTest, ChangedLocallyWritesNewAndDiffBesideTheSnapshot) {
  m_dir.write("snapshots/x.json", k_old);
  Verdict v = check(claim("config-load", "snapshots/x.json"), k_new, {});
  EXPECT_EQ(v.status, Status::changed);
  EXPECT_EQ(v.stage, "config-load");
  EXPECT_EQ(v.committed, "snapshots/x.json");
  EXPECT_EQ(v.pending, "snapshots/x.json.new");
  EXPECT_EQ(slurp("snapshots/x.json.new"), k_new);
  EXPECT_EQ(slurp("snapshots/x.json"), k_old);  // the snapshot itself is untouched
  EXPECT_EQ(v.candidate_sha256, util::sha256_hex(k_new));
  EXPECT_EQ(v.message,
            "snapshot changed: 3 paths differ (1 changed, 1 added, 1 removed); review "
            "snapshots/x.json.new (whole diff: snapshots/x.json.new.diff), then run: coldgate accept "
            "config-load");
  EXPECT_EQ(v.diff.substr(0, v.diff.find("\n\n")),
            "3 paths differ: 1 changed, 1 added, 1 removed\n"
            "  /a: 1 → 2\n"
            "  /b: removed \"old\"\n"
            "  /d: added true");
  EXPECT_NE(v.diff.find("--- snapshots/x.json\n+++ snapshots/x.json.new\n"), std::string::npos);
  std::string full = slurp("snapshots/x.json.new.diff");
  EXPECT_EQ(full.substr(0, full.find("@@")), "--- snapshots/x.json\n+++ snapshots/x.json.new\n");
  EXPECT_EQ(listing("snapshots"),
            (std::set<std::string>{"x.json", "x.json.new", "x.json.new.diff"}));
}

TEST_F(SnapshotTest, DiffIsCappedAndNamesTheFullDiff) {
  std::string a = "[\n", b = "[\n";
  for (int i = 0; i < 500; ++i) {
    a += "  " + std::to_string(i) + (i < 499 ? ",\n" : "\n");
    b += "  " + std::to_string(i + 1000) + (i < 499 ? ",\n" : "\n");
  }
  a += "]\n";
  b += "]\n";
  m_dir.write("snapshots/x.json", a);
  Verdict v = check(claim("x", "snapshots/x.json"), b, {});
  EXPECT_NE(
      v.diff.find("… diff cut at 200 lines (803 more); full diff: snapshots/x.json.new.diff\n"),
      std::string::npos)
      << v.diff.substr(v.diff.size() - 200);
}

TEST_F(SnapshotTest, MissingSnapshotIsWrittenAsPending) {
  Verdict v = check(claim("x", "snapshots/x.json"), k_new, {});
  EXPECT_EQ(v.status, Status::missing);
  EXPECT_EQ(v.pending, "snapshots/x.json.new");
  EXPECT_EQ(slurp("snapshots/x.json.new"), k_new);
  EXPECT_FALSE(fs::exists("snapshots/x.json"));
  EXPECT_TRUE(v.diff.empty());
  EXPECT_EQ(v.message,
            "snapshot missing: snapshots/x.json does not exist; review snapshots/x.json.new, then "
            "run: coldgate accept x");
}

TEST_F(SnapshotTest, MalformedVariantsSayWhy) {
  struct Case {
    std::string committed;
    std::string reason;
  };
  std::string crlf = k_new;
  for (std::size_t p = 0; (p = crlf.find('\n', p)) != std::string::npos; p += 2)
    crlf.replace(p, 1, "\r\n");
  const Case cases[] = {
      {crlf, "has CRLF line endings"},
      {"\xEF\xBB\xBF" + k_new, "starts with a UTF-8 BOM"},
      {"{\n  \"b\": 1,\n  \"a\": 1\n}\n", "is not in canonical form from line 2"},
      {"{\n  \"a\": \n", "is not valid JSON"},
  };
  for (const Case& c : cases) {
    m_dir.write("snapshots/x.json", c.committed);
    Verdict v = check(claim("x", "snapshots/x.json"), k_new, {});
    EXPECT_EQ(v.status, Status::malformed) << c.reason;
    EXPECT_EQ(v.message.rfind("snapshot malformed: snapshots/x.json " + c.reason, 0), 0u)
        << v.message;
    EXPECT_NE(v.message.find("; review snapshots/x.json.new (whole diff: snapshots/x.json.new.diff), then run: coldgate accept x"),
              std::string::npos);
    EXPECT_EQ(slurp("snapshots/x.json.new"), k_new);
    EXPECT_FALSE(v.diff.empty());
  }
}

// A document with an array of objects that have both `id` and `sku`: sorted by `id` under the
// default rules, by `sku` under `identity: [sku]`.
const std::string k_by_id =
    "{\n  \"items\": [\n    {\n      \"id\": 1,\n      \"price\": 5,\n      \"sku\": \"b\"\n    },\n"
    "    {\n      \"id\": 2,\n      \"price\": 7,\n      \"sku\": \"a\"\n    }\n  ]\n}\n";
const std::string k_by_sku =
    "{\n  \"items\": [\n    {\n      \"id\": 2,\n      \"price\": 7,\n      \"sku\": \"a\"\n    },\n"
    "    {\n      \"id\": 1,\n      \"price\": 5,\n      \"sku\": \"b\"\n    }\n  ]\n}\n";

canon::Options by_sku() {
  canon::Options o;
  o.identity = {"sku"};
  return o;
}

TEST_F(SnapshotTest, ChangedRulesWithTheSameContentAreRearrangedAndAcceptRewritesTheFile) {
  m_dir.write("snapshots/x.json", k_by_id);
  m_dir.write("snapshots/x.json.new.diff", "stale");
  const Claim claim{"items", "snapshots/x.json", by_sku()};
  Verdict v = check(claim, k_by_sku, {});
  EXPECT_EQ(v.status, Status::rearranged);
  EXPECT_EQ(v.message,
            "snapshot rearranged: snapshots/x.json is arranged under changed rules, content "
            "identical: run coldgate accept items to rewrite it");
  EXPECT_EQ(v.diff, "");  // no content differs: no diff of hundreds of moved lines
  EXPECT_EQ(v.pending, "snapshots/x.json.new");
  EXPECT_EQ(slurp("snapshots/x.json.new"), k_by_sku);
  EXPECT_EQ(slurp("snapshots/x.json"), k_by_id);
  EXPECT_EQ(listing("snapshots"), (std::set<std::string>{"x.json", "x.json.new"}));
  EXPECT_EQ(malformed_reason(k_by_id, by_sku()),
            "is arranged under other snapshot rules (ordered, identity or redact) than the stage's");

  std::vector<Accepted> done = accept({claim}, {}, Mode::local);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(slurp("snapshots/x.json"), k_by_sku);
  EXPECT_EQ(check(claim, k_by_sku, {}).status, Status::match);
}

TEST_F(SnapshotTest, OrderedRemovedOrRedactAddedIsRearrangedToo) {
  // Written while /log was ordered; the rule is gone, so the array is sorted now.
  m_dir.write("snapshots/log.json", "{\n  \"log\": [\n    3,\n    1,\n    2\n  ]\n}\n");
  Verdict sorted = check(claim("log", "snapshots/log.json"),
                         "{\n  \"log\": [\n    1,\n    2,\n    3\n  ]\n}\n", {});
  EXPECT_EQ(sorted.status, Status::rearranged);
  // Written before /at was redacted.
  m_dir.write("snapshots/at.json", "{\n  \"at\": \"2024-05-01\",\n  \"n\": 1\n}\n");
  canon::Options redact;
  redact.redact = {"/at"};
  Verdict redacted = check(Claim{"at", "snapshots/at.json", redact},
                           "{\n  \"at\": \"[redacted]\",\n  \"n\": 1\n}\n", {});
  EXPECT_EQ(redacted.status, Status::rearranged);
}

TEST_F(SnapshotTest, ChangedRulesAndChangedContentDiffTheContents) {
  m_dir.write("snapshots/x.json", k_by_id);
  std::string candidate = k_by_sku;
  candidate.replace(candidate.find("\"price\": 7"), 10, "\"price\": 8");
  Verdict v = check(Claim{"items", "snapshots/x.json", by_sku()}, candidate, {});
  EXPECT_EQ(v.status, Status::changed);
  EXPECT_EQ(v.message,
            "snapshot changed: 1 path differs (1 changed, 0 added, 0 removed) once "
            "snapshots/x.json, arranged under other rules, is arranged under the current ones; "
            "review snapshots/x.json.new (whole diff: snapshots/x.json.new.diff), then run: "
            "coldgate accept items");
  // The content diff: one value, not the two elements that the new rules swapped.
  EXPECT_EQ(v.diff,
            "1 path differs: 1 changed, 0 added, 0 removed\n"
            "  /items/0/price: 7 → 8\n"
            "\n"
            "--- snapshots/x.json (arranged under the current rules)\n"
            "+++ snapshots/x.json.new\n"
            "@@ -2,7 +2,7 @@\n"
            "   \"items\": [\n"
            "     {\n"
            "       \"id\": 2,\n"
            "-      \"price\": 7,\n"
            "+      \"price\": 8,\n"
            "       \"sku\": \"a\"\n"
            "     },\n"
            "     {\n");
  EXPECT_EQ(slurp("snapshots/x.json.new.diff"), v.diff.substr(v.diff.find("---")));
}

TEST_F(SnapshotTest, AnIdentitySortedArrayThatGrewSaysHowManyElementsWereAdded) {
  auto page = [](int step) {
    std::string json = "{\"items\": [";
    for (int id = step; id <= 300; id += step)
      json += (id == step ? "" : ",") + fmt::format("{{\"id\": {0}, \"title\": \"t{0}\"}}", id);
    return canon::canonicalize(json + "]}");
  };
  m_dir.write("snapshots/x.json", page(15));
  Verdict v = check(claim("list", "snapshots/x.json"), page(1), {});
  EXPECT_EQ(v.status, Status::changed);
  EXPECT_EQ(v.message.substr(0, v.message.find("; review")),
            "snapshot changed: 560 paths differ (0 changed, 560 added, 0 removed); /items: 280 "
            "elements added (paired by `id`)");
}

TEST_F(SnapshotTest, ReindentedIsStillMalformed) {
  m_dir.write("snapshots/x.json", "{\n    \"a\": 1\n}\n");
  Verdict v = check(claim("x", "snapshots/x.json"), "{\n  \"a\": 1\n}\n", {});
  EXPECT_EQ(v.status, Status::malformed);
  EXPECT_EQ(v.message,
            "snapshot malformed: snapshots/x.json is not in canonical form from line 2 (unsorted "
            "keys, re-indented or edited by hand?); review snapshots/x.json.new (whole diff: "
            "snapshots/x.json.new.diff), then run: coldgate accept x");
}

TEST_F(SnapshotTest, RearrangedInCiAndUnderUpdate) {
  m_dir.write("snapshots/x.json", k_by_id);
  const Claim claim{"items", "snapshots/x.json", by_sku()};
  Verdict ci = check(claim, k_by_sku, Settings{Mode::ci, "coldgate-out", false});
  EXPECT_EQ(ci.status, Status::rearranged);
  EXPECT_EQ(ci.message,
            "snapshot rearranged: snapshots/x.json is arranged under changed rules, content "
            "identical; the candidate is coldgate-out/snapshots/snapshots/x.json in the job's "
            "artifacts: review it and commit it as snapshots/x.json");
  EXPECT_EQ(slurp("coldgate-out/snapshots/snapshots/x.json"), k_by_sku);
  EXPECT_FALSE(fs::exists("coldgate-out/snapshots/snapshots/x.json.diff"));

  Verdict update = check(claim, k_by_sku, Settings{Mode::local, "coldgate-out", true});
  EXPECT_EQ(update.status, Status::rearranged);  // what it was before
  EXPECT_EQ(update.message,
            "snapshot updated: snapshots/x.json was rearranged: snapshots/x.json is arranged "
            "under changed rules, content identical");
  EXPECT_EQ(update.diff, "");
  EXPECT_EQ(slurp("snapshots/x.json"), k_by_sku);
}

TEST_F(SnapshotTest, CiModeWritesOnlyUnderOutDir) {
  m_dir.write("snapshots/x.json", k_old);
  m_dir.write("snapshots/y.json", k_old);
  std::set<std::string> before = listing("snapshots");
  Settings ci{Mode::ci, "coldgate-out", false};
  Verdict changed = check(claim("x", "snapshots/x.json"), k_new, ci);
  Verdict missing = check(claim("z", "snapshots/sub/z.json"), k_new, ci);
  Verdict match = check(claim("y", "snapshots/y.json"), k_old, ci);
  EXPECT_EQ(listing("snapshots"), before);
  EXPECT_EQ(changed.status, Status::changed);
  EXPECT_EQ(changed.pending, "coldgate-out/snapshots/snapshots/x.json");
  EXPECT_EQ(slurp("coldgate-out/snapshots/snapshots/x.json"), k_new);
  EXPECT_TRUE(fs::exists("coldgate-out/snapshots/snapshots/x.json.diff"));
  EXPECT_EQ(missing.status, Status::missing);
  EXPECT_EQ(missing.pending, "coldgate-out/snapshots/snapshots/sub/z.json");
  EXPECT_EQ(match.status, Status::match);
  EXPECT_EQ(changed.message,
            "snapshot changed: 3 paths differ (1 changed, 1 added, 1 removed); the candidate is "
            "coldgate-out/snapshots/snapshots/x.json in the job's artifacts: review it and commit "
            "it as snapshots/x.json");
}

// `ab` and `stack` outside CI write their candidates under --out as in CI, but the file is on
// this machine: the message says where, and how to accept it from there.
TEST_F(SnapshotTest, OutsideCiTheCandidateUnderOutIsNamedWithHowToAcceptIt) {
  m_dir.write("snapshots/x.json", k_old);
  Settings local{Mode::ci, "coldgate-out", false};
  local.artifacts = false;
  Verdict v = check(claim("x", "snapshots/x.json"), k_new, local);
  EXPECT_EQ(v.pending, "coldgate-out/snapshots/snapshots/x.json");
  EXPECT_EQ(v.message,
            "snapshot changed: 3 paths differ (1 changed, 1 added, 1 removed); review "
            "coldgate-out/snapshots/snapshots/x.json (whole diff: "
            "coldgate-out/snapshots/snapshots/x.json.diff), then run: coldgate accept x --from "
            "coldgate-out");
}

// `ab` and `stack` measure worktrees outside the current folder: their snapshots' paths inside
// the repository (label_root) keep two files of one name apart.
TEST_F(SnapshotTest, CiModeKeepsThePathInsideTheRepositoryForSnapshotsOutsideTheCurrentFolder) {
  TempDir worktree;
  worktree.write("snapshots/orders/feed.json", k_old);
  worktree.write("snapshots/users/feed.json", k_old);
  Settings ci{Mode::ci, "out", false};
  ci.label_root = worktree.path();
  Verdict a = check(Claim{"orders", worktree / "snapshots/orders/feed.json", {}}, k_new, ci);
  Verdict b = check(Claim{"users", worktree / "snapshots/users/feed.json", {}}, k_new + " ", ci);
  EXPECT_EQ(a.pending, "out/snapshots/snapshots/orders/feed.json");
  EXPECT_EQ(b.pending, "out/snapshots/snapshots/users/feed.json");
  EXPECT_EQ(slurp("out/snapshots/snapshots/orders/feed.json"), k_new);
  // What `accept --from` finds for each, with the worktree as the source's root.
  Source source{"out", worktree.path()};
  EXPECT_EQ(candidate_path(Claim{"orders", worktree / "snapshots/orders/feed.json", {}}, source),
            "out/snapshots/snapshots/orders/feed.json");
}

TEST_F(SnapshotTest, CiModeUsesTheFileNameForSnapshotsOutsideTheCurrentFolder) {
  TempDir elsewhere;
  elsewhere.write("x.json", k_old);
  Settings ci{Mode::ci, "out", false};
  Verdict v = check(Claim{"x", elsewhere / "x.json", {}}, k_new, ci);
  EXPECT_EQ(v.pending, "out/snapshots/x.json");
  EXPECT_EQ(slurp(elsewhere / "x.json"), k_old);
  EXPECT_FALSE(fs::exists(elsewhere / "x.json.new"));
}

TEST_F(SnapshotTest, CiModeRefusesAnOutDirInsideTheSnapshotsFolder) {
  m_dir.write("snapshots/x.json", k_old);
  Settings ci{Mode::ci, "snapshots/out", false};
  EXPECT_THROW(check(claim("x", "snapshots/x.json"), k_new, ci), Error);
  EXPECT_EQ(listing("snapshots"), std::set<std::string>{"x.json"});
}

TEST_F(SnapshotTest, UpdateWritesTheCandidateOverTheSnapshot) {
  m_dir.write("snapshots/x.json", k_old);
  m_dir.write("snapshots/x.json.new", "stale");
  Settings update{Mode::local, "coldgate-out", true};
  Verdict v = check(claim("x", "snapshots/x.json"), k_new, update);
  EXPECT_EQ(v.status, Status::changed);  // what it was before
  EXPECT_TRUE(v.pending.empty());
  EXPECT_EQ(slurp("snapshots/x.json"), k_new);
  EXPECT_EQ(listing("snapshots"), std::set<std::string>{"x.json"});
  EXPECT_EQ(v.message,
            "snapshot updated: snapshots/x.json was changed: 3 paths differ (1 changed, 1 added, "
            "1 removed)");
  Verdict created = check(claim("y", "snapshots/y.json"), k_new, update);
  EXPECT_EQ(created.status, Status::missing);
  EXPECT_EQ(created.message, "snapshot created: snapshots/y.json (was missing)");
  EXPECT_EQ(slurp("snapshots/y.json"), k_new);
  EXPECT_THROW(check(claim("x", "snapshots/x.json"), k_old, Settings{Mode::ci, "out", true}),
               Error);
}

TEST_F(SnapshotTest, FindObsoleteListsUnclaimedJsonOnly) {
  m_dir.write("snapshots/a.json", k_old);
  m_dir.write("snapshots/b.json", k_old);
  m_dir.write("snapshots/b.json.new", k_old);
  m_dir.write("snapshots/b.json.new.diff", "");
  m_dir.write("snapshots/deep/c.json", k_old);
  m_dir.write("snapshots/notes.txt", "");
  std::vector<Claim> claims{claim("a", "snapshots/a.json"),
                            claim("a2", (m_dir.path() / "snapshots/./deep/../a.json").string()),
                            Claim{"c", m_dir.path() / "snapshots/deep/c.json", {}}};
  EXPECT_EQ(find_obsolete("snapshots", claims), std::vector<fs::path>{"snapshots/b.json"});
  EXPECT_TRUE(find_obsolete("no-such-folder", claims).empty());
}

TEST_F(SnapshotTest, AcceptPromotesPendingAndRemovesTheDiff) {
  m_dir.write("snapshots/x.json", k_old);
  m_dir.write("snapshots/x.json.new", k_new);
  m_dir.write("snapshots/x.json.new.diff", "review aid");
  m_dir.write("snapshots/y.json", k_old);
  std::vector<Claim> claims{claim("x", "snapshots/x.json"), claim("y", "snapshots/y.json")};
  std::vector<Accepted> done = accept(claims, {}, Mode::local);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].stage, "x");
  EXPECT_EQ(done[0].path, "snapshots/x.json");
  EXPECT_EQ(done[0].pending, "snapshots/x.json.new");
  EXPECT_EQ(slurp("snapshots/x.json"), k_new);
  EXPECT_EQ(listing("snapshots"), (std::set<std::string>{"x.json", "y.json"}));
}

TEST_F(SnapshotTest, AcceptOnlySelectedStages) {
  m_dir.write("snapshots/x.json.new", k_new);
  m_dir.write("snapshots/y.json.new", k_new);
  std::vector<Claim> claims{claim("x", "snapshots/x.json"), claim("y", "snapshots/y.json")};
  std::vector<Accepted> done = accept(claims, {"y"}, Mode::local);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].stage, "y");
  EXPECT_EQ(listing("snapshots"), (std::set<std::string>{"x.json.new", "y.json"}));
}

std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.message();
  }
  return "(no error)";
}

TEST_F(SnapshotTest, AcceptRefusesInCi) {
  m_dir.write("snapshots/x.json.new", k_new);
  EXPECT_EQ(error_message([&] { accept({claim("x", "snapshots/x.json")}, {}, Mode::ci); }),
            "accept: refusing to write snapshots in CI mode (CI=true); download the candidates "
            "from the job's artifacts and commit them, or run with --no-ci");
  EXPECT_TRUE(fs::exists("snapshots/x.json.new"));
  EXPECT_FALSE(fs::exists("snapshots/x.json"));
}

TEST_F(SnapshotTest, AcceptUnknownStageHasAHint) {
  std::vector<Claim> claims{claim("config-load", "snapshots/x.json"), claim("plugins", "p.json")};
  EXPECT_EQ(error_message([&] { accept(claims, {"config-lod"}, Mode::local); }),
            "accept: unknown stage 'config-lod' (did you mean 'config-load'?)");
  EXPECT_EQ(error_message([&] { accept(claims, {"zzz"}, Mode::local); }),
            "accept: unknown stage 'zzz'");
}

TEST_F(SnapshotTest, AcceptWithNothingPending) {
  m_dir.write("snapshots/x.json", k_old);
  EXPECT_EQ(error_message([&] { accept({claim("x", "snapshots/x.json")}, {}, Mode::local); }),
            "accept: nothing to accept: no pending .new snapshots (run coldgate run first)");
}

TEST_F(SnapshotTest, AcceptRefusesANonCanonicalPendingAndChangesNothing) {
  m_dir.write("snapshots/a.json.new", k_new);
  m_dir.write("snapshots/x.json", k_old);
  m_dir.write("snapshots/x.json.new", "{\"a\":1}");
  std::vector<Claim> claims{claim("a", "snapshots/a.json"), claim("x", "snapshots/x.json")};
  std::string message = error_message([&] { accept(claims, {}, Mode::local); });
  EXPECT_EQ(message.rfind("accept: refusing snapshots/x.json.new (stage 'x'): it is not in "
                          "canonical form from line 1",
                          0),
            0u)
      << message;
  EXPECT_EQ(listing("snapshots"), (std::set<std::string>{"a.json.new", "x.json", "x.json.new"}));
  EXPECT_EQ(slurp("snapshots/x.json"), k_old);
}

}  // namespace
}  // namespace coldgate::snapshot
