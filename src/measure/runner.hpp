#pragma once

#include <filesystem>
#include <optional>

#include "config/config.hpp"
#include "measure/progress.hpp"
#include "measure/results.hpp"
#include "snapshot/snapshot.hpp"

namespace coldgate::db {
class Provider;
}

namespace coldgate::measure {

/// What every stage of one `coldgate run` shares.
struct RunContext {
  db::Provider* provider = nullptr;               // started, set up
  std::filesystem::path base_dir;                 // the config's folder: cwd of commands
  std::filesystem::path work_dir;                 // private temp folder for requests/candidates
  std::filesystem::path out_dir;                  // --out: explain plans go to <out>/explain/
  std::filesystem::path self_exe;                 // the coldgate binary, re-executed as the probe
  snapshot::Settings snapshots;                   // where candidates go, CI or local
  Progress* progress = nullptr;
};

/// Measures one stage: `runs` cold runs, each a fresh process (`coldgate probe` for SQL, the
/// command itself otherwise), after a server restart when `cold: restart`; `warm` repetitions
/// inside each; for SQL one extra EXPLAIN (ANALYZE, BUFFERS, TIMING, FORMAT JSON) run on a
/// fresh connection; then the snapshot check (nondeterministic when cold runs disagree).
/// A run that fails (exit status, signal, timeout, SQL error, malformed metrics line, missing
/// or invalid snapshot document) ends the stage with StageResult::error. Throws Error only for
/// what stops the whole run: interrupt (Error(interrupted)), a server that does not come back
/// after a restart (infrastructure).
StageResult run_stage(const config::Stage& stage, const RunContext& context);

/// Path of the running executable (/proc/self/exe); throws Error(infrastructure).
std::filesystem::path self_executable();

}  // namespace coldgate::measure
