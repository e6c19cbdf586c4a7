#pragma once

#include <filesystem>
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

/// The main job: starts the configured server (provider), runs the setup steps, measures every
/// selected stage in config order, checks snapshots, stops the server. A failing stage does not
/// stop the others. Throws Error: usage (unknown --stage, with a hint), gate_failed (a setup
/// step failed), infrastructure (server did not start or came not back), interrupted.
results::Results run_job(const config::Config& config, const JobOptions& options);

/// A whole `coldgate run` after argument parsing: clears the outputs it owns in
/// options.out_dir (report::clear_outputs), runs the job, gates it against `baseline` when given
/// (its stages that --stage/--shard skipped are not "removed"), and writes results.json,
/// report.md, junit.xml and the summary (report::write_outputs, the report printed to `out`).
/// gate::compare's error (require_same_environment) comes back in `gate_error`, to be thrown
/// once the outputs exist. Throws as run_job, and Error(interrupted) after SIGINT/SIGTERM.
struct RunOutcome {
  results::Results results;
  std::optional<Error> gate_error;
};
RunOutcome run(const config::Config& config, const JobOptions& options,
               std::optional<results::Results> baseline, const std::string& baseline_name,
               std::ostream& out);

}  // namespace coldgate::session
