#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "results/results.hpp"

namespace coldgate::measure {

/// The environment block: host, CPUs, CPU model (/proc/cpuinfo), kernel (uname), OS
/// (/etc/os-release); the caller adds the server's part.
results::Environment host_environment();

/// Commit and branch of the git checkout holding `dir` ("" each when not a checkout, in one
/// without commits, or no git); GITHUB_HEAD_REF names the branch of a detached pull-request
/// checkout in GitHub Actions. `unborn` says the checkout has no commit yet. `dirty` lists the
/// checkout's uncommitted changes (uncommitted_changes), `out_dir` left out.
results::GitInfo git_info(const std::filesystem::path& dir,
                          const std::filesystem::path& out_dir = {});

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
