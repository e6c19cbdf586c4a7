#include "cli/stack_command.hpp"

#include <fmt/core.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "ab/git.hpp"
#include "ab/stack.hpp"
#include "cli/commands.hpp"
#include "forge/stack.hpp"
#include "gate/gate.hpp"
#include "measure/environment.hpp"
#include "report/outputs.hpp"
#include "report/stack.hpp"
#include "results/json.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/secrets.hpp"

namespace coldgate::cli {
namespace {

namespace fs = std::filesystem;

// What an earlier stack left under <out>/stack/ must not pass for this run's output: all of it
// but worktrees/, which ab::run_stack removes itself (they are registered with git).
void clear_stack_outputs(const fs::path& out) noexcept {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(out / "stack", ec)) {
    if (entry.path().filename() != "worktrees") fs::remove_all(entry.path(), ec);
  }
}

// The stack from the forge: the default branch, then the open pull requests up to the current
// branch's, each as `origin/<branch>` when the checkout has it (a CI clone), else the branch.
// `entries` gets each pull request's number, title and address.
std::vector<std::string> discovered_refs(const StackArgs& args,
                                         std::vector<report::StackEntry>& entries) {
  // The repository, no pull request: a job that is not a pull request's has no number, and
  // an HTTP error names the repository.
  forge::TargetOptions options{args.github ? "github" : "gitlab", args.token_env, 0};
  forge::Target target;
  try {
    target = forge::resolve_repository(options, forge::process_env);
  } catch (const forge::NotConfigured& e) {
    throw usage_error(args.github ? "--github" : "--gitlab",
                      std::string(e.what()) +
                          "; outside CI, name the refs instead: coldgate stack main feature-1 …");
  }
  const fs::path dir = fs::absolute(args.config).parent_path();
  std::string branch = ab::git(dir, {"rev-parse", "--abbrev-ref", "HEAD"}).value_or("");
  if (branch.empty() || branch == "HEAD") {
    for (const char* var : {"GITHUB_HEAD_REF", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME"}) {
      if (auto v = forge::process_env(var); v && !v->empty()) branch = *v;
    }
  }
  if (branch.empty() || branch == "HEAD") {
    throw usage_error(args.github ? "--github" : "--gitlab",
                      "no current branch (a detached checkout, no GITHUB_HEAD_REF): check out the "
                      "top branch of the stack, or name the refs");
  }
  forge::Stack stack = forge::discover_stack(target, branch, forge::RetryPolicy{}, {});
  auto as_ref = [&](const std::string& b) {
    return ab::git(dir, {"rev-parse", "--verify", "--quiet", "origin/" + b + "^{commit}"})
               ? "origin/" + b
               : b;
  };
  std::vector<std::string> refs{as_ref(stack.default_branch)};
  for (const auto& pull : stack.pulls) {
    refs.push_back(as_ref(pull.head));
    report::StackEntry e;
    e.number = pull.number;
    e.title = pull.title;
    e.url = pull.url;
    entries.push_back(std::move(e));
  }
  return refs;
}

}  // namespace

int run_stack(const StackArgs& args) {
  if (args.github && args.gitlab) throw usage_error("--github", "goes with --gitlab: pick one forge");
  std::vector<report::StackEntry> entries;
  ab::StackOptions options;
  options.config = args.config;
  if (args.github || args.gitlab) {
    if (!args.refs.empty()) {
      throw usage_error(args.refs.front(), fmt::format("--{} discovers the refs: name none",
                                                       args.github ? "github" : "gitlab"));
    }
    options.refs = discovered_refs(args, entries);
  } else {
    if (args.comment) {
      throw usage_error("--comment", "needs the pull requests: pass --github or --gitlab");
    }
    options.refs = args.refs;
    entries.resize(args.refs.size() > 0 ? args.refs.size() - 1 : 0);
  }
  if (args.max_commits < 2) throw usage_error("--max-commits", "must be at least 2");
  options.max_commits = args.max_commits;
  options.use_cache = !args.no_cache;
  options.try_fixes = args.try_fixes;
  options.out_dir = args.out;
  options.ci = ci_mode(args.ci);
  options.progress = measure::detect_progress_style(options.ci);
  ::signal(SIGPIPE, SIG_IGN);  // a reader that quits early must not kill us before clean-up

  const fs::path out = fs::path(args.out) / "stack";
  // Held to the end: another coldgate with this --out (stack/, worktrees, cache/) stops at once.
  util::FileLock out_lock = report::lock_outputs(args.out, "stack");
  // Once the refs and the checkout are known good: a mistyped ref must not cost the last
  // stack's outputs.
  options.ready = [&args] { clear_stack_outputs(args.out); };
  ab::StackOutcome outcome = ab::run_stack(options);
  const auto& commits = outcome.commits;
  // The base's results beside the pull requests', as `ab` writes base/results.json.
  util::write_file_atomic(out / commits[0].folder / "results.json",
                          results::to_json(commits[0].results));
  std::ostringstream reports;  // each pull request's report goes to its folder, not stdout
  bool passed = true;
  for (std::size_t k = 1; k < commits.size(); ++k) {
    const results::Results& r = commits[k].results;
    // The job's page gets the stack summary, not n reports under one title.
    report::write_outputs(r, outcome.stop_error ? nullptr : &commits[k - 1].results,
                          out / commits[k].folder, reports, false);
    passed = passed && gate::passed(r);
    report::StackEntry& e = entries[k - 1];
    e.index = static_cast<int>(k);
    e.ref = commits[k].ref;
    e.report = commits[k].folder + "/report.md";
    e.results = &commits[k].results;
    std::cerr << "coldgate: " << commits[k].folder << " (" << commits[k].commit.substr(0, 12)
              << "): " << gate::verdict(r) << '\n';
  }
  const std::string summary = report::stack_summary(entries, commits.back().results.title);
  util::write_file_atomic(out / "summary.md", summary);
  report::append_to_step_summary(summary);
  std::cout << summary;
  if (!std::cout.flush()) throw Error(ExitCode::infrastructure, "stdout", "write failed");
  std::size_t cached = 0;
  for (const auto& c : commits) cached += c.cached ? 1 : 0;
  std::cerr << fmt::format("coldgate: {} of {} commits {}, {} from the cache; summary in {}\n",
                           commits.size() - cached, commits.size(),
                           outcome.stop_error ? "to measure (stopped before the end)" : "measured",
                           cached, (out / "summary.md").string());
  if (outcome.stop_error) {
    std::cerr << "coldgate: error: " << util::mask_secrets(outcome.stop_error->message()) << '\n';
    return static_cast<int>(outcome.stop_error->code());
  }
  if (args.comment) comment_stack(args, entries, measure::ci_run_url());
  if (outcome.gate_error) throw *outcome.gate_error;
  return passed ? 0 : static_cast<int>(ExitCode::gate_failed);
}

}  // namespace coldgate::cli
