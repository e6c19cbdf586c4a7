#include "migrate/migrate.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <set>
#include <thread>

#include "db/connection.hpp"
#include "db/database_template.hpp"
#include "db/provider.hpp"
#include "migrate/catalog.hpp"
#include "migrate/findings.hpp"
#include "migrate/watch.hpp"
#include "results/format.hpp"
#include "setup/setup.hpp"
#include "util/error.hpp"
#include "util/process.hpp"
#include "util/statement_text.hpp"
#include "util/text.hpp"

namespace coldgate::migrate {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
using results::MigrationFinding;
using results::MigrationFindingKind;
using results::MigrationSeverity;

// The probes run on the largest pre-existing tables, at most this many (two sessions each):
// a stall is long where the table is large, and the server's connections are not ours to spend.
constexpr std::size_t k_probed_tables = 8;

// A copy of base's database for one run of the migration, under an owned name (the owner in the
// name and the comment), so a killed run's copy is dropped by the next session on that server
// (db::tidy_left_databases); dropped here on every exit path.
class Copy : public db::DatabaseCopy {
 public:
  Copy(const db::ConnectionInfo& base, const std::string& what)
      : db::DatabaseCopy(base, db::owned_database_name(base.dbname + "_migrate"),
                         db::owned_comment("migration copy of " + base.dbname), what) {}
};

// A relation's name without quotes or schema, lower case: how a statement's text names it.
std::string bare_name(const std::string& qualified) {
  std::string name = qualified.substr(qualified.rfind('.') == std::string::npos
                                          ? 0
                                          : qualified.rfind('.') + 1);
  name.erase(std::remove(name.begin(), name.end(), '"'), name.end());
  return util::lower(name);
}

// The statement's text lower case without quotes, for finding the relations it names.
std::string plain(const std::string& query) {
  std::string out = util::lower(query);
  out.erase(std::remove(out.begin(), out.end(), '"'), out.end());
  return out;
}

bool names(const std::string& plain_text, const std::string& bare) {
  for (std::size_t at = plain_text.find(bare); at != std::string::npos;
       at = plain_text.find(bare, at + 1)) {
    auto word = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
    bool before = at == 0 || !word(plain_text[at - 1]);
    bool after = at + bare.size() >= plain_text.size() || !word(plain_text[at + bare.size()]);
    if (before && after) return true;
  }
  return false;
}

std::string first_word(const std::string& plain_text) {
  std::size_t start = plain_text.find_first_not_of(" \t\r\n(");
  if (start == std::string::npos) return "";
  std::size_t end = plain_text.find_first_of(" \t\r\n;(", start);
  return plain_text.substr(start, end == std::string::npos ? end : end - start);
}

bool bookkeeping(const std::string& bare) {
  for (const auto& t : bookkeeping_tables()) {
    if (util::lower(t) == bare) return true;
  }
  return false;
}

// The migration's own statements, from pg_stat_statements of the copy: not coldgate's probes
// and samples, not transaction control or settings.
std::vector<results::MigrationStatement> statements_of(db::Connection& conn) {
  std::vector<results::MigrationStatement> out;
  pqxx::result rows;
  try {
    rows = conn.exec(
        "SELECT query, calls::bigint, total_exec_time::float8, (shared_blks_hit + "
        "shared_blks_read)::float8, wal_bytes::bigint FROM pg_stat_statements WHERE dbid = "
        "(SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY "
        "total_exec_time DESC",
        "migration: statements");
  } catch (const Error&) {
    util::throw_if_interrupted();
    return out;  // not profiled (no pg_stat_statements): the catalog still tells what changed
  }
  for (const auto& row : rows) {
    std::string query = row[0].as<std::string>();
    std::string p = plain(query);
    if (p.find("coldgate-") != std::string::npos || p.find("pg_stat_statements") != std::string::npos)
      continue;
    static const std::set<std::string> k_control = {"begin", "commit", "rollback", "set", "show",
                                                    "reset", "savepoint", "release", "start",
                                                    "end", "discard", "deallocate"};
    if (k_control.count(first_word(p))) continue;
    if (p.starts_with("lock table") && p.find("in row exclusive mode") != std::string::npos &&
        p.find(';') == std::string::npos)
      continue;  // the probes' own, where the role could not leave them out
    results::MigrationStatement st{util::elide_statement_lists(query), row[1].as<std::int64_t>(),
                                   row[2].as<double>(), row[3].as<double>(), std::nullopt};
    if (const auto wal = row[4].as<std::int64_t>(); wal >= 0) st.wal_bytes = static_cast<std::uint64_t>(wal);
    out.push_back(std::move(st));
  }
  return out;
}

// The statement that did `verb` to `bare` (the longest among those naming it), or "".
std::string statement_for(const std::vector<results::MigrationStatement>& statements,
                          const std::string& bare, const std::vector<std::string>& verbs) {
  for (const auto& s : statements) {  // longest first
    std::string p = plain(s.query);
    if (!names(p, bare)) continue;
    for (const auto& v : verbs) {
      if (p.starts_with(v)) return s.query;
    }
  }
  return "";
}

// The statement that names `what` (a constraint, a column) beside `phrase` ("set not null"), or,
// when none does, statement_for's ALTER of the table: a migration may ALTER one table many times.
std::string statement_naming(const std::vector<results::MigrationStatement>& statements,
                             const std::string& what, const std::string& phrase,
                             const std::string& table) {
  for (const auto& s : statements) {
    const std::string p = plain(s.query);
    if (p.starts_with("alter") && names(p, what) && p.find(phrase) != std::string::npos) return s.query;
  }
  return statement_for(statements, table, {"alter"});
}

// What the field does instead of a rewrite, read from the statement that made it.
std::string rewrite_fix(const std::string& statement) {
  std::string p = plain(statement);
  if (p.find(" type ") != std::string::npos) {
    return "add a new column of the new type, backfill it in batches, switch the application to "
           "it, then drop the old one; a type change rewrites the table under ACCESS EXCLUSIVE";
  }
  if (p.find("add column") != std::string::npos || p.find("default") != std::string::npos) {
    return "add the column nullable with no volatile default, backfill it in batches, then SET "
           "DEFAULT and add NOT NULL as a CHECK (col IS NOT NULL) NOT VALID followed by VALIDATE "
           "CONSTRAINT";
  }
  if (p.starts_with("vacuum") || p.starts_with("cluster")) {
    return "rebuild the table online (pg_repack) instead of VACUUM FULL or CLUSTER";
  }
  return "split the change so no statement rewrites the table: a new column or table filled "
         "in batches";
}

std::string rows_text(double rows) { return results::format_value(rows, "count"); }
std::string ms_text(double ms) { return results::format_value(ms, "ms"); }

// Runs the migration against `database` (the plan's command, or each file with psql -f).
void run(const Plan& plan, const db::ConnectionInfo& database, const db::Provider& provider) {
  setup::Context context{database, plan.base_dir, provider.client_bindir(),
                         provider.name() != "external", 1};
  setup::run_migration(plan.migrate, context, plan.files, plan.env);
}

std::string source_of(const Plan& plan) {
  if (!plan.migrate.sql_dir.empty()) return "sql_dir " + plan.migrate.sql_dir_given;
  std::string text = plan.migrate.shell;
  for (const auto& a : plan.migrate.argv) text += (text.empty() ? "" : " ") + a;
  return "command `" + text + "`";
}

// What the migration left that differs from head's fresh setup, one line per object.
std::vector<std::string> drift(db::Connection& upgraded, const db::ConnectionInfo& fresh) {
  db::Connection other(db::with_client_defaults(fresh));
  return schema_drift(schema_objects(upgraded), schema_objects(other));
}

}  // namespace

const std::vector<std::string>& bookkeeping_tables() {
  static const std::vector<std::string> k_tables = {
      "SequelizeMeta",        "django_migrations",     "schema_migrations",
      "ar_internal_metadata", "alembic_version",       "knex_migrations",
      "knex_migrations_lock", "flyway_schema_history", "__EFMigrationsHistory",
      "migrations",           "_prisma_migrations"};
  return k_tables;
}

std::vector<fs::path> new_sql_files(const config::Migrate& head, const config::Migrate& base) {
  std::vector<fs::path> files = setup::migration_files(head);
  if (base.sql_dir.empty()) return files;
  std::error_code ec;
  if (!fs::is_directory(base.sql_dir, ec)) return files;
  std::set<fs::path> had;
  for (const auto& f : setup::migration_files(base)) had.insert(f.filename());
  std::erase_if(files, [&](const fs::path& f) { return had.count(f.filename()) > 0; });
  return files;
}

std::optional<results::Migration> measure(const db::Provider& provider,
                                          const db::ConnectionInfo& base,
                                          const std::optional<db::ConnectionInfo>& fresh,
                                          const Plan& plan,
                                          const std::function<void(const std::string&)>& progress) {
  if (!plan.migrate.sql_dir.empty() && plan.files.empty()) return std::nullopt;
  const std::string where = "migrate (" + plan.who + ")";
  Copy copy(base, where);
  db::Connection conn(db::with_client_defaults(copy.info()));
  // Base's database at a further scale was set up but not profiled: the copy gets the view
  // the statements are read from (a throwaway database; nothing to do where it is there).
  try {
    conn.exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", where);
  } catch (const Error&) {
    util::throw_if_interrupted();
  }
  const Catalog before = read_catalog(conn, true);

  // The probes: the largest tables that were there, but the migration tools' bookkeeping.
  std::vector<ProbeTable> probed;
  for (const auto& [oid, r] : before.relations) {
    if (r.kind == 'i' || bookkeeping(bare_name(r.name))) continue;
    probed.push_back({oid, r.name});
  }
  std::sort(probed.begin(), probed.end(), [&](const ProbeTable& a, const ProbeTable& b) {
    return before.relations.at(a.oid).bytes > before.relations.at(b.oid).bytes;
  });
  if (probed.size() > k_probed_tables) probed.resize(k_probed_tables);
  // COLDGATE_MIGRATION_PROBES=0 runs the migration without probes: for bench/migration_probes.sh,
  // which measures what they cost the migration (docs/BENCHMARKS.md, "Migration probes").
  if (const char* probes = std::getenv("COLDGATE_MIGRATION_PROBES"); probes && std::string(probes) == "0")
    probed.clear();
  std::vector<std::unique_ptr<Probe>> readers, writers;
  for (const auto& t : probed) {
    readers.push_back(std::make_unique<Probe>(
        copy.info(), "SELECT 1 AS \"coldgate-probe\" FROM " + t.name + " LIMIT 1"));
    writers.push_back(std::make_unique<Probe>(
        copy.info(), "BEGIN; LOCK TABLE " + t.name + " IN ROW EXCLUSIVE MODE; ROLLBACK"));
  }
  LockSampler sampler(copy.info());
  std::vector<int> ours{sampler.pid()};
  {
    auto own = conn.exec("SELECT pg_backend_pid()", where);
    ours.push_back(own[0][0].as<int>());
  }
  for (const auto& p : readers) ours.push_back(p->pid());
  for (const auto& p : writers) ours.push_back(p->pid());
  try {
    conn.exec("SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = "
              "current_database()), 0) AS \"coldgate-reset\"",
              where);
  } catch (const Error&) {
    util::throw_if_interrupted();
  }

  progress(fmt::format("migrate: {} on a copy of base's data ({})", source_of(plan),
                       results::format_value(static_cast<double>(before.database_bytes), "bytes")));
  for (auto& p : readers) p->start();
  for (auto& p : writers) p->start();
  std::atomic<bool> done{false};
  std::exception_ptr failure;
  const auto t0 = Clock::now();
  std::thread runner([&] {
    try {
      run(plan, copy.info(), provider);
    } catch (...) {
      failure = std::current_exception();
    }
    done = true;
  });
  std::string timed_out;
  {
    struct Join {
      std::thread& t;
      ~Join() {
        if (t.joinable()) t.join();
      }
    } join{runner};
    while (!done) {
      try {
        sampler.sample(ms_since(t0), ours);
      } catch (const Error&) {
        if (util::interrupted()) break;  // the runner ends too; its error says so
        throw;
      }
      if (timed_out.empty() && Clock::now() - t0 > plan.timeout) {
        timed_out = sampler.waiting(ours);
        if (timed_out.empty()) timed_out = "no lock wait seen";
        sampler.terminate(ours);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  const double wall_ms = ms_since(t0);
  std::map<std::int64_t, double> read_stall, write_stall;
  for (std::size_t i = 0; i < probed.size(); ++i) {
    read_stall[probed[i].oid] = readers[i]->stop();
    write_stall[probed[i].oid] = writers[i]->stop();
  }
  readers.clear();
  writers.clear();
  util::throw_if_interrupted();
  if (!timed_out.empty()) {
    throw Error(ExitCode::gate_failed, where,
                fmt::format("the migration ran past the timeout ({}) and was ended: {}",
                            ms_text(static_cast<double>(plan.timeout.count())), timed_out));
  }
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted) throw;
      throw Error(e.code() == ExitCode::infrastructure ? ExitCode::infrastructure
                                                       : ExitCode::gate_failed,
                  where, fmt::format("the migration failed on base's data: {}{}", 
                                     e.where().empty() ? "" : e.where() + ": ", e.what()));
    }
  }

  results::Migration m;
  m.source = source_of(plan);
  for (const auto& f : plan.files) m.files.push_back(f.filename().string());
  m.wall_ms = wall_ms;
  m.statements = statements_of(conn);
  const Catalog after = read_catalog(conn, false);
  {
    auto wal = conn.exec_params("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint",
                                {before.wal_lsn}, where);
    m.wal_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, wal[0][0].as<std::int64_t>()));
  }
  m.size_before_bytes = before.database_bytes;
  m.size_after_bytes = after.database_bytes;

  // What happened to each table that was there.
  const auto& locks = sampler.locks();
  bool changed = false;
  for (const auto& [oid, r] : before.relations) {
    if (r.kind == 'i') continue;
    auto now = after.relations.find(oid);
    results::MigrationTable t;
    t.name = r.name;
    t.rows = r.rows;
    t.bytes_before = r.bytes;
    t.bytes_after = now == after.relations.end() ? 0 : now->second.bytes;
    t.rewritten = now != after.relations.end() && now->second.relfilenode != r.relfilenode;
    const bool altered = now == after.relations.end() || now->second.definition != r.definition;
    if (auto l = locks.find(oid); l != locks.end()) {
      t.lock = l->second.mode;
      t.lock_held_ms = l->second.last_ms - l->second.first_ms;
      t.lock_statement = util::elide_statement_lists(l->second.statement);
    }
    if (auto s = read_stall.find(oid); s != read_stall.end()) {
      t.probed = true;
      t.read_stall_ms = s->second;
      t.write_stall_ms = write_stall[oid];
    }
    const bool bookkept = bookkeeping(bare_name(r.name));
    if (!bookkept && (altered || t.rewritten)) changed = true;
    const bool locked = lock_rank(t.lock) >= lock_rank("RowExclusiveLock");
    if (bookkept || !(altered || t.rewritten || locked)) continue;
    m.tables.push_back(std::move(t));
  }
  for (const auto& [oid, r] : after.relations) {
    if (!before.relations.count(oid)) changed = true;  // a table or index made
  }
  for (const auto& s : m.statements) {
    std::string p = plain(s.query);
    std::string w = first_word(p);
    if (w != "insert" && w != "update" && w != "delete" && w != "copy" && w != "merge" &&
        w != "truncate" && w != "select") {
      continue;
    }
    if (w == "select") continue;  // reads change nothing
    bool only_bookkeeping = false;
    for (const auto& t : bookkeeping_tables()) {
      if (names(p, util::lower(t))) only_bookkeeping = true;
    }
    if (!only_bookkeeping) changed = true;
  }
  if (!changed) return std::nullopt;
  std::sort(m.tables.begin(), m.tables.end(),
            [](const auto& a, const auto& b) { return a.bytes_before > b.bytes_before; });

  const auto& gate = plan.gate;
  const double rows_floor = static_cast<double>(gate.max_rewrite_rows);
  auto table_of = [&](const std::string& name) -> const results::MigrationTable* {
    for (const auto& t : m.tables) {
      if (t.name == name) return &t;
    }
    return nullptr;
  };
  auto stall_text = [&](const results::MigrationTable* t) {
    if (!t || !t->probed) return std::string("no probe ran on it (only the 8 largest tables are probed)");
    return fmt::format("reads waited up to {}, writes up to {}", ms_text(t->read_stall_ms),
                       ms_text(t->write_stall_ms));
  };
  for (const auto& t : m.tables) {
    if (!t.rewritten || t.rows < rows_floor) continue;
    MigrationFinding f;
    f.kind = MigrationFindingKind::rewrite;
    f.table = t.name;
    f.rows = t.rows;
    f.lock = t.lock;
    f.statement = statement_for(m.statements, bare_name(t.name),
                                {"alter", "vacuum", "cluster", "truncate", "refresh"});
    f.measured_ms = std::max(t.read_stall_ms, t.write_stall_ms);
    f.message = fmt::format("{} ({} rows, {}) rewritten{}{}: {}", t.name, rows_text(t.rows),
                            results::format_value(static_cast<double>(t.bytes_before), "bytes"),
                            f.statement.empty() ? "" : " by `" + f.statement + "`",
                            t.lock.empty() ? "" : " under " + t.lock, stall_text(&t));
    f.fix = rewrite_fix(f.statement);
    m.findings.push_back(std::move(f));
  }
  for (const auto& [oid, r] : after.relations) {
    if (r.kind != 'i' || before.relations.count(oid) || !before.relations.count(r.table)) continue;
    const Relation& table = before.relations.at(r.table);
    if (table.rows < rows_floor) continue;
    const std::string bare = bare_name(r.name);
    std::string statement;
    bool concurrently = false;
    for (const auto& s : m.statements) {
      std::string p = plain(s.query);
      if (p.starts_with("create") && p.find("index") != std::string::npos && names(p, bare)) {
        statement = s.query;
        concurrently = p.find("concurrently") != std::string::npos;
        break;
      }
    }
    if (concurrently) continue;
    const results::MigrationTable* t = table_of(table.name);
    // An index made again by the table's rewrite (ALTER COLUMN TYPE rebuilds its indexes) is
    // the rewrite's cost, said by its finding; CONCURRENTLY is no fix for it.
    if (statement.empty() && t && t->rewritten) continue;
    if (statement.empty()) {
      // An index a constraint made (UNIQUE, PRIMARY KEY): built under the table's lock too.
      statement = statement_for(m.statements, bare_name(table.name), {"alter"});
    }
    MigrationFinding f;
    f.kind = MigrationFindingKind::index_build;
    f.table = table.name;
    f.index = r.name;
    f.rows = table.rows;
    f.lock = t ? t->lock : "";
    f.statement = statement;
    f.measured_ms = t ? t->write_stall_ms : 0;
    f.message = fmt::format("index {} built on {} ({} rows) without CONCURRENTLY{}: {}", r.name,
                            table.name, rows_text(table.rows),
                            statement.empty() ? "" : " by `" + statement + "`", stall_text(t));
    f.fix = "build it with CREATE INDEX CONCURRENTLY outside a transaction (Django: "
            "AddIndexConcurrently in a migration with atomic = False; Rails: algorithm: "
            ":concurrently with disable_ddl_transaction!; Alembic: "
            "op.create_index(…, postgresql_concurrently=True) in an autocommit block; Knex: "
            "exports.config = { transaction: false } and knex.raw('CREATE INDEX CONCURRENTLY …'))";
    m.findings.push_back(std::move(f));
  }
  // A CHECK or FOREIGN KEY added valid scans the whole table under the lock ALTER TABLE holds
  // (ACCESS EXCLUSIVE for a CHECK, SHARE ROW EXCLUSIVE on both tables for a FOREIGN KEY); added
  // NOT VALID and validated later, the scan holds SHARE UPDATE EXCLUSIVE, which reads and
  // writes pass.
  auto is_rewritten = [&](std::int64_t oid) {
    auto b = before.relations.find(oid), a = after.relations.find(oid);
    return b != before.relations.end() && a != after.relations.end() &&
           a->second.relfilenode != b->second.relfilenode;
  };
  for (const auto& c : after.constraints) {
    if (!c.validated || !before.relations.count(c.table)) continue;
    // The same constraint as before (VALIDATE CONSTRAINT of a NOT VALID one is the safe path).
    // One dropped and added again under its name (Django does so whenever db_index changes on a
    // foreign key) is new: its rows were checked again. A rewrite (ALTER COLUMN TYPE) remakes
    // the constraints on the column too, and is its own finding.
    const bool rewritten = is_rewritten(c.table);
    const bool had = std::any_of(before.constraints.begin(), before.constraints.end(),
                                 [&](const Constraint& b) {
                                   return b.oid == c.oid || (rewritten && b.table == c.table && b.name == c.name);
                                 });
    if (had) continue;
    const Relation& table = before.relations.at(c.table);
    if (table.rows < rows_floor) continue;
    // Added NOT VALID and validated in the same migration: the safe path, ended valid.
    const std::string bare_constraint = bare_name(c.name);
    if (std::any_of(m.statements.begin(), m.statements.end(), [&](const auto& s) {
          const std::string p = plain(s.query);
          return names(p, bare_constraint) && p.find("not valid") != std::string::npos;
        })) {
      continue;
    }
    const results::MigrationTable* t = table_of(table.name);
    MigrationFinding f;
    f.kind = MigrationFindingKind::validation;
    f.table = table.name;
    f.index = c.name;
    f.rows = table.rows;
    f.lock = t ? t->lock : "";
    f.statement = statement_naming(m.statements, bare_constraint, c.type == 'f' ? "foreign key" : "check",
                                   bare_name(table.name));
    f.measured_ms = t ? std::max(t->read_stall_ms, t->write_stall_ms) : 0;
    f.message = fmt::format("{} {} `{}` added to {} ({} rows) valid at once: every row checked "
                            "under the table's lock{}: {}",
                            c.type == 'f' ? "foreign key" : "check constraint", c.name,
                            c.definition, table.name, rows_text(table.rows),
                            f.statement.empty() ? "" : " by `" + f.statement + "`", stall_text(t));
    f.fix = "add it NOT VALID (new rows are checked at once), then ALTER TABLE … VALIDATE "
            "CONSTRAINT in a later transaction, which scans under SHARE UPDATE EXCLUSIVE while "
            "reads and writes go on (Django 4.0+: AddConstraintNotValid and ValidateConstraint of "
            "django.contrib.postgres.operations; older Django: RunSQL of the ADD CONSTRAINT … NOT "
            "VALID, then RunSQL of the VALIDATE CONSTRAINT in a later migration)";
    m.findings.push_back(std::move(f));
  }
  // SET NOT NULL on a column that was there scans every row under ACCESS EXCLUSIVE, unless a
  // valid CHECK (col IS NOT NULL) already proves it (PostgreSQL 12 and newer then skip the scan).
  for (const auto& [oid, column] : after.not_null) {
    if (!before.relations.count(oid)) continue;
    const Relation& table = before.relations.at(oid);
    if (table.rows < rows_floor) continue;
    const auto same = [&](const std::pair<std::int64_t, std::string>& x) {
      return x.first == oid && x.second == column;
    };
    if (std::any_of(before.not_null.begin(), before.not_null.end(), same)) continue;
    // A column the migration added (NOT NULL with a default) is no scan of existing rows.
    if (table.definition.rfind(column + " ", 0) != 0 &&
        table.definition.find(", " + column + " ") == std::string::npos) {
      continue;
    }
    // The safe path: a CHECK (col IS NOT NULL) added NOT VALID and validated first, in this
    // migration (maybe dropped again after SET NOT NULL) or before it.
    const std::string proof = "CHECK ((" + column + " IS NOT NULL))";
    const auto proves = [&](const Constraint& c) {
      return c.table == oid && c.validated && c.definition == proof;
    };
    const std::string bare_column = bare_name(column);
    if (std::any_of(before.constraints.begin(), before.constraints.end(), proves) ||
        std::any_of(m.statements.begin(), m.statements.end(), [&](const auto& st) {
          const std::string p = plain(st.query);
          return names(p, bare_column) && p.find("is not null") != std::string::npos &&
                 p.find("not valid") != std::string::npos;
        })) {
      continue;
    }
    const results::MigrationTable* t = table_of(table.name);
    MigrationFinding f;
    f.kind = MigrationFindingKind::validation;
    f.table = table.name;
    f.index = column;
    f.rows = table.rows;
    f.lock = t ? t->lock : "";
    f.statement = statement_naming(m.statements, bare_column, "set not null", bare_name(table.name));
    f.measured_ms = t ? std::max(t->read_stall_ms, t->write_stall_ms) : 0;
    f.message = fmt::format("column {} of {} ({} rows) made NOT NULL: every row checked under "
                            "ACCESS EXCLUSIVE{}: {}",
                            column, table.name, rows_text(table.rows),
                            f.statement.empty() ? "" : " by `" + f.statement + "`", stall_text(t));
    f.fix = fmt::format("add CHECK ({} IS NOT NULL) NOT VALID, VALIDATE CONSTRAINT it in a later "
                        "transaction, then SET NOT NULL (PostgreSQL 12+ skips the scan) and drop "
                        "the CHECK",
                        column);
    m.findings.push_back(std::move(f));
  }
  const double max_stall_ms = static_cast<double>(gate.max_stall.count());
  for (const auto& t : m.tables) {
    const double stall = std::max(t.read_stall_ms, t.write_stall_ms);
    if (!t.probed || stall <= max_stall_ms) continue;
    // A rewrite or index build of the table is its stall's cause, and its finding says how long
    // reads and writes waited: one regression, not two.
    if (std::any_of(m.findings.begin(), m.findings.end(),
                    [&](const MigrationFinding& x) { return explains_stall(x, t.name); })) {
      continue;
    }
    MigrationFinding f;
    f.kind = MigrationFindingKind::stall;
    f.table = t.name;
    f.rows = t.rows;
    f.lock = t.lock;
    f.statement = t.lock_statement;
    f.measured_ms = stall;
    std::string who;
    if (t.read_stall_ms > max_stall_ms) who = "reads waited up to " + ms_text(t.read_stall_ms);
    if (t.write_stall_ms > max_stall_ms) {
      who += (who.empty() ? "" : " and ") + std::string("writes waited up to ") +
             ms_text(t.write_stall_ms);
    }
    f.message = fmt::format("{}: {} on the migration{} (gate.migration.max_stall {})", t.name, who,
                            t.lock.empty() ? "" : ", which held " + t.lock, ms_text(max_stall_ms));
    f.fix = k_stall_fix;
    m.findings.push_back(std::move(f));
  }

  // Would a strong lock wait unbounded behind an open transaction, queuing everyone behind it?
  std::vector<ProbeTable> touched;
  for (const auto& t : m.tables) {
    for (const auto& [oid, r] : before.relations) {
      if (r.name == t.name && after.relations.count(oid)) touched.push_back({oid, r.name});
    }
  }
  if (plan.lock_check && gate.lock_timeout != config::GrowthGate::off && !touched.empty()) {
    progress(fmt::format("migrate: lock_timeout check on a second copy ({} table{} held)",
                         touched.size(), touched.size() == 1 ? "" : "s"));
    Copy second(base, where);
    m.lock_check = true;
    LockCheck check = check_lock_timeout(
        second.info(), touched, [&] { run(plan, second.info(), provider); },
        gate.max_lock_wait, plan.timeout);
    if (check.unbounded) {
      MigrationFinding f;
      f.kind = MigrationFindingKind::lock_without_timeout;
      f.severity = gate.lock_timeout == config::GrowthGate::fail ? MigrationSeverity::regression
                                                                 : MigrationSeverity::warning;
      f.lock = check.mode;
      f.statement = util::elide_statement_lists(check.statement);
      for (const auto& t : touched) {
        if (t.oid == check.table) f.table = t.name;
      }
      if (const auto* t = table_of(f.table)) f.rows = t->rows;
      f.measured_ms = check.waited_ms;
      f.message = fmt::format(
          "`{}` asked for {} on {} and waited {} behind an open transaction without giving up: "
          "in production every {} of the table queues behind it until that transaction ends",
          f.statement, f.lock, f.table, ms_text(check.waited_ms),
          f.lock == "AccessExclusiveLock" ? "read and write" : "write");
      f.fix = "SET lock_timeout (e.g. '5s') before the statement and retry the migration when it "
              "gives up (Django: migrations.RunSQL(\"SET LOCAL lock_timeout = '5s'\") first in "
              "the migration; Rails: strong_migrations; Alembic: op.execute(\"SET LOCAL "
              "lock_timeout = '5s'\"); Knex: knex.raw(\"SET LOCAL lock_timeout = '5s'\"))";
      m.findings.push_back(std::move(f));
    }
  }

  if (fresh) {
    m.drift_checked = true;
    m.drift = drift(conn, *fresh);
  }
  regressions_first(m.findings);
  return m;
}

}  // namespace coldgate::migrate
