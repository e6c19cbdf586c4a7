#include "cli/explain_command.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "config/config.hpp"
#include "measure/diagnose.hpp"
#include "measure/explain.hpp"
#include "measure/profile.hpp"
#include "measure/runner.hpp"
#include "measure/trial.hpp"
#include "report/escape.hpp"
#include "report/remedies.hpp"
#include "results/json.hpp"
#include "util/secrets.hpp"
#include "results/format.hpp"
#include "session/session.hpp"
#include "util/error.hpp"
#include "util/process.hpp"
#include "util/suggest.hpp"

namespace coldgate::cli {
namespace {

std::string ms(double v) { return results::format_value(v, "ms"); }

// Prints `text` whole, or nothing when a SIGINT/SIGTERM came first (while the server stopped,
// while the text was made); one that comes while it is written still ends the command with
// exit 130, as `run` does after its last write.
void print_whole(const std::string& text) {
  util::throw_if_interrupted();
  std::cout << text << std::flush;
  util::throw_if_interrupted();
}

// `explain STAGE --try`: one profiled cold run for the diagnoses, then the trial of their
// remedies, printed as the report's table (or as JSON).
int run_trial(const config::Config& cfg, const config::Stage& stage, const ExplainArgs& args) {
  util::install_interrupt_handlers();
  measure::Progress progress(measure::detect_progress_style(false), std::cerr, 1);
  session::Session session(cfg.database, "coldgate-explain-",
                           [&](const std::string& line) { progress.line(line); });
  session.setup(cfg);
  measure::RunContext ctx;
  ctx.provider = &session.provider();
  ctx.base_dir = cfg.base_dir;
  ctx.work_dir = session.work_dir();
  ctx.out_dir = session.work_dir();  // plan files of the trial's runs: not kept
  ctx.self_exe = measure::self_executable();
  ctx.snapshots.mode = snapshot::Mode::ci;
  ctx.snapshots.out_dir = session.work_dir();
  ctx.check_snapshots = false;
  ctx.progress = &progress;
  std::string note = measure::enable_profile(ctx, cfg.database);
  if (!note.empty()) progress.line("note: no server-side profile: " + note);
  if (!ctx.profile_limit.empty()) progress.line("note: server-side profile: " + ctx.profile_limit);

  progress.stage_start(1, stage.name);
  config::Stage once = stage;
  once.runs = 1;
  once.warm = 0;
  results::Results measured;
  measured.stages.push_back(measure::run_stage(once, ctx));
  const results::StageResult& s = measured.stages.front();
  if (s.failed()) {
    throw Error(ExitCode::gate_failed, "stage " + stage.name, util::mask_secrets(s.error));
  }
  auto diagnoses = measure::diagnose(measured, cfg);
  auto trial = measure::try_remedies(stage, s, diagnoses, ctx);
  session.stop();

  if (args.json) {
    print_whole(results::trial_to_json(stage.name, trial));
    return 0;
  }
  std::string out = fmt::format("stage {}\n\nDiagnoses:\n", stage.name);
  if (diagnoses.empty()) out += "  none\n";
  for (const auto& d : diagnoses) out += fmt::format("  - {}\n", d.message);
  out += "\nRemedies measured:\n";
  report::ReaderScope terminal(report::Reader::terminal);  // the report's table, for stdout
  out += trial.empty() ? "  none: no diagnosis suggests a remedy to measure\n"
                       : "\n" + report::remedies_table(trial, s.kind);
  print_whole(out);
  return 0;
}

}  // namespace

int run_explain(const ExplainArgs& args) {
  config::Config cfg = config::load(args.config);
  config::check_setup(cfg);
  auto it = std::find_if(cfg.stages.begin(), cfg.stages.end(),
                         [&](const config::Stage& s) { return s.name == args.stage; });
  if (it == cfg.stages.end()) {
    std::vector<std::string> names;
    for (const auto& s : cfg.stages) names.push_back(s.name);
    throw usage_error("explain", fmt::format("no stage '{}' in {}{}", args.stage, args.config,
                                             util::did_you_mean(args.stage, names)));
  }
  const config::Stage& stage = *it;
  if (args.try_remedies) {
    config::check_stages(cfg, {stage});  // its program: exit 2 before any server starts
    return run_trial(cfg, stage, args);
  }
  if (stage.is_command()) {
    throw usage_error("explain", fmt::format("stage '{}' runs a command; EXPLAIN needs a SQL "
                                             "stage (sql: or query:); `--try` measures a "
                                             "command stage's remedies",
                                             stage.name));
  }
  util::install_interrupt_handlers();
  session::Session session(cfg.database, "coldgate-explain-",
                           [](const std::string& line) { std::cerr << "coldgate: " << line << '\n'; });
  session.setup(cfg);
  if (stage.cold == config::ColdMode::restart) session.provider().restart();
  measure::StagePlan plan = measure::explain_stage(stage, session.provider().connection_info());
  session.stop();

  if (args.json) {
    print_whole(plan.json + '\n');
    return 0;
  }
  const results::Explain& e = plan.explain;
  std::string settings;
  for (const auto& [k, v] : stage.settings) settings += (settings.empty() ? "" : ", ") + k + "=" + v;
  std::string out = fmt::format("stage {}{}\n", stage.name,
                                settings.empty() ? "" : " (settings: " + settings + ")");
  out += fmt::format("Planning {} · Execution {} · estimated total cost {}\n", ms(e.planning_ms),
                     ms(e.execution_ms), results::format_value(std::round(e.total_cost), "count"));
  if (e.jit) {
    out += fmt::format("JIT: {} functions · generation {} · inlining {} · optimization {} · "
                       "emission {} · total {} (jit_above_cost {})\n",
                       results::format_value(e.jit_functions, "count"), ms(e.jit_generation_ms),
                       ms(e.jit_inlining_ms), ms(e.jit_optimization_ms), ms(e.jit_emission_ms),
                       ms(e.jit_total_ms),
                       results::format_value(std::round(e.jit_above_cost), "count"));
  } else if (auto jit = stage.settings.find("jit");
             jit != stage.settings.end() && (jit->second == "off" || jit->second == "false")) {
    out += "JIT: off (the stage's settings: jit=off)\n";
  } else if (!plan.jit_available) {
    out += "JIT: cannot fire on this server (pg_jit_available() is false: built without LLVM, "
           "its JIT package not installed, or jit = off)\n";
  } else {
    out += fmt::format("JIT: did not fire (cost {} ≤ jit_above_cost {})\n",
                       results::format_value(std::round(e.total_cost), "count"),
                       results::format_value(std::round(e.jit_above_cost), "count"));
  }
  out += '\n';
  out += measure::plan_text(plan.json, fmt::format("stage {}: EXPLAIN", stage.name));

  // The one EXPLAIN ANALYZE run as a stage whose profile has one statement, so the diagnoses
  // are the ones `run` makes from its measured runs.
  results::Results one;
  results::StageResult sr;
  sr.name = stage.name;
  sr.kind = results::StageKind::sql;
  sr.explain = e;
  results::QueryStats q;
  q.queryid = "";  // EXPLAIN gives no query id
  q.query = measure::shortened(measure::stage_query(stage));
  q.calls = 1;
  q.plan_ms = e.planning_ms;
  q.exec_ms = e.execution_ms;
  q.jit_ms = e.jit_total_ms;
  q.jit_functions = e.jit_functions;
  q.total_cost = e.total_cost;
  sr.queries.push_back(q);
  sr.metric("db_plan_ms", "ms").cold.push_back(e.planning_ms);
  sr.metric("db_exec_ms", "ms").cold.push_back(e.execution_ms);
  one.stages.push_back(sr);
  auto diagnoses = measure::diagnose(one, cfg);
  out += "\nDiagnoses:\n";
  if (diagnoses.empty()) out += "  none\n";
  for (const auto& d : diagnoses) out += fmt::format("  - {}\n", d.message);
  print_whole(out);
  return 0;
}

}  // namespace coldgate::cli
