#pragma once

#include <string>

namespace coldgate::cli {

/// Arguments of `coldgate explain`.
struct ExplainArgs {
  std::string stage;
  std::string config = "coldgate.yaml";
  bool json = false;  // print EXPLAIN's JSON instead of the readable plan (--try: the trial's)
  bool try_remedies = false;  // --try: measure the remedies of the stage's diagnoses
};

/// Starts the configured server, runs setup, runs one SQL stage under EXPLAIN (ANALYZE,
/// BUFFERS, TIMING) with its settings and params, and prints the plan with its JIT block and
/// the stage's diagnoses; returns 0. Throws Error(usage) for an unknown stage (with a hint) or
/// a command stage; setup and SQL errors as `coldgate run` reports them. With --try (SQL and
/// command stages): one profiled cold run for the diagnoses, then measure::run_trial of their
/// remedies, printed as report::remedies_table (or results::trial_to_json with --json);
/// Error(gate_failed) when that first run fails.
int run_explain(const ExplainArgs& args);

}  // namespace coldgate::cli
