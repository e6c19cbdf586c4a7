// A stage's cold runs in order (StageMeasurer): a fresh copy or a restart before each when the
// stage asks, the run itself (cold_run.hpp), a lost server told from the stage's own failure,
// then the statement table, the plan run, the plan-only EXPLAIN and the snapshot check.
#include <fmt/core.h>

#include <chrono>
#include <new>

#include "db/database_template.hpp"
#include "db/own_connections.hpp"
#include "db/provider.hpp"
#include "diff/diff.hpp"
#include "measure/cold_run.hpp"
#include "measure/plans.hpp"
#include "measure/profile.hpp"
#include "measure/runner.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/secrets.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

// "head's " for `ab`'s and `stack`'s sides, so that a lost server says whose run it was in.
std::string whose(const RunContext& ctx) { return ctx.side.empty() ? "" : ctx.side + "'s "; }

// An infrastructure error of coldgate's own call to the server (`during` "cold run 2/3"), when
// the server is gone: said as the lost server it is, the call's own error kept.
void rethrow_if_server_lost(const Error& e, const RunContext& ctx, const config::Stage& stage,
                            const std::string& during) {
  if (e.code() != ExitCode::infrastructure || !server_gone(ctx)) return;
  throw Error(ExitCode::infrastructure, "stage " + stage.name,
              fmt::format("the PostgreSQL server stopped answering during {}{}; the run stops ({})",
                          whose(ctx), during, e.message()));
}

}  // namespace


StageMeasurer::StageMeasurer(const config::Stage& stage, const RunContext& context)
    : m_stage(stage), m_ctx(context) {
  m_result.name = stage.name;
  m_result.kind = stage.is_command() ? StageKind::command : StageKind::sql;
  m_result.cold_mode = stage.cold == config::ColdMode::restart ? ColdMode::restart : ColdMode::process;
  m_result.runs = stage.runs;
  m_result.warm = stage.warm;
  m_result.isolation = !fresh_copy_before(stage, context, 1) ? "none"
                       : stage.isolation == config::Isolation::run ? "run"
                                                                   : "stage";
  m_result.settings = stage.settings;
  m_profile = context.profile && stage.profile;
  // The connection the checks before the first stage left to its database: this stage's
  // profile's from its first reset on (a backend less), else closed.
  if (m_ctx.own) {
    std::unique_ptr<db::Connection> kept = m_ctx.own->take(stages_database(m_ctx));
    if (m_profile) m_admin = std::move(kept);
    m_ctx.own.reset();
  }
  if (!stage.is_command()) m_query = stage_query(stage);
}

void StageMeasurer::run_once() {
  if (done()) return;
  const config::Stage& stage = m_stage;
  const RunContext& ctx = m_ctx;
  StageResult& result = m_result;
  const int run = ++m_run;
  // "2/3"; a run past the stage's `runs`: "4 (extra 1)".
  const std::string which = run <= stage.runs
                                ? fmt::format("{}/{}", run, stage.runs)
                                : fmt::format("{} (extra {})", run, run - stage.runs);
  util::throw_if_interrupted();
  // Before a restart, so that the restart finds the server as the copy left it; outside the
  // run's clock and its profile (reset after it).
  if (fresh_copy_before(stage, ctx, run)) {
    ctx.progress->step(fmt::format("{}fresh copy of the database for cold run {}", ctx.label, which));
    const auto t0 = std::chrono::steady_clock::now();
    bool copied = false;
    try {
      copied = ctx.isolation->restore();
    } catch (const Error& e) {
      if (auto full = db::disk_full(e, *ctx.provider)) throw *full;
      throw;
    }
    if (copied) {
      m_admin.reset();  // its backend went with the database
      // Said once per copy: what isolation costs is seen, and a stage that only reads has none.
      ctx.progress->line(fmt::format(
          "{}{}: fresh copy of the database for cold run {} ({:.0f} ms)", ctx.label, stage.name,
          which,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()));
    }
  }
  if (stage.cold == config::ColdMode::restart) {
    ctx.progress->step(
        fmt::format("{}restarting the server for cold run {}", ctx.label, which));
    m_admin.reset();  // the restart would end its backend: a new one after it
    if (ctx.isolation) ctx.isolation->disconnect();  // the same
    ctx.provider->restart();
  }
  ctx.progress->step(ctx.measured ? fmt::format("{}cold run {}", ctx.label, which)
                                  : ctx.label + "not measured");
  std::vector<db::StatementStats> statements;
  RunOutcome outcome;
  auto measured_run = [&] {
    outcome = stage.is_command() ? command_run(stage, ctx, run, result,
                                               m_profile ? &m_admin : nullptr, statements,
                                               m_full_text)
                                 : sql_run(stage, ctx, run, m_query, result,
                                           m_profile ? &m_admin : nullptr, statements);
  };
  try {
    // What the run writes is its database's: under `ab` and `stack` no other side's template
    // reads it as a write to its own.
    if (ctx.isolation && stages_database(ctx).dbname == ctx.isolation->database()) {
      ctx.isolation->run_on(measured_run);
    } else {
      measured_run();
    }
  } catch (const Error& e) {
    rethrow_if_server_lost(e, ctx, stage, "cold run " + which);
    throw;
  }
  if (m_profile && outcome.error.empty()) m_cold_statements.push_back(std::move(statements));
  if (!outcome.error.empty()) {
    result.error = fmt::format("cold run {}: {}", which, outcome.error);
    // A full disk (the stage's text or the server's log says so) and a lost server fail every
    // later stage too: stop the run as an infrastructure error. The stage's own error is kept
    // whole: its stderr often says why the server went (an OOM kill, a PANIC), and whose(ctx)
    // says in `ab` and `stack` whose cold run it was.
    if (auto full = db::disk_full(
            Error(ExitCode::infrastructure, "stage " + stage.name, whose(ctx) + result.error),
            *ctx.provider)) {
      throw *full;
    }
    if (server_gone(ctx)) {
      throw Error(ExitCode::infrastructure, "stage " + stage.name,
                  fmt::format("the PostgreSQL server stopped answering during {}cold run {}; the "
                              "run stops. The stage's own error: {}",
                              whose(ctx), which, outcome.error));
    }
    return;
  }
  if (const Metric* wall = result.find("wall_ms"); wall && !wall->cold.empty()) {
    if (ctx.measured) {
      ctx.progress->run_done(run, stage.runs, wall->cold.back(), ctx.label);
    } else {
      ctx.progress->unmeasured_run_done(wall->cold.back(), ctx.label);
    }
  }
  if (!stage.snapshot) return;
  std::string canonical;
  // The document is stored (candidates, diffs): a password the program printed must not be,
  // and a random one per run would make every document differ.
  outcome.document = util::mask_secrets(outcome.document);
  try {
    canonical = canon::canonicalize(outcome.document, stage.snapshot->canon,
                                    fmt::format("cold run {} document", run));
  } catch (const canon::DepthError& e) {
    result.error = fmt::format(
        "cold run {}: the snapshot document is not valid: {}; if it really is that deep, raise "
        "snapshot.max_depth for this stage (at most {})",
        which, e.message(), config::k_max_snapshot_depth);
    return;
  } catch (const std::bad_alloc&) {
    // What the stage printed is at fault, not the machine: the stage fails, the run goes on
    // (the canonical text and the tree are freed by now) and its reports are written.
    result.error = fmt::format(
        "cold run {}: out of memory canonicalizing the snapshot document ({} bytes); make it "
        "smaller or less deeply nested",
        which, outcome.document.size());
    return;
  } catch (const Error& e) {
    const auto before = stage.is_command() && stage.snapshot->from_stdout
                            ? line_before_document(outcome.document, stage.snapshot->canon)
                            : std::nullopt;
    if (before) {
      result.error = fmt::format(
          "cold run {}: stage '{}': stdout is not JSON: line {} \"{}\" comes before the document "
          "— send the ORM's log to stderr (Sequelize: logging: console.error; Django: LOGGING "
          "handlers to stderr) or write the snapshot to a file (snapshot.from)",
          which, stage.name, before->first, quoted_line(before->second));
    } else {
      result.error =
          fmt::format("cold run {}: the snapshot document is not valid: {}", which, e.message());
    }
    return;
  }
  if (run == 1) {
    m_first_candidate = std::move(canonical);
  } else if (m_differing_run == 0 && canonical != m_first_candidate) {
    m_differing_run = run;
    m_differing = std::move(canonical);
  }
}

StageResult StageMeasurer::finish() {
  const config::Stage& stage = m_stage;
  const RunContext& ctx = m_ctx;
  StageResult result = m_result;  // a copy: kept() still has it when this throws
  m_admin.reset();
  if (!result.failed()) {
    util::throw_if_interrupted();
    if (m_profile) result.queries = statement_table(m_cold_statements);
    std::unique_ptr<db::Connection> idle;  // the plan run's, when it made none: one backend less
    if (m_profile && ctx.plans && !result.queries.empty()) {
      // After the measured runs, so that auto_explain's instrumentation and log writes are in
      // none of them (docs/BENCHMARKS.md, "plan capture").
      ctx.progress->step(ctx.label + "plan run (auto_explain, not measured)");
      try {
        attach_plans(result.queries, capture_plans(stage, ctx, &idle));
      } catch (const Error& e) {
        rethrow_if_server_lost(e, ctx, stage, "the plan run");
        if (e.code() == ExitCode::interrupted || e.code() == ExitCode::infrastructure) throw;
        ctx.progress->line(fmt::format("{}{}: no plans: {}", ctx.label, stage.name, e.message()));
      }
    }
    ctx.progress->step(ctx.label + "EXPLAIN (plan only)");
    try {
      if (stage.is_command()) {
        if (m_profile) plan_command_stage(m_full_text, ctx, result);
      } else {
        plan_sql_stage(stage, ctx, result, idle.get());
      }
    } catch (const Error& e) {
      rethrow_if_server_lost(e, ctx, stage, "the plan-only EXPLAIN");
      if (e.code() == ExitCode::interrupted || e.code() == ExitCode::infrastructure) throw;
      result.error = e.message();
    }
  }
  order_metrics(result);
  if (result.failed() || !stage.snapshot || !ctx.check_snapshots) return result;

  // The candidate, the committed file arranged and their diff are each held whole: a document
  // that printed to gigabytes must fail its stage, not end the run without its reports.
  try {
    SnapshotResult snap;
    snap.path = util::display_path(stage.snapshot->path);
    snap.sha256 = util::sha256_hex(m_first_candidate);
    if (m_differing_run != 0) {
      auto summary = diff::summarize(m_first_candidate, m_differing, 1);
      std::size_t paths = summary.changed + summary.added + summary.removed;
      snap.status = SnapshotStatus::nondeterministic;
      snap.message = fmt::format(
          "cold runs 1 and {} loaded different documents: first difference at {} ({} {})",
          m_differing_run, summary.first_path(), paths,
          paths == 1 ? "path differs" : "paths differ");
      diff::Options o;
      o.arrangement = stage.snapshot->canon;
      o.label_a = "cold run 1";
      o.label_b = fmt::format("cold run {}", m_differing_run);
      snap.diff = diff::render(m_first_candidate, m_differing, o);
    } else {
      snapshot::Verdict v =
          snapshot::check({stage.name, stage.snapshot->path, stage.snapshot->canon},
                          m_first_candidate, ctx.snapshots);
      snap.status = recorded(v.status);
      // --update-snapshots wrote the candidate over the snapshot: nothing is left to review.
      if (ctx.snapshots.update && v.status != snapshot::Status::match && v.pending.empty()) {
        snap.status = SnapshotStatus::updated;
      }
      snap.pending = v.pending.empty() ? "" : util::display_path(v.pending);
      snap.message = v.message;
      snap.diff = v.diff;
    }
    result.snapshot = std::move(snap);
  } catch (const std::bad_alloc&) {
    result.snapshot.reset();
    result.error = fmt::format(
        "snapshot: out of memory comparing the candidate ({} bytes of canonical text) with {}; "
        "make the document smaller or less deeply nested",
        m_first_candidate.size(), util::display_path(stage.snapshot->path));
  }
  return result;
}

std::optional<StageResult> StageMeasurer::kept() const {
  const Metric* wall = m_result.find("wall_ms");
  if (!wall || wall->cold.empty()) return std::nullopt;  // no cold run finished
  StageResult r = m_result;
  order_metrics(r);
  r.error = util::mask_secrets(r.error);  // it may quote a command's stderr or the server
  // Failed, so that neither the gate, the report nor a later baseline takes the samples of the
  // cold runs made for a whole stage's.
  if (r.error.empty()) {
    r.error = fmt::format("not complete: the run stopped {}; the samples are of those runs only",
                          how_far());
  }
  return r;
}

std::string StageMeasurer::how_far() const {
  const Metric* wall = m_result.find("wall_ms");
  return fmt::format("after cold run {} of {}", wall ? wall->cold.size() : 0,
                     m_stage.runs + m_extra);
}

StageResult run_stage(const config::Stage& stage, const RunContext& ctx) {
  StageMeasurer measurer(stage, ctx);
  while (!measurer.done()) measurer.run_once();
  return measurer.finish();
}

}  // namespace coldgate::measure
