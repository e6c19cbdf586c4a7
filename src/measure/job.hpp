#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "measure/progress.hpp"
#include "measure/results.hpp"

namespace coldgate::measure {

/// How `coldgate run` runs the stages of a config.
struct JobOptions {
  std::vector<std::string> stages;        // --stage: only these (empty: all)
  std::filesystem::path out_dir = "coldgate-out";
  bool ci = false;                        // never write under snapshots/; candidates to out_dir
  bool update_snapshots = false;          // write candidates over committed snapshots (local)
  std::string accept_command = "coldgate accept";  // as messages should spell it (with -c FILE)
  ProgressStyle progress = ProgressStyle::plain;
  int shard_index = 1;                    // --shard I/N: run the I-th stage and every N-th after
  int shard_count = 1;                    //   it (1-based, config order, after --stage)
};

/// `--shard I/N` as {I, N}; throws Error(usage) unless I and N are integers with 1 ≤ I ≤ N.
std::pair<int, int> parse_shard(std::string_view text);

/// The main job: starts the configured server (provider), runs the setup steps, measures every
/// selected stage in config order, checks snapshots, stops the server. A failing stage does not
/// stop the others. Throws Error: usage (unknown --stage, with a hint), gate_failed (a setup
/// step failed), infrastructure (server did not start or came not back), interrupted.
Results run_job(const config::Config& config, const JobOptions& options);

/// The environment block: host, CPUs, CPU model (/proc/cpuinfo), kernel (uname), OS
/// (/etc/os-release); the caller adds the server's part.
Environment host_environment();

/// Commit and branch of the git checkout holding `dir` ("" each when not a checkout or no git);
/// GITHUB_HEAD_REF names the branch of a detached pull-request checkout in GitHub Actions.
/// `dirty` lists the checkout's uncommitted changes (uncommitted_changes), `out_dir` left out.
GitInfo git_info(const std::filesystem::path& dir, const std::filesystem::path& out_dir = {});

/// The uncommitted changes of the git checkout holding `dir`, as `git status --porcelain` lines
/// without their leading blank ("M sql/load.sql", "?? new.sql"; ignored files are not listed),
/// leaving out what lies under `exclude` (coldgate's own --out folder; empty: nothing left out).
/// Empty when clean, not a checkout, or git is missing.
std::vector<std::string> uncommitted_changes(const std::filesystem::path& dir,
                                             const std::filesystem::path& exclude);

/// The web page of the CI job running now: $GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/
/// $GITHUB_RUN_ID on GitHub Actions, $CI_JOB_URL on GitLab CI; "" elsewhere.
std::string ci_run_url();

/// Now as UTC RFC 3339 with seconds: "2026-11-30T01:02:03Z".
std::string utc_now();

}  // namespace coldgate::measure
