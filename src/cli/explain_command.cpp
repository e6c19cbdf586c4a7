#include "cli/explain_command.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "measure/diagnose.hpp"
#include "measure/explain.hpp"
#include "measure/plans.hpp"
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

// The context of explain's own runs: profiled as `run` profiles (the queryids come from
// compute_query_id, which pg_stat_statements turns on), no snapshot check, nothing kept.
measure::RunContext profiled_context(const config::Config& cfg, session::Session& session,
                                     measure::Progress& progress,
                                     std::string* profile_note = nullptr) {
  measure::RunContext ctx;
  ctx.provider = &session.provider();
  ctx.base_dir = cfg.base_dir;
  ctx.work_dir = session.work_dir();
  ctx.out_dir = session.work_dir();  // plan files of these runs: not kept
  ctx.self_exe = measure::self_executable();
  ctx.snapshots.mode = snapshot::Mode::ci;
  ctx.snapshots.out_dir = session.work_dir();
  ctx.check_snapshots = false;
  ctx.progress = &progress;
  std::string note = measure::enable_profile(ctx, cfg.database);
  if (!note.empty()) progress.line("note: no server-side profile: " + note);
  if (!ctx.profile_limit.empty()) progress.line("note: server-side profile: " + ctx.profile_limit);
  if (profile_note) *profile_note = note;
  return ctx;
}

// One profiled cold run of `stage` (no warm repetitions), as `run` measures it; throws
// Error(gate_failed) with the stage's error when it fails.
results::Results run_once(const config::Stage& stage, const measure::RunContext& ctx,
                          measure::Progress& progress) {
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
  return measured;
}

// `explain STAGE --try`: one profiled cold run for the diagnoses, then the trial of their
// remedies, printed as the report's table (or as JSON).
int run_trial(const config::Config& cfg, const config::Stage& stage, const ExplainArgs& args) {
  util::install_interrupt_handlers();
  measure::Progress progress(measure::detect_progress_style(false), std::cerr, 1);
  session::Session session(cfg.database, "coldgate-explain-",
                           [&](const std::string& line) { progress.line(line); });
  session.setup(cfg);
  // With the plans (database.plans), as `run --try` has them: the diagnoses that read them.
  measure::RunContext ctx = profiled_context(cfg, session, progress);
  if (!ctx.plans_note.empty()) progress.line("note: " + ctx.plans_note);

  results::Results measured = run_once(stage, ctx, progress);
  const results::StageResult& s = measured.stages.front();
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

// The queryids of `plans`, for an error line: at most 20, then how many more.
std::string queryid_list(const std::vector<measure::CapturedPlan>& plans) {
  if (plans.empty()) return "it ran none that was planned";
  std::string out = "its statements: ";
  for (std::size_t i = 0; i < plans.size() && i < 20; ++i) out += (i ? ", " : "") + plans[i].queryid;
  if (plans.size() > 20) out += fmt::format(" and {} more", plans.size() - 20);
  return out;
}

// `explain STAGE` for a command stage, or `--statement` for any: one profiled cold run for the
// diagnoses (and the stage's error), one unmeasured run under auto_explain for the plans, then
// the chosen statements' plans as psql prints them (or as JSON).
int run_statement_plans(const config::Config& cfg, const config::Stage& stage,
                        const ExplainArgs& args) {
  if (!cfg.database.profile) {
    throw usage_error("explain", fmt::format("stage '{}': statement plans need the server-side "
                                             "profile, which database.profile: false turns off",
                                             stage.name));
  }
  util::install_interrupt_handlers();
  measure::Progress progress(measure::detect_progress_style(false), std::cerr, 1);
  session::Session session(cfg.database, "coldgate-explain-",
                           [&](const std::string& line) { progress.line(line); });
  session.setup(cfg);
  std::string profile_note;
  measure::RunContext ctx = profiled_context(cfg, session, progress, &profile_note);
  // Asked for by name: the plans even when database.plans: false skips `run`'s plan runs.
  config::Database with_plans = cfg.database;
  with_plans.plans = true;
  std::string plans_note = measure::enable_plans(ctx, with_plans);
  if (!ctx.plans) {
    // Nothing this command is for can be shown: no statement list, or no plans logged.
    throw Error(ExitCode::infrastructure, "stage " + stage.name,
                plans_note.empty() ? "no statement plans without the server-side profile: " +
                                         profile_note
                                   : plans_note);
  }
  config::Stage profiled = stage;
  profiled.profile = true;  // the statements are what was asked for, whatever `profile:` says
  ctx.plans = false;  // no plan run inside run_stage: capture_plans below makes the one
  results::Results measured = run_once(profiled, ctx, progress);
  ctx.plans = true;
  std::vector<measure::CapturedPlan> plans = measure::capture_plans(profiled, ctx);
  session.stop();
  // The statements that cost the stage most first: the server time of all their calls in the
  // measured run (planning and execution), as the report ranks statements — a lost index costs
  // 100 calls of 75 ms, not one call of 120 ms; the costliest call breaks a tie.
  struct Cost {
    double total_ms = 0;
    double calls = 0;
  };
  std::map<std::string, Cost> cost;
  for (const auto& q : measured.stages.front().queries) {
    cost[q.queryid].total_ms += q.plan_ms + q.exec_ms;
    cost[q.queryid].calls += q.calls;
  }
  auto total_of = [&](const measure::CapturedPlan& p) {
    auto c = cost.find(p.queryid);
    return c == cost.end() ? p.plan.duration_ms : std::max(c->second.total_ms, p.plan.duration_ms);
  };
  std::stable_sort(plans.begin(), plans.end(), [&](const auto& a, const auto& b) {
    const double ta = total_of(a), tb = total_of(b);
    return ta != tb ? ta > tb : a.plan.duration_ms > b.plan.duration_ms;
  });
  measure::attach_plans(measured.stages.front().queries, plans);

  std::vector<const measure::CapturedPlan*> shown;
  if (!args.statement.empty()) {
    for (const auto& p : plans) {
      if (p.queryid == args.statement) shown.push_back(&p);
    }
    if (shown.empty()) {
      throw usage_error("explain", fmt::format("stage '{}' ran no statement {}; {}", stage.name,
                                               args.statement, queryid_list(plans)));
    }
  } else {
    for (const auto& p : plans) {
      if (args.top > 0 && shown.size() >= static_cast<std::size_t>(args.top)) break;
      shown.push_back(&p);
    }
  }

  if (args.json) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::array();
    for (const auto* p : shown) {
      auto plan = nlohmann::ordered_json::parse(p->plan.json, nullptr, false);
      if (plan.is_discarded()) {
        throw Error(ExitCode::infrastructure, "stage " + stage.name,
                    "the plan of statement " + p->queryid + " is not JSON");
      }
      auto c = cost.find(p->queryid);
      doc.push_back({{"queryid", p->queryid},
                     {"query", p->query},
                     {"calls", c == cost.end() ? nlohmann::ordered_json() : nlohmann::ordered_json(c->second.calls)},
                     {"total_ms", total_of(*p)},
                     {"duration_ms", p->plan.duration_ms},
                     {"shape_id", p->plan.shape_id},
                     {"plan", std::move(plan)}});
    }
    print_whole(doc.dump(2) + '\n');
    return 0;
  }
  std::string out;
  if (!args.statement.empty()) {
    out = fmt::format("stage {}: statement {}, the plan of its costliest call\n", stage.name,
                      args.statement);
  } else if (plans.empty()) {
    out = fmt::format("stage {}: no statement was planned in its run\n", stage.name);
  } else {
    out = fmt::format("stage {}: {} statement{} planned; the plan of {} costliest call, {}\n",
                      stage.name, plans.size(), plans.size() == 1 ? "" : "s",
                      plans.size() == 1 ? "its" : "each one's",
                      shown.size() == plans.size()
                          ? std::string("the costliest statements in all first")
                          : fmt::format("the costliest {} in all shown", shown.size()));
  }
  for (const auto* p : shown) {
    auto c = cost.find(p->queryid);
    const std::string spent =
        c == cost.end() || c->second.calls <= 1
            ? ms(p->plan.duration_ms)
            : fmt::format("{} in {} calls, the costliest {}", ms(total_of(*p)),
                          results::format_value(c->second.calls, "count"), ms(p->plan.duration_ms));
    out += fmt::format("\nStatement {} · {} · {}\n", p->queryid, spent, measure::shortened(p->query));
    out += measure::plan_text("[{\"Plan\":" + p->plan.json + "}]",
                              fmt::format("stage {}: statement {}", stage.name, p->queryid));
  }
  if (shown.size() < plans.size() && args.statement.empty()) {
    out += fmt::format("\n… {} more: --top 0 shows them all, --statement QUERYID one\n",
                       plans.size() - shown.size());
  }
  auto diagnoses = measure::diagnose(measured, cfg);
  out += "\nDiagnoses:\n";
  if (diagnoses.empty()) out += "  none\n";
  for (const auto& d : diagnoses) out += fmt::format("  - {}\n", d.message);
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
    std::string hint = util::did_you_mean(args.stage, names);
    if (hint.empty()) hint = fmt::format(" (its stages: {})", fmt::join(names, ", "));
    throw usage_error("explain", fmt::format("no stage '{}' in {}{}", args.stage, args.config, hint));
  }
  const config::Stage& stage = *it;
  // A queryid is a bigint (pg_stat_statements.queryid): anything else is refused before setup.
  if (!args.statement.empty()) {
    const std::string& q = args.statement;
    const std::size_t digits = q[0] == '-' ? 1 : 0;
    if (q.size() == digits || q.size() > digits + 19 ||
        q.find_first_not_of("0123456789", digits) != std::string::npos) {
      throw usage_error("explain", fmt::format("--statement {}: a queryid is a whole number, as "
                                               "`coldgate explain {}` or results.json "
                                               "(stages[].queries[].queryid) print it",
                                               q, stage.name));
    }
  }
  if (args.try_remedies) {
    if (!args.statement.empty()) {
      throw usage_error("explain", "--statement picks a plan to print; --try measures the "
                                   "stage's remedies: give one of them");
    }
    config::check_stages(cfg, {stage});  // its program: exit 2 before any server starts
    return run_trial(cfg, stage, args);
  }
  if (stage.is_command() || !args.statement.empty()) {
    config::check_stages(cfg, {stage});
    return run_statement_plans(cfg, stage, args);
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
