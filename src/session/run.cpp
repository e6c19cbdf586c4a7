#include "session/run.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <iostream>
#include <new>
#include <set>

#include "db/database_template.hpp"
#include "gate/gate.hpp"
#include "measure/diagnose.hpp"
#include "measure/environment.hpp"
#include "measure/runner.hpp"
#include "measure/trial.hpp"
#include "report/outputs.hpp"
#include "session/scales.hpp"
#include "session/session.hpp"
#include "setup/setup.hpp"
#include "snapshot/snapshot.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/secrets.hpp"
#include "util/suggest.hpp"

namespace coldgate::session {
namespace fs = std::filesystem;
using namespace coldgate::measure;
using namespace coldgate::results;
namespace {

std::string shown(const fs::path& p) {
  return util::display_path(p);
}

std::vector<config::Stage> shard(std::vector<config::Stage> stages, int index, int count) {
  if (count < 1 || index < 1 || index > count) {
    throw usage_error("--shard", fmt::format("shard {}/{} does not exist", index, count));
  }
  std::vector<config::Stage> out;
  for (std::size_t i = static_cast<std::size_t>(index - 1); i < stages.size();
       i += static_cast<std::size_t>(count)) {
    out.push_back(std::move(stages[i]));
  }
  return out;
}

std::vector<config::Stage> selected(const config::Config& cfg,
                                    const std::vector<std::string>& names) {
  if (names.empty()) return cfg.stages;
  std::vector<std::string> known;
  for (const auto& s : cfg.stages) known.push_back(s.name);
  std::vector<config::Stage> out;
  std::set<std::string> wanted;
  for (const auto& n : names) {
    if (std::find(known.begin(), known.end(), n) == known.end()) {
      std::string hint = util::did_you_mean(n, known);
      if (hint.empty()) {
        std::string all;
        for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
        hint = fmt::format(" (its stages: {})", all);
      }
      throw usage_error("--stage", fmt::format("no stage '{}' in {}{}", n, shown(cfg.file), hint));
    }
    wanted.insert(n);
  }
  for (const auto& s : cfg.stages) {
    if (wanted.count(s.name)) out.push_back(s);
  }
  return out;
}

}  // namespace

std::pair<int, int> parse_shard(std::string_view text) {
  auto number = [](std::string_view t, int& value) {
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    return !t.empty() && ec == std::errc() && end == t.data() + t.size();
  };
  auto slash = text.find('/');
  int index = 0;
  int count = 0;
  if (slash == std::string_view::npos || !number(text.substr(0, slash), index) ||
      !number(text.substr(slash + 1), count)) {
    throw usage_error(
        "--shard", fmt::format("expected I/N such as 2/4 (the I-th of N shards), got '{}'", text));
  }
  if (count < 1 || index < 1 || index > count) {
    throw usage_error("--shard", fmt::format("'{}': I must be between 1 and N (N ≥ 1), e.g. 1/{}",
                                             text, std::max(count, 1)));
  }
  return {index, count};
}

namespace {

// Where a run is, for the report of a run that stops: its phase (results::Stopped::phase) and
// the selected stages not measured yet.
struct Position {
  results::StopPhase phase = results::StopPhase::usage;
  std::vector<std::string> not_run;
  std::string stage;  // "stage first, after cold run 2 of 5": the stage a stop left partial
};

// Starts the server, runs setup, measures `stages` into `results` (which keeps what was done
// when this throws), stops the server; `at` follows along.
void run_job(const config::Config& cfg, const JobOptions& options,
             const std::vector<config::Stage>& stages, Results& results, Position& at) {
  Progress progress(options.progress, std::cerr, static_cast<int>(stages.size()));
  at.phase = results::StopPhase::server;
  Session session(cfg.database, "coldgate-run-",
                  [&](const std::string& line) { progress.line(line); });
  results.environment = session.environment();
  at.phase = results::StopPhase::setup;
  // From setup's database check to the first stage's profile, coldgate's own checks share a
  // connection per database (db::OwnConnections): each backend start costs ~14 ms.
  auto own = std::make_shared<db::OwnConnections>();
  session.setup(cfg, "", {}, &results, std::nullopt, own.get());

  at.phase = results::StopPhase::stages;
  RunContext ctx;
  ctx.provider = &session.provider();
  ctx.base_dir = cfg.base_dir;
  ctx.work_dir = session.work_dir();
  ctx.out_dir = options.out_dir;
  ctx.self_exe = self_executable();
  ctx.snapshots.mode = options.ci ? snapshot::Mode::ci : snapshot::Mode::local;
  ctx.snapshots.out_dir = options.out_dir;
  ctx.snapshots.update = options.update_snapshots && !options.ci;
  ctx.snapshots.accept_command = options.accept_command;
  ctx.snapshots.label_root = config::label_root(cfg);
  ctx.progress = &progress;
  ctx.scale = cfg.load_scale();
  ctx.own = std::move(own);
  results.profile_note = enable_profile(ctx, cfg.database);
  results.plans_note = ctx.plans_note;
  if (!results.plans_note.empty()) progress.line("note: " + results.plans_note);
  if (!results.profile_note.empty()) progress.line("note: no server-side profile: " + results.profile_note);
  results.profile_limit = ctx.profile_limit;
  if (!results.profile_limit.empty()) progress.line("note: server-side profile: " + results.profile_limit);
  if (std::string note = enable_isolation(ctx, stages); !note.empty()) {
    progress.line("note: " + note);
    results.warnings.push_back(note);
  }
  at.phase = results::StopPhase::config;
  measure::check_stage_settings(ctx, stages);
  at.phase = results::StopPhase::stages;

  int index = 0;
  for (const auto& stage : stages) {
    progress.stage_start(++index, stage.name);
    measure::StageMeasurer measurer(stage, ctx);
    ctx.own.reset();  // the first stage took its connection; no later step keeps any
    try {
      while (!measurer.done()) measurer.run_once();
      results.stages.push_back(measurer.finish());
    } catch (const Error&) {
      // A lost server or an interrupt stops the run: the cold runs made are kept, not "not run".
      if (auto kept = measurer.kept()) {
        results.stages.push_back(std::move(*kept));
        at.not_run.erase(at.not_run.begin());
        at.stage = "stage " + stage.name + ", " + measurer.how_far();
      }
      throw;
    }
    at.not_run.erase(at.not_run.begin());
    // A stage error may quote a command's stderr or a server message: no password in results.
    results.stages.back().error = util::mask_secrets(results.stages.back().error);
    progress.stage_end(results.stages.back());
  }
  ctx.own.reset();  // no stage took them: closed before what follows uses other databases
  if (!cfg.extra_scales(stages).empty()) {
    at.phase = results::StopPhase::scales;
    std::vector<StageResult*> measured;
    for (auto& s : results.stages) measured.push_back(&s);
    measure_at_scales(session, cfg, stages, ctx, measured, &results);
  }
  results.diagnoses = measure::diagnose(results, cfg);
  if (options.try_remedies) {
    at.phase = results::StopPhase::remedies;
    for (std::size_t i = 0; i < stages.size(); ++i) {
      if (results.stages[i].failed()) continue;
      auto trial = measure::try_remedies(stages[i], results.stages[i], results.diagnoses, ctx,
                                         static_cast<int>(i) + 1);
      results.remedies.insert(results.remedies.end(), trial.begin(), trial.end());
    }
  }
  at.phase = results::StopPhase::teardown;  // an interrupt now is not "during scales"
  // The template is dropped while the server is there to drop it; a throwaway cluster is
  // deleted with it, so there a DROP (a checkpoint) would only cost time.
  if (ctx.isolation && session.provider().name() == "local")
    ctx.isolation->leave_to_server_removal();
  ctx.isolation.reset();
  session.stop();

  if (options.stages.empty()) {
    std::vector<snapshot::Claim> claims;
    std::set<fs::path> dirs;
    for (const auto& s : cfg.stages) {
      if (!s.snapshot) continue;
      claims.push_back({s.name, s.snapshot->path, s.snapshot->canon});
      dirs.insert(s.snapshot->path.parent_path());
    }
    std::set<std::string> obsolete;  // nested snapshot folders would list a file twice
    for (const auto& dir : dirs) {
      for (const auto& p : snapshot::find_obsolete(dir, claims)) obsolete.insert(shown(p));
    }
    results.obsolete_snapshots.assign(obsolete.begin(), obsolete.end());
  }
}

}  // namespace

results::Stopped stopped_by(const Error& error, results::StopPhase phase,
                            std::vector<std::string> not_run) {
  results::Stopped x;
  x.exit_code = static_cast<int>(error.code());
  x.phase = phase;
  if (const auto* failure = dynamic_cast<const setup::StepFailure*>(&error)) x.step = failure->label();
  x.where = util::mask_secrets(error.where());
  x.error = util::mask_secrets(error.what());
  x.not_run = std::move(not_run);
  return x;
}

RunOutcome run(const config::Config& cfg, const JobOptions& options, Baseline baseline,
               std::ostream& out) {
  std::optional<Results>& base = baseline.results;
  util::install_interrupt_handlers();
  RunOutcome outcome;
  Results& results = outcome.results;
  results.tool_version = COLDGATE_VERSION;
  results.started_at = utc_now();
  results.config = shown(cfg.file);
  results.title = cfg.report.title;
  results.git = git_info(cfg.base_dir, options.out_dir);
  results.ci_run_url = ci_run_url();
  results.no_baseline = baseline.no_baseline;
  results.warnings = baseline.warnings;
  Position at;
  try {
    std::vector<config::Stage> stages =
        shard(selected(cfg, options.stages), options.shard_index, options.shard_count);
    for (const auto& s : stages) at.not_run.push_back(s.name);
    at.phase = results::StopPhase::config;
    config::check_setup(cfg);  // a missing file or program: exit 2 before any server starts
    config::check_stages(cfg, stages);
    run_job(cfg, options, stages, results, at);
    util::throw_if_interrupted();  // a SIGINT/SIGTERM while the server stopped
  } catch (const Error& e) {
    results.stopped = stopped_by(e, at.phase, at.not_run);
    // An interrupt says no place of its own: the stage it left partial is where it stopped.
    if (results.stopped->where.empty()) results.stopped->where = at.stage;
    outcome.stop_error = e;
    base.reset();  // nothing to compare: the report is about why the run stopped
  } catch (const std::bad_alloc&) {
    // The machine's limit, not the change's: said as the run's stop, with the reports written
    // (what ran out is freed by the unwinding that brought us here).
    Error e(ExitCode::infrastructure, std::string(results::to_string(at.phase)),
            "out of memory; the run stops (a memory limit of the machine or the job's cgroup)");
    results.stopped = stopped_by(e, at.phase, at.not_run);
    outcome.stop_error = e;
    base.reset();
  }
  results.finished_at = utc_now();
  if (base) {
    // Stages of the config this run skipped (--stage, --shard) were not measured, not removed.
    std::erase_if(base->stages, [&](const StageResult& b) {
      bool in_config = std::any_of(cfg.stages.begin(), cfg.stages.end(),
                                   [&](const config::Stage& s) { return s.name == b.name; });
      return in_config && std::none_of(results.stages.begin(), results.stages.end(),
                                       [&](const StageResult& h) { return h.name == b.name; });
    });
    if (results.git.base.empty()) results.git.base = base->git.commit;
    try {
      results.gate = gate::compare(results, *base, baseline.name, gate::Thresholds::from(cfg));
      gate::mark_diagnoses(results, *base, gate::Thresholds::from(cfg));
    } catch (const Error& e) {
      outcome.gate_error = e;
    }
  }
  if (!results.stopped && baseline.annotate) baseline.annotate(results);
  report::write_outputs(results, base ? &*base : nullptr, options.out_dir, out);
  // While writing: each file is whole, but the run was stopped.
  if (!outcome.stop_error) util::throw_if_interrupted();
  return outcome;
}

}  // namespace coldgate::session
