#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace coldgate::history {

/// Where history files live: a branch of the project's own git repository (one commit per
/// record, files at the top of its tree), or a plain folder (CI caches, artifacts).
struct StoreSpec {
  enum class Kind { git, folder };
  Kind kind = Kind::git;
  std::string branch = "coldgate-history";  // Kind::git
  std::filesystem::path dir;                // Kind::folder, absolute
  std::string text;  // as the user spelled it: "git:coldgate-history", "history/"
};

/// `git:BRANCH` or a folder path (relative to `base_dir`). Throws Error(usage) naming `where`
/// for an empty spec or a `git:` branch name git would refuse (`git check-ref-format`).
StoreSpec parse_store(std::string_view text, const std::filesystem::path& base_dir,
                      const std::string& where);

/// One file of a store.
struct StoredFile {
  std::string name;      // "<commit>.json"
  std::string contents;
  std::string where;     // for messages: "git:coldgate-history:<name>", "<dir>/<name>"
};

/// How write_file() lands a file.
struct WriteOptions {
  bool push = false;             // git: push the branch to `remote` (retrying a rejected push)
  std::string remote = "origin";
  int max_attempts = 8;          // bounded retries of a lost race (CAS or non-fast-forward)
  std::string message;           // the git commit message ("record abc1234: subject")
  /// Told of each lost race before the next attempt ("the remote branch moved …; trying again
  /// (2 of 8)"), and of a ref lock removed that a killed writer's git left; may be empty.
  std::function<void(const std::string&)> on_retry;
};

/// Every `*.json` file of the store, by name. A git store reads the local branch and, when
/// there is one, `refs/remotes/<remote>/BRANCH` (what `git fetch` brought), the union by name
/// (the local branch's file wins); a branch that does not exist is an empty store. A folder
/// that does not exist is an empty store. Files it cannot read go to `warnings` by name.
/// `repo` is any folder inside the checkout (git stores). Throws Error(infrastructure) when git
/// is missing or the repository cannot be read.
std::vector<StoredFile> read_files(const StoreSpec& spec, const std::filesystem::path& repo,
                                   const std::string& remote,
                                   std::vector<std::string>& warnings);

/// Adds or replaces `name` with `contents`: a folder store by temp file + rename (first removing
/// the temp files killed writers left there); a git store by a new commit on BRANCH made with
/// plumbing (no checkout touched, the index untouched) whose parent is the branch tip, landed
/// with a compare-and-swap `update-ref` — or with options.push, fetched from and pushed to the
/// remote, retrying on a non-fast-forward rejection after a fresh fetch, up to
/// options.max_attempts. A ref lock that the git of a killed coldgate writer left is removed
/// when that is provable (a shared flock and claims under <git common dir>/coldgate-history/);
/// any other lock is named in the error. Returns where it landed ("git: coldgate-history at
/// 1a2b3c4", "history/<name>"). Throws Error(infrastructure) naming the store and git's message
/// when every attempt lost or git failed, Error(interrupted); never leaves a partial file or a
/// half-made ref.
std::string write_file(const StoreSpec& spec, const std::filesystem::path& repo,
                       const std::string& name, const std::string& contents,
                       const WriteOptions& options);

}  // namespace coldgate::history
