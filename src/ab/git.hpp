#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace coldgate::ab {

/// Runs `git <args>` in `dir` and returns its stdout without the final newline; nullopt when git
/// exits non-zero (its stderr then in `*err` when given). Throws Error(infrastructure) when git
/// is not installed, Error(interrupted) on SIGINT/SIGTERM.
std::optional<std::string> git(const std::filesystem::path& dir,
                               const std::vector<std::string>& args, std::string* err = nullptr);

/// Where the base ref of `coldgate ab` comes from.
struct BaseRequest {
  std::string base;                 // --base REF ("" = from the CI environment)
  std::string head = "HEAD";        // --head REF
  bool allow_missing_base = false;  // --allow-no-baseline: an unresolvable base is not an error
  bool want_base = true;            // false (--record): head only, no base resolved
};

/// The two commits `coldgate ab` compares.
/// Where the base ref came from: `--base REF`, or the CI's variable naming the pull request's
/// target branch; `none` when nothing named one.
enum class BaseFrom { none, option, github, gitlab };

/// The place a BaseFrom names, as errors say it: "--base", "GITHUB_BASE_REF",
/// "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"; "" for none.
const char* place(BaseFrom from);

struct Commits {
  std::filesystem::path repo;  // top-level folder of the checkout
  std::string head;            // head commit (full SHA)
  std::string head_branch;     // branch name of head ("" when detached)
  std::string base;            // merge-base of head and base_ref (full SHA)
  std::string base_ref;        // the ref it was resolved from ("origin/main", "feature-1")
  std::string base_branch;     // base_ref without a leading "origin/"
  BaseFrom base_from = BaseFrom::none;  // where base_ref came from
  std::string base_error;   // why there is no base (allow_missing_base); base is then ""
  bool base_is_no_commit = false;  // the base ref names no commit here (a typo, or not fetched)
  bool head_is_checkout = false;  // head is the checkout's HEAD: its uncommitted edits matter
};

/// Resolves head (`request.head`) and the base: `--base REF` as given; else GITHUB_BASE_REF,
/// else CI_MERGE_REQUEST_TARGET_BRANCH_NAME, each tried as `origin/<ref>`, then `<ref>`; the base
/// commit is `git merge-base <head> <base ref>`. `dir` is any folder inside the checkout.
/// Throws Error(usage) when `dir` is not in a git checkout or --head does not resolve;
/// Error(infrastructure) naming the ref and what to do when the base cannot be resolved (no
/// --base and no CI variable, unknown ref, no merge-base: a shallow clone needs fetch-depth: 0);
/// with request.allow_missing_base that message goes to base_error instead.
Commits resolve_commits(const std::filesystem::path& dir, const BaseRequest& request);

/// A detached `git worktree` of one commit, locked with its owner (`--lock --reason "coldgate:
/// owner_pid=… owner_start=… pid_ns=…"`, so that remove_stale_worktrees() can tell when that
/// run is gone and `git worktree prune` leaves it alone), removed (unlock, `git worktree remove
/// --force`, then `git worktree prune`) by the destructor on every exit path, interrupts
/// included.
class Worktree {
 public:
  /// Adds a worktree of `commit` at `path` (absolute), removing first what a killed run left
  /// there and every stale worktree of the repository (remove_stale_worktrees). Throws
  /// Error(infrastructure) with git's message.
  Worktree(const std::filesystem::path& repo, const std::filesystem::path& path,
           const std::string& commit);
  ~Worktree();
  Worktree(const Worktree&) = delete;
  Worktree& operator=(const Worktree&) = delete;
  /// The worktree's folder.
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_repo;
  std::filesystem::path m_path;  // "" once removed
};

/// Removes the worktree at `path` (registered or stale, locked or not) and prunes git's worktree
/// list; never throws.
void remove_worktree(const std::filesystem::path& repo, const std::filesystem::path& path) noexcept;

/// Removes each worktree of `repo` that a coldgate process which no longer runs left (a SIGKILLed
/// `ab` or `stack`, whichever --out it had), told by its lock reason (`git worktree list
/// --porcelain`): first SIGKILLs the processes still working inside it (its build and stage
/// commands), then removes it. Worktrees of a live owner, of another PID namespace and those
/// coldgate did not make stay. Returns how many it removed; never throws.
int remove_stale_worktrees(const std::filesystem::path& repo) noexcept;

}  // namespace coldgate::ab
