#include "db/database_template.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "db/own_connections.hpp"
#include "db/pqxx_compat.hpp"
#include "util/error.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

namespace coldgate::db {
namespace {

constexpr std::string_view k_owner_mark = "\nowner: ";

Error failed(const std::string& name, const std::string& what) {
  return Error(ExitCode::infrastructure, fmt::format("database {}: isolation", name), what);
}

// Inside a catch: the server's error or coldgate's own in flight as failed(name, doing + its
// text), an interrupt and any other exception as they are.
[[noreturn]] void rethrow_as_failed(const std::string& name, const std::string& doing) {
  try {
    throw;
  } catch (const pqxx::failure& e) {
    std::string what = e.what();
    while (!what.empty() && what.back() == '\n') what.pop_back();
    throw failed(name, doing + what);
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    throw failed(name, doing + e.message());
  }
}

// Transaction ids coldgate took itself (own_transactions), per server, in this process: every
// side of an `ab` or a `stack` has its template on the one server.
std::mutex g_own_mutex;
std::map<std::string, long long> g_own_xids;

std::string server_key(const ConnectionInfo& info) {
  return fmt::format("{}:{}", info.host, info.port);
}

long long own_xids(const ConnectionInfo& info) {
  std::lock_guard lock(g_own_mutex);
  auto it = g_own_xids.find(server_key(info));
  return it == g_own_xids.end() ? 0 : it->second;
}

// Transaction ids the runs of stages took (DatabaseTemplate::run_on), per server and database:
// those of one side's runs are that side's writes, never another side's.
std::map<std::string, std::map<std::string, long long>> g_run_xids;

// The ids taken by runs on the server of `info` on databases other than `database`.
long long other_runs_xids(const ConnectionInfo& info, const std::string& database) {
  std::lock_guard lock(g_own_mutex);
  auto it = g_run_xids.find(server_key(info));
  if (it == g_run_xids.end()) return 0;
  long long sum = 0;
  for (const auto& [name, taken] : it->second) {
    if (name != database) sum += taken;
  }
  return sum;
}

// The server's first unassigned transaction id; reading it takes none (13+: pg_current_snapshot).
long long next_xid(Connection& conn) {
  return std::stoll(
      conn.exec("SELECT pg_snapshot_xmax(pg_current_snapshot())::text", "isolation")[0][0].c_str());
}

}  // namespace

std::string owned_database_name(const std::string& base) {
  const std::string suffix = owner_name_suffix();
  const std::size_t room = 63 - suffix.size();
  std::size_t cut = 0;
  while (cut < base.size()) {
    std::size_t len = std::max<std::size_t>(1, util::utf8_sequence_length(base, cut));
    if (cut + len > room) break;
    cut += len;
  }
  return base.substr(0, cut) + suffix;
}

std::string owned_comment(const std::string& what) {
  return std::string(k_owned_comment) + what + std::string(k_owner_mark) + owner_tag();
}

std::vector<std::string> tidy_left_databases(Connection& admin) {
  // Whose owner is gone: a template's or owned_comment()'s tag, else an owned name's.
  auto rows = admin.exec(
      "SELECT datname, coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database "
      "ORDER BY datname",
      "databases left by killed coldgate runs");
  std::vector<std::string> done;
  std::vector<std::string> doomed;
  for (const auto& row : rows) {
    const std::string datname = row[0].c_str();
    const std::string comment = row[1].c_str();
    const auto mark = comment.rfind(k_owner_mark);
    const bool tagged = mark != std::string::npos && (comment.starts_with(k_template_comment) ||
                                                      comment.starts_with(k_owned_comment));
    if (tagged ? !owner_tag_gone(comment.substr(mark + k_owner_mark.size()))
               : !owner_name_gone(datname)) {
      continue;
    }
    if (tagged && comment.starts_with(k_template_comment)) {
      // A template whose database is missing is that database as setup left it.
      const std::string name = comment.substr(k_template_comment.size(),
                                              mark - k_template_comment.size());
      try {
        auto there = admin.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", {name},
                                       "databases left by killed coldgate runs");
        if (there.empty()) {
          const std::string n = admin.raw().quote_name(name);
          admin.exec("ALTER DATABASE " + admin.raw().quote_name(datname) + " RENAME TO " + n);
          admin.exec("ALTER DATABASE " + n + " WITH ALLOW_CONNECTIONS true");
          admin.exec("COMMENT ON DATABASE " + n + " IS NULL");
          done.push_back(fmt::format("database {} renamed back from {}, connections allowed again",
                                     name, datname));
          continue;
        }
      } catch (const Error& e) {
        if (e.code() == ExitCode::interrupted) throw;
        continue;
      }
    }
    doomed.push_back(datname);
  }
  std::vector<std::string> dropped;
  for (const auto& datname : doomed) {
    try {
      admin.exec("DROP DATABASE IF EXISTS " + admin.raw().quote_name(datname) + " WITH (FORCE)",
                 "databases left by killed coldgate runs");
      dropped.push_back(datname);
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted) throw;
    }
  }
  if (!dropped.empty()) {
    std::string list;
    for (const auto& d : dropped) list += (list.empty() ? "" : ", ") + d;
    done.push_back(fmt::format("dropped database{} {}", dropped.size() == 1 ? "" : "s", list));
  }
  return done;
}

std::vector<std::string> tidy_left_databases(const ConnectionInfo& server) {
  for (const char* maintenance : {"postgres", "template1"}) {
    ConnectionInfo info = server;
    info.dbname = maintenance;
    std::unique_ptr<Connection> admin;
    try {
      admin = std::make_unique<Connection>(with_client_defaults(info));
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted) throw;
      continue;
    }
    try {
      return tidy_left_databases(*admin);
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted) throw;
      return {};  // a server that refuses the catalog query: nothing of ours to find there
    }
  }
  return {};
}

void own_transactions(Connection& conn, const std::function<void()>& fn) {
  if (conn.raw().server_version() < 130000) {  // no template there (why_not), nothing to count
    fn();
    return;
  }
  const long long before = next_xid(conn);
  // Counted also when fn fails half way: what it did take is coldgate's, not a run's.
  struct Count {
    Connection& conn;
    long long before;
    ~Count() {
      try {
        const long long taken = next_xid(conn) - before;
        std::lock_guard lock(g_own_mutex);
        g_own_xids[server_key(conn.info())] += taken;
      } catch (...) {
        // The server is gone: the next state() fails anyway.
      }
    }
  } count{conn, before};
  fn();
}

std::string DatabaseTemplate::why_not(const ConnectionInfo& database) {
  Connection conn(with_client_defaults(database));
  return why_not(conn);
}

bool DatabaseTemplate::has_sequences(Connection& conn) {
  return conn.exec("SELECT count(*) FROM pg_class WHERE relkind = 'S'", "isolation")[0][0]
             .as<long>() > 0;
}

std::string DatabaseTemplate::why_not(Connection& conn) {
  const ConnectionInfo& database = conn.info();
  const int version = conn.raw().server_version();
  if (version < 130000) {
    return fmt::format(
        "the server is PostgreSQL {}, which has no DROP DATABASE … WITH (FORCE) (13 and newer "
        "do): the stages share one database in their order (isolation: none)",
        version / 10000);
  }
  auto row = conn.exec(
      "SELECT current_user, r.rolsuper, r.rolcreatedb, pg_has_role(d.datdba, 'USAGE'), "
      "pg_get_userbyid(d.datdba) FROM pg_roles r, pg_database d "
      "WHERE r.rolname = current_user AND d.datname = current_database()",
      "isolation")[0];
  const std::string role = row[0].c_str();
  const bool super = row[1].as<bool>();
  if (!super && !row[2].as<bool>()) {
    return fmt::format(
        "role {0} may not create databases, so each cold run cannot get a fresh copy of {1}: "
        "the stages share one database in their order (isolation: none); to isolate them, "
        "ALTER ROLE {0} CREATEDB",
        role, database.dbname);
  }
  if (!super && !row[3].as<bool>()) {
    return fmt::format(
        "role {0} does not own database {1} (its owner is {2}), so it cannot drop and copy it "
        "again for each cold run: the stages share one database in their order (isolation: "
        "none); to isolate them, ALTER DATABASE {1} OWNER TO {0}",
        role, database.dbname, row[4].c_str());
  }
  return "";
}

DatabaseTemplate::DatabaseTemplate(const ConnectionInfo& database,
                                   std::optional<bool> sequences,
                                   std::unique_ptr<Connection> admin_given)
    : m_admin(maintenance_database(database)),
      m_name(database.dbname),
      m_template(owned_database_name(database.dbname)) {
  try {
    // Kept as state()'s connection once the template is made: a backend less per run.
    std::unique_ptr<Connection> kept;
    if (admin_given && admin_given->info().dbname == m_admin.dbname) kept = std::move(admin_given);
    admin_given.reset();
    if (!kept) kept = std::make_unique<Connection>(with_client_defaults(m_admin));
    Connection& admin = *kept;
    tidy_left_databases(admin);
    if (admin.raw().server_version() >= 150000) {
      // FILE_COPY, what 13 and 14 always do: a checkpoint, then the files copied. WAL_LOG,
      // 15's default, writes every page of the copy to the WAL and through shared buffers, so
      // a run could meet a checkpoint it forced, and it was slower on the demo's many small
      // tables (docs/BENCHMARKS.md, "database isolation").
      m_strategy = " STRATEGY = FILE_COPY";
    }
    auto owner = admin.exec_params(
        "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", {m_name},
        "isolation");
    if (owner.empty()) throw failed(m_name, "the database does not exist");
    m_owner = owner[0][0].c_str();
    auto settings = admin.exec_params(
        "SELECT coalesce(r.rolname, ''), c.setting FROM pg_db_role_setting s "
        "LEFT JOIN pg_roles r ON r.oid = s.setrole, unnest(s.setconfig) AS c(setting) "
        "WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = $1) "
        "ORDER BY 1, 2",
        {m_name}, "isolation");
    for (const auto& row : settings) {
      const std::string item = row[1].c_str();
      const auto eq = item.find('=');
      if (eq == std::string::npos) continue;
      m_settings.push_back({row[0].c_str(), item.substr(0, eq), item.substr(eq + 1)});
    }
    const std::string q = admin.raw().quote_name(m_template);
    own_transactions(admin, [&] {
      admin.exec(fmt::format("CREATE DATABASE {} TEMPLATE {}{}", q,
                             admin.raw().quote_name(m_name), m_strategy),
                 "isolation");
      m_created = true;
      admin.exec(fmt::format("COMMENT ON DATABASE {} IS {}", q,
                             admin.raw().quote(std::string(k_template_comment) + m_name +
                                               std::string(k_owner_mark) + owner_tag())),
                 "isolation");
      // Nobody connects to it, autovacuum included, so a copy never waits for one to leave.
      admin.exec("ALTER DATABASE " + q + " WITH ALLOW_CONNECTIONS false", "isolation");
    });
    if (sequences) {
      m_sequences = *sequences;
    } else {
      ConnectionInfo info = m_admin;
      info.dbname = m_name;
      Connection db(with_client_defaults(info));
      m_sequences = has_sequences(db);
    }
    m_conn = std::move(kept);
    m_state = state();
  } catch (const Error& e) {
    if (m_created) {
      try {
        Connection admin(with_client_defaults(m_admin));
        admin.exec("DROP DATABASE IF EXISTS " + admin.raw().quote_name(m_template));
      } catch (...) {
      }
    }
    if (e.code() == ExitCode::interrupted) throw;
    throw failed(m_name, fmt::format("cannot keep it as a template: {}", e.message()));
  }
}

DatabaseTemplate::~DatabaseTemplate() {
  m_conn.reset();
  if (!m_created) return;
  try {
    Connection admin(with_client_defaults(m_admin));
    admin.exec("DROP DATABASE IF EXISTS " + admin.raw().quote_name(m_template) + " WITH (FORCE)",
               "isolation");
  } catch (...) {
    // The server is gone (a throwaway one goes with its files; on an external one the next run
    // drops it: tidy_left_templates) or refuses: nothing more to do here.
  }
}

std::string DatabaseTemplate::state() {
  try {
    // Not the WAL position: the server writes WAL of its own (a checkpoint, the running
    // transactions' record every 15 s after other WAL), no transaction id. On a connection kept
    // across runs; a new one once a restart ended it.
    std::string out = std::to_string(next_xid_now() - own_xids(m_admin) -
                                     other_runs_xids(m_admin, m_name));
    if (!m_sequences) return out;
    // A sequence the role may not read shows no value: then it counts as changed.
    ConnectionInfo info = m_admin;
    info.dbname = m_name;
    Connection db(with_client_defaults(info));
    auto r = db.exec(
        "SELECT coalesce(string_agg(format('%I.%I=%s', schemaname, sequencename, "
        "CASE WHEN has_sequence_privilege(format('%I.%I', schemaname, sequencename), 'SELECT') "
        "THEN coalesce(last_value::text, 'unset') ELSE 'unreadable ' || random() END), ',' "
        "ORDER BY schemaname, sequencename), '') FROM pg_sequences",
        "isolation");
    return out + " " + r[0][0].c_str();
  } catch (const std::exception&) {
    rethrow_as_failed(m_name, "cannot tell whether a run changed it: ");
  }
}

long long DatabaseTemplate::next_xid_now() {
  for (int attempt = 0;; ++attempt) {
    try {
      if (!m_conn) m_conn = std::make_unique<Connection>(with_client_defaults(m_admin));
      return next_xid(*m_conn);
    } catch (const pqxx::broken_connection&) {
      m_conn.reset();
      if (attempt > 0) throw;
    } catch (const Error& e) {
      m_conn.reset();
      if (attempt > 0 || e.code() == ExitCode::interrupted) throw;
    }
  }
}

void DatabaseTemplate::run_on(const std::function<void()>& fn) {
  long long before = 0;
  try {
    before = next_xid_now();
  } catch (const std::exception&) {
    rethrow_as_failed(m_name, "cannot tell whether a run changed it: ");
  }
  // Counted also when the run fails: what it took before it failed is its database's.
  struct Count {
    DatabaseTemplate& self;
    long long before;
    ~Count() {
      try {
        const long long taken = self.next_xid_now() - before;
        std::lock_guard lock(g_own_mutex);
        g_run_xids[server_key(self.m_admin)][self.m_name] += taken;
      } catch (...) {
        // The server is gone: the next state() fails anyway.
      }
    }
  } count{*this, before};
  fn();
}

bool DatabaseTemplate::unchanged() {
  return state() == m_state;
}

void DatabaseTemplate::disconnect() noexcept {
  m_conn.reset();
}

void DatabaseTemplate::leave_to_server_removal() noexcept {
  m_conn.reset();
  m_created = false;
}

bool DatabaseTemplate::restore() {
  util::throw_if_interrupted();
  if (unchanged()) return false;
  try {
    Connection admin(with_client_defaults(m_admin));
    own_transactions(admin, [&] {
      const std::string q = admin.raw().quote_name(m_name);
      // The copy and the old database both carry owned names: a SIGKILL at any step leaves
      // `m_name` in place and at most one of them, which the next run drops.
      const std::string fresh = owned_database_name(m_name);
      const std::string qf = admin.raw().quote_name(fresh);
      try {
        // A large database takes a while to copy: a SIGINT/SIGTERM cancels the copy at once.
        CancelOnInterrupt cancel(admin);
        admin.exec(fmt::format("CREATE DATABASE {} TEMPLATE {} OWNER {}{}", qf,
                               admin.raw().quote_name(m_template),
                               admin.raw().quote_name(m_owner), m_strategy),
                   "isolation");
      } catch (const Error&) {
        util::throw_if_interrupted();  // cancelled by us: an interrupt, not a failed copy
        throw;
      }
      try {
        // TEMPLATE copies no pg_db_role_setting row. set_config() takes the value as the
        // setting parses it (a list such as search_path stays a list), FROM CURRENT stores it so.
        for (const auto& s : m_settings) {
          pqxx::work tx(admin.raw());
          exec_params(tx, "SELECT set_config($1, $2, true)", {s.name, s.value});
          tx.exec(fmt::format("ALTER {}DATABASE {} SET {} FROM CURRENT",
                              s.role.empty() ? "" : "ROLE " + tx.quote_name(s.role) + " IN ", qf,
                              tx.quote_name(s.name)));
          tx.commit();
        }
        const std::string old = owned_database_name(m_name);
        // RENAME waits (5 s) for the sessions on the database to end, and fails when one is
        // left: those that connected after they were ended, tried again.
        for (int attempt = 1;; ++attempt) {
          admin.exec_params(
              "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
              "WHERE datname = $1 AND pid <> pg_backend_pid()",
              {m_name}, "isolation");
          try {
            pqxx::work tx(admin.raw());
            tx.exec("ALTER DATABASE " + q + " RENAME TO " + tx.quote_name(old));
            tx.exec("ALTER DATABASE " + qf + " RENAME TO " + q);
            tx.commit();
            break;
          } catch (const pqxx::sql_error& e) {
            if (e.sqlstate() != "55006" || attempt >= 3) throw;  // object_in_use
          }
        }
        admin.exec("DROP DATABASE IF EXISTS " + admin.raw().quote_name(old) + " WITH (FORCE)",
                   "isolation");
      } catch (...) {
        try {
          admin.exec("DROP DATABASE IF EXISTS " + qf + " WITH (FORCE)");
        } catch (...) {  // the server is lost: the next run drops it (an owned name)
        }
        throw;
      }
    });
    m_state = state();
  } catch (const std::exception&) {
    rethrow_as_failed(m_name, "cannot copy it from its template again: ");
  }
  return true;
}

DatabaseCopy::DatabaseCopy(const ConnectionInfo& source, const std::string& name,
                           const std::string& comment, const std::string& what,
                           const std::function<void(const ConnectionInfo&)>& fill)
    : m_admin(source), m_info(source), m_what(what) {
  m_admin.dbname = "postgres";
  m_info.dbname = name;
  Connection admin(with_client_defaults(m_admin));
  own_transactions(admin, [&] {
    const std::string quoted = admin.raw().quote_name(name);
    admin.exec(fmt::format("CREATE DATABASE {} TEMPLATE {}", quoted,
                           admin.raw().quote_name(source.dbname)),
               what);
    m_created = true;
    // A constructor that throws runs no destructor: the copy made so far is dropped here.
    try {
      admin.exec(fmt::format("COMMENT ON DATABASE {} IS {}", quoted, admin.raw().quote(comment)),
                 what);
      if (fill) fill(m_info);
    } catch (...) {
      drop();
      throw;
    }
  });
}

DatabaseCopy::~DatabaseCopy() { drop(); }

void DatabaseCopy::drop() noexcept {
  if (!m_created) return;
  m_created = false;
  try {
    Connection admin(with_client_defaults(m_admin));
    own_transactions(admin, [&] {
      admin.exec("DROP DATABASE IF EXISTS " + admin.raw().quote_name(m_info.dbname) + " WITH (FORCE)",
                 m_what);
    });
  } catch (const std::exception&) {
    // The server is gone (the next session there drops the copy by its comment) or refuses.
  }
}

}  // namespace coldgate::db
