#include "measure/job.hpp"

#include <fmt/core.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "db/cluster_registry.hpp"
#include "db/provider.hpp"
#include "gate/diagnose.hpp"
#include "measure/runner.hpp"
#include "setup/setup.hpp"
#include "snapshot/snapshot.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/secrets.hpp"
#include "util/suggest.hpp"

namespace coldgate::measure {
namespace fs = std::filesystem;
namespace {

std::string shown(const fs::path& p) { return util::display_path(p); }

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

// Every shard_count-th stage starting at the shard_index-th (1-based).
std::vector<config::Stage> shard(std::vector<config::Stage> stages, int index, int count) {
  if (count < 1 || index < 1 || index > count) {
    throw usage_error("--shard", fmt::format("shard {}/{} does not exist", index, count));
  }
  std::vector<config::Stage> out;
  for (std::size_t i = static_cast<std::size_t>(index - 1); i < stages.size();
       i += static_cast<std::size_t>(count)) {
    out.push_back(std::move(stages[i]));
  }
  return out;
}

std::vector<config::Stage> selected(const config::Config& cfg, const std::vector<std::string>& names) {
  if (names.empty()) return cfg.stages;
  std::vector<std::string> known;
  for (const auto& s : cfg.stages) known.push_back(s.name);
  std::vector<config::Stage> out;
  std::set<std::string> wanted;
  for (const auto& n : names) {
    if (std::find(known.begin(), known.end(), n) == known.end()) {
      std::string hint = util::did_you_mean(n, known);
      if (hint.empty()) {
        std::string all;
        for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
        hint = fmt::format(" (its stages: {})", all);
      }
      throw usage_error("--stage", fmt::format("no stage '{}' in {}{}", n, shown(cfg.file), hint));
    }
    wanted.insert(n);
  }
  for (const auto& s : cfg.stages) {
    if (wanted.count(s.name)) out.push_back(s);
  }
  return out;
}

}  // namespace

std::pair<int, int> parse_shard(std::string_view text) {
  auto number = [](std::string_view t, int& value) {
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    return !t.empty() && ec == std::errc() && end == t.data() + t.size();
  };
  auto slash = text.find('/');
  int index = 0;
  int count = 0;
  if (slash == std::string_view::npos || !number(text.substr(0, slash), index) ||
      !number(text.substr(slash + 1), count)) {
    throw usage_error("--shard", fmt::format("expected I/N such as 2/4 (the I-th of N shards), got '{}'", text));
  }
  if (count < 1 || index < 1 || index > count) {
    throw usage_error("--shard", fmt::format("'{}': I must be between 1 and N (N ≥ 1), e.g. 1/{}", text,
                                             std::max(count, 1)));
  }
  return {index, count};
}

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
  if (g.commit.empty()) return g;
  g.dirty = uncommitted_changes(dir, out_dir);
  g.branch = git(dir, {"rev-parse", "--abbrev-ref", "HEAD"});
  if (g.branch == "HEAD") {
    const char* head_ref = std::getenv("GITHUB_HEAD_REF");
    g.branch = head_ref && *head_ref ? head_ref : "";
  }
  return g;
}

Results run_job(const config::Config& cfg, const JobOptions& options) {
  util::install_interrupt_handlers();
  std::vector<config::Stage> stages =
      shard(selected(cfg, options.stages), options.shard_index, options.shard_count);

  Results results;
  results.tool_version = COLDGATE_VERSION;
  results.started_at = utc_now();
  results.config = shown(cfg.file);
  results.title = cfg.report.title;
  results.git = git_info(cfg.base_dir, options.out_dir);
  results.ci_run_url = ci_run_url();
  results.environment = host_environment();

  Progress progress(options.progress, std::cerr, static_cast<int>(stages.size()));
  util::TempDir work("coldgate-run-");
  db::mark_owner(work.path());  // so the next run removes it should this one be SIGKILLed
  db::remove_stale_work_dirs(work.path().parent_path(), "coldgate-run-");
  auto provider = db::make_provider(cfg.database);
  results.environment.provider = provider->name();
  auto t0 = std::chrono::steady_clock::now();
  provider->start();
  util::add_secret(provider->connection_info().password);  // the local/container random one too
  db::ServerInfo server = provider->server_info();
  results.environment.postgres_version = server.version;
  results.environment.postgres_version_num = server.version_num;
  results.environment.postgres_settings = server.settings;
  progress.line(fmt::format(
      "PostgreSQL {} ({}) ready in {:.1f} s", server.version, provider->name(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));

  setup::run_setup(cfg.setup, {provider->connection_info(), cfg.base_dir, provider->client_bindir()},
                   [&](const setup::StepResult& s) {
                     progress.line(fmt::format("setup {} ({:.0f} ms)", s.label, s.wall_ms));
                     results.setup.push_back({s.kind, s.label, s.wall_ms});
                   });

  RunContext ctx;
  ctx.provider = provider.get();
  ctx.base_dir = cfg.base_dir;
  ctx.work_dir = work.path();
  ctx.out_dir = options.out_dir;
  ctx.self_exe = self_executable();
  ctx.snapshots.mode = options.ci ? snapshot::Mode::ci : snapshot::Mode::local;
  ctx.snapshots.out_dir = options.out_dir;
  ctx.snapshots.update = options.update_snapshots && !options.ci;
  ctx.snapshots.accept_command = options.accept_command;
  ctx.progress = &progress;

  int index = 0;
  for (const auto& stage : stages) {
    progress.stage_start(++index, stage.name);
    results.stages.push_back(run_stage(stage, ctx));
    // A stage error may quote a command's stderr or a server message: no password in results.
    results.stages.back().error = util::mask_secrets(results.stages.back().error);
    progress.stage_end(results.stages.back());
  }
  provider->stop();

  if (options.stages.empty()) {
    std::vector<snapshot::Claim> claims;
    std::set<fs::path> dirs;
    for (const auto& s : cfg.stages) {
      if (!s.snapshot) continue;
      claims.push_back({s.name, s.snapshot->path, s.snapshot->canon});
      dirs.insert(s.snapshot->path.parent_path());
    }
    std::set<std::string> obsolete;  // nested snapshot folders would list a file twice
    for (const auto& dir : dirs) {
      for (const auto& p : snapshot::find_obsolete(dir, claims)) obsolete.insert(shown(p));
    }
    results.obsolete_snapshots.assign(obsolete.begin(), obsolete.end());
  }
  results.diagnoses = gate::diagnose(results, cfg.setup_analyzes());
  results.finished_at = utc_now();
  return results;
}

}  // namespace coldgate::measure
