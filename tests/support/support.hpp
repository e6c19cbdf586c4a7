#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace coldgate::testing {

/// A fresh folder under $TMPDIR, removed with everything in it by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// The folder's path.
  const std::filesystem::path& path() const { return m_path; }
  /// path() / name.
  std::filesystem::path operator/(const std::string& name) const { return m_path / name; }
  /// Writes `contents` to path()/name (creating parent folders) and returns the full path.
  std::filesystem::path write(const std::string& name, const std::string& contents) const;

 private:
  std::filesystem::path m_path;
};

/// What a finished run of the coldgate binary printed and how it exited.
struct RunResult {
  int exit_code = -1;  // exit status, or 128+signal when killed
  std::string out;     // standard output
  std::string err;     // standard error
};

/// Runs the built `coldgate` binary with `args` in folder `cwd` (current folder when empty),
/// feeding `input` on stdin; `env` entries ("K=V") are added to the environment.
RunResult run_coldgate(const std::vector<std::string>& args, const std::filesystem::path& cwd = {},
                       const std::string& input = {}, const std::vector<std::string>& env = {});

/// Runs git with `args` in `dir` with a local identity (user "coldgate test", first branch
/// "base"); fails the current test when git fails. Returns its stdout without trailing newlines.
std::string run_git(const std::filesystem::path& dir, std::vector<std::string> args);

/// Sets an environment variable (unsets it for a null `value`) for one scope and restores it
/// afterwards; children forked or spawned meanwhile inherit it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

/// Makes `tmp` (created inside `dir`) a $TMPDIR the server account can use, as /tmp is: `dir`
/// readable and searchable by all, `tmp` writable by all with the sticky bit. For tests that
/// give coldgate a TMPDIR of their own, where the local provider puts its cluster folder.
void make_server_tmpdir(const TempDir& dir, const std::filesystem::path& tmp);

/// Reads a whole file; fails the current test (and returns "") when it cannot.
std::string slurp(const std::filesystem::path& path);

/// The source tree's root (for fixtures such as config/*.yaml).
std::filesystem::path source_dir();

}  // namespace coldgate::testing
