#include "cli/ab_command.hpp"

#include <csignal>
#include <filesystem>
#include <iostream>
#include <optional>

#include "ab/ab.hpp"
#include "cli/commands.hpp"
#include "cli/history_command.hpp"
#include "config/config.hpp"
#include "gate/gate.hpp"
#include "history/baseline.hpp"
#include "history/history.hpp"
#include "measure/progress.hpp"
#include "report/outputs.hpp"
#include "results/json.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/secrets.hpp"

namespace coldgate::cli {
namespace {

namespace fs = std::filesystem;

// The recorded points of the trend before head's: as many as `run --baseline history` takes.
constexpr int k_trend_points = 5;

// The trend of a finished `ab`, so the pull request's report shows where head sits among the
// base branch's recorded points: the newest records of base's branch reachable from the base
// commit — its own record included, a main point like the others — and head's medians. The
// store is `--store`, else the checkout's history.store. Nothing here fails ab: bad files and a
// store that cannot be read are warnings, no record is no trend. Interrupts propagate.
void attach_trend(const AbArgs& args, results::Results& head, const std::string& base_branch) {
  if (head.git.base.empty()) return;
  try {
    std::optional<config::Config> cfg;
    if (args.store.empty()) cfg = config::load(args.config);
    const history::StoreSpec spec = store_spec(args.store, cfg ? &*cfg : nullptr);
    const fs::path repo = cfg ? cfg->base_dir : fs::absolute(args.config).parent_path();
    history::Loaded loaded = history::read_records(spec, repo, "origin");
    // A project that keeps no history is not told so on every ab; one that names a store is.
    if (!loaded.absent.empty() && !args.store.empty()) loaded.warnings.push_back(loaded.absent);
    for (const auto& w : loaded.warnings) std::cerr << "coldgate: warning: " << w << '\n';
    std::vector<history::Record> used =
        history::select(std::move(loaded.records), repo, head.git.base, base_branch,
                        k_trend_points, history::Start::included);
    if (!used.empty()) head.history = history::trend(used, head, spec.text, k_trend_points);
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    std::cerr << "coldgate: warning: no trend in the report: "
              << util::mask_secrets(e.message()) << '\n';
  }
}

}  // namespace

int run_ab(const AbArgs& args) {
  ab::Options options;
  options.config = args.config;
  options.refs.base = args.base;
  options.refs.head = args.head;
  options.allow_no_baseline = args.allow_no_baseline;
  options.use_cache = !args.no_cache;
  options.try_fixes = args.try_fixes;
  options.out_dir = args.out;
  options.record = args.record;
  options.ci = ci_mode(args.ci);
  options.progress = measure::detect_progress_style(options.ci);
  ::signal(SIGPIPE, SIG_IGN);  // a reader that quits early must not kill us before clean-up

  // What an earlier run left must not pass for this run's output if this one stops early.
  std::filesystem::path out = args.out;
  // Held to the end: another coldgate with this --out (its worktrees, cache/) stops at once.
  util::FileLock out_lock = report::lock_outputs(out, "ab");
  report::clear_outputs(out, true);
  if (!args.store.empty()) {
    if (args.no_trend) throw usage_error("--store", "--no-trend reads no history store");
    store_spec(args.store, nullptr);  // a bad spec fails now, not after the measuring
  }
  ab::Outcome outcome = ab::run_ab(options);
  // After the gate, before the outputs: a finished run against a base gets the trend. A signal
  // while the store is read still has the outputs written, then ends the run.
  std::optional<Error> interrupted;
  if (!args.no_trend && outcome.base && !outcome.stop_error) {
    try {
      attach_trend(args, outcome.head, outcome.base->git.branch);
    } catch (const Error& e) {
      interrupted = e;
    }
  }
  // Both sides' results beside each other, a cached base included.
  if (outcome.base)
    util::write_file_atomic(out / "base" / "results.json", results::to_json(*outcome.base));
  report::write_outputs(outcome.head, outcome.base ? &*outcome.base : nullptr, out, std::cout);
  if (!outcome.head.no_baseline.empty()) {
    std::cerr << "coldgate: no baseline: nothing was compared — measured head only ("
              << outcome.head.no_baseline << ")\n";
  }
  // A run that stopped: its error as always, then the verdict that says it, as the last line.
  if (outcome.stop_error) {
    std::cerr << "coldgate: error: " << util::mask_secrets(outcome.stop_error->message()) << '\n';
  }
  std::cerr << "coldgate: " << gate::verdict(outcome.head) << "; results in "
            << (out / "results.json").string() << '\n';
  if (interrupted) throw *interrupted;
  if (outcome.stop_error) return static_cast<int>(outcome.stop_error->code());
  if (outcome.gate_error) throw *outcome.gate_error;
  return gate::passed(outcome.head) ? 0 : static_cast<int>(ExitCode::gate_failed);
}

}  // namespace coldgate::cli
