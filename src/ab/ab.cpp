#include "ab/ab.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

#include "ab/cache.hpp"
#include "ab/sides.hpp"
#include "config/config.hpp"
#include "db/connection.hpp"
#include "db/database_template.hpp"
#include "db/provider.hpp"
#include "gate/gate.hpp"
#include "measure/diagnose.hpp"
#include "measure/environment.hpp"
#include "measure/runner.hpp"
#include "migrate/migrate.hpp"
#include "session/run.hpp"
#include "session/scales.hpp"
#include "session/session.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/secrets.hpp"

namespace coldgate::ab {
namespace fs = std::filesystem;
namespace {

// The commits to measure, checked: a base that was named but cannot be had leaves
// commits.base empty with base_error saying why (head is then measured alone and reported);
// no base named at all is an error unless allow_no_baseline, and so is (outside CI mode) a
// --base that names no commit.
// `dirty` gets the checkout's uncommitted changes when head is its HEAD (an error in CI mode).
Commits commits_to_measure(const fs::path& dir, const Options& options, const fs::path& out,
                           std::vector<std::string>& dirty) {
  BaseRequest refs = options.refs;
  refs.allow_missing_base = true;
  refs.want_base = !options.record;
  Commits commits = resolve_commits(dir, refs);
  if (refs.want_base && commits.base.empty() && commits.base_from == BaseFrom::none &&
      !options.allow_no_baseline) {
    throw Error(ExitCode::infrastructure, "--base", commits.base_error);
  }
  // At a terminal, a --base that names no commit is most likely a typo: said at once, not
  // after measuring head alone. CI measures and reports head (the pull request's comment says
  // "no baseline"), since there the ref came from the forge and was not fetched.
  if (commits.base_is_no_commit && commits.base_from == BaseFrom::option && !options.ci &&
      !options.allow_no_baseline) {
    throw Error(ExitCode::infrastructure, "--base", commits.base_error);
  }
  if (!commits.base.empty() && commits.base == commits.head) {
    // The merge-base is head itself: both name one commit, or head is behind the base ref.
    bool behind = git(commits.repo, {"rev-parse", commits.base_ref + "^{commit}"}).value_or("") !=
                  commits.head;
    throw usage_error("--base", fmt::format("nothing to compare: base and head are both {} ({})",
                                            commits.head.substr(0, 7),
                                            behind ? "head is an ancestor of " + commits.base_ref +
                                                         ": swapped refs, or already merged?"
                                                   : "both refs name the same commit"));
  }
  if (commits.head_is_checkout) dirty = measure::uncommitted_changes(commits.repo, out);
  if (!dirty.empty() && options.ci) {
    throw usage_error(commits.repo.string(),
                      fmt::format("uncommitted changes ({}): coldgate ab measures commits, so "
                                  "in CI mode the checkout must be clean; commit them, or add "
                                  "build outputs to .gitignore",
                                  first_changes(dirty)));
  }
  return commits;
}

}  // namespace

namespace {

// One `coldgate ab` from the refs to the gate, phase by phase; the members are what the phases
// hand on. Worktrees, the session (server and work folder) and base's database are owned here
// and go on every exit path.
class AbRun {
 public:
  explicit AbRun(const Options& options) : m_options(options) {}
  Outcome run();

 private:
  void resolve();
  void check_out_head();
  void start_session();
  void take_base_from_cache();
  void prepare_base();
  Error judge_head_build(const BuildFailure& head);
  void new_head_results();
  void new_base_results();
  void set_up_data();
  void measure_interleaved();
  void measure_migration();
  void measure_at_scales(const measure::RunContext& head_ctx, const measure::RunContext& base_ctx,
                         const std::vector<std::optional<config::Stage>>& base_stage);
  void finish();
  void note_decisions();
  void stop(const Error& e);

  const Options& m_options;
  Outcome m_outcome;
  fs::path m_config_file;
  fs::path m_out;
  fs::path m_repo;
  fs::path m_rel;  // the config file relative to the repository root
  Commits m_commits;
  Side m_head{"head", "", nullptr, {}, std::nullopt, ExitCode::gate_failed};
  Side m_base{"base", "", nullptr, {}, std::nullopt, ExitCode::infrastructure};
  std::string m_head_text;  // head's config file as committed: the fingerprint's part
  std::unique_ptr<measure::Progress> m_progress;
  std::unique_ptr<session::Session> m_session;
  std::string m_print;  // fingerprint of the environment and head's config
  bool m_measure_base = false;
  fs::path m_base_cache;
  std::string m_no_baseline;         // why nothing is compared although a base was asked for
  std::vector<std::string> m_dirty;  // the checkout's uncommitted changes, when head is its HEAD
  results::Results m_head_results;
  results::Results m_base_results;
  std::unique_ptr<BaseDatabase> m_base_db;
  // Where the run is, for the reports of a run that stops (results::Stopped).
  results::StopPhase m_phase = results::StopPhase::config;
  std::string m_failed_step;  // base's failed setup step, named for the report ("base: …")
  std::vector<std::string> m_not_run;  // head's stages not measured yet
  std::string m_stopped_in;  // "stage first, after cold run 2 of 5": head's stage a stop left partial
  std::map<std::string, ExtraRuns> m_extra;  // per stage: the runs made past `runs` (decide)
};

void AbRun::resolve() {
  m_config_file = resolved(m_options.config);
  std::error_code ec;
  if (!fs::exists(m_config_file, ec)) {
    throw usage_error(m_options.config.string(),
                      "config file not found; pass -c FILE (a path inside the checkout)");
  }
  if (m_options.record && !m_options.use_cache) {
    throw usage_error("--record",
                      "stores head's results in the cache: it cannot go with --no-cache");
  }
  if (m_options.record && !m_options.refs.base.empty()) {
    throw usage_error("--record", "measures head alone: it takes no --base");
  }
  m_out = resolved(m_options.out_dir);
  m_commits = commits_to_measure(m_config_file.parent_path(), m_options, m_out, m_dirty);
  m_repo = resolved(m_commits.repo);
  m_rel = m_config_file.lexically_relative(m_repo);
  if (m_rel.empty() || *m_rel.begin() == "..") {
    throw usage_error(m_options.config.string(),
                      "the config is not inside the git checkout " + m_repo.string());
  }
}

void AbRun::check_out_head() {
  m_head.commit = m_commits.head;
  m_head.worktree = std::make_unique<Worktree>(m_repo, m_out / "ab" / "head", m_commits.head);
  const fs::path head_file = m_head.worktree->path() / m_rel;
  std::error_code ec;
  if (!fs::exists(head_file, ec)) {
    throw usage_error(m_rel.string(), fmt::format("head {} has no config file {}",
                                                  short_sha(m_commits.head), m_rel.string()));
  }
  m_head.config = config::load(head_file);
  m_head_text = util::read_file(head_file);
  m_progress = std::make_unique<measure::Progress>(m_options.progress, std::cerr,
                                                   static_cast<int>(m_head.config.stages.size()));
  const Commits& c = m_commits;
  m_progress->line(
      m_options.record
          ? fmt::format("head {}: recorded for the cache, nothing compared", short_sha(c.head))
      : c.base.empty()
          ? fmt::format("head {} — no baseline: {}", short_sha(c.head), c.base_error)
          : fmt::format("base {} (merge-base with {}, from {}) → head {}{}", short_sha(c.base),
                        c.base_ref, place(c.base_from), short_sha(c.head),
                        c.head_branch.empty() ? "" : " (" + c.head_branch + ")"));
}

// One server for both sides: drift of the machine hits both alike.
void AbRun::start_session() {
  m_session = std::make_unique<session::Session>(
      m_head.config.database, "coldgate-ab-",
      [this](const std::string& line) { m_progress->line(line); });
  m_print = fingerprint(m_session->environment(), m_head_text);
}

void AbRun::take_base_from_cache() {
  m_base.commit = m_commits.base;
  m_measure_base = !m_commits.base.empty();
  if (m_commits.base.empty() && !m_options.record) {
    m_no_baseline = m_commits.base_error;
    m_outcome.note = "no baseline: " + m_no_baseline;
  }
  if (!m_measure_base) return;
  m_base_cache = cache_file(m_out / "cache", m_commits.base, m_print);
  if (!m_options.use_cache) return;
  if (!m_head.config.migrate.empty()) {
    // Head's migration runs on base's data, which a cached result does not hold.
    m_progress->line(fmt::format("base {} is set up and measured, not taken from the cache: "
                                 "head's migration runs on base's data",
                                 short_sha(m_commits.base)));
    return;
  }
  auto cached = load_cached(m_base_cache);
  if (!cached) return;
  m_outcome.base = std::move(*cached);
  m_outcome.baseline = util::display_path(m_base_cache);
  m_outcome.note = fmt::format(
      "base {} from the cache ({}): not measured again; head runs alone "
      "(--no-cache measures both interleaved)",
      short_sha(m_commits.base), util::display_path(m_base_cache));
  m_progress->line(m_outcome.note);
  m_measure_base = false;
}

void AbRun::prepare_base() {
  if (!m_measure_base) return;
  m_base.worktree = std::make_unique<Worktree>(m_repo, m_out / "ab" / "base", m_commits.base);
  std::error_code ec;
  const bool has_config = fs::exists(m_base.worktree->path() / m_rel, ec);
  if (m_options.allow_no_baseline && !has_config) {
    // The pull request that adds coldgate: its base has nothing to measure.
    m_no_baseline = fmt::format("base {} has no {} (--allow-no-baseline: head runs alone)",
                                short_sha(m_commits.base), m_rel.string());
    m_outcome.note = "no baseline: " + m_no_baseline;
    m_progress->line(m_outcome.note);
    m_measure_base = false;
    m_base.worktree.reset();
    return;
  }
  if (!has_config) {
    m_progress->line(fmt::format(
        "base {} has no {}: its stages are head's, run in base's checkout (the pull request that "
        "adds coldgate passes --allow-no-baseline instead)",
        short_sha(m_commits.base), m_rel.string()));
  }
  m_base.config = side_config(m_base.worktree->path() / m_rel, m_head_text, m_base);
  build(m_base, m_out / "ab" / "base-build.log", *m_progress);
}

// Head does not build: the pull request's doing, or the machine's? Base is built too (also a
// cached one): when it fails as well, the build cannot work here at all (exit 3). A base
// without the config under --allow-no-baseline, or whose config does not load, is not judged.
Error AbRun::judge_head_build(const BuildFailure& head) {
  if (m_commits.base.empty()) return head;
  m_base.commit = m_commits.base;
  try {
    if (!m_base.worktree) {
      m_base.worktree = std::make_unique<Worktree>(m_repo, m_out / "ab" / "base", m_commits.base);
    }
    std::error_code ec;
    const fs::path file = m_base.worktree->path() / m_rel;
    if (m_options.allow_no_baseline && !fs::exists(file, ec)) return head;
    m_base.config = side_config(file, m_head_text, m_base);
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    return head;
  }
  m_progress->line(fmt::format("head does not build: building base {} too, to tell whether the "
                               "pull request is the cause",
                               short_sha(m_commits.base)));
  try {
    build(m_base, m_out / "ab" / "base-build.log", *m_progress);
  } catch (const BuildFailure& base) {
    return judged_build_failure(head, side_label(m_base), &base);
  }
  return judged_build_failure(head, side_label(m_base), nullptr);
}

// Head's results from the moment its config loaded: a run that stops has them reported.
void AbRun::new_head_results() {
  m_head_results = new_results(util::display_path(m_options.config), m_head.config, {},
                               m_commits.head, m_commits.head_branch);
  m_head_results.ci_run_url = measure::ci_run_url();
  for (const auto& s : m_head.config.stages) m_not_run.push_back(s.name);
}

void AbRun::new_base_results() {
  const results::Environment& env = m_session->environment();
  m_head_results.environment = env;
  if (m_measure_base || m_outcome.base) m_head_results.git.base = m_commits.base;
  m_head_results.no_baseline = m_no_baseline;
  if (m_commits.head_is_checkout) {
    // ab measures the commit: edits of the checkout are left out, and the report says so.
    m_head_results.git.dirty = m_dirty;
    m_head_results.git.dirty_measured = false;
    if (!m_dirty.empty()) {
      m_progress->line(fmt::format(
          "warning: {} uncommitted change{} in the checkout, not measured (ab measures commit "
          "{}): {}",
          m_dirty.size(), m_dirty.size() == 1 ? "" : "s", short_sha(m_commits.head),
          first_changes(m_dirty)));
    }
  }
  m_base_results = new_results(util::display_path(m_options.config), m_base.config, env,
                               m_commits.base, m_commits.base_branch);
}

// Each side's data from its own setup steps, in its own database on the one server. A base
// whose scripts make the stages' database themselves (psql's `database:`) is set up first, as
// head's would be, and its database renamed to <name>_base before head's setup makes its own.
void AbRun::set_up_data() {
  const std::string name = m_session->provider().connection_info().dbname;
  auto set_up_base = [&](const std::optional<db::ConnectionInfo>& target) {
    try {
      m_session->setup(m_base.config, "base", target, &m_base_results);
    } catch (const Error& e) {
      if (e.code() != ExitCode::gate_failed) throw;
      m_failed_step = "base: " + session::stopped_by(e, results::StopPhase::setup, {}).step;
      throw Error(ExitCode::infrastructure, "setup (base " + short_sha(m_commits.base) + ")",
                  e.message() + "; the base cannot be measured");
    }
  };
  if (m_measure_base && loads_elsewhere(m_base.config)) {
    m_base_db = std::make_unique<BaseDatabase>(m_session->provider(), name + "_base", false);
    set_up_base(std::nullopt);
    m_base_db->take_over(name);
  }
  m_session->setup(m_head.config, m_measure_base ? "head" : "", std::nullopt, &m_head_results);
  if (!m_measure_base || m_base_db) return;
  m_base_db = std::make_unique<BaseDatabase>(m_session->provider(), name + "_base", true);
  set_up_base(m_base_db->info());
}

// Base run i, then head run i, stage by stage in head's config order.
void AbRun::measure_interleaved() {
  measure::RunContext head_ctx;
  head_ctx.provider = &m_session->provider();
  head_ctx.base_dir = m_head.config.base_dir;
  head_ctx.work_dir = m_session->work_dir() / "head";
  head_ctx.out_dir = m_out;
  head_ctx.self_exe = measure::self_executable();
  // Candidates never go into the worktree (it is removed): always to <out>/snapshots/.
  head_ctx.snapshots.mode = snapshot::Mode::ci;
  head_ctx.snapshots.out_dir = m_out;
  head_ctx.snapshots.label_root = config::label_root(m_head.config);
  // Outside CI the candidates are on this machine: the messages say where, and how to accept.
  head_ctx.snapshots.artifacts = m_options.ci;
  head_ctx.snapshots.accept_command = accept_command(m_options.config);
  head_ctx.progress = m_progress.get();
  if (m_measure_base) head_ctx.label = "head: ";
  head_ctx.side = "head";
  measure::RunContext base_ctx = head_ctx;
  base_ctx.base_dir = m_base.config.base_dir;
  base_ctx.work_dir = m_session->work_dir() / "base";
  base_ctx.out_dir = m_out / "base";
  base_ctx.check_snapshots = false;
  base_ctx.label = "base: ";
  base_ctx.side = "base";
  if (m_base_db) base_ctx.database = m_base_db->info();
  fs::create_directories(head_ctx.work_dir);
  fs::create_directories(base_ctx.work_dir);
  m_head_results.profile_note = measure::enable_profile(head_ctx, m_head.config.database);
  m_head_results.plans_note = head_ctx.plans_note;
  m_head_results.profile_limit = head_ctx.profile_limit;
  if (m_measure_base) {
    m_base_results.profile_note = measure::enable_profile(base_ctx, m_base.config.database);
    m_base_results.plans_note = base_ctx.plans_note;
    m_base_results.profile_limit = base_ctx.profile_limit;
  }
  measure_migration();
  m_phase = results::StopPhase::stages;
  // Each side's database kept as its setup left it; the stages' isolation is head's, as their
  // runs and cold mode are (base_stages).
  auto isolate = [&](measure::RunContext& c, results::Results& r) {
    if (std::string note = measure::enable_isolation(c, m_head.config.stages); !note.empty()) {
      m_progress->line("note: " + c.label + note);
      r.warnings.push_back(note);
    }
  };
  isolate(head_ctx, m_head_results);
  if (m_measure_base) isolate(base_ctx, m_base_results);

  const auto& stages = m_head.config.stages;
  auto base_stage = m_measure_base ? base_stages(m_head.config, m_base.config)
                                   : std::vector<std::optional<config::Stage>>(stages.size());
  for (std::size_t i = 0; i < stages.size(); ++i) {
    m_progress->stage_start(static_cast<int>(i) + 1, stages[i].name);
    measure::StageMeasurer head_m(stages[i], head_ctx);
    std::optional<measure::StageMeasurer> base_m;
    if (base_stage[i]) base_m.emplace(*base_stage[i], base_ctx);
    const std::vector<measure::StageMeasurer*> sides{base_m ? &*base_m : nullptr, &head_m};
    bool base_done = false;
    try {
      interleave(sides);
      if (base_m) {
        // A time verdict near its threshold: both sides again, interleaved (gate.max_extra_runs).
        ExtraRuns extra =
            decide(sides, {StagePair{0, 1, &stages[i].gate, ""}}, stages[i].name, *m_progress)[0];
        if (!extra.metrics.empty()) m_extra[stages[i].name] = std::move(extra);
      }
      // A stage error may quote a command's stderr or a server message: no password in results
      // and none printed.
      if (base_m) {
        auto& b = m_base_results.stages.emplace_back(base_m->finish());
        base_done = true;
        b.error = util::mask_secrets(b.error);
        if (b.failed()) m_progress->line(fmt::format("base: stage {} failed: {}", b.name, b.error));
      }
      m_head_results.stages.emplace_back(head_m.finish());
    } catch (const Error&) {
      // A lost server or an interrupt stops the run: each side keeps the cold runs it made.
      if (auto kept = base_m && !base_done ? base_m->kept() : std::nullopt) {
        m_base_results.stages.push_back(std::move(*kept));
      }
      if (auto kept = head_m.kept()) {
        m_head_results.stages.push_back(std::move(*kept));
        m_not_run.erase(m_not_run.begin());
        m_stopped_in = "stage " + stages[i].name + ", " + head_m.how_far();
      }
      throw;
    }
    auto& h = m_head_results.stages.back();
    m_not_run.erase(m_not_run.begin());
    h.error = util::mask_secrets(h.error);
    m_progress->stage_end(h);
  }
  measure_at_scales(head_ctx, base_ctx, base_stage);
  m_phase = results::StopPhase::teardown;  // an interrupt now is not "during scales"
  // The templates are dropped while the server is there; a throwaway cluster is deleted with
  // them, so there a DROP (a checkpoint each) would only cost time.
  if (m_session->provider().name() == "local") {
    for (auto* c : {&head_ctx, &base_ctx}) {
      if (c->isolation) c->isolation->leave_to_server_removal();
    }
  }
  head_ctx.isolation.reset();
  base_ctx.isolation.reset();
  m_base_db.reset();
  m_session->stop();
}

// Head's migration on a copy of base's data, production's path, before any stage runs: its
// locks, stalls and rewrites, and its schema against head's fresh setup. Head's stages then run
// on head's fresh setup, as the snapshots were committed against it; the drift check shows the
// upgraded schema is that one.
void AbRun::measure_migration() {
  if (!m_measure_base || !m_base_db || m_head.config.migrate.empty()) return;
  m_phase = results::StopPhase::migrate;
  m_head_results.migration =
      ab::measure_migration(*m_session, m_head, m_base, m_base_db->info(),
                            m_session->provider().connection_info(), *m_progress,
                            m_options.try_fixes);
}

// Each side at the other data scales (config `scales:`), one after the other: their counts
// decide the growth, and counts need no interleaving.
void AbRun::measure_at_scales(const measure::RunContext& head_ctx,
                              const measure::RunContext& base_ctx,
                              const std::vector<std::optional<config::Stage>>& base_stage) {
  const auto& stages = m_head.config.stages;
  if (!m_head.config.extra_scales(stages).empty()) {
    m_phase = results::StopPhase::scales;
    std::vector<results::StageResult*> measured;
    for (auto& h : m_head_results.stages) measured.push_back(&h);
    session::measure_at_scales(*m_session, m_head.config, stages, head_ctx, measured,
                               &m_head_results, m_measure_base ? "head" : "");
  }
  if (!m_measure_base) return;
  try {
    session::measure_present_at_scales(*m_session, m_base.config, base_stage, base_ctx, m_base_results,
                                       "base");
  } catch (const Error& e) {
    if (e.code() != ExitCode::gate_failed) throw;
    m_failed_step = "base: " + session::stopped_by(e, results::StopPhase::setup, {}).step;
    throw Error(ExitCode::infrastructure, "setup (base " + short_sha(m_commits.base) + ")",
                e.message() + "; the base cannot be measured");
  }
}

// Diagnoses, the cache, and head gated against base (measured now or cached).
void AbRun::finish() {
  m_head_results.diagnoses = measure::diagnose(m_head_results, m_head.config);
  m_head_results.finished_at = measure::utc_now();
  strip_worktree(m_head_results, m_head.worktree->path());
  if (m_measure_base) {
    m_base_results.diagnoses = measure::diagnose(m_base_results, m_base.config);
    m_base_results.finished_at = m_head_results.finished_at;
    m_outcome.base = std::move(m_base_results);
    m_outcome.baseline = util::display_path(m_out / "base" / "results.json");
    if (m_options.use_cache && all_ran(*m_outcome.base))
      store_cached(m_base_cache, *m_outcome.base);
  }
  if (m_options.use_cache && all_ran(m_head_results)) {
    store_cached(cache_file(m_out / "cache", m_commits.head, m_print), m_head_results);
  }
  if (m_outcome.base) {
    // The base as this run names it, whichever run measured it.
    m_outcome.base->git.commit = m_commits.base;
    m_outcome.base->git.branch = m_commits.base_branch;
    m_outcome.base->git.base.clear();
    try {
      m_head_results.gate = gate::compare(m_head_results, *m_outcome.base, m_outcome.baseline,
                                          gate::Thresholds::from(m_head.config));
      m_head_results.gate->base_source =
          m_measure_base ? results::BaseSource::interleaved : results::BaseSource::cache;
      gate::mark_diagnoses(m_head_results, *m_outcome.base, gate::Thresholds::from(m_head.config));
    } catch (const Error& e) {
      m_outcome.gate_error = e;
    }
  } else if (!m_head_results.no_baseline.empty() && !m_options.allow_no_baseline) {
    m_outcome.gate_error =
        Error(ExitCode::infrastructure, place(m_commits.base_from),
              "no baseline: nothing was compared — " + m_head_results.no_baseline);
  }
  m_outcome.head = std::move(m_head_results);
}

// The time verdicts that extra runs decided say so; with a cached base, those near their
// threshold say that it could not be measured again.
void AbRun::note_decisions() {
  if (!m_outcome.head.gate || !m_outcome.base) return;
  results::GateResult& g = *m_outcome.head.gate;
  if (!m_measure_base) {
    note_cached(g, m_outcome.head, *m_outcome.base, m_head.config, "base");
    return;
  }
  for (const auto& [stage, extra] : m_extra) note_extra_runs(g, stage, extra);
}

// Head's results say why the run stopped; nothing is cached or compared.
void AbRun::stop(const Error& e) {
  m_head_results.stopped = session::stopped_by(e, m_phase, m_not_run);
  // An interrupt says no place of its own: the stage it left partial is where it stopped.
  if (m_head_results.stopped->where.empty()) m_head_results.stopped->where = m_stopped_in;
  if (!m_failed_step.empty()) m_head_results.stopped->step = m_failed_step;
  m_head_results.finished_at = measure::utc_now();
  if (m_head.worktree) strip_worktree(m_head_results, m_head.worktree->path());
  m_outcome.base.reset();
  m_outcome.gate_error.reset();
  m_outcome.stop_error = e;
  m_outcome.head = std::move(m_head_results);
}

Outcome AbRun::run() {
  resolve();
  check_out_head();  // from here on, every way out has head's reports
  new_head_results();
  try {
    config::check_setup(m_head.config);
    // Head's stage programs: now, or once head is built when its build may make them.
    if (m_head.config.build.empty()) config::check_stages(m_head.config, m_head.config.stages);
    m_phase = results::StopPhase::server;
    start_session();
    take_base_from_cache();
    m_phase = results::StopPhase::build;
    try {
      build(m_head, m_out / "ab" / "head-build.log", *m_progress);
    } catch (const BuildFailure& e) {
      throw judge_head_build(e);
    }
    if (!m_head.config.build.empty()) {
      m_phase = results::StopPhase::config;
      config::check_stages(m_head.config, m_head.config.stages);
      m_phase = results::StopPhase::build;
    }
    prepare_base();
    new_base_results();
    m_phase = results::StopPhase::setup;
    set_up_data();
    m_phase = results::StopPhase::stages;
    measure_interleaved();
    util::throw_if_interrupted();  // a SIGINT/SIGTERM while the server stopped
    finish();
    note_decisions();
  } catch (const Error& e) {
    m_base_db.reset();  // the server stops before the reports are written
    m_session.reset();
    stop(e);
  }
  return std::move(m_outcome);
}

}  // namespace

Outcome run_ab(const Options& options) {
  util::install_interrupt_handlers();
  return AbRun(options).run();
}

}  // namespace coldgate::ab
