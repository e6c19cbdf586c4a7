#include "report/outputs.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <vector>

#include "report/github.hpp"
#include "report/junit.hpp"
#include "report/report.hpp"
#include "results/json.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/text.hpp"

namespace coldgate::report {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// GitHub's runner creates the summary file; each step's content is appended to it.
void append_step_summary(const std::string& path, const std::string& markdown) {
  std::ofstream file(path, std::ios::app | std::ios::binary);
  if (file) file << markdown << '\n';
  if (!file.flush()) {
    throw Error(ExitCode::infrastructure, path,
                std::string("cannot append to $GITHUB_STEP_SUMMARY: ") + std::strerror(errno));
  }
}

}  // namespace

void append_to_step_summary(const std::string& markdown) {
  if (std::string summary = env("GITHUB_STEP_SUMMARY"); !summary.empty()) {
    append_step_summary(summary, markdown);
  }
}

void write_outputs(const results::Results& results, const results::Results* base,
                   const std::filesystem::path& out_dir, std::ostream& out, bool to_step_summary) {
  util::write_file_atomic(out_dir / "results.json", to_json(results));
  std::filesystem::path full_path = out_dir / "report-full.md";
  Markdown md = markdown(results, base, full_path.string());
  util::write_file_atomic(out_dir / "report.md", md.report);
  if (md.cut) {
    util::write_file_atomic(full_path, md.full);
  } else {
    // A full report left by an earlier, longer run must not pass for this one's.
    std::error_code ec;
    std::filesystem::remove(full_path, ec);
  }
  util::write_file_atomic(out_dir / "junit.xml", junit_xml(results));
  if (to_step_summary) append_to_step_summary(md.report);
  if (env("GITHUB_ACTIONS") == "true") {
    std::string token = stop_commands_token();
    out << "::stop-commands::" << token << '\n'
        << md.terminal << "::" << token << "::\n"
        << annotations(results);
  } else {
    out << md.terminal;
  }
  if (!out.flush()) throw Error(ExitCode::infrastructure, "stdout", "write failed");
}

namespace {

namespace fs = std::filesystem;

// Removes the entries of `dir` whose name `matches`; never throws.
template <typename Matches>
void remove_matching(const fs::path& dir, Matches&& matches) noexcept {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<fs::path> doomed;  // not while iterating: removal may invalidate the iterator
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (matches(entry.path().filename().string())) doomed.push_back(entry.path());
  }
  for (const auto& p : doomed) fs::remove(p, ec);
}

bool is_json(const std::string& name) {
  return name.ends_with(".json");
}

// What one run's reports leave in `dir` (the top of --out, a stack's pull request's folder,
// ab's base/): its results, reports and plans, and what a killed writer left of them.
void clear_run_files(const fs::path& dir) noexcept {
  std::error_code ec;
  for (const char* name : {"results.json", "report.md", "report-full.md", "junit.xml"}) {
    fs::remove(dir / name, ec);
  }
  util::remove_abandoned_temp_files(dir);
  util::remove_abandoned_temp_files(dir / "explain");
  remove_matching(dir / "explain", is_json);
  fs::remove(dir / "explain", ec);  // only when empty: a file of the user's keeps it
}

// What `ab` and `stack` leave besides the top's reports: base/ (ab's base side), ab/'s build
// logs, stack/ (per commit its reports, plans and candidates; summary.md; build/ logs). Their
// git worktrees (ab/base, ab/head, stack/worktrees/) stay: git has them registered, and the
// next ab or stack removes those of a gone owner with what still runs in them.
void clear_ab_and_stack(const fs::path& out_dir) noexcept {
  std::error_code ec;
  clear_run_files(out_dir / "base");
  fs::remove(out_dir / "base", ec);  // only when empty
  remove_matching(out_dir / "ab", [](const std::string& name) { return name.ends_with("-build.log"); });
  fs::remove(out_dir / "ab", ec);
  const fs::path stack = out_dir / "stack";
  if (!fs::is_directory(stack, ec)) return;
  fs::remove(stack / "summary.md", ec);
  remove_matching(stack / "build", [](const std::string& name) { return name.ends_with(".log"); });
  fs::remove(stack / "build", ec);
  std::vector<fs::path> commits;  // "<k>-<ref>": a commit's folder
  for (const auto& entry : fs::directory_iterator(stack, ec)) {
    const std::string name = entry.path().filename().string();
    std::size_t digits = name.find_first_not_of("0123456789");
    if (digits != 0 && digits != std::string::npos && name[digits] == '-' &&
        entry.is_directory(ec)) {
      commits.push_back(entry.path());
    }
  }
  for (const auto& dir : commits) {
    clear_run_files(dir);
    fs::remove_all(dir / "snapshots", ec);
    fs::remove(dir, ec);
  }
  fs::remove(stack, ec);
}

}  // namespace

void clear_outputs(const std::filesystem::path& out_dir, bool whole_run) noexcept {
  std::error_code ec;
  clear_run_files(out_dir);
  fs::remove(out_dir / "pr-number", ec);
  // ab's result cache: its entries stay (clear_outputs' contract), a killed writer's do not.
  util::remove_abandoned_temp_files(out_dir / "cache");
  clear_ab_and_stack(out_dir);
  if (whole_run) fs::remove_all(out_dir / "snapshots", ec);
}

util::FileLock lock_outputs(const std::filesystem::path& out_dir, const std::string& command) {
  const std::filesystem::path file = out_dir / ".lock";
  if (auto lock = util::FileLock::try_lock(file)) {
    lock->describe(fmt::format("coldgate {}, pid {}, started {:%Y-%m-%d %H:%M:%S} UTC\n", command,
                               ::getpid(), fmt::gmtime(std::time(nullptr))));
    return std::move(*lock);
  }
  // The holder writes who it is right after it took the lock: a moment when the file is empty.
  std::string holder;
  try {
    holder = util::read_file_prefix(file, 200);
  } catch (const Error&) {
    // Unreadable: the message goes without the holder's name.
  }
  holder = std::string(util::trim(holder.substr(0, holder.find('\n'))));
  throw Error(ExitCode::infrastructure, out_dir.string(),  // as the user gave it
              fmt::format("in use by another coldgate ({}); wait for it to end or pass --out DIR",
                          holder.empty() ? "it is starting" : holder));
}

}  // namespace coldgate::report
