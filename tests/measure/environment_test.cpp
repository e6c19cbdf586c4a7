// The git facts of a run (measure::git_info) in real git repositories, and how the report's
// footer names them.
#include <gtest/gtest.h>

#include "measure/environment.hpp"
#include "report/report.hpp"
#include "support/support.hpp"

namespace coldgate::measure {
namespace {

using testing::run_git;
using testing::TempDir;

// The footer's commits line of a run measured in `dir`.
std::string commits_line(const std::filesystem::path& dir) {
  results::Results r;
  r.git = git_info(dir, dir / "coldgate-out");
  std::string md = report::markdown(r, nullptr).report;
  std::size_t at = md.find("- Commits: ");
  if (at == std::string::npos) return "";
  return md.substr(at, md.find('\n', at) - at);
}

TEST(GitInfo, AFolderOutsideGitIsNotACheckout) {
  TempDir dir;
  results::GitInfo g = git_info(dir.path());
  EXPECT_EQ(g.commit, "");
  EXPECT_FALSE(g.unborn);
  EXPECT_TRUE(g.dirty.empty());
  EXPECT_EQ(commits_line(dir.path()), "- Commits: head (not a git checkout)");
}

TEST(GitInfo, ARepositoryWithoutCommitsIsSaidSo) {
  TempDir dir;
  run_git(dir.path(), {"init", "-q"});
  dir.write("coldgate.yaml", "version: 1\n");
  dir.write("coldgate-out/report.md", "coldgate's own output\n");
  results::GitInfo g = git_info(dir.path(), dir / "coldgate-out");
  EXPECT_EQ(g.commit, "");
  EXPECT_TRUE(g.unborn);
  EXPECT_EQ(g.dirty, std::vector<std::string>{"?? coldgate.yaml"});
  EXPECT_EQ(commits_line(dir.path()),
            "- Commits: head (git repository without commits) with 1 uncommitted change");
}

TEST(GitInfo, AnEditedTrackedFileMarksTheCommitDirty) {
  TempDir dir;
  run_git(dir.path(), {"init", "-q"});
  dir.write("stage.sql", "select 1;\n");
  run_git(dir.path(), {"add", "-A"});
  run_git(dir.path(), {"commit", "-q", "-m", "first"});
  const std::string sha = run_git(dir.path(), {"rev-parse", "HEAD"});

  results::GitInfo clean = git_info(dir.path());
  EXPECT_EQ(clean.commit, sha);
  EXPECT_EQ(clean.branch, "base");
  EXPECT_FALSE(clean.unborn);
  EXPECT_TRUE(clean.dirty.empty());
  EXPECT_EQ(commits_line(dir.path()), "- Commits: head `" + sha.substr(0, 7) + "` (`base`)");

  dir.write("stage.sql", "select 2;\n");
  results::GitInfo dirty = git_info(dir.path());
  EXPECT_EQ(dirty.commit, sha);
  EXPECT_EQ(dirty.dirty, std::vector<std::string>{"M stage.sql"});
  EXPECT_EQ(commits_line(dir.path()), "- Commits: head `" + sha.substr(0, 7) +
                                          "+dirty` (`base`) with 1 uncommitted change");
}

}  // namespace
}  // namespace coldgate::measure
