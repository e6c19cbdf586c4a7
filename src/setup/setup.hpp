#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "db/connection_info.hpp"

namespace coldgate::db {
class Connection;
}

namespace coldgate::setup {

/// Where setup steps run: the database, the config's folder, the client programs to use.
struct Context {
  db::ConnectionInfo database;
  std::filesystem::path base_dir;  // cwd of commands; paths shown relative to it
  std::optional<std::filesystem::path> client_bindir;  // psql/pg_restore; nullopt: PATH
};

/// One finished step, for the report.
struct StepResult {
  std::string kind;    // "sql", "psql", "restore", "command", "analyze"
  std::string label;   // "sql schema.sql", "command ./tools/init-data", "analyze"
  double wall_ms = 0;  // wall-clock time of the step, milliseconds
};

/// Runs `steps` in order and times each, calling `on_step` after each one (progress lines);
/// throws Error(interrupted) between steps after SIGINT/SIGTERM. Throws Error on the first failure,
/// with where = the file position (sql), or the step's config location, and what = the cause:
/// SQLSTATE + server message (sql), stderr tail (psql, restore, command). Exit code
/// gate_failed for a failing step, infrastructure for a missing program or lost server.
std::vector<StepResult> run_setup(const std::vector<config::SetupStep>& steps,
                                  const Context& context,
                                  const std::function<void(const StepResult&)>& on_step = {});

/// Runs one step; see run_setup().
StepResult run_step(const config::SetupStep& step, const Context& context);

}  // namespace coldgate::setup
