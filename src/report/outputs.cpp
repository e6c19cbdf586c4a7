#include "report/outputs.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "report/github.hpp"
#include "report/junit.hpp"
#include "report/report.hpp"
#include "report/results_json.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

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

void write_outputs(const measure::Results& results, const measure::Results* base,
                   const std::filesystem::path& out_dir, std::ostream& out) {
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
  if (std::string summary = env("GITHUB_STEP_SUMMARY"); !summary.empty()) {
    append_step_summary(summary, md.report);
  }
  if (env("GITHUB_ACTIONS") == "true") {
    std::string token = stop_commands_token();
    out << "::stop-commands::" << token << '\n'
        << md.report << "::" << token << "::\n"
        << annotations(results);
  } else {
    out << md.report;
  }
  if (!out.flush()) throw Error(ExitCode::infrastructure, "stdout", "write failed");
}

}  // namespace coldgate::report
