#include "ab/ab.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "ab/cache.hpp"
#include "config/config.hpp"
#include "db/connection.hpp"
#include "db/provider.hpp"
#include "measure/diagnose.hpp"
#include "gate/gate.hpp"
#include "measure/environment.hpp"
#include "session/session.hpp"
#include "measure/runner.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/secrets.hpp"

namespace coldgate::ab {
namespace fs = std::filesystem;
namespace {

std::string short_sha(const std::string& sha) {
  return sha.substr(0, 12);
}

// `path` with symlinks resolved as far as it exists (/tmp vs /private/tmp, bind mounts).
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  return ec ? fs::absolute(path).lexically_normal() : p;
}

// One side of the comparison: its commit, checkout, config and database.
struct Side {
  std::string name;  // "base" | "head"
  std::string commit;
  std::unique_ptr<Worktree> worktree;
  config::Config config;
  std::optional<db::ConnectionInfo> database;  // nullopt: the provider's own (head)
};

// Loads `side`'s copy of the config: its own file when the commit has it, else head's text
// re-rooted there (relative paths then resolve inside that side's worktree).
config::Config side_config(const fs::path& file, const std::string& head_text, const Side& side) {
  std::error_code ec;
  try {
    if (fs::exists(file, ec)) return config::load(file);
    return config::parse(head_text, file);
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    throw Error(ExitCode::infrastructure, fmt::format("{} {}", side.name, short_sha(side.commit)),
                "its config does not load: " + e.message());
  }
}

// Runs `side`'s `build:` commands with /bin/sh -c in its copy of the config's folder; output
// to `log`. A failing command: Error(gate_failed) for head (the change does not build),
// Error(infrastructure) for base (there is nothing to compare against).
void build(const Side& side, const fs::path& log, measure::Progress& progress) {
  if (side.config.build.empty()) return;
  std::error_code ec;
  fs::remove(log, ec);
  fs::create_directories(log.parent_path(), ec);
  for (const auto& command : side.config.build) {
    progress.line(fmt::format("build {} {}: {}", side.name, short_sha(side.commit), command));
    util::SpawnOptions o;
    o.argv = {"/bin/sh", "-c", command};
    o.cwd = side.config.base_dir;
    o.capture_stdout = false;
    o.capture_stderr = false;
    o.stdout_path = log;
    o.stderr_path = log;
    o.env = {"COLDGATE_AB_SIDE=" + side.name, "COLDGATE_AB_COMMIT=" + side.commit};
    auto t0 = std::chrono::steady_clock::now();
    auto out = util::run(o);
    if (out.status.ok()) {
      progress.line(fmt::format(
          "build {} done ({:.1f} s)", side.name,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
      continue;
    }
    std::string tail = util::tail_lines(fs::exists(log, ec) ? util::read_file(log) : "", 3);
    std::replace(tail.begin(), tail.end(), '\n', ' ');
    throw Error(side.name == "head" ? ExitCode::gate_failed : ExitCode::infrastructure,
                fmt::format("build ({} {})", side.name, short_sha(side.commit)),
                fmt::format("`{}` failed ({}); log {}{}", command, out.status.describe(),
                            util::display_path(log), tail.empty() ? "" : ", ends: " + tail));
  }
}

// base's database on head's server: dropped when the run ends (the local and container
// providers remove the whole server anyway; an external server keeps no leftover).
class BaseDatabase {
 public:
  BaseDatabase(const db::Provider& provider, const std::string& name)
      : m_provider(provider), m_name(name) {
    try {
      db::Connection admin(provider.connection_info());
      std::string quoted = admin.raw().quote_name(name);
      admin.exec("DROP DATABASE IF EXISTS " + quoted);
      admin.exec("CREATE DATABASE " + quoted);
      m_created = true;
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted) throw;
      throw Error(ExitCode::infrastructure, "database",
                  fmt::format("cannot create the base side's database {} ({}); coldgate ab needs "
                              "a role that may CREATE DATABASE",
                              name, e.message()));
    }
    m_info = provider.connection_info();
    m_info.dbname = name;
  }
  ~BaseDatabase() {
    if (!m_created) return;
    try {
      db::Connection admin(m_provider.connection_info());
      admin.exec("DROP DATABASE IF EXISTS " + admin.raw().quote_name(m_name));
    } catch (...) {  // best effort: the server may be gone already
    }
  }
  BaseDatabase(const BaseDatabase&) = delete;
  BaseDatabase& operator=(const BaseDatabase&) = delete;
  const db::ConnectionInfo& info() const { return m_info; }

 private:
  const db::Provider& m_provider;
  std::string m_name;
  db::ConnectionInfo m_info;
  bool m_created = false;
};

// The stages base measures: base's own definition of each of head's stages (its files, query,
// command) with head's runs, warm, cold mode and timeout, so the cold runs pair up. A stage
// base does not have is measured on head only (verdict `new`).
std::vector<std::optional<config::Stage>> base_stages(const config::Config& head,
                                                      const config::Config& base) {
  std::vector<std::optional<config::Stage>> out;
  for (const auto& h : head.stages) {
    auto it = std::find_if(base.stages.begin(), base.stages.end(),
                           [&](const config::Stage& b) { return b.name == h.name; });
    if (it == base.stages.end()) {
      out.emplace_back();
      continue;
    }
    config::Stage s = *it;
    s.runs = h.runs;
    s.warm = h.warm;
    s.cold = h.cold;
    s.timeout = h.timeout;
    s.gate = h.gate;
    out.emplace_back(std::move(s));
  }
  return out;
}

results::Results new_results(const std::string& config_name, const config::Config& cfg,
                             const results::Environment& env, const std::string& commit,
                             const std::string& branch) {
  results::Results r;
  r.tool_version = COLDGATE_VERSION;
  r.started_at = measure::utc_now();
  r.config = config_name;
  r.title = cfg.report.title;
  r.git.commit = commit;
  r.git.branch = branch;
  r.environment = env;
  return r;
}

bool all_ran(const results::Results& r) {
  return std::none_of(r.stages.begin(), r.stages.end(), [](const auto& s) { return s.failed(); });
}

// A pending candidate's old and new place.
struct SnapshotFix {
  std::string from;
  std::string to;
};

// Every occurrence of `from` in `text` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (auto pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

// Paths in head's results point into its worktree, which is gone after the run: name them as
// the checkout's own (snapshots/x.json, not coldgate-out/ab/head/snapshots/x.json), and move
// pending candidates (<out>/snapshots/<worktree>/…) to where `coldgate run --ci` puts them.
void strip_worktree(results::Results& r, const fs::path& worktree) {
  const std::string prefix = util::display_path(worktree) + "/";
  for (auto& s : r.stages) {
    if (!s.snapshot) continue;
    SnapshotFix fix{s.snapshot->pending, replaced(s.snapshot->pending, prefix, "")};
    if (!fix.from.empty() && fix.from != fix.to) {
      std::error_code ec;
      fs::create_directories(fs::path(fix.to).parent_path(), ec);
      for (const char* ext : {"", ".diff"}) {
        if (fs::exists(fix.from + ext, ec)) fs::rename(fix.from + ext, fix.to + ext, ec);
      }
      // fs::remove() removes only empty folders: stops at the first one still in use.
      for (fs::path dir = fs::path(fix.from).parent_path(); !dir.empty() && fs::remove(dir, ec);
           dir = dir.parent_path()) {
      }
      s.snapshot->message = replaced(s.snapshot->message, fix.from, fix.to);
      s.snapshot->pending = fix.to;
    }
    s.snapshot->path = replaced(s.snapshot->path, prefix, "");
    s.snapshot->message = replaced(s.snapshot->message, prefix, "");
    s.snapshot->diff = replaced(s.snapshot->diff, prefix, "");
  }
}

// The commits to measure, checked: a base that was named but cannot be had leaves
// commits.base empty with base_error saying why (head is then measured alone and reported);
// no base named at all is an error unless allow_no_baseline.
Commits commits_to_measure(const fs::path& dir, const Options& options, const fs::path& out) {
  BaseRequest refs = options.refs;
  refs.allow_missing_base = true;
  refs.want_base = !options.record;
  Commits commits = resolve_commits(dir, refs);
  if (refs.want_base && commits.base.empty() && commits.base_source.empty() &&
      !options.allow_no_baseline) {
    throw Error(ExitCode::infrastructure, "--base", commits.base_error);
  }
  if (!commits.base.empty() && commits.base == commits.head) {
    throw usage_error("--base", fmt::format("nothing to compare: base and head are both {} (is "
                                            "the base branch already at head?)",
                                            commits.head.substr(0, 7)));
  }
  if (commits.head_is_checkout && options.ci) {
    auto dirty = measure::uncommitted_changes(commits.repo, out);
    if (!dirty.empty()) {
      std::string list;
      for (std::size_t i = 0; i < dirty.size() && i < 5; ++i) list += (i ? ", " : "") + dirty[i];
      if (dirty.size() > 5) list += fmt::format(", … ({} in all)", dirty.size());
      throw usage_error(commits.repo.string(),
                        fmt::format("uncommitted changes ({}): coldgate ab measures commits, so "
                                    "in CI mode the checkout must be clean; commit them, or add "
                                    "build outputs to .gitignore",
                                    list));
    }
  }
  return commits;
}

}  // namespace

Outcome run_ab(const Options& options) {
  util::install_interrupt_handlers();
  Outcome outcome;
  const fs::path config_file = resolved(options.config);
  {
    std::error_code ec;
    if (!fs::exists(config_file, ec)) {
      throw usage_error(options.config.string(),
                        "config file not found; pass -c FILE (a path inside the checkout)");
    }
  }
  if (options.record && !options.use_cache) {
    throw usage_error("--record", "stores head's results in the cache: it cannot go with --no-cache");
  }
  if (options.record && !options.refs.base.empty()) {
    throw usage_error("--record", "measures head alone: it takes no --base");
  }
  const fs::path out = resolved(options.out_dir);
  Commits commits = commits_to_measure(config_file.parent_path(), options, out);
  const fs::path repo = resolved(commits.repo);
  fs::path rel = config_file.lexically_relative(repo);
  if (rel.empty() || *rel.begin() == "..") {
    throw usage_error(options.config.string(),
                      "the config is not inside the git checkout " + repo.string());
  }

  const fs::path cache_dir = out / "cache";
  const std::string config_name = util::display_path(options.config);

  Side head{"head", commits.head, nullptr, {}, std::nullopt};
  head.worktree = std::make_unique<Worktree>(repo, out / "ab" / "head", commits.head);
  const fs::path head_file = head.worktree->path() / rel;
  {
    std::error_code ec;
    if (!fs::exists(head_file, ec)) {
      throw usage_error(rel.string(), fmt::format("head {} has no config file {}",
                                                  short_sha(commits.head), rel.string()));
    }
  }
  head.config = config::load(head_file);
  const std::string head_text = util::read_file(head_file);
  measure::Progress progress(options.progress, std::cerr,
                             static_cast<int>(head.config.stages.size()));
  progress.line(
      options.record ? fmt::format("head {}: recorded for the cache, nothing compared",
                                   short_sha(commits.head))
      : commits.base.empty()
          ? fmt::format("head {} — no baseline: {}", short_sha(commits.head), commits.base_error)
          : fmt::format("base {} (merge-base with {}, from {}) → head {}{}",
                        short_sha(commits.base), commits.base_ref, commits.base_source,
                        short_sha(commits.head),
                        commits.head_branch.empty() ? "" : " (" + commits.head_branch + ")"));

  // One server for both sides: drift of the machine hits both alike.
  session::Session session(head.config.database, "coldgate-ab-",
                           [&](const std::string& line) { progress.line(line); });
  db::Provider* provider = &session.provider();
  const results::Environment env = session.environment();
  const std::string print = fingerprint(env, head_text);

  // The base: from the cache, else measured alongside head.
  Side base{"base", commits.base, nullptr, {}, std::nullopt};
  bool measure_base = !commits.base.empty();
  fs::path base_cache = measure_base ? cache_file(cache_dir, commits.base, print) : fs::path();
  if (measure_base && options.use_cache) {
    if (auto cached = load_cached(base_cache)) {
      outcome.base = std::move(*cached);
      outcome.baseline = util::display_path(base_cache);
      outcome.note = fmt::format(
          "base {} from the cache ({}): not measured again; head runs alone "
          "(--no-cache measures both interleaved)",
          short_sha(commits.base), util::display_path(base_cache));
      progress.line(outcome.note);
      measure_base = false;
    }
  }
  std::string no_baseline;  // why nothing is compared although a base was asked for
  if (commits.base.empty() && !options.record) {
    no_baseline = commits.base_error;
    outcome.note = "no baseline: " + no_baseline;
  }

  build(head, out / "ab" / "head-build.log", progress);
  if (measure_base) {
    base.worktree = std::make_unique<Worktree>(repo, out / "ab" / "base", commits.base);
    std::error_code ec;
    if (options.allow_no_baseline && !fs::exists(base.worktree->path() / rel, ec)) {
      // The pull request that adds coldgate: its base has nothing to measure.
      no_baseline = fmt::format("base {} has no {} (--allow-no-baseline: head runs alone)",
                                short_sha(commits.base), rel.string());
      outcome.note = "no baseline: " + no_baseline;
      progress.line(outcome.note);
      measure_base = false;
      base.worktree.reset();
    } else {
      base.config = side_config(base.worktree->path() / rel, head_text, base);
      build(base, out / "ab" / "base-build.log", progress);
    }
  }

  results::Results head_results =
      new_results(config_name, head.config, env, commits.head, commits.head_branch);
  if (measure_base || outcome.base) head_results.git.base = commits.base;
  head_results.no_baseline = no_baseline;
  head_results.ci_run_url = measure::ci_run_url();
  if (commits.head_is_checkout) {
    // ab measures the commit: edits of the checkout are left out, and the report says so.
    head_results.git.dirty = measure::uncommitted_changes(repo, out);
    head_results.git.dirty_measured = false;
    if (!head_results.git.dirty.empty()) {
      progress.line(fmt::format("warning: {} uncommitted change{} in the checkout, not measured "
                                "(ab measures commit {})",
                                head_results.git.dirty.size(),
                                head_results.git.dirty.size() == 1 ? "" : "s",
                                short_sha(commits.head)));
    }
  }
  results::Results base_results =
      new_results(config_name, base.config, env, commits.base, commits.base_branch);

  // Each side's data from its own setup steps, in its own database on the one server.
  head_results.setup = session.setup(head.config, measure_base ? "head" : "");
  std::unique_ptr<BaseDatabase> base_db;
  if (measure_base) {
    base_db = std::make_unique<BaseDatabase>(*provider, head.config.database.name + "_base");
    try {
      base_results.setup = session.setup(base.config, "base", base_db->info());
    } catch (const Error& e) {
      if (e.code() != ExitCode::gate_failed) throw;
      throw Error(ExitCode::infrastructure, "setup (base " + short_sha(commits.base) + ")",
                  e.message() + "; the base cannot be measured");
    }
  }

  measure::RunContext head_ctx;
  head_ctx.provider = provider;
  head_ctx.base_dir = head.config.base_dir;
  head_ctx.work_dir = session.work_dir() / "head";
  head_ctx.out_dir = out;
  head_ctx.self_exe = measure::self_executable();
  // Candidates never go into the worktree (it is removed): always to <out>/snapshots/.
  head_ctx.snapshots.mode = snapshot::Mode::ci;
  head_ctx.snapshots.out_dir = out;
  head_ctx.progress = &progress;
  if (measure_base) head_ctx.label = "head: ";
  measure::RunContext base_ctx = head_ctx;
  base_ctx.base_dir = base.config.base_dir;
  base_ctx.work_dir = session.work_dir() / "base";
  base_ctx.out_dir = out / "base";
  base_ctx.check_snapshots = false;
  base_ctx.label = "base: ";
  if (base_db) base_ctx.database = base_db->info();
  fs::create_directories(head_ctx.work_dir);
  fs::create_directories(base_ctx.work_dir);

  // Interleaved: base run i, then head run i, stage by stage in head's config order.
  auto base_stage = measure_base
                        ? base_stages(head.config, base.config)
                        : std::vector<std::optional<config::Stage>>(head.config.stages.size());
  int index = 0;
  for (std::size_t i = 0; i < head.config.stages.size(); ++i) {
    const config::Stage& stage = head.config.stages[i];
    progress.stage_start(++index, stage.name);
    measure::StageMeasurer head_m(stage, head_ctx);
    std::optional<measure::StageMeasurer> base_m;
    if (base_stage[i]) base_m.emplace(*base_stage[i], base_ctx);
    while (!head_m.done() || (base_m && !base_m->done())) {
      if (base_m) base_m->run_once();
      head_m.run_once();
    }
    // A stage error may quote a command's stderr or a server message: no password in results
    // and none printed.
    if (base_m) {
      base_results.stages.push_back(base_m->finish());
      auto& b = base_results.stages.back();
      b.error = util::mask_secrets(b.error);
      if (b.failed()) progress.line(fmt::format("base: stage {} failed: {}", b.name, b.error));
    }
    head_results.stages.push_back(head_m.finish());
    head_results.stages.back().error = util::mask_secrets(head_results.stages.back().error);
    progress.stage_end(head_results.stages.back());
  }
  base_db.reset();
  session.stop();

  head_results.diagnoses = measure::diagnose(head_results, head.config.setup_analyzes());
  head_results.finished_at = measure::utc_now();
  strip_worktree(head_results, head.worktree->path());
  if (measure_base) {
    base_results.diagnoses = measure::diagnose(base_results, base.config.setup_analyzes());
    base_results.finished_at = head_results.finished_at;
    outcome.base = std::move(base_results);
    outcome.baseline = util::display_path(out / "base" / "results.json");
    if (options.use_cache && all_ran(*outcome.base)) store_cached(base_cache, *outcome.base);
  }
  if (options.use_cache && all_ran(head_results)) {
    store_cached(cache_file(cache_dir, commits.head, print), head_results);
  }

  if (outcome.base) {
    // The base as this run names it, whichever run measured it.
    outcome.base->git.commit = commits.base;
    outcome.base->git.branch = commits.base_branch;
    outcome.base->git.base.clear();
    try {
      head_results.gate = gate::compare(head_results, *outcome.base, outcome.baseline,
                                        gate::Thresholds::from(head.config));
      head_results.gate->base_source =
          measure_base ? results::BaseSource::interleaved : results::BaseSource::cache;
    } catch (const Error& e) {
      outcome.gate_error = e;
    }
  } else if (!head_results.no_baseline.empty() && !options.allow_no_baseline) {
    outcome.gate_error = Error(ExitCode::infrastructure, commits.base_source,
                               "no baseline: nothing was compared — " + head_results.no_baseline);
  }
  outcome.head = std::move(head_results);
  return outcome;
}

}  // namespace coldgate::ab
