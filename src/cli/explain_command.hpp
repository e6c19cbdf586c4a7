#pragma once

#include <string>

namespace coldgate::cli {

/// Arguments of `coldgate explain`.
struct ExplainArgs {
  std::string stage;
  std::string config = "coldgate.yaml";
  bool json = false;  // print EXPLAIN's JSON instead of the readable plan (--try: the trial's)
  bool try_remedies = false;  // --try: measure the remedies of the stage's diagnoses
  std::string statement;      // --statement QUERYID: that statement's captured plan only
  int top = 5;                // --top N: the costliest N statements' plans; 0 = all
};

/// Starts the configured server, runs setup, runs one SQL stage under EXPLAIN (ANALYZE,
/// BUFFERS, TIMING) with its settings and params, and prints the plan with its JIT block and
/// the stage's diagnoses; returns 0. A command stage (or a SQL stage with --statement): one
/// profiled cold run for the diagnoses, then measure::capture_plans's unmeasured run, and
/// the actual plans of its costliest `top` statements (by their costliest call) or of
/// `statement`, each headed by its queryid, duration and text, in psql's text form (or as
/// JSON [{queryid, query, duration_ms, shape_id, plan}] with --json). Throws Error(usage) for
/// an unknown stage (with a hint), --statement with --try, a queryid the stage did not run
/// (listing those it ran) or database.profile false; Error(gate_failed) when the stage's run
/// fails; Error(infrastructure) with enable_plans's note when the server cannot capture
/// plans; setup and SQL errors as `coldgate run` reports them. With --try (SQL and command
/// stages): one profiled cold run for the diagnoses, then measure::run_trial of their
/// remedies, printed as report::remedies_table (or results::trial_to_json with --json);
/// Error(gate_failed) when that first run fails.
int run_explain(const ExplainArgs& args);

}  // namespace coldgate::cli
