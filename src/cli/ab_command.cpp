#include "cli/ab_command.hpp"

#include <csignal>
#include <filesystem>
#include <iostream>

#include "ab/ab.hpp"
#include "cli/commands.hpp"
#include "gate/gate.hpp"
#include "measure/progress.hpp"
#include "report/outputs.hpp"
#include "results/json.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/secrets.hpp"

namespace coldgate::cli {

int run_ab(const AbArgs& args) {
  ab::Options options;
  options.config = args.config;
  options.refs.base = args.base;
  options.refs.head = args.head;
  options.allow_no_baseline = args.allow_no_baseline;
  options.use_cache = !args.no_cache;
  options.out_dir = args.out;
  options.record = args.record;
  options.ci = ci_mode(args.ci);
  options.progress = measure::detect_progress_style(options.ci);
  ::signal(SIGPIPE, SIG_IGN);  // a reader that quits early must not kill us before clean-up

  // What an earlier run left must not pass for this run's output if this one stops early.
  std::filesystem::path out = args.out;
  report::clear_outputs(out, true);
  ab::Outcome outcome = ab::run_ab(options);
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
  if (outcome.stop_error) return static_cast<int>(outcome.stop_error->code());
  if (outcome.gate_error) throw *outcome.gate_error;
  return gate::passed(outcome.head) ? 0 : static_cast<int>(ExitCode::gate_failed);
}

}  // namespace coldgate::cli
