#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "measure/progress.hpp"
#include "results/results.hpp"
#include "util/error.hpp"

namespace coldgate::session {

/// How `coldgate run` runs the stages of a config.
struct JobOptions {
  std::vector<std::string> stages;  // --stage: only these (empty: all)
  std::filesystem::path out_dir = "coldgate-out";
  bool ci = false;                // never write under snapshots/; candidates to out_dir
  bool update_snapshots = false;  // write candidates over committed snapshots (local)
  std::string accept_command = "coldgate accept";  // as messages should spell it (with -c FILE)
  measure::ProgressStyle progress = measure::ProgressStyle::plain;
  int shard_index = 1;  // --shard I/N: run the I-th stage and every N-th after
  int shard_count = 1;  //   it (1-based, config order, after --stage)
  bool try_remedies = false;  // --try: measure each diagnosed stage's remedies afterwards
};

/// `--shard I/N` as {I, N}; throws Error(usage) unless I and N are integers with 1 ≤ I ≤ N.
std::pair<int, int> parse_shard(std::string_view text);

/// What `coldgate run` gates against.
struct Baseline {
  std::optional<results::Results> results;  // nullopt: nothing to compare
  std::string name;  // as given: the --baseline file, or "history:5"
  /// Why nothing is compared although a baseline was asked for (results.no_baseline: "no
  /// recorded results in git:coldgate-history"); "" otherwise.
  std::string no_baseline;
  /// What the report should say about the baseline beside the gate (a history file skipped,
  /// by name): appended to results.warnings; the caller has printed them.
  std::vector<std::string> warnings;
  /// Called with head's results once they are gated, before the outputs are written: a
  /// history baseline marks its gate block and adds the trend (module order keeps the history
  /// below the caller). Not called for a run that stopped.
  std::function<void(results::Results&)> annotate;
};

/// What results.json's `stopped` says of the error that ended a run in `phase` (see
/// results::Stopped): its exit code, the setup step's label when it is a setup::StepFailure, its
/// place and text with secrets masked, and the stages `not_run`.
results::Stopped stopped_by(const Error& error, results::StopPhase phase,
                            std::vector<std::string> not_run);

/// A whole `coldgate run` after the config loaded (the caller has cleared the outputs it owns
/// in options.out_dir, report::clear_outputs): selects the stages (--stage, --shard), checks
/// what setup names (config::check_setup), starts the configured server (provider), runs the
/// setup steps, measures every selected stage in config order (a failing stage does not stop
/// the others), checks snapshots, stops the server, gates the results against `baseline` when
/// given (its stages that --stage/--shard skipped are not "removed"), and writes results.json,
/// report.md, junit.xml and the summary (report::write_outputs, the report printed to `out`).
/// An Error that ends the run early — usage (unknown --stage), config (check_setup), a setup
/// step (setup::StepFailure: gate_failed, usage or infrastructure by its cause), the server
/// (infrastructure), SIGINT/SIGTERM (interrupted) — does not escape: the outputs are written
/// with results.stopped saying why and the stages measured so far, and the error comes back
/// in `stop_error` for the caller to print and exit with. gate::compare's error
/// (require_same_environment) comes back in `gate_error`, to be thrown once the outputs exist.
/// Throws only when the outputs cannot be written (Error(infrastructure)), or Error(interrupted)
/// for a SIGINT/SIGTERM while they were written.
struct RunOutcome {
  results::Results results;
  std::optional<Error> gate_error;  // gate::compare's, to throw once the outputs exist
  std::optional<Error> stop_error;  // what ended the run early (results.stopped says it)
};
RunOutcome run(const config::Config& config, const JobOptions& options, Baseline baseline,
               std::ostream& out);

}  // namespace coldgate::session
