#include "ab/git.hpp"

#include <fmt/core.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>
#include <thread>

#include "db/cluster_registry.hpp"
#include "util/error.hpp"
#include "util/process.hpp"
#include "util/suggest.hpp"

namespace coldgate::ab {
namespace fs = std::filesystem;
namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// The first line of git's stderr, for messages.
std::string first_line(const std::string& text) {
  std::string t = trimmed(text);
  auto nl = t.find('\n');
  return nl == std::string::npos ? t : t.substr(0, nl);
}

std::optional<std::string> commit_of(const fs::path& dir, const std::string& ref) {
  return git(dir, {"rev-parse", "--verify", "--quiet", ref + "^{commit}"});
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Runs git for clean-up: not aborted by an interrupt, never throws.
void quiet_git(const fs::path& repo, std::vector<std::string> args) noexcept {
  try {
    util::SpawnOptions o;
    args.insert(args.begin(), "git");
    o.argv = std::move(args);
    o.cwd = repo;
    o.finish_when_interrupted = true;
    util::run(o, std::chrono::seconds(60));
  } catch (...) {  // clean-up is best effort: the next run removes what is left
  }
}

void resolve_base(Commits& c, const BaseRequest& request);

}  // namespace

const char* place(BaseFrom from) {
  switch (from) {
    case BaseFrom::option: return "--base";
    case BaseFrom::github: return "GITHUB_BASE_REF";
    case BaseFrom::gitlab: return "CI_MERGE_REQUEST_TARGET_BRANCH_NAME";
    case BaseFrom::none: break;
  }
  return "";
}

std::optional<std::string> git(const fs::path& dir, const std::vector<std::string>& args,
                               std::string* err) {
  if (!util::find_program("git")) {
    throw Error(ExitCode::infrastructure, "git", "git is not installed; coldgate ab needs it");
  }
  util::SpawnOptions o;
  o.argv = {"git"};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.cwd = dir;
  auto out = util::run(o, std::chrono::minutes(10));
  if (!out.status.ok()) {
    if (err) *err = first_line(out.err);
    return std::nullopt;
  }
  return trimmed(out.out);
}

Commits resolve_commits(const fs::path& dir, const BaseRequest& request) {
  Commits c;
  std::string err;
  auto top = git(dir, {"rev-parse", "--show-toplevel"}, &err);
  if (!top) {
    throw usage_error(dir.string(),
                      "not inside a git checkout (coldgate ab compares two commits): " + err);
  }
  c.repo = *top;
  auto head = commit_of(c.repo, request.head);
  if (!head) {
    throw usage_error("--head",
                      fmt::format("'{}' is not a commit of {}", request.head, c.repo.string()));
  }
  c.head = *head;
  // A branch name, else (a detached checkout, or --head given as the pull request's head sha
  // as the GitHub action does) the CI's name for the branch of that head.
  if (auto b = git(c.repo, {"rev-parse", "--abbrev-ref", request.head});
      b && !b->empty() && *b != "HEAD") {
    c.head_branch = *b;
  } else {
    c.head_branch = env("GITHUB_HEAD_REF").empty() ? env("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME")
                                                   : env("GITHUB_HEAD_REF");
  }
  c.head_is_checkout = commit_of(c.repo, "HEAD") == head;
  if (!request.want_base) return c;
  try {
    resolve_base(c, request);
  } catch (const Error& e) {
    if (!request.allow_missing_base || e.code() != ExitCode::infrastructure) throw;
    c.base.clear();
    c.base_ref.clear();
    c.base_branch.clear();
    c.base_error = e.what();  // the place (--base, GITHUB_BASE_REF) is place(base_from)
  }
  return c;
}

namespace {

// `ref` as the remote names it: "origin/main" is fetched as "main".
std::string remote_name(const std::string& ref) {
  return ref.rfind("origin/", 0) == 0 ? ref.substr(7) : ref;
}

void resolve_base(Commits& c, const BaseRequest& request) {
  std::string err;
  std::vector<std::string> candidates;
  if (!request.base.empty()) {
    c.base_from = BaseFrom::option;
    candidates = {request.base};
  } else {
    for (BaseFrom from : {BaseFrom::github, BaseFrom::gitlab}) {
      std::string ref = env(place(from));
      if (ref.empty()) continue;
      c.base_from = from;
      candidates = {"origin/" + ref, ref};
      break;
    }
    if (candidates.empty()) {
      throw Error(ExitCode::infrastructure, "--base",
                  "no base to compare against: pass --base REF (e.g. --base origin/main); in CI "
                  "GITHUB_BASE_REF or CI_MERGE_REQUEST_TARGET_BRANCH_NAME names it on pull/merge "
                  "requests (or pass --allow-no-baseline to measure head alone)");
    }
  }
  std::optional<std::string> base_tip;
  for (const auto& ref : candidates) {
    if ((base_tip = commit_of(c.repo, ref))) {
      c.base_ref = ref;
      break;
    }
  }
  const bool shallow = git(c.repo, {"rev-parse", "--is-shallow-repository"}).value_or("") == "true";
  const std::string fetch_hint =
      shallow ? "; this is a shallow clone: fetch the whole history (actions/checkout with "
                "fetch-depth: 0, GitLab GIT_DEPTH: 0, or git fetch --unshallow)"
              : "";
  if (!base_tip) {
    c.base_is_no_commit = true;
    std::string tried;
    for (const auto& ref : candidates) tried += (tried.empty() ? "" : ", ") + ref;
    // A ref typed by hand is more often misspelt than not fetched.
    std::string suggestion;
    if (c.base_from == BaseFrom::option) {
      std::vector<std::string> refs;
      std::istringstream names(
          git(c.repo, {"for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes",
                       "refs/tags"})
              .value_or(""));
      for (std::string name; std::getline(names, name);) {
        if (!name.empty()) refs.push_back(name);
      }
      suggestion = util::did_you_mean(candidates.back(), refs);
    }
    throw Error(ExitCode::infrastructure, place(c.base_from),
                fmt::format("base '{}' is not a commit of this checkout{} (tried {}); fetch it "
                            "(git fetch origin {}){} or pass --allow-no-baseline to measure head "
                            "alone",
                            candidates.back(), suggestion, tried, remote_name(candidates.back()),
                            fetch_hint));
  }
  auto merge_base = git(c.repo, {"merge-base", c.head, *base_tip}, &err);
  if (!merge_base) {
    throw Error(ExitCode::infrastructure, place(c.base_from),
                fmt::format("{} and head {} have no common ancestor in this checkout{}; or pass "
                            "--allow-no-baseline to measure head alone",
                            c.base_ref, c.head.substr(0, 12),
                            shallow ? fetch_hint : " (unrelated histories)"));
  }
  c.base = *merge_base;
  c.base_branch = remote_name(c.base_ref);
}

}  // namespace

void remove_worktree(const fs::path& repo, const fs::path& path) noexcept {
  quiet_git(repo, {"worktree", "unlock", path.string()});  // coldgate's own are locked
  quiet_git(repo, {"worktree", "remove", "--force", path.string()});
  std::error_code ec;
  fs::remove_all(path, ec);
  quiet_git(repo, {"worktree", "prune"});
}

namespace {

constexpr std::string_view k_owner_reason = "coldgate: ";

// The lock reason of the worktrees we add: who owns them, as db::mark_owner says it.
std::string owner_reason() {
  pid_t self = ::getpid();
  return fmt::format("{}owner_pid={} owner_start={} pid_ns={}", k_owner_reason, self,
                     db::process_start_time(self), db::pid_namespace());
}

// True when `reason` is an owner_reason() of a process that no longer runs, in our PID
// namespace (a PID of another one means nothing here).
bool owner_gone(std::string_view reason) {
  if (!reason.starts_with(k_owner_reason)) return false;
  std::map<std::string, std::string> kv;
  std::istringstream words{std::string(reason.substr(k_owner_reason.size()))};
  for (std::string word; words >> word;) {
    auto eq = word.find('=');
    if (eq != std::string::npos) kv[word.substr(0, eq)] = word.substr(eq + 1);
  }
  const auto pid = static_cast<pid_t>(std::atol(kv["owner_pid"].c_str()));
  if (pid <= 0 || kv["pid_ns"] != db::pid_namespace()) return false;
  return db::process_start_time(pid) != std::atoll(kv["owner_start"].c_str());
}

// The folder a process works in, from /proc/<pid>/cwd ("" when it cannot be read); the kernel
// appends " (deleted)" to one that was removed.
fs::path cwd_of(pid_t pid) {
  std::error_code ec;
  std::string cwd = fs::read_symlink(fmt::format("/proc/{}/cwd", pid), ec).string();
  constexpr std::string_view deleted = " (deleted)";
  if (cwd.ends_with(deleted)) cwd.resize(cwd.size() - deleted.size());
  return ec ? fs::path() : fs::path(cwd);
}

bool inside(const fs::path& p, const fs::path& dir) {
  const std::string s = p.string(), d = dir.string();
  return !d.empty() && (s == d || s.starts_with(d + "/"));
}

// SIGKILLs every process (of our PID namespace, not us) whose working folder lies in `dir`: the
// build and stage commands of a killed run, which outlive it in process groups of their own.
// Waits (≤ 5 s) until they are gone, so that removing the folder is the end of them.
void kill_processes_in(const fs::path& dir) {
  std::vector<pid_t> doomed;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::atol(name.c_str()));
    if (pid == ::getpid() || !inside(cwd_of(pid), dir)) continue;
    if (::kill(pid, SIGKILL) == 0) doomed.push_back(pid);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (pid_t pid : doomed) {
    while (db::process_start_time(pid) >= 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

}  // namespace

int remove_stale_worktrees(const fs::path& repo) noexcept {
  int removed = 0;
  try {
    util::SpawnOptions o;
    o.argv = {"git", "worktree", "list", "--porcelain"};
    o.cwd = repo;
    o.finish_when_interrupted = true;
    auto listed = util::run(o, std::chrono::seconds(60));
    if (!listed.status.ok()) return 0;
    // Blocks of "worktree <path>", "HEAD <sha>", "detached", "locked <reason>", …
    std::istringstream lines(listed.out);
    fs::path path;
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("worktree ")) path = line.substr(9);
      if (!line.starts_with("locked ") || path.empty() || !owner_gone(line.substr(7))) continue;
      kill_processes_in(path);
      remove_worktree(repo, path);
      ++removed;
    }
  } catch (...) {  // best effort: the next run tries again
  }
  return removed;
}

Worktree::Worktree(const fs::path& repo, const fs::path& path, const std::string& commit)
    : m_repo(repo), m_path(path) {
  remove_stale_worktrees(repo);  // a killed run's, wherever its --out was
  remove_worktree(repo, path);   // what a killed run left under the same name
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::string err;
  if (!git(repo, {"worktree", "add", "--detach", "--quiet", "--lock", "--reason", owner_reason(),
                  path.string(), commit},
           &err)) {
    remove_worktree(repo, path);
    throw Error(ExitCode::infrastructure, path.string(),
                fmt::format("git worktree add of {} failed: {}", commit.substr(0, 12), err));
  }
}

Worktree::~Worktree() {
  if (m_path.empty()) return;
  remove_worktree(m_repo, m_path);
  // <out>/ab/ (or stack's worktrees/) was made for the worktrees: gone with the last of them
  // unless a build log is kept there (fs::remove removes only an empty folder).
  std::error_code ec;
  fs::remove(m_path.parent_path(), ec);
}

}  // namespace coldgate::ab
