// Repositories for the tests that run `coldgate history record` (and `ab`'s trend over what it
// recorded): commits with the results of a run of each written beside them. Recording measures
// nothing, so written results are what a measured run would leave. Header-only: the test glob
// compiles *_test.cpp files only.
#pragma once

#include <string>
#include <vector>

#include "results/json.hpp"
#include "support/support.hpp"

namespace coldgate::history::fixtures {

/// Where commit_with_results() writes the results of `sha`, relative to the repository.
inline std::string results_file(const std::string& sha) { return "out/results-" + sha + ".json"; }

/// Results of a run of `sha` on main with no stages yet, as results_file() holds them.
inline results::Results results_of_main(const std::string& sha) {
  results::Results r;
  r.tool_version = "0.1.0";
  r.config = "coldgate.yaml";
  r.git.commit = sha;
  r.git.branch = "main";
  r.environment.provider = "local";
  return r;
}

/// A commit of its own in `repo` on its current branch (app.txt set to `subject`, message
/// `subject`) and the results of a run of it on main in results_file(): one stage `stage` of
/// 3 runs whose cold wall_ms samples are {wall_ms, wall_ms + 1, wall_ms + 2}. Returns its SHA.
inline std::string commit_with_results(const testing::TempDir& repo, const std::string& subject,
                                       double wall_ms, const std::string& stage = "load") {
  repo.write("app.txt", subject);
  testing::run_git(repo.path(), {"add", "app.txt"});
  testing::run_git(repo.path(), {"commit", "-qm", subject});
  const std::string sha = testing::run_git(repo.path(), {"rev-parse", "HEAD"});
  results::Results r = results_of_main(sha);
  results::StageResult s;
  s.name = stage;
  s.runs = 3;
  s.metric("wall_ms", "ms").cold = {wall_ms, wall_ms + 1, wall_ms + 2};
  r.stages.push_back(s);
  repo.write(results_file(sha), results::to_json(r));
  return sha;
}

/// `coldgate history record --results results_file(sha)` and `extra` in `repo`, with CI's
/// branch variables unset: the branch recorded is the results'.
inline testing::RunResult record(const testing::TempDir& repo, const std::string& sha,
                                 const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"history", "record", "--results", results_file(sha)};
  args.insert(args.end(), extra.begin(), extra.end());
  return testing::run_coldgate(args, repo.path(), "",
                               {"CI=", "GITHUB_REF_NAME=", "CI_COMMIT_BRANCH="});
}

}  // namespace coldgate::history::fixtures
