#include "cli/history_command.hpp"

#include <fmt/core.h>

#include <iostream>

#include "ab/cache.hpp"
#include "ab/git.hpp"
#include "cli/commands.hpp"
#include "history/record.hpp"
#include "measure/environment.hpp"
#include "results/json.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate::cli {
namespace fs = std::filesystem;
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Parent, subject and committer date (UTC) of `commit`, from git in `repo`. Throws
// Error(usage) when the checkout does not have that commit.
history::CommitFacts commit_facts(const fs::path& repo, const std::string& commit,
                                  const std::string& source) {
  util::SpawnOptions o;
  o.argv = {"git", "log", "-1", "--format=%P%n%cd%n%s",
            "--date=format-local:%Y-%m-%dT%H:%M:%SZ", commit, "--"};
  o.cwd = repo;
  o.env = {"TZ=UTC"};
  if (!util::find_program("git")) {
    throw Error(ExitCode::infrastructure, "git", "git is not installed; coldgate history needs it");
  }
  auto run = util::run(o, std::chrono::seconds(60));
  if (!run.status.ok()) {
    throw Error(ExitCode::usage, source,
                fmt::format("commit {} is not in the repository at {}: record in the checkout "
                            "that was measured (with its history: fetch-depth: 0)",
                            commit.substr(0, 12), util::display_path(repo)));
  }
  history::CommitFacts facts;
  std::string out = run.out;
  auto next = [&out] {
    auto nl = out.find('\n');
    std::string line = out.substr(0, nl);
    out = nl == std::string::npos ? "" : out.substr(nl + 1);
    return line;
  };
  std::string parents = next();
  facts.parent = parents.substr(0, parents.find(' '));
  facts.date = next();
  facts.subject = next();
  return facts;
}

}  // namespace

history::StoreSpec store_spec(const std::string& flag, const config::Config* cfg) {
  if (!flag.empty()) return history::parse_store(flag, fs::current_path(), "--store");
  if (cfg) return history::parse_store(cfg->history.store, cfg->base_dir, cfg->history.where.str());
  return history::parse_store("git:coldgate-history", fs::current_path(), "history.store");
}

std::optional<config::Config> history_config(const std::string& path, bool needed) {
  std::error_code ec;
  if (!needed && !fs::exists(path, ec)) return std::nullopt;
  require_config(path);
  return config::load(path);
}

int run_history_record(const HistoryArgs& args) {
  util::install_interrupt_handlers();
  if (!args.out.empty()) {
    throw usage_error("-o", "only `history page` writes a page; `history record` takes --results");
  }
  auto cfg = history_config(args.config, args.store.empty());
  const history::StoreSpec spec = store_spec(args.store, cfg ? &*cfg : nullptr);
  std::error_code ec;
  if (!fs::exists(args.results, ec)) {
    throw Error(ExitCode::usage, args.results,
                "no results to record: run `coldgate run` first (or pass --results FILE)");
  }
  const results::Results r = results::from_json(util::read_file(args.results), args.results);
  const fs::path repo = cfg ? cfg->base_dir : fs::current_path();
  if (r.git.commit.empty()) {
    // reduce() says why; before git is asked about a commit that is not there.
    history::reduce(r, {}, "", "", "", args.results);
  }
  std::string branch = args.branch;
  if (branch.empty()) branch = r.git.branch;
  if (branch.empty()) branch = env("GITHUB_REF_NAME");
  if (branch.empty()) branch = env("CI_COMMIT_BRANCH");
  if (branch.empty()) {
    throw usage_error("--branch", fmt::format("{} names no branch (a detached checkout): pass "
                                              "--branch main",
                                              args.results));
  }
  // The fingerprint is ab's result cache's: the same runs are comparable in both.
  std::string config_text;
  if (cfg) config_text = util::read_file(cfg->file);
  const history::Record record = history::reduce(
      r, commit_facts(repo, r.git.commit, args.results), branch,
      ab::fingerprint(r.environment, config_text), measure::utc_now(), args.results);
  if (r.git.dirty_measured && !r.git.dirty.empty()) {
    std::cerr << fmt::format(
        "coldgate: warning: {} was measured with uncommitted changes ({}{}): recorded as {} "
        "all the same\n",
        args.results, r.git.dirty.front(), r.git.dirty.size() > 1 ? ", …" : "",
        r.git.commit.substr(0, 7));
  }
  history::WriteOptions options;
  options.push = args.push;
  options.remote = args.remote;
  options.on_retry = [](const std::string& what) {
    std::cerr << "coldgate: history record: " << what << '\n';
  };
  options.message = fmt::format("record {} ({}): {}", record.commit.substr(0, 7), record.branch,
                                record.subject);
  if (args.push && spec.kind != history::StoreSpec::Kind::git) {
    throw usage_error("--push", fmt::format("{} is a folder store: only a git: store is pushed",
                                            spec.text));
  }
  const std::string json = history::to_json(record);
  // A SIGINT/SIGTERM while the record was made stops it here; once the write began, the record
  // lands whole or not at all (git's own runs stop at a signal; a folder write is one rename).
  util::throw_if_interrupted();
  const std::string where = history::write_file(spec, repo, history::file_name(record), json, options);
  std::cout << fmt::format("recorded {} ({}, {} stages) in {}\n", record.commit.substr(0, 7),
                           record.branch, record.stages.size(), where);
  return 0;
}

}  // namespace coldgate::cli
