// A config cannot make coldgate write outside its repository: snapshot paths (next to which
// pending .new files and candidates are written) must resolve inside it unless --allow-outside.
#include <gtest/gtest.h>

#include <filesystem>

#include "config/config.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::config {
namespace {

namespace fs = std::filesystem;
using coldgate::testing::run_coldgate;
using coldgate::testing::slurp;
using coldgate::testing::TempDir;

std::string config_with_snapshot(const std::string& path) {
  return "version: 1\n"
         "stages:\n"
         "  - name: q\n"
         "    query: select 1\n"
         "    snapshot: { path: " + path + " }\n";
}

// The one-line error require_paths_inside gives for snapshot path `shown` (as coldgate shows it:
// absolute, `..` applied) in the config at `config`, outside the repository `root`.
std::string outside(const fs::path& config, const fs::path& shown, const fs::path& root) {
  return config.string() + ":5:23: stages[0].snapshot.path: " + shown.string() +
         " leaves the repository " + root.string() +
         "; use a path inside it, or pass --allow-outside";
}

// The error require_paths_inside throws for `path`, or "" when it accepts it.
std::string rejection(const TempDir& dir, const std::string& config_name, const std::string& path) {
  fs::path file = dir.write(config_name, config_with_snapshot(path));
  try {
    require_paths_inside(load(file));
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.message();
  }
}

TEST(SnapshotPaths, InsideTheConfigsFolderIsAccepted) {
  TempDir dir;
  EXPECT_EQ(rejection(dir, "coldgate.yaml", "snapshots/q.json"), "");
  EXPECT_EQ(rejection(dir, "coldgate.yaml", "a/../snapshots/q.json"), "");
  EXPECT_EQ(rejection(dir, "coldgate.yaml", (dir / "snapshots/abs.json").string()), "");
}

TEST(SnapshotPaths, DotDotOutOfTheRepositoryIsRejectedAtTheValue) {
  TempDir dir;
  EXPECT_EQ(
      rejection(dir, "coldgate.yaml", "../../etc/q.json"),
      outside(dir / "coldgate.yaml", (dir / "../../etc/q.json").lexically_normal(), dir.path()));
}

TEST(SnapshotPaths, AbsolutePathOutsideIsRejected) {
  TempDir dir;
  EXPECT_EQ(rejection(dir, "coldgate.yaml", "/etc/coldgate-q.json"),
            outside(dir / "coldgate.yaml", "/etc/coldgate-q.json", dir.path()));
  EXPECT_EQ(rejection(dir, "coldgate.yaml", "/tmp"),
            outside(dir / "coldgate.yaml", "/tmp", dir.path()));
}

TEST(SnapshotPaths, TheRepositoryIsTheFolderHoldingDotGit) {
  // As in this repository: config/demo.yaml writes ../snapshots/*.json.
  TempDir dir;
  fs::create_directories(dir / "repo/.git");
  EXPECT_EQ(rejection(dir, "repo/config/demo.yaml", "../snapshots/q.json"), "");
  EXPECT_EQ(rejection(dir, "repo/config/demo.yaml", "../../q.json"),
            outside(dir / "repo/config/demo.yaml", dir / "q.json", dir / "repo"));
  // A worktree's .git is a file.
  dir.write("wt/.git", "gitdir: /elsewhere\n");
  EXPECT_EQ(rejection(dir, "wt/config/c.yaml", "../snapshots/q.json"), "");
  EXPECT_EQ(repository_root(load(dir / "wt/config/c.yaml")), dir / "wt");
}

TEST(SnapshotPaths, ASymlinkedFolderPointingOutsideIsRejected) {
  TempDir dir;
  TempDir elsewhere;
  fs::create_directories(dir / "repo");
  fs::create_directory_symlink(elsewhere.path(), dir / "repo/snapshots");
  // Named through the link; it is the link's target that lies outside.
  EXPECT_EQ(rejection(dir, "repo/coldgate.yaml", "snapshots/q.json"),
            outside(dir / "repo/coldgate.yaml", dir / "repo/snapshots/q.json", dir / "repo"));
}

TEST(SnapshotPaths, RunAndAcceptRefuseUnlessAllowOutside) {
  TempDir dir;
  dir.write("repo/coldgate.yaml", config_with_snapshot("../outside/q.json"));
  dir.write("outside/q.json", "{\n  \"a\": 1\n}\n");
  dir.write("outside/q.json.new", "{\n  \"a\": 2\n}\n");
  const fs::path repo = dir / "repo";
  // `run` refuses before it starts a server.
  auto run = run_coldgate({"run", "--no-ci", "--out", (dir / "out").string()}, repo);
  // The config is named as it was found, relative to the folder coldgate runs in.
  const std::string refusal =
      "coldgate: error: " + outside("coldgate.yaml", dir / "outside/q.json", repo) + "\n";
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(run.err, refusal);
  auto refused = run_coldgate({"accept", "--no-ci"}, repo);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_EQ(refused.err, refusal);
  EXPECT_EQ(slurp(dir / "outside/q.json"), "{\n  \"a\": 1\n}\n");

  auto allowed = run_coldgate({"accept", "--no-ci", "--allow-outside"}, repo);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(slurp(dir / "outside/q.json"), "{\n  \"a\": 2\n}\n");
}

}  // namespace
}  // namespace coldgate::config
