#pragma once
// The migration gate's measurement: head's migration run on a copy of base's data, the way
// production meets it — its statements and time, the locks it held on the tables that were
// there, the stall probes reading and writing them saw, rewrites and index builds, whether a
// strong lock waits unbounded behind an open transaction, WAL and size — and the findings
// against gate.migration (docs/architecture.md, "The migration gate").

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "db/connection_info.hpp"
#include "results/migration.hpp"

namespace coldgate::db {
class Provider;
}

namespace coldgate::migrate {

/// Every migration tool's bookkeeping table (Sequelize, Django, Rails, Alembic, Knex, Flyway,
/// EF Core, TypeORM, Prisma): a row added there is no change of the application's data.
const std::vector<std::string>& bookkeeping_tables();

/// What to run and how to judge it.
struct Plan {
  config::Migrate migrate;                  // head's `migrate:`
  std::vector<std::filesystem::path> files; // sql_dir: the files to apply (head's that base lacks)
  config::EnvMap env;                       // head's top-level `env:`
  std::filesystem::path base_dir;           // head's config folder: the command's cwd
  config::MigrationGate gate;               // head's gate.migration
  std::chrono::milliseconds timeout{10 * 60 * 1000};  // ended past this (defaults.timeout)
  std::string who;                          // "head 1a2b3c4d5e6f", for messages
  /// Run the lock_timeout check (a second copy) when gate.migration.lock_timeout is not off:
  /// once per pull request, at the load scale; its answer does not depend on the data's size.
  bool lock_check = true;
};

/// The files of head's sql_dir that base's does not have, by name, in name order; all of
/// head's when base has no `migrate: {sql_dir}`. Throws Error(infrastructure) when a folder
/// cannot be read.
std::vector<std::filesystem::path> new_sql_files(const config::Migrate& head,
                                                 const config::Migrate& base);

/// Runs `plan` on a copy of `base` (a database on `provider`'s server, as base's setup left
/// it), measures it, and when `fresh` is given compares the upgraded schema with it (schema
/// drift). The copies are dropped on every exit path. Returns nullopt when the migration changed
/// nothing (no schema change, no rows written outside bookkeeping_tables()). Throws
/// Error(gate_failed) at `migrate (<who>)` when the migration fails (its command's or file's
/// error, stderr's last lines), Error(interrupted), Error(infrastructure) when the server is lost
/// or the role may not CREATE DATABASE.
std::optional<results::Migration> measure(const db::Provider& provider,
                                          const db::ConnectionInfo& base,
                                          const std::optional<db::ConnectionInfo>& fresh,
                                          const Plan& plan,
                                          const std::function<void(const std::string&)>& progress);

/// Adds the data scales to `m`, the migration measured at the load scale (`scales[0]`):
/// `at[i]` is the same migration measured on base's data at `scales[i]` (at[0] is `m` itself;
/// nullptr where it changed nothing there). Classes how the wall time, the longest statements'
/// times and each probed table's read and write stall grow by fitting a count, never the noisy
/// times (results::fit_growth over shared blocks: a statement's own, all the statements' for the
/// wall time, the lock-taking statement's for a stall — results::MigrationGrowth), and projects
/// each time to `production_scale` as the largest scale's time × the blocks' projected growth;
/// then judges at the largest scale: its rewrites and index builds replace the load scale's,
/// and a stall over gate.max_stall at the largest scale — or, with `production_scale`,
/// projected there — is a regression that says which. Never throws.
void add_scales(results::Migration& m, const std::vector<double>& scales,
                const std::vector<const results::Migration*>& at,
                std::optional<double> production_scale, const config::MigrationGate& gate);

/// The statements the field runs instead of a finding's statement, or why there are none.
struct FixStatements {
  std::vector<std::string> statements;  // in order; empty when not_tried says why
  std::string not_tried;
};

/// The fix of `finding` made from `statement`, the text that caused it: an index build gets
/// CONCURRENTLY; a CHECK or FOREIGN KEY added valid becomes ADD … NOT VALID and VALIDATE
/// CONSTRAINT; SET NOT NULL gets a CHECK (col IS NOT NULL) NOT VALID, validated, before it and
/// dropped after (PostgreSQL 12+ then skips the scan). A rewrite, a stall and a missing
/// lock_timeout, a statement of several sub-commands or one pg_stat_statements kept with $n
/// constants get no statements and the reason. Never throws.
FixStatements fix_statements(const results::MigrationFinding& finding, const std::string& statement);

/// `ab --try`: for each regression finding of `measured`, the finding's statement alone and its
/// fix_statements() each run on a fresh copy of `base` as measure() runs a migration (probes,
/// lock samples; no lock check, no drift), the finding's table's stall and lock before → after,
/// and `fixed` when the fix leaves no regression there and its stall is within
/// plan.gate.max_stall. A side that fails keeps its error in the trial. Throws
/// Error(interrupted) and Error(infrastructure) as measure() does.
std::vector<results::MigrationTrial> try_fixes(const db::Provider& provider,
                                               const db::ConnectionInfo& base,
                                               const results::Migration& measured, const Plan& plan,
                                               const std::function<void(const std::string&)>& progress);

}  // namespace coldgate::migrate
