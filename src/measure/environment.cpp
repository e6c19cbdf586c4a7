#include "measure/environment.hpp"

#include <fmt/core.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace fs = std::filesystem;
namespace {

std::string first_line_value(const fs::path& file, std::string_view key, char sep) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    auto pos = line.find(sep);
    if (pos == std::string::npos) continue;
    std::string v = line.substr(pos + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '"')) v.erase(0, 1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '"')) v.pop_back();
    return v;
  }
  return "";
}

std::string git(const fs::path& dir, std::vector<std::string> args) {
  if (!util::find_program("git")) return "";
  args.insert(args.begin(), "git");
  util::SpawnOptions o;
  o.argv = std::move(args);
  o.cwd = dir;
  try {
    auto out = util::run(o, std::chrono::seconds(10));
    if (!out.status.ok()) return "";
    std::string s = out.out;
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    return "";
  }
}

}  // namespace

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Environment host_environment() {
  Environment e;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) e.host = host;
  e.cpus = static_cast<int>(std::thread::hardware_concurrency());
  e.cpu_model = first_line_value("/proc/cpuinfo", "model name", ':');
  utsname u{};
  if (::uname(&u) == 0) e.kernel = fmt::format("{} {}", u.sysname, u.release);
  e.os = first_line_value("/etc/os-release", "PRETTY_NAME", '=');
  return e;
}

std::vector<std::string> uncommitted_changes(const fs::path& dir, const fs::path& exclude) {
  std::string top = git(dir, {"rev-parse", "--show-toplevel"});
  if (top.empty()) return {};
  std::vector<std::string> args = {"status", "--porcelain=v1", "--untracked-files=normal", "--",
                                   "."};
  if (!exclude.empty()) {
    std::error_code ec;
    fs::path rel = fs::weakly_canonical(fs::absolute(exclude), ec)
                       .lexically_relative(fs::weakly_canonical(top, ec));
    if (!rel.empty() && *rel.begin() != ".." && rel != ".") {
      args.push_back(":(exclude)" + rel.generic_string());
    }
  }
  std::vector<std::string> out;
  std::string text = git(top, args);
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    std::size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos) out.push_back(line.substr(first));
  }
  return out;
}

std::string ci_run_url() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  std::string server = env("GITHUB_SERVER_URL");
  std::string repository = env("GITHUB_REPOSITORY");
  std::string run_id = env("GITHUB_RUN_ID");
  if (!server.empty() && !repository.empty() && !run_id.empty()) {
    return fmt::format("{}/{}/actions/runs/{}", server, repository, run_id);
  }
  return env("CI_JOB_URL");
}

GitInfo git_info(const fs::path& dir, const fs::path& out_dir) {
  GitInfo g;
  g.commit = git(dir, {"rev-parse", "HEAD"});
  if (g.commit.empty()) {
    // No HEAD commit: not a checkout at all, or a repository whose first commit is yet to come.
    g.unborn = git(dir, {"rev-parse", "--is-inside-work-tree"}) == "true";
    if (g.unborn) g.dirty = uncommitted_changes(dir, out_dir);
    return g;
  }
  g.dirty = uncommitted_changes(dir, out_dir);
  g.branch = git(dir, {"rev-parse", "--abbrev-ref", "HEAD"});
  if (g.branch == "HEAD") {
    const char* head_ref = std::getenv("GITHUB_HEAD_REF");
    g.branch = head_ref && *head_ref ? head_ref : "";
  }
  return g;
}

}  // namespace coldgate::measure
