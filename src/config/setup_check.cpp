// What `setup:` names, and the programs of command stages, must be there before a server is
// started for them: a deleted dump or a script without its execute bit is the config's mistake
// (exit 2), not the data's (exit 1).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include "config/config.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::config {
namespace {

namespace fs = std::filesystem;
using Kind = SetupStep::Kind;

// Words /bin/sh runs itself (POSIX reserved words, special and regular built-ins): a shell
// command starting with one has no program to look for.
constexpr std::string_view k_shell_words[] = {
    "!",     "{",       "}",       "case",    "do",    "done",   "elif",   "else",
    "esac",  "fi",      "for",     "if",      "in",    "then",   "until",  "while",
    ".",     ":",       "break",   "continue", "eval", "exec",   "exit",   "export",
    "readonly", "return", "set",   "shift",   "times", "trap",   "unset",  "alias",
    "cd",    "command", "echo",    "false",   "getopts", "hash", "kill",   "local",
    "printf", "pwd",    "read",    "test",    "true",  "umask",  "wait"};

bool plain_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == '/' || c == '+' || c == '-';
}

// The program a shell command starts with when its text begins with a plain word (no quotes,
// variables, assignments or operators) that is not the shell's own; nullopt otherwise.
std::optional<std::string> first_program(std::string_view shell) {
  std::size_t start = shell.find_first_not_of(" \t\n");
  if (start == std::string_view::npos) return std::nullopt;
  std::size_t end = start;
  while (end < shell.size() && plain_word_char(shell[end])) ++end;
  if (end == start) return std::nullopt;
  if (end < shell.size() && shell[end] != ' ' && shell[end] != '\t' && shell[end] != '\n')
    return std::nullopt;
  std::string_view word = shell.substr(start, end - start);
  if (std::find(std::begin(k_shell_words), std::end(k_shell_words), word) !=
      std::end(k_shell_words))
    return std::nullopt;
  return std::string(word);
}

// The folders a local server's programs may come from: a run puts the one it uses first on
// the PATH of a setup or stage command's shell (the provider's client_bindir), so a shell
// string may name pg_ctl, which Debian has on no PATH. database.bindir when set, else where
// db::find_server_binaries looks (/usr/lib/postgresql/<v>/bin, /usr/pgsql-<v>/bin).
std::vector<fs::path> server_bindirs(const Config& config) {
  std::vector<fs::path> dirs;
  if (config.database.provider != Provider::local) return dirs;
  if (!config.database.bindir.empty()) return {config.database.bindir};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    dirs.push_back(e.path() / "bin");
  }
  for (const auto& e : fs::directory_iterator("/usr", ec)) {
    if (e.path().filename().string().starts_with("pgsql-")) dirs.push_back(e.path() / "bin");
  }
  return dirs;
}

// True when `program` (a bare name) is an executable file in one of `dirs`.
bool in_any(const std::string& program, const std::vector<fs::path>& dirs) {
  for (const auto& dir : dirs) {
    std::error_code ec;
    const fs::path p = dir / program;
    if (::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p, ec)) return true;
  }
  return false;
}

// The problem with running `program` from `base_dir` as a setup step or a stage (`who`) runs
// it (a path with '/' relative to the config's folder, else PATH, then `also`), or "" when it
// would start.
std::string program_problem(const std::string& program, const fs::path& base_dir,
                            const std::string& as_interpreted, std::string_view who,
                            const std::vector<fs::path>& also = {}) {
  if (program.find('/') == std::string::npos) {
    if (util::find_program(program) || in_any(program, also)) return "";
    return fmt::format(
        "program not found: {} (looked up on PATH, as the {} runs it); install it, or name it "
        "by its path from the config's folder, e.g. ./tools/{}",
        program, who, program);
  }
  fs::path p = fs::path(program).is_absolute() ? fs::path(program) : base_dir / program;
  std::error_code ec;
  auto status = fs::status(p, ec);
  if (!fs::exists(status)) {
    return fmt::format("program not found: {}{}; fix the path or add the file", program,
                       fs::path(program).is_relative()
                           ? " (relative to the config's folder " + base_dir.string() + ")"
                           : "");
  }
  if (fs::is_directory(status)) return fmt::format("{} is a folder, not a program", program);
  if (::access(p.c_str(), X_OK) != 0) {
    return fmt::format("{} is not executable; chmod +x it, or run it through its interpreter: {}",
                       program, as_interpreted);
  }
  return "";
}

// The problem with the program of a command given as `argv` (run without a shell: PATH only)
// or as `shell` (its plain first word, if any: PATH, then the server's bindirs); "" if none.
std::string command_problem(const Config& config, const std::vector<std::string>& argv,
                            const std::string& shell, std::string_view who) {
  if (!argv.empty()) {
    std::string list = "sh";
    for (const auto& a : argv) list += ", " + a;
    return program_problem(argv.front(), config.base_dir, "[" + list + "]", who);
  }
  if (auto program = first_program(shell)) {
    return program_problem(*program, config.base_dir, "sh " + *program, who,
                           server_bindirs(config));
  }
  return "";
}

void fail(const SetupStep& step, const std::string& what) {
  throw usage_error(step.value_where.str(), step.key + ": " + what);
}

// `migrate:`'s command program, or its folder of SQL files.
void check_migrate(const Config& config) {
  const Migrate& m = config.migrate;
  if (m.empty()) return;
  if (m.sql_dir.empty()) {
    std::string problem = command_problem(config, m.argv, m.shell, "migrate command");
    if (!problem.empty()) throw usage_error(m.where.str(), m.key + ": " + problem);
    return;
  }
  std::error_code ec;
  if (!fs::is_directory(m.sql_dir, ec)) {
    throw usage_error(m.where.str(),
                      fmt::format("{}: {} is not a folder; name the folder of the *.sql "
                                  "migrations (relative to the config's folder {})",
                                  m.key, m.sql_dir_given, config.base_dir.string()));
  }
}

}  // namespace

void check_setup(const Config& config) {
  for (const SetupStep& step : config.setup) {
    switch (step.kind) {
      case Kind::sql:
      case Kind::psql:
      case Kind::restore: {
        std::error_code ec;
        auto status = fs::status(step.file, ec);
        if (!fs::exists(status)) {
          fail(step, fmt::format("file not found: {}{}; fix the path or add the file",
                                 step.file_given,
                                 fs::path(step.file_given).is_relative()
                                     ? " (relative to the config's folder " +
                                           config.base_dir.string() + ")"
                                     : ""));
        }
        // pg_restore also reads directory-format dumps.
        if (fs::is_directory(status) && step.kind != Kind::restore)
          fail(step, step.file.string() + " is a folder; expected a file");
        break;
      }
      case Kind::command: {
        std::string problem = command_problem(config, step.argv, step.shell, "step");
        if (!problem.empty()) fail(step, problem);
        break;
      }
      case Kind::analyze:
      case Kind::migrate:  // check_migrate()
        break;
    }
  }
  check_migrate(config);
}

void check_stages(const Config& config, const std::vector<Stage>& stages) {
  for (const Stage& stage : stages) {
    if (!stage.is_command()) continue;
    std::string problem = command_problem(config, stage.command, stage.shell, "stage");
    if (!problem.empty()) {
      throw usage_error(stage.command_where.str(),
                        fmt::format("{} (stage {}): {}", stage.command_key, stage.name, problem));
    }
  }
}

}  // namespace coldgate::config
