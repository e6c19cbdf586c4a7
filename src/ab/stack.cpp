#include "ab/stack.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

#include "ab/cache.hpp"
#include "ab/sides.hpp"
#include "config/config.hpp"
#include "db/database_template.hpp"
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

// "<k>-<ref>" as a folder name: what is not a letter, digit, '.', '_' or '-' becomes '-'.
std::string folder_of(std::size_t k, const std::string& ref) {
  std::string name = ref;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '-';
  }
  return fmt::format("{}-{}", k, name);
}

// True when every stage of `cfg` that has a snapshot has its check in `r`: a commit measured
// as a base (whose snapshots are never checked) cannot stand for a pull request.
bool has_snapshot_checks(const results::Results& r, const config::Config& cfg) {
  return std::all_of(cfg.stages.begin(), cfg.stages.end(), [&](const config::Stage& s) {
    if (!s.snapshot) return true;
    return std::any_of(r.stages.begin(), r.stages.end(), [&](const results::StageResult& rs) {
      return rs.name == s.name && rs.snapshot;
    });
  });
}

// True when every snapshot of `r` passes (match, updated).
bool snapshots_pass(const results::Results& r) {
  return std::all_of(r.stages.begin(), r.stages.end(), [](const results::StageResult& s) {
    return !s.snapshot || results::passes(s.snapshot->status);
  });
}

// One `coldgate stack` from the refs to the gates; commit k of the stack is m_sides[k] with
// its results in m_outcome.commits[k]. Worktrees, the session and the other commits' databases
// are owned here and go on every exit path.
class StackRun {
 public:
  explicit StackRun(const StackOptions& options) : m_options(options) {}
  StackOutcome run();

 private:
  void resolve();
  void check_out();
  void start_session();
  void take_from_cache();
  void build_all();
  void check_stage_programs(bool built);
  void set_up_data();
  void measure_migrations();
  void measure_round_robin();
  void finish();
  void note_decisions();
  void stop(const Error& e);
  std::size_t top() const { return m_sides.size() - 1; }
  // Results of commit k and whether this run measures it.
  results::Results& results(std::size_t k) { return m_outcome.commits[k].results; }
  bool measured(std::size_t k) const { return !m_outcome.commits[k].cached; }

  const StackOptions& m_options;
  StackOutcome m_outcome;
  fs::path m_config_file;
  fs::path m_out;
  fs::path m_repo;
  fs::path m_rel;  // the config file relative to the repository root
  std::vector<Side> m_sides;
  std::string m_top_text;  // REFn's config file as committed: the fingerprint's part
  std::string m_head_sha;  // the checkout's HEAD
  std::vector<std::string> m_dirty;
  std::unique_ptr<measure::Progress> m_progress;
  std::unique_ptr<session::Session> m_session;
  std::string m_print;
  std::vector<std::unique_ptr<BaseDatabase>> m_dbs;
  results::StopPhase m_phase = results::StopPhase::config;
  std::string m_failed_step;
  std::vector<std::vector<std::string>> m_not_run;  // per commit, its stages not measured yet
  std::vector<std::string> m_stopped_in;  // per commit, "stage X, after cold run 2 of 5" of a stop
  /// Per pull request k (against commit k−1), per stage: the runs made past `runs` (decide).
  std::vector<std::map<std::string, ExtraRuns>> m_extra;
};

void StackRun::resolve() {
  const auto& refs = m_options.refs;
  if (refs.size() < 2) {
    throw usage_error("stack", "needs REF0 (the base, e.g. main) and at least one ref above it: "
                               "coldgate stack main feature-1 feature-2");
  }
  if (static_cast<int>(refs.size()) > m_options.max_commits) {
    throw usage_error("--max-commits",
                      fmt::format("the stack has {} commits, more than --max-commits {}; measure "
                                  "a part of it, or raise --max-commits",
                                  refs.size(), m_options.max_commits));
  }
  m_config_file = resolved(m_options.config);
  std::error_code ec;
  if (!fs::exists(m_config_file, ec)) {
    throw usage_error(m_options.config.string(),
                      "config file not found; pass -c FILE (a path inside the checkout)");
  }
  m_out = resolved(m_options.out_dir);
  std::string err;
  auto top = git(m_config_file.parent_path(), {"rev-parse", "--show-toplevel"}, &err);
  if (!top) {
    throw usage_error(m_config_file.parent_path().string(),
                      "not inside a git checkout (coldgate stack measures commits): " + err);
  }
  m_repo = resolved(*top);
  m_rel = m_config_file.lexically_relative(m_repo);
  if (m_rel.empty() || *m_rel.begin() == "..") {
    throw usage_error(m_options.config.string(),
                      "the config is not inside the git checkout " + m_repo.string());
  }
  for (std::size_t k = 0; k < refs.size(); ++k) {
    auto sha = git(m_repo, {"rev-parse", "--verify", "--quiet", refs[k] + "^{commit}"});
    if (!sha || sha->empty()) {
      throw usage_error(refs[k], fmt::format("not a commit of {}; fetch it (git fetch origin {})",
                                             m_repo.string(), refs[k]));
    }
    for (std::size_t j = 0; j < k; ++j) {
      if (m_outcome.commits[j].commit == *sha) {
        throw usage_error(refs[k], fmt::format("is the same commit as {} ({}): each ref of the "
                                               "stack must add a commit",
                                               refs[j], sha->substr(0, 7)));
      }
    }
    if (k > 0 && !git(m_repo, {"merge-base", "--is-ancestor", m_outcome.commits[k - 1].commit,
                               *sha})) {
      throw usage_error(refs[k], fmt::format("does not descend from {} ({}): list the stack "
                                             "bottom-up, each ref on the one before it (rebase "
                                             "it onto {}?)",
                                             refs[k - 1], m_outcome.commits[k - 1].commit.substr(0, 7),
                                             refs[k - 1]));
    }
    StackCommit c;
    c.ref = refs[k];
    c.commit = *sha;
    c.folder = folder_of(k, refs[k]);
    m_outcome.commits.push_back(std::move(c));
  }
  m_head_sha = git(m_repo, {"rev-parse", "--verify", "--quiet", "HEAD"}).value_or("");
  const bool checkout_in_stack =
      std::any_of(m_outcome.commits.begin(), m_outcome.commits.end(),
                  [&](const StackCommit& c) { return c.commit == m_head_sha; });
  if (checkout_in_stack) m_dirty = measure::uncommitted_changes(m_repo, m_out);
  if (!m_dirty.empty() && m_options.ci) {
    throw usage_error(m_repo.string(),
                      fmt::format("uncommitted changes ({}): coldgate stack measures commits, so "
                                  "in CI mode the checkout must be clean; commit them, or add "
                                  "build outputs to .gitignore",
                                  first_changes(m_dirty)));
  }
}

// Every commit's worktree and config; what a killed run left under <out>/stack/worktrees/ goes
// first.
void StackRun::check_out() {
  const fs::path trees = m_out / "stack" / "worktrees";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(trees, ec)) remove_worktree(m_repo, entry.path());
  fs::remove_all(trees, ec);
  const std::size_t n = m_outcome.commits.size();
  m_sides.resize(n);
  // The top first: its config is the others' where they have none.
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = n - 1 - i;
    Side& side = m_sides[k];
    side.name = m_outcome.commits[k].folder;
    side.commit = m_outcome.commits[k].commit;
    side.build_failure = k == 0 ? ExitCode::infrastructure : ExitCode::gate_failed;
    side.label = k == 0 ? fmt::format("base ({} {})", m_outcome.commits[k].ref, short_sha(side.commit))
                        : fmt::format("pull request {} ({} {})", k, m_outcome.commits[k].ref,
                                      short_sha(side.commit));
    side.worktree = std::make_unique<Worktree>(m_repo, trees / std::to_string(k), side.commit);
    const fs::path file = side.worktree->path() / m_rel;
    if (k + 1 == n) {
      if (!fs::exists(file, ec)) {
        throw usage_error(m_rel.string(), fmt::format("{} ({}) has no config file {}",
                                                      m_outcome.commits[k].ref,
                                                      short_sha(side.commit), m_rel.string()));
      }
      side.config = config::load(file);
      m_top_text = util::read_file(file);
    } else {
      side.config = side_config(file, m_top_text, side);
    }
  }
  const config::Config& cfg = m_sides.back().config;
  m_progress = std::make_unique<measure::Progress>(m_options.progress, std::cerr,
                                                   static_cast<int>(cfg.stages.size()));
  std::string chain;
  for (const auto& c : m_outcome.commits) {
    chain += fmt::format("{}{} {}", chain.empty() ? "" : " → ", c.ref, short_sha(c.commit));
  }
  m_progress->line(fmt::format("stack of {} pull request{}: {}", n - 1, n == 2 ? "" : "s", chain));
  m_not_run.assign(n, {});
  m_stopped_in.assign(n, {});
  for (std::size_t k = 0; k < n; ++k) {
    const StackCommit& c = m_outcome.commits[k];
    std::string branch = c.ref.rfind("origin/", 0) == 0 ? c.ref.substr(7) : c.ref;
    results(k) = new_results(util::display_path(m_options.config), m_sides[k].config, {},
                             c.commit, branch);
    results(k).ci_run_url = measure::ci_run_url();
    if (k > 0) results(k).git.base = m_outcome.commits[k - 1].commit;
    if (c.commit == m_head_sha) {
      results(k).git.dirty = m_dirty;
      results(k).git.dirty_measured = false;
    }
    for (const auto& s : cfg.stages) m_not_run[k].push_back(s.name);
  }
  if (!m_dirty.empty()) {
    m_progress->line(fmt::format(
        "warning: {} uncommitted change{} in the checkout, not measured (stack measures "
        "commits): {}",
        m_dirty.size(), m_dirty.size() == 1 ? "" : "s", first_changes(m_dirty)));
  }
}

// One server for every commit: drift of the machine hits all alike.
void StackRun::start_session() {
  m_session = std::make_unique<session::Session>(
      m_sides.back().config.database, "coldgate-stack-",
      [this](const std::string& line) { m_progress->line(line); });
  m_print = fingerprint(m_session->environment(), m_top_text);
  for (std::size_t k = 0; k < m_sides.size(); ++k) results(k).environment = m_session->environment();
}

// A commit measured before in this environment with this config is not measured again. A
// pull request's commit is taken only with its snapshot checks (not one cached as a base).
void StackRun::take_from_cache() {
  // Each pull request's migration runs on the data of the commit below it, which a cached
  // result does not hold: with `migrate:`, every commit is set up and measured.
  const bool migrations = !m_sides.back().config.migrate.empty();
  if (migrations && m_options.use_cache) {
    m_progress->line("the stack's commits are set up and measured, not taken from the cache: "
                     "each pull request's migration runs on the data of the commit below it");
  }
  for (std::size_t k = 0; k < m_sides.size(); ++k) {
    StackCommit& c = m_outcome.commits[k];
    const fs::path file = cache_file(m_out / "cache", c.commit, m_print);
    std::optional<results::Results> cached;
    if (m_options.use_cache && !migrations) cached = load_cached(file);
    if (cached && k > 0 && !has_snapshot_checks(*cached, m_sides[k].config)) cached.reset();
    // A snapshot that does not match needs its candidate in this run's outputs, for review and
    // accept: measured again rather than pointing at a file no longer there.
    if (cached && k > 0 && !snapshots_pass(*cached)) cached.reset();
    if (!cached) {
      c.baseline = util::display_path(m_out / "stack" / c.folder / "results.json");
      m_progress->line(fmt::format("measuring commit {} {} ({})", k, short_sha(c.commit), c.ref));
      ++m_outcome.measured;
      continue;
    }
    cached->git = results(k).git;
    cached->ci_run_url = results(k).ci_run_url;
    cached->config = results(k).config;
    c.results = std::move(*cached);
    c.cached = true;
    c.baseline = util::display_path(file);
    m_not_run[k].clear();
    m_sides[k].worktree.reset();
    m_progress->line(fmt::format("commit {} {} ({}) from the cache ({}): not measured again "
                                 "(--no-cache measures it)",
                                 k, short_sha(c.commit), c.ref, util::display_path(file)));
  }
}

// Bottom-up, so a pull request that does not build stands on commits that do. When one fails,
// the stack's base is the judge (judged_build_failure): built already by then, or, when it
// came from the cache, built now in a worktree of its own; a base that fails too means the
// build cannot work on this machine (exit 3), not the pull request's doing.
void StackRun::build_all() {
  auto log = [&](std::size_t k) { return m_out / "stack" / "build" / (m_sides[k].name + ".log"); };
  for (std::size_t k = 0; k < m_sides.size(); ++k) {
    if (!measured(k)) continue;
    try {
      build(m_sides[k], log(k), *m_progress);
    } catch (const BuildFailure& e) {
      if (k == 0) throw;
      Side& base = m_sides[0];
      if (measured(0)) throw judged_build_failure(e, side_label(base), nullptr);
      m_progress->line(fmt::format("{} does not build: building {} too, to tell whether the pull "
                                   "request is the cause",
                                   side_label(m_sides[k]), side_label(base)));
      base.worktree = std::make_unique<Worktree>(m_repo, m_out / "stack" / "worktrees" / "0",
                                                 base.commit);
      try {
        build(base, log(0), *m_progress);
      } catch (const BuildFailure& b) {
        throw judged_build_failure(e, side_label(base), &b);
      }
      throw judged_build_failure(e, side_label(base), nullptr);
    }
  }
}

// The programs of the stages each commit runs (REFn's stages, its own definition of them):
// before the server starts for a commit without `build:` steps, once it is built for one with
// them (a program its build makes). A missing one is a config error (exit 2).
void StackRun::check_stage_programs(bool built) {
  const config::Config& top_cfg = m_sides[top()].config;
  for (std::size_t k = 0; k < m_sides.size(); ++k) {
    const config::Config& cfg = m_sides[k].config;
    if (cfg.build.empty() == built || (built && !measured(k))) continue;
    std::vector<config::Stage> stages;
    for (const auto& s : cfg.stages) {
      if (std::any_of(top_cfg.stages.begin(), top_cfg.stages.end(),
                      [&](const config::Stage& t) { return t.name == s.name; }))
        stages.push_back(s);
    }
    config::check_stages(cfg, stages);
  }
}

// Each measured commit's data from its own setup steps, in its own database on the one server:
// REFn's in database.name, commit k's in <name>_<k>. A commit whose scripts make the stages'
// database themselves (psql's `database:`) is set up first and its database renamed.
void StackRun::set_up_data() {
  const std::string name = m_session->provider().connection_info().dbname;
  m_dbs.resize(m_sides.size());
  auto set_up = [&](std::size_t k, const std::optional<db::ConnectionInfo>& target) {
    try {
      m_session->setup(m_sides[k].config, m_sides[k].name, target, &results(k));
    } catch (const Error& e) {
      if (e.code() != ExitCode::gate_failed) throw;
      m_failed_step = m_sides[k].name + ": " + session::stopped_by(e, results::StopPhase::setup, {}).step;
      throw Error(m_sides[k].build_failure,
                  fmt::format("setup ({} {})", m_sides[k].name, short_sha(m_sides[k].commit)),
                  e.message() + (k == 0 ? "; the base cannot be measured" : ""));
    }
  };
  for (std::size_t k = 0; k < top(); ++k) {
    if (!measured(k) || !loads_elsewhere(m_sides[k].config)) continue;
    m_dbs[k] = std::make_unique<BaseDatabase>(m_session->provider(), fmt::format("{}_{}", name, k),
                                              false);
    set_up(k, std::nullopt);
    m_dbs[k]->take_over(name);
  }
  if (measured(top())) set_up(top(), std::nullopt);
  for (std::size_t k = 0; k < top(); ++k) {
    if (!measured(k) || m_dbs[k]) continue;
    m_dbs[k] = std::make_unique<BaseDatabase>(m_session->provider(), fmt::format("{}_{}", name, k),
                                              true);
    set_up(k, m_dbs[k]->info());
  }
}

// REFn's stages in order; per stage, cold run 1 of each measured commit bottom-up, then run 2, …
// Each pull request's migration on a copy of the data of the commit below it (both measured in
// this run: a commit from the cache has no database here), before any stage runs.
void StackRun::measure_migrations() {
  for (std::size_t k = 1; k < m_sides.size(); ++k) {
    if (m_sides[k].config.migrate.empty()) continue;
    if (!measured(k) || !measured(k - 1) || !m_dbs[k - 1]) {
      // Only a commit without the config's `migrate:` below one with it gets here.
      const std::string note = fmt::format(
          "{}'s migration was not measured: {} has no database in this run", side_label(m_sides[k]),
          measured(k - 1) ? side_label(m_sides[k]) : side_label(m_sides[k - 1]));
      m_progress->line("migrate: " + note);
      results(k).warnings.push_back(note);
      continue;
    }
    m_phase = results::StopPhase::migrate;
    db::ConnectionInfo fresh = m_session->provider().connection_info();
    if (m_dbs[k]) fresh = m_dbs[k]->info();
    results(k).migration = ab::measure_migration(*m_session, m_sides[k], m_sides[k - 1],
                                                 m_dbs[k - 1]->info(), fresh, *m_progress,
                                                 m_options.try_fixes);
  }
}

void StackRun::measure_round_robin() {
  const config::Config& top_cfg = m_sides.back().config;
  std::vector<measure::RunContext> ctx(m_sides.size());
  std::vector<std::vector<std::optional<config::Stage>>> stages(m_sides.size());
  for (std::size_t k = 0; k < m_sides.size(); ++k) {
    if (!measured(k)) continue;
    const Side& side = m_sides[k];
    measure::RunContext& c = ctx[k];
    c.provider = &m_session->provider();
    c.base_dir = side.config.base_dir;
    c.work_dir = m_session->work_dir() / std::to_string(k);
    c.out_dir = m_out / "stack" / side.name;
    c.self_exe = measure::self_executable();
    // Candidates never go into a worktree (it is removed): to <out>/stack/<folder>/snapshots/.
    c.snapshots.mode = snapshot::Mode::ci;
    c.snapshots.out_dir = c.out_dir;
    c.snapshots.label_root = config::label_root(side.config);
    c.snapshots.artifacts = m_options.ci;
    c.snapshots.accept_command = accept_command(m_options.config);
    c.progress = m_progress.get();
    c.check_snapshots = k > 0;
    c.label = side.name + ": ";
    c.side = side.name;
    if (m_dbs[k]) c.database = m_dbs[k]->info();
    fs::create_directories(c.work_dir);
    results(k).profile_note = measure::enable_profile(c, side.config.database);
    results(k).plans_note = c.plans_note;
    results(k).profile_limit = c.profile_limit;
    stages[k] = k == top() ? std::vector<std::optional<config::Stage>>(top_cfg.stages.begin(),
                                                                        top_cfg.stages.end())
                           : base_stages(top_cfg, side.config);
  }
  measure_migrations();
  m_phase = results::StopPhase::stages;
  for (std::size_t k = 0; k < m_sides.size(); ++k) {
    if (!measured(k)) continue;
    // Each commit's database kept as its setup left it; the stages' isolation is the top's.
    if (std::string note = measure::enable_isolation(ctx[k], top_cfg.stages); !note.empty()) {
      m_progress->line("note: " + ctx[k].label + note);
      results(k).warnings.push_back(note);
    }
  }
  if (m_outcome.measured == 0) {  // all from the cache
    m_session->stop();
    return;
  }
  std::size_t last = top();
  while (!measured(last)) --last;  // the highest measured commit shows the stage's line
  // Commit k's gate, as finish() judges it against commit k−1.
  std::vector<gate::Thresholds> thresholds;
  for (const Side& side : m_sides) thresholds.push_back(gate::Thresholds::from(side.config));
  m_extra.assign(m_sides.size(), {});
  for (std::size_t i = 0; i < top_cfg.stages.size(); ++i) {
    m_progress->stage_start(static_cast<int>(i) + 1, top_cfg.stages[i].name);
    std::vector<std::optional<measure::StageMeasurer>> m(m_sides.size());
    std::vector<measure::StageMeasurer*> order;
    for (std::size_t k = 0; k < m_sides.size(); ++k) {
      if (measured(k) && stages[k][i]) m[k].emplace(*stages[k][i], ctx[k]);
      order.push_back(m[k] ? &*m[k] : nullptr);
    }
    std::vector<bool> finished(m_sides.size(), false);
    try {
      interleave(order);
      // A time verdict near its threshold: both sides of that pull request again, interleaved.
      std::vector<StagePair> pairs;
      for (std::size_t k = 1; k < m_sides.size(); ++k) {
        pairs.push_back({k - 1, k, &thresholds[k].for_stage(top_cfg.stages[i].name),
                         fmt::format(" ({} on {})", m_sides[k].name, m_sides[k - 1].name)});
      }
      std::vector<ExtraRuns> extra = decide(order, pairs, top_cfg.stages[i].name, *m_progress);
      for (std::size_t j = 0; j < pairs.size(); ++j) {
        if (!extra[j].metrics.empty()) m_extra[pairs[j].head][top_cfg.stages[i].name] = extra[j];
      }
      for (std::size_t k = 0; k < m_sides.size(); ++k) {
        if (!measured(k)) continue;
        auto& not_run = m_not_run[k];
        not_run.erase(std::remove(not_run.begin(), not_run.end(), top_cfg.stages[i].name),
                      not_run.end());
        if (!m[k]) continue;
        // A stage error may quote a command's stderr or a server message: no password in results.
        auto& r = results(k).stages.emplace_back(m[k]->finish());
        finished[k] = true;
        r.error = util::mask_secrets(r.error);
        if (k == last) {
          m_progress->stage_end(r);
        } else if (r.failed()) {
          m_progress->line(
              fmt::format("{}: stage {} failed: {}", m_sides[k].name, r.name, r.error));
        }
      }
    } catch (const Error&) {
      // A lost server or an interrupt stops the run: each commit keeps the cold runs it made.
      for (std::size_t k = 0; k < m_sides.size(); ++k) {
        auto kept = m[k] && !finished[k] ? m[k]->kept() : std::nullopt;
        if (!kept) continue;
        results(k).stages.push_back(std::move(*kept));
        if (m_stopped_in.size() > k) m_stopped_in[k] = "stage " + top_cfg.stages[i].name + ", " + m[k]->how_far();
        auto& not_run = m_not_run[k];
        not_run.erase(std::remove(not_run.begin(), not_run.end(), top_cfg.stages[i].name),
                      not_run.end());
      }
      throw;
    }
  }
  // Each commit at the other data scales (config `scales:`), one after the other: their counts
  // decide the growth, and counts need no interleaving.
  for (std::size_t k = 0; k < m_sides.size(); ++k) {
    if (!measured(k)) continue;
    session::measure_present_at_scales(*m_session, m_sides[k].config, stages[k], ctx[k], results(k),
                                       m_sides[k].name);
  }
  m_phase = results::StopPhase::teardown;  // an interrupt now is not "during scales"
  // The templates are dropped while the server is there; a throwaway cluster is deleted with
  // them, so there a DROP (a checkpoint each) would only cost time.
  for (auto& c : ctx) {
    if (c.isolation && m_session->provider().name() == "local") c.isolation->leave_to_server_removal();
    c.isolation.reset();
  }
  m_dbs.clear();
  m_session->stop();
}

// Diagnoses, the cache, and pull request k gated against commit k−1.
void StackRun::finish() {
  const std::string now = measure::utc_now();
  for (std::size_t k = 0; k < m_sides.size(); ++k) {
    if (!measured(k)) continue;
    results::Results& r = results(k);
    r.diagnoses = measure::diagnose(r, m_sides[k].config);
    r.finished_at = now;
    strip_worktree(r, m_sides[k].worktree->path());
    if (m_options.use_cache && all_ran(r)) {
      store_cached(cache_file(m_out / "cache", m_sides[k].commit, m_print), r);
    }
  }
  for (std::size_t k = 1; k < m_sides.size(); ++k) {
    results::Results base = results(k - 1);  // the base as this run names it
    base.git.base.clear();
    base.gate.reset();
    try {
      results(k).gate = gate::compare(results(k), base, m_outcome.commits[k - 1].baseline,
                                      gate::Thresholds::from(m_sides[k].config));
      gate::mark_diagnoses(results(k), base, gate::Thresholds::from(m_sides[k].config));
      // Each side says where it came from: the base (commit k−1) from the cache, or measured
      // in this run; the head (commit k) from the cache, or measured (head_cached).
      results(k).gate->base_source = m_outcome.commits[k - 1].cached
                                         ? results::BaseSource::cache
                                         : results::BaseSource::interleaved;
      results(k).gate->head_cached = m_outcome.commits[k].cached;
    } catch (const Error& e) {
      if (!m_outcome.gate_error) m_outcome.gate_error = e;
    }
  }
}

// Each pull request's time verdicts that extra runs decided say so; where a side came from the
// cache, those near their threshold say that it could not be measured again.
void StackRun::note_decisions() {
  for (std::size_t k = 1; k < m_sides.size(); ++k) {
    if (!results(k).gate) continue;
    results::GateResult& g = *results(k).gate;
    const bool base_cached = !measured(k - 1);
    const bool head_cached = !measured(k);
    if (base_cached || head_cached) {
      note_cached(g, results(k), results(k - 1), m_sides[k].config,
                  base_cached && head_cached ? "both sides"
                  : base_cached              ? "base"
                                             : "head");
      continue;
    }
    if (k < m_extra.size()) {
      for (const auto& [stage, extra] : m_extra[k]) note_extra_runs(g, stage, extra);
    }
  }
}

// Every commit's results say why the run stopped; nothing is cached or compared.
void StackRun::stop(const Error& e) {
  for (std::size_t k = 0; k < m_outcome.commits.size(); ++k) {
    results::Results& r = results(k);
    r.stopped = session::stopped_by(e, m_phase, m_not_run.size() > k ? m_not_run[k]
                                                                     : std::vector<std::string>{});
    // An interrupt says no place of its own: the stage it left partial is where it stopped.
    if (r.stopped->where.empty() && k < m_stopped_in.size()) r.stopped->where = m_stopped_in[k];
    if (!m_failed_step.empty()) r.stopped->step = m_failed_step;
    r.finished_at = measure::utc_now();
    r.gate.reset();
    if (k < m_sides.size() && m_sides[k].worktree) strip_worktree(r, m_sides[k].worktree->path());
  }
  m_outcome.gate_error.reset();
  m_outcome.stop_error = e;
}

StackOutcome StackRun::run() {
  resolve();
  if (m_options.ready) m_options.ready();
  try {
    check_out();
  } catch (const Error&) {
    m_sides.clear();  // worktrees go before the error is reported
    throw;
  }
  try {
    for (const auto& side : m_sides) config::check_setup(side.config);
    check_stage_programs(false);
    m_phase = results::StopPhase::server;
    start_session();
    take_from_cache();
    m_phase = results::StopPhase::build;
    build_all();
    m_phase = results::StopPhase::config;
    check_stage_programs(true);
    m_phase = results::StopPhase::setup;
    set_up_data();
    m_phase = results::StopPhase::stages;
    measure_round_robin();
    util::throw_if_interrupted();  // a SIGINT/SIGTERM while the server stopped
    finish();
    note_decisions();
  } catch (const Error& e) {
    m_dbs.clear();  // the server stops before the reports are written
    m_session.reset();
    stop(e);
  }
  m_sides.clear();  // the worktrees
  return std::move(m_outcome);
}

}  // namespace

StackOutcome run_stack(const StackOptions& options) {
  util::install_interrupt_handlers();
  return StackRun(options).run();
}

}  // namespace coldgate::ab
