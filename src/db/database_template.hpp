#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/connection_info.hpp"

namespace coldgate::db {

/// The comment on a database template before its owner's owner_tag(): a later run on that
/// server drops the templates whose owner is gone (a SIGKILLed coldgate, a lost server), and
/// first renames one back to its database when that database is missing (what an older
/// coldgate, which dropped the database before it made it again, could leave).
inline constexpr std::string_view k_template_comment =
    "coldgate isolation template, dropped when its run ends; database: ";

/// The comment on another database coldgate makes for the length of a run (a data scale's),
/// before what it is and its owner (owned_comment): a later run on that server drops it once
/// its owner is gone.
inline constexpr std::string_view k_owned_comment =
    "coldgate database, dropped when its run ends: ";

/// The stages' database as setup left it, kept as a template so that each cold run (or stage)
/// can start from it again under the same name (`isolation: run | stage`): made once by
/// `CREATE DATABASE <tmpl> TEMPLATE <name>`, with no connections allowed to it; restore() makes
/// a copy from the template under an owned_database_name(), with the owner and the
/// per-database settings (pg_db_role_setting: `ALTER DATABASE … SET`, `ALTER ROLE … IN
/// DATABASE … SET`) it had, which TEMPLATE does not copy, then swaps the names in one
/// transaction (the sessions on `<name>` ended first) and drops the old one: `<name>` is there
/// at every moment, so a SIGKILL leaves at most an owned copy that the next run drops
/// (tidy_left_databases) — unless nothing changed it
/// since it was last made: no transaction on the server took a transaction id since then
/// (every write of a row, logged or not, and of the catalog takes one; a read does not) and no
/// sequence moved (nextval takes none within the 32 values it logs ahead). The template is dropped on
/// every exit path with a server to drop it on; one a killed run left is dropped by the next
/// session on that server (ExternalProvider::start) or template made there.
class Connection;

/// `base` cut at a character boundary so that it and an owner_name_suffix() fit PostgreSQL's
/// 63 bytes, then that suffix: a database made under this name names its owner from the moment
/// it exists, before any COMMENT can.
std::string owned_database_name(const std::string& base);

/// k_owned_comment, `what` ("scale 4 of shop"), then this process's owner_tag().
std::string owned_comment(const std::string& what);

/// Puts right what killed coldgate runs left on the server `admin` is connected to (a
/// maintenance database: none of the ones it touches), of owners that are gone: a template
/// whose database is missing becomes that database again (connections allowed, comment
/// removed); other templates, databases named by owned_database_name() and those commented by
/// owned_comment() are dropped. Returns what it did, one item each ("database shop renamed
/// back from shop_cg_…, connections allowed again", "dropped database shop_scale4"); what it
/// cannot do now (no privilege, another session at it) is left for a later run. Throws
/// Error(interrupted), Error(infrastructure) when the server is lost.
std::vector<std::string> tidy_left_databases(Connection& admin);

/// tidy_left_databases on the server of `server`, over its maintenance database (`postgres`,
/// else `template1`), before anything connects to the database `server` names (a killed run
/// may have left it missing). Returns {} when neither maintenance database takes the
/// connection: the caller's own connection then says what is wrong. Throws
/// Error(interrupted).
std::vector<std::string> tidy_left_databases(const ConnectionInfo& server);

/// Runs `fn`, a change coldgate itself makes on the server `conn` is connected to (a copy made
/// again, a template made, a setting it puts back), and counts the transaction ids taken
/// meanwhile as coldgate's own, so that no DatabaseTemplate of this process on that server
/// reads them as a run's write. Without it, under `ab` and `stack` (two or more templates on
/// one server) one side's copy reads as a write to the other, and every cold run would copy.
/// Throws what fn throws, or Error(infrastructure) when the server is lost.
void own_transactions(Connection& conn, const std::function<void()>& fn);

/// A copy of `source` for the length of one task (a remedy trial's variant, a pull request's
/// migration): `CREATE DATABASE <name> TEMPLATE <source>`, then `COMMENT … IS <comment>` (the
/// owner's tag in it, so that a killed run's copy is dropped later), then `fill` on the new
/// database — all counted as coldgate's own transactions (own_transactions). Dropped (`WITH
/// (FORCE)`) by the destructor, and by the constructor when a step after CREATE fails; a lost
/// server drops nothing. Throws Error at `what` (a name taken, the role without CREATEDB).
class DatabaseCopy {
 public:
  DatabaseCopy(const ConnectionInfo& source, const std::string& name, const std::string& comment,
               const std::string& what,
               const std::function<void(const ConnectionInfo&)>& fill = {});
  ~DatabaseCopy();
  DatabaseCopy(const DatabaseCopy&) = delete;
  DatabaseCopy& operator=(const DatabaseCopy&) = delete;
  /// How to reach the copy.
  const ConnectionInfo& info() const { return m_info; }

 private:
  void drop() noexcept;
  ConnectionInfo m_admin;  // the server's `postgres` database
  ConnectionInfo m_info;
  std::string m_what;
  bool m_created = false;
};

class DatabaseTemplate {
 public:
  /// Why `database` cannot be kept and restored by its role, one line that says how to allow
  /// it (a server older than 13 has no DROP DATABASE … WITH (FORCE); the role lacks CREATEDB;
  /// the role does not own the database); "" when it can. Throws Error(infrastructure) when
  /// the server is lost.
  static std::string why_not(const ConnectionInfo& database);
  /// why_not() on `conn`, a connection to that database.
  static std::string why_not(Connection& conn);
  /// Whether the database `conn` is connected to has sequences (state() then reads their
  /// values). Throws Error(infrastructure) when the server is lost.
  static bool has_sequences(Connection& conn);

  /// Makes the template of `database` (its settings read first); `sequences` is
  /// has_sequences() of it when the caller asked already (nullopt: asked here, over a
  /// connection of its own); `admin` a connection to the server's maintenance database
  /// (maintenance_database()) that the caller opened already, used and kept from now on
  /// (nullptr or another database's: one is opened here). Throws Error(infrastructure) naming
  /// the database when the copy fails (e.g. another session is connected to it).
  explicit DatabaseTemplate(const ConnectionInfo& database,
                            std::optional<bool> sequences = std::nullopt,
                            std::unique_ptr<Connection> admin = nullptr);
  /// Drops the template; never throws.
  ~DatabaseTemplate();
  DatabaseTemplate(const DatabaseTemplate&) = delete;
  DatabaseTemplate& operator=(const DatabaseTemplate&) = delete;

  /// The database the template keeps (the stages' database name).
  const std::string& database() const { return m_name; }
  /// The template's own name, an owned_database_name() of `<name>`.
  const std::string& template_name() const { return m_template; }
  /// Makes the database again from the template, with its owner and settings, in its place
  /// (the class comment), unless unchanged(); returns whether it did. Any session on it is
  /// ended. Throws Error(infrastructure) when the server refuses or is lost,
  /// Error(interrupted).
  bool restore();
  /// True when the database is still as it was last made: the server's next
  /// transaction id and its sequences' values are the same. Throws Error(infrastructure) when
  /// the server is lost.
  bool unchanged();
  /// What unchanged() compares: the server's first unassigned transaction id
  /// (pg_snapshot_xmax(pg_current_snapshot()) while no transaction runs) less the ids coldgate
  /// took itself (own_transactions) and those the runs on other databases of this process took
  /// (run_on), and the sequences' values, as text. Throws Error(infrastructure) when the server
  /// is lost.
  std::string state();
  /// Runs `fn`, one run of a stage on this template's database, and counts the transaction
  /// ids taken meanwhile as that database's: no other DatabaseTemplate of this process on the
  /// server reads them as a write to its own database. Under `ab` and `stack` the sides' runs
  /// take turns on one server, so a write of one side's stage is not a write to another side's
  /// database, and a read-only stage gets no copy between its cold runs. Ids that no run of
  /// this process took (another client of an external server, autovacuum's ANALYZE) still
  /// count as a write to every database. Throws what fn throws, or Error(infrastructure) when
  /// the server is lost before fn.
  void run_on(const std::function<void()>& fn);
  /// Closes the connection state() keeps, before a server restart ends it: a query on an ended
  /// connection leaks its result in libpqxx 6.4. The next state() opens a new one.
  void disconnect() noexcept;
  /// For a server that is about to be stopped and deleted with its files (the local provider's
  /// throwaway cluster, at the end of a run): the destructor then leaves the template, as the
  /// server's removal takes it, instead of a DROP DATABASE and its checkpoint. Never throws.
  void leave_to_server_removal() noexcept;

 private:
  struct Setting {
    std::string role;  // "" for every role (ALTER DATABASE … SET)
    std::string name;
    std::string value;
  };
  ConnectionInfo m_admin;  // the server's maintenance database, "postgres"
  std::string m_name;
  std::string m_template;
  std::string m_owner;
  std::string m_strategy;  // " STRATEGY = …" from 15 on, else ""
  std::vector<Setting> m_settings;
  /// The server's first unassigned transaction id, on m_conn (opened again once).
  long long next_xid_now();

  bool m_created = false;
  bool m_sequences = false;  // it has sequences: state() reads their values
  std::unique_ptr<Connection> m_conn;  // to m_admin, kept: state() is asked before every run
  std::string m_state;       // state() when it was last made
};

}  // namespace coldgate::db
