#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "config/config.hpp"
#include "db/connection_info.hpp"
#include "db/profile.hpp"
#include "measure/progress.hpp"
#include "results/results.hpp"
#include "snapshot/snapshot.hpp"

namespace coldgate::db {
class Provider;
struct ConnectionInfo;
class DatabaseTemplate;
class OwnConnections;
}

namespace coldgate::measure {

/// What every stage of one `coldgate run` shares.
struct RunContext {
  db::Provider* provider = nullptr;               // started, set up
  std::filesystem::path base_dir;                 // the config's folder: cwd of commands
  std::filesystem::path work_dir;                 // private temp folder for requests/candidates
  std::filesystem::path out_dir;                  // --out: explain plans go to <out>/explain/
  std::filesystem::path self_exe;                 // the coldgate binary, re-executed as the probe
  snapshot::Settings snapshots;                   // where candidates go, CI or local
  Progress* progress = nullptr;
  std::optional<db::ConnectionInfo> database;     // stages' database; nullopt: the provider's
  bool check_snapshots = true;                    // false: no snapshot check (ab's base side)
  std::string label;                              // progress prefix, e.g. "base: " (coldgate ab)
  std::string side;  // whose commit is measured ("base", "head", a stack's pull request) or ""
  bool measured = true;  // false for the plan run: its runs are no samples, and say so
  double scale = 1;  // the data scale of the stages' database: a command's $COLDGATE_SCALE
  /// The stages' database can be profiled (enable_profile() said so): each stage with
  /// `profile: true` gets pg_stat_statements read around every run.
  bool profile = false;
  /// What the profile cannot show on this server (db::ProfileReadiness::limit), set by
  /// enable_profile(); "" when nothing is missing or there is no profile.
  std::string profile_limit;
  /// Actual plans can be captured in the stages' database (enable_plans() said so): each
  /// profiled stage gets one unmeasured plan run (capture_plans) after its measured runs.
  bool plans = false;
  /// Why not, when the stages are profiled but their plans cannot be captured (enable_plans());
  /// "" otherwise. The caller puts it in results.plans_note.
  std::string plans_note;
  /// SQL stages: the probe PREPAREs the query once and EXECUTEs it for every repetition (the
  /// prepared-statement variant of a remedy trial).
  bool prepared = false;
  /// The stages' database as setup left it (enable_isolation()); null: every stage runs as with
  /// `isolation: none`. A stage with `isolation: run` gets its database made again from it
  /// before each cold run (and its plan run), one with `isolation: stage` before its first;
  /// only while the stages' database is the one it keeps (a remedy's copy is not).
  std::shared_ptr<db::DatabaseTemplate> isolation;
  /// coldgate's own connections kept between the checks before the first stage (`run` sets
  /// it from setup's check to its first stage; null: each check opens its own). The profile,
  /// the plan capture, isolation's checks and check_stage_settings() use its connection to the
  /// stages' database, enable_isolation() closes that one before the template and hands the
  /// maintenance one to it, and the first StageMeasurer takes what is left for its profile.
  std::shared_ptr<db::OwnConnections> own;
};

/// Readies the server-side profile of the stages' database for `ctx` (creates the extension
/// on a server coldgate started; checks an external one) and sets ctx.profile and
/// ctx.profile_limit, then the plan capture (enable_plans(): ctx.plans, ctx.plans_note). Returns "" when the stages will be profiled or `database.profile` is
/// false, else the one-line note the report shows (why not, what to do); a server the profile
/// cannot serve never fails the run. Throws Error(infrastructure) when the server is lost.
std::string enable_profile(RunContext& ctx, const config::Database& database);

/// Sets each of `stages`' `settings` once, as its runs will (set_config(name, value, true) in
/// the stages' database, after setup), so that a name or value the server refuses stops the
/// run before any stage with Error(usage) at that setting's name — "stage two:
/// settings.jit_abvoe_cost: the server refused it: …" — instead of failing its first run.
/// Throws Error(infrastructure) when the server is lost, Error(interrupted).
void check_stage_settings(const RunContext& ctx, const std::vector<config::Stage>& stages);

/// Keeps the stages' database of `ctx` as setup left it (db::DatabaseTemplate) when one of
/// `stages` has `isolation: run` or `stage`, and sets ctx.isolation. Call after setup and
/// enable_profile() (the template holds the profile's extension). Returns "" when it did or no
/// stage wants it; otherwise the one-line note of why not and how to allow it — the role may
/// not create databases or does not own the stages' database (an `external` server), the server
/// is older than 13, or the copy failed — and every stage then runs as with `isolation: none`.
/// Throws Error(interrupted), Error(infrastructure) when the server is lost.
std::string enable_isolation(RunContext& ctx, const std::vector<config::Stage>& stages);

/// True when cold run `run` (1-based) of `stage` starts on a fresh copy of the stages' database
/// under `ctx`: `isolation: run`, or `stage` and the first run, with ctx.isolation keeping
/// that database.
bool fresh_copy_before(const config::Stage& stage, const RunContext& ctx, int run);

/// Measures one stage: `runs` cold runs, each a fresh process (`coldgate probe` for SQL, the
/// command itself otherwise), after a server restart when `cold: restart`; `warm` repetitions
/// inside each; with the profile, pg_stat_statements reset before and read after every run
/// (db_* metrics, the statement table); then a plan-only EXPLAIN of the stage's statements
/// (cost estimates, never-analyzed tables) and the snapshot check (nondeterministic when cold
/// runs disagree).
/// A run that fails (exit status, signal, timeout, SQL error, malformed metrics line, missing
/// or invalid snapshot document) ends the stage with StageResult::error. Throws Error only for
/// what stops the whole run: interrupt (Error(interrupted)), a server that does not come back
/// after a restart (infrastructure).
results::StageResult run_stage(const config::Stage& stage, const RunContext& context);

/// run_stage() one cold run at a time, so that `coldgate ab` can interleave the cold runs of two
/// commits: `while (!m.done()) m.run_once(); return m.finish();` is run_stage(). Keeps copies of
/// `stage` and `context` (the provider and progress pointers must outlive it).
/// True when the run's server no longer answers at all (PQping: no response, ≤ 2 s per try).
/// For telling a lost server from a stage's own failure; never throws.
bool server_gone(const RunContext& ctx);

class StageMeasurer {
 public:
  StageMeasurer(const config::Stage& stage, const RunContext& context);
  /// True when every cold run was made (the extra ones too), or one failed.
  bool done() const { return m_run >= m_stage.runs + m_extra || m_result.failed(); }
  /// Allows `more` cold runs past the stage's `runs` (`ab` and `stack` measure a stage again
  /// when its time verdict lies near its threshold: gate.max_extra_runs), so done() is false
  /// until they are made. Their samples join the cold ones; the result's `runs` stays the
  /// stage's, and COLDGATE_RUNS too.
  void add_runs(int more) { m_extra += more; }
  /// The cold runs allowed past the stage's `runs` so far.
  int extra_runs() const { return m_extra; }
  /// The result so far: the samples of the cold runs made (and the error of one that failed);
  /// no statement table, plan or snapshot check before finish().
  const results::StageResult& partial() const { return m_result; }
  /// The profile's statements of each cold run made so far that succeeded, in run order; empty
  /// when the stage is not profiled. The remedy trial reads a statement's figures per run here.
  const std::vector<std::vector<db::StatementStats>>& cold_statements() const {
    return m_cold_statements;
  }
  /// The canonical snapshot candidate of cold run 1 ("" before it, or without a snapshot).
  const std::string& first_candidate() const { return m_first_candidate; }
  /// Makes the next cold run (after a server restart when `cold: restart`); a failing run sets
  /// the stage's error. Throws as run_stage() does. No-op once done().
  void run_once();
  /// The statement table, the plan-only EXPLAINs and the snapshot check (unless
  /// context.check_snapshots is false); returns the stage's result. Call once, after done().
  /// Throws as run_stage() does.
  results::StageResult finish();
  /// What a run that stops while measuring this stage keeps of it: the samples of the cold runs
  /// made, with the error of the one that failed (its statement table, plans and snapshot check
  /// are not made), its error masked of secrets, or "not complete: the run stopped after cold
  /// run 2 of 5; …" when no run failed; nullopt before the first cold run has finished.
  std::optional<results::StageResult> kept() const;
  /// "after cold run 2 of 5": the cold runs finished (with samples) of those allowed.
  std::string how_far() const;

 private:
  config::Stage m_stage;
  RunContext m_ctx;
  results::StageResult m_result;
  std::string m_query;            // SQL stages: the query text, read once
  int m_run = 0;                  // cold runs made so far
  int m_extra = 0;                // cold runs allowed past m_stage.runs (add_runs)
  std::string m_first_candidate;  // canonical text of cold run 1
  int m_differing_run = 0;        // first cold run whose candidate differs from run 1's
  std::string m_differing;
  bool m_profile = false;         // this stage is profiled
  std::unique_ptr<db::Connection> m_admin;  // coldgate's own, for the profile's resets and reads
  std::vector<std::vector<db::StatementStats>> m_cold_statements;  // one list per cold run
  std::map<std::int64_t, std::string> m_full_text;  // command stages: queryid → whole text
};

/// A stage's plan from one EXPLAIN run.
struct StagePlan {
  results::Explain explain;   // the split, jit_above_cost and never-analyzed tables filled in
  std::string json;  // the whole EXPLAIN (… FORMAT JSON) output
  /// pg_stat_statements-independent: pg_jit_available() in the EXPLAIN transaction — false on
  /// a server built without LLVM, without its JIT package, or with jit off (the stage's too).
  bool jit_available = true;
};

/// Runs a SQL stage's query once under EXPLAIN (ANALYZE, BUFFERS, TIMING, FORMAT JSON) — or,
/// with `analyze` false, a plan-only EXPLAIN (FORMAT JSON) that plans but does not execute —
/// on `conn` when given (a connection to `database` with no session state), else a fresh
/// connection to `database`, with its settings (set_config … is_local) and params,
/// and rolls it back; also reads jit_above_cost, pg_jit_available() (with `analyze` only; a plan-only EXPLAIN leaves `jit_available` true) and which tables of the plan were never
/// analyzed. Throws Error: gate_failed for an SQL error (SQLSTATE), infrastructure when the
/// server is lost, interrupted on SIGINT/SIGTERM (the query cancelled: db::CancelOnInterrupt).
StagePlan explain_stage(const config::Stage& stage, const db::ConnectionInfo& database,
                        bool analyze = true, db::Connection* conn = nullptr);

/// The database the stages of `ctx` use: its override (coldgate ab's base side, a trial's
/// database copy), else the provider's.
const db::ConnectionInfo& stages_database(const RunContext& ctx);

/// A SQL stage's query text: its `sql:` file read, or its `query:`. Throws Error for an
/// unreadable file.
std::string stage_query(const config::Stage& stage);

/// Path of the running executable (/proc/self/exe); throws Error(infrastructure).
std::filesystem::path self_executable();

}  // namespace coldgate::measure
