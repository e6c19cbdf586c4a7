#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "db/connection_info.hpp"
#include "util/error.hpp"

namespace coldgate::db {
class Connection;
class OwnConnections;
}

namespace coldgate::setup {

/// Where setup steps run: the database, the config's folder, the client programs to use.
struct Context {
  db::ConnectionInfo database;
  std::filesystem::path base_dir;  // cwd of commands; paths shown relative to it
  std::optional<std::filesystem::path> client_bindir;  // psql/pg_restore; nullopt: PATH
  /// The server is this run's own (local, container): an empty stages' database that a psql
  /// script creates itself may be dropped first. Never on an external server.
  bool own_server = false;
  /// The data scale being loaded (config `scales:`): `$COLDGATE_SCALE` of every step's program
  /// and psql's variable `:scale`, so that a generator makes data of that size.
  double scale = 1;
};

/// A scale as the steps see it: "1", "4", "0.5" (`{:g}`).
std::string scale_text(double scale);

/// One finished step, for the report.
struct StepResult {
  std::string kind;    // "sql", "psql", "restore", "command", "analyze"
  std::string label;   // "sql schema.sql", "command ./tools/init-data", "analyze"
  double wall_ms = 0;  // wall-clock time of the step, milliseconds
};

/// The error of a setup step that failed, with the step's label ("sql schema.sql"), as
/// run_setup() throws it: the reports name the step, its place and its error.
class StepFailure : public Error {
 public:
  StepFailure(const Error& cause, std::string label)
      : Error(cause.code(), cause.where(), cause.what()), m_label(std::move(label)) {}
  /// The failed step's label, as StepResult::label.
  const std::string& label() const noexcept { return m_label; }

 private:
  std::string m_label;
};

/// The database of a `CREATE DATABASE <name> …` or `DROP DATABASE [IF EXISTS] <name>` line
/// (`verb` "create" or "drop"): a "quoted" name as written ("" a quote), an unquoted one folded
/// to lower case as PostgreSQL folds it; nullopt when the line is no such statement.
std::optional<std::string> database_statement(std::string_view line, std::string_view verb);

/// Runs `steps` in order and times each, calling `on_step` after each one (progress lines);
/// throws StepFailure(interrupted) after SIGINT/SIGTERM. Throws StepFailure on the first
/// failure, with where = the error's place in the file (sql: `file:line:col` of the server's
/// position; psql: `file:line` psql names), else the step's config location, and what = the
/// cause: SQLSTATE + server message (sql), stderr tail (psql, restore, command). The exit code
/// is the cause's (docs/architecture.md "Exit codes"): gate_failed for what is under test (a
/// statement, a script, a dump, a command that exits non-zero or is killed), usage for a
/// setup command program or a psql `database` that is not there, infrastructure for a missing
/// psql/pg_restore or a lost server.
std::vector<StepResult> run_setup(const std::vector<config::SetupStep>& steps,
                                  const Context& context,
                                  const std::function<void(const StepResult&)>& on_step = {});

/// The `*.sql` files of `migrate.sql_dir` in name order (byte order, as Flyway and dbmate apply
/// them); {} for a migrate command. Throws Error(infrastructure) when the folder cannot be read.
std::vector<std::filesystem::path> migration_files(const config::Migrate& migrate);

/// Applies `migrate` to `context.database`: its command (with `env` on top of the PG*
/// variables), or each of `files` with `psql -f` (no wrapping transaction). Throws the plain
/// Error of run_step() for the command or file that failed.
void run_migration(const config::Migrate& migrate, const Context& context,
                   const std::vector<std::filesystem::path>& files, const config::EnvMap& env);

/// Runs one step; throws the plain Error of run_setup() (without the label).
StepResult run_step(const config::SetupStep& step, const Context& context);

/// After setup: when the stages' database (`context.database`) has no tables but other
/// databases of the server have some, a one-line warning that names them and what to set
/// (database.name, and psql's `database:` for the script of `steps` that creates it); "" when
/// the stages' database has tables or no other one has. Databases it cannot connect to are
/// left out; never throws but Error(infrastructure) when the stages' database cannot be read.
/// With `own`, its connections to the stages' database and the maintenance one
/// (db::maintenance_database) are used and left open for the checks after it.
std::string stage_database_warning(const std::vector<config::SetupStep>& steps,
                                   const Context& context, db::OwnConnections* own = nullptr);

}  // namespace coldgate::setup
