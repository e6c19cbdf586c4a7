#include "report/outputs.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

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

void clear_outputs(const std::filesystem::path& out_dir, bool whole_run) noexcept {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const char* name : {"results.json", "base/results.json", "report.md", "report-full.md",
                           "junit.xml", "pr-number"}) {
    fs::remove(out_dir / name, ec);
  }
  auto remove_matching = [&](const fs::path& dir, auto&& matches) {
    if (!fs::is_directory(dir, ec)) return;
    std::vector<fs::path> doomed;  // not while iterating: removal may invalidate the iterator
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (matches(entry.path().filename().string())) doomed.push_back(entry.path());
    }
    for (const auto& p : doomed) fs::remove(p, ec);
  };
  // What a killed run was writing (write_file_atomic's temp files), ab's result cache included.
  for (const auto& dir : {out_dir, out_dir / "base", out_dir / "explain", out_dir / "cache"}) {
    util::remove_abandoned_temp_files(dir);
  }
  remove_matching(out_dir / "explain",
                  [](const std::string& name) { return name.ends_with(".json"); });
  remove_matching(out_dir / "ab", [](const std::string& name) { return name.ends_with("-build.log"); });
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
