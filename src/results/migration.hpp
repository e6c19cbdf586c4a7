#pragma once
// What a pull request's migration did to base's data (`coldgate ab`, `stack`): the results
// model's `migration` member, written by the migrate module, judged there against
// gate.migration, read by the gate's verdict and the report.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/growth_class.hpp"

namespace coldgate::results {

/// One statement the migration ran, from pg_stat_statements of the upgraded copy.
struct MigrationStatement {
  std::string query;     // normalized text, ~200 characters
  std::int64_t calls = 0;
  double exec_ms = 0;    // total execution time of its calls, milliseconds
  /// Shared blocks its calls hit or read (shared_blks_hit + shared_blks_read): the work, which
  /// unlike the time does not move with the machine's load; nullopt when not recorded.
  std::optional<double> blocks;
  /// WAL its calls wrote (wal_bytes); nullopt when not recorded.
  std::optional<std::uint64_t> wal_bytes;
};

/// A table that existed before the migration and that it touched (its definition, its
/// storage, a lock seen or a probe stalled).
struct MigrationTable {
  std::string name;             // schema.table
  double rows = 0;              // rows before the migration (reltuples, else counted)
  std::uint64_t bytes_before = 0;  // table, indexes and TOAST before (pg_total_relation_size)
  std::uint64_t bytes_after = 0;
  /// The strongest lock the migration's sessions were seen holding on it ("AccessExclusiveLock"),
  /// "" when none was seen; sampled every few ms, so a lock held shorter may be missed.
  std::string lock;
  double lock_held_ms = 0;      // how long that lock was seen held (first to last sample)
  std::string lock_statement;   // what the migration's session ran when the lock was first seen
  /// The longest a probe reading it (`SELECT 1 … LIMIT 1`) / writing it (ROW EXCLUSIVE, rolled
  /// back) waited while the migration ran, milliseconds; the stall the application would see.
  double read_stall_ms = 0;
  double write_stall_ms = 0;
  bool probed = false;          // the probes ran on it (the largest tables first, at most 8)
  bool rewritten = false;       // its relfilenode changed: every row written again
};

/// What a finding is about.
enum class MigrationFindingKind {
  rewrite,               // a pre-existing table rewritten (ALTER COLUMN TYPE, volatile default)
  index_build,           // an index built without CONCURRENTLY on a pre-existing table
  stall,                 // reads or writes of a pre-existing table waited past gate.migration.max_stall_ms
  lock_without_timeout,  // a strong lock requested that waited unbounded behind a weak one
  validation,            // a CHECK or FOREIGN KEY added valid to a pre-existing table: a scan under its lock
};

/// How a finding counts in the gate.
enum class MigrationSeverity { regression, warning };

/// One verdict on the migration, naming what the reviewer needs: the statement, the table, the
/// lock, what was measured, and the fix the field uses.
struct MigrationFinding {
  MigrationFindingKind kind = MigrationFindingKind::rewrite;
  MigrationSeverity severity = MigrationSeverity::regression;
  std::string table;      // schema.table
  std::string statement;  // the migration's statement, as pg_stat_statements has it; "" unknown
  std::string lock;       // the lock mode involved, "" when none
  std::string index;      // index_build: the index's name; validation: the constraint's
  double rows = 0;        // the table's rows before
  double measured_ms = 0; // stall: the longest wait; lock_without_timeout: how long it waited
  std::string message;    // one line: what happened, measured
  std::string fix;        // what to do instead
};

/// One figure of the migration over the data scales (`scales:`): how it grows with the data,
/// and where it lands at production's size. The class and the projection come from a count,
/// never from a fit of the times (a time carries the machine's load): a statement's own shared
/// blocks; the wall time's, all the migration's statements' blocks summed; a stall's, the blocks
/// of the statement that took the table's lock (MigrationTable::lock_statement at the largest
/// scale), or all the statements' when that one is not known (a lock is held at most as long as
/// the migration runs).
struct MigrationGrowth {
  std::string what;    // "statement `CREATE INDEX …`", "writes of public.orders waited", "wall time"
  std::string table;   // schema.table for a stall; "" otherwise
  std::vector<std::optional<double>> values_ms;  // one per Migration::scales, nullopt where not measured
  std::optional<double> exponent;  // blocks ≈ offset + a · scale^exponent (results::fit_growth)
  GrowthClass growth = GrowthClass::none;  // results::growth_class of the blocks' exponent
  /// The time at the largest scale measured × the blocks' fit at Migration::production_scale over
  /// the blocks there, a projection; nullopt without production_scale or a fit.
  std::optional<double> projected_ms;
  /// The count fitted: shared blocks (hit + read) at each scale, nullopt where not recorded.
  std::vector<std::optional<double>> blocks;
  /// Whose blocks those are: "its own", "all statements", "statement `CREATE INDEX …`".
  std::string counted;
};

/// One side of a fix trial (`ab --try`): what the statement, or its fix, did alone on a copy of
/// base's data, measured as the migration is (probes, lock samples, catalog).
struct MigrationTrialSide {
  double wall_ms = 0;          // its wall time, probes beside it
  double read_stall_ms = 0;    // the longest a read probe of the finding's table waited
  double write_stall_ms = 0;   // the longest a write probe of it waited
  std::string lock;            // the strongest lock seen on that table, "" when none was seen
  std::size_t regressions = 0; // regression findings it gave on that table
};

/// A finding's fix measured on a copy of base's data (`coldgate ab --try`, as `explain --try`
/// measures a stage's remedies): the finding's statement alone, then the statements the field
/// uses instead, each on a fresh copy; judged by the regressions on the finding's table and the
/// stall before → after.
struct MigrationTrial {
  MigrationFindingKind kind = MigrationFindingKind::index_build;  // the finding tried
  std::string table;                  // schema.table
  std::string statement;              // the finding's statement as it was run
  std::vector<std::string> fix;       // the statements tried instead, in order; empty: not tried
  std::string not_tried;              // why no fix was tried ("" when one was)
  std::string error;                  // the fix, or the statement alone, failed: its error
  std::optional<MigrationTrialSide> before;  // the statement alone
  std::optional<MigrationTrialSide> after;   // the fix
  bool fixed = false;  // the fix ran, gave no regression on the table, and its stall is under max_stall
};

/// The migration of head run on a copy of base's data: what ran, what it cost, what it did to
/// the tables that were there, and the findings against gate.migration.
struct Migration {
  std::string source;               // "command `python3 manage.py migrate`", "sql_dir migrations/"
  std::vector<std::string> files;   // sql_dir: the files applied (head's that base lacks)
  double wall_ms = 0;               // the migration's wall time, probes beside it
  std::uint64_t wal_bytes = 0;      // WAL it wrote (pg_current_wal_lsn before → after)
  std::uint64_t size_before_bytes = 0;  // the database's size before and after
  std::uint64_t size_after_bytes = 0;
  std::vector<MigrationStatement> statements;  // in order of execution time, longest first
  std::vector<MigrationTable> tables;          // pre-existing tables it touched, largest first
  std::vector<MigrationFinding> findings;      // regressions first
  /// Whether the lock_timeout check ran: the migration again on a second copy while a weak lock
  /// (ROW EXCLUSIVE, an open write transaction) is held on each table it touched.
  bool lock_check = false;
  /// Objects whose definition differs between the upgraded database and head's fresh setup
  /// ("table public.orders: column note"), each one line; empty when they agree or unchecked.
  std::vector<std::string> drift;
  bool drift_checked = false;
  /// With `scales:`: the scales base's data was set up at and the migration run on (the load
  /// scale first), production's scale when set, and how its time and stalls grow.
  std::vector<double> scales;
  std::optional<double> production_scale;
  std::vector<MigrationGrowth> growth;
  /// With `ab --try`: each regression finding's fix measured on copies of base's data.
  std::vector<MigrationTrial> trials;
};

/// "rewrite", "index_build", "stall", "lock_without_timeout", "validation".
const char* to_string(MigrationFindingKind kind);
/// "regression", "warning".
const char* to_string(MigrationSeverity severity);
/// The kind named by `name`; nullopt for another name.
std::optional<MigrationFindingKind> migration_finding_kind(const std::string& name);
/// The severity named by `name`; nullopt for another name.
std::optional<MigrationSeverity> migration_severity(const std::string& name);
/// True when `m` fails the gate: a regression finding, or schema drift.
bool migration_fails(const Migration& m);

}  // namespace coldgate::results
