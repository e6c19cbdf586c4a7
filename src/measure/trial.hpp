#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "measure/runner.hpp"
#include "results/results.hpp"

namespace coldgate::measure {

/// The comment on the database copy an ANALYZE variant measures in, before its owner's
/// db::owner_tag(): a later trial on that server drops the copies whose owner is gone (the
/// server was lost under the trial, or coldgate was SIGKILLed), never those of a running one.
inline constexpr std::string_view k_trial_copy_comment =
    "coldgate remedy trial copy, dropped when its trial ends; owner: ";

/// One variant of a remedy trial besides "as is".
struct TrialVariant {
  std::string name;                             // "jit = off", "prepared statement", …
  std::map<std::string, std::string> settings;  // on top of the stage's own
  bool prepared = false;             // SQL stages: PREPARE once, the second execution counts
  std::vector<std::string> analyze;  // tables ANALYZEd first, in a copy of the database
  /// Statements run in a copy of the database before `analyze` (CREATE INDEX …, CREATE
  /// STATISTICS …); the variant measures in that copy.
  std::vector<std::string> copy_sql;
  /// The diagnosed statements it is aimed at (remedies_for: their queryids; run_trial: the keys
  /// of `statements`), judged by their own figures (report::recommendation); empty for a
  /// stage-wide remedy (settings, an ANALYZE of never-analyzed tables, a prepared statement),
  /// judged by the stage's wall time.
  std::vector<std::string> statements;
  results::RemedyKind kind = results::RemedyKind::settings;  // what it changes
};

/// The remedies a stage's diagnoses suggest, each once, in this order, then the stage's own
/// `remedies:`: for `jit_dominates` `jit = off`, JIT without inlining and optimization
/// (jit_inline_above_cost = jit_optimize_above_cost = -1; PostgreSQL docs, "Planner Cost
/// Constants": -1 disables them) and, for a SQL stage, a prepared statement; for
/// `never_analyzed` and `misestimate` one ANALYZE of `never_analyzed` (the stage's plans' tables
/// that were never analyzed) and of the misestimated tables; for each `missing_index` its index
/// (the diagnosis' "index" fact, created in a copy); for each `misestimate` with a "statistics"
/// fact those extended statistics, then ANALYZE of its table, in a copy. `repeated_query` needs
/// a code change: no variant (its diagnosis gives the saving). An index and statistics are
/// aimed at the statements whose diagnoses suggest them, an ANALYZE at the misestimated
/// statements when no never-analyzed table is in it (TrialVariant::statements).
std::vector<TrialVariant> remedies_for(const config::Stage& stage,
                                       const std::vector<results::Diagnosis>& diagnoses,
                                       const std::vector<std::string>& never_analyzed);

/// The trial's cold runs in the order they are made: variant indexes (0 = as is) round-robin,
/// `runs` rounds: 0, 1, …, n−1, 0, 1, …; so a drifting machine hits every variant alike.
std::vector<std::size_t> trial_order(std::size_t variants, int runs);

/// Measures `stage` as is and under each of `variants`, interleaved (trial_order), at most
/// `stage.try_runs` cold runs each in the stage's cold mode, each run in a fresh process within
/// the stage's timeout, profiled like the stage's runs (no plan runs); a variant with `analyze`
/// or `copy_sql` runs in its own copy of the stages' database (CREATE DATABASE … TEMPLATE,
/// then its statements and ANALYZE there) — and then "as is" too, in a copy made the same way,
/// and a local or container server is restarted once after the copies (unless every run
/// restarts it: `cold: restart`), so that every variant's first run finds nothing of its
/// database in the server's buffers —, each copy dropped afterwards on every exit path
/// with a server to drop it on (else by a later trial there: k_trial_copy_comment, which this
/// trial's copy drops first). Returns "as is" first, then the variants, each with its metrics,
/// whether its snapshot candidate is byte-identical to as is (and the first differing path),
/// and notes (cost estimates before and after its copy's changes; the trial's elapsed time on
/// "as is"), and for each of `statements` (text_id, else queryid, of the statements the
/// diagnoses name) that the variant's profile read, its blocks per call
/// (Remedy::statement_blocks_per_call, keyed by that same text), and per cold run its
/// results::statement_metric()s — as is's for each of `statements`, a variant's for its own
/// TrialVariant::statements. A
/// variant that fails keeps its error. Throws Error as run_stage() does (interrupt; a lost
/// server as Error(infrastructure) at "stage <name>" whose message begins with the variant it
/// interrupted: "remedy `jit = off`: …", or "remedy trial, the stage as is: …").
std::vector<results::Remedy> run_trial(const config::Stage& stage,
                                       const std::vector<TrialVariant>& variants,
                                       const RunContext& ctx,
                                       const std::vector<std::string>& statements = {});

/// A measured stage's trial, as `run --try` and `explain --try` make it: the remedies_for() of
/// its diagnoses (and its plans' never-analyzed tables), said on ctx.progress (as stage
/// `stage_index` of the run again, so the trial's lines name it; 0: the stage is the one
/// started), then run_trial() with the statements its `missing_index` and `misestimate`
/// diagnoses name (by the measured statement table's text_id), errors masked for secrets;
/// empty (nothing run) when there is no remedy. Throws as run_trial().
std::vector<results::Remedy> try_remedies(const config::Stage& stage,
                                          const results::StageResult& measured,
                                          const std::vector<results::Diagnosis>& diagnoses,
                                          const RunContext& ctx, int stage_index = 0);

}  // namespace coldgate::measure
