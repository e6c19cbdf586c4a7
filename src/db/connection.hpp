#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "db/connection_info.hpp"
#include "util/error.hpp"

namespace coldgate::db {

/// Seconds libpq waits for a connection when the connection string sets no connect_timeout.
inline constexpr int k_default_connect_timeout_s = 10;

/// One libpqxx connection with notices silenced and every error a coldgate::Error.
class Connection {
 public:
  /// Connects (connect_timeout defaults to k_default_connect_timeout_s); throws
  /// Error(infrastructure) "cannot connect to <url, password masked>: <libpq message>".
  explicit Connection(const ConnectionInfo& info);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Runs `sql` outside a transaction block (autocommit); throws Error via translate().
  pqxx::result exec(const std::string& sql, const std::string& where = "database");
  /// Runs `sql` with $1… bound to `params` (nullopt = SQL NULL) in autocommit mode.
  pqxx::result exec_params(const std::string& sql,
                           const std::vector<std::optional<std::string>>& params,
                           const std::string& where = "database");
  /// True when the server has closed this idle connection (it stopped, crashed or ended our
  /// backend): a peek at the socket, no round trip. libpqxx 6.4 leaks the PGresult of a call
  /// made on such a connection, and says "Could not obtain client encoding" of it.
  bool closed_by_server() const;
  /// Throws Error(infrastructure) "lost connection to …: the server closed it" at `where` when
  /// closed_by_server().
  void check_open(const std::string& where) const;
  /// The libpqxx connection, for callers that need transactions of their own.
  pqxx::connection& raw() { return *m_conn; }
  /// What we connected to.
  const ConnectionInfo& info() const { return m_info; }

 private:
  // `call` on a nontransaction (autocommit) after check_open(); every error a coldgate::Error.
  template <typename Call>
  pqxx::result autocommit(const std::string& where, Call&& call);
  ConnectionInfo m_info;
  std::unique_ptr<pqxx::connection> m_conn;
  std::shared_ptr<void> m_quiet;  // silence_notices(): drops NOTICEs instead of printing them
};

/// While alive, a SIGINT/SIGTERM (util::interrupt_fd) cancels the statement running in our own
/// process on one connection, as psql's Ctrl-C does: `cancel` is called once, from a thread of
/// its own. The statement then fails with SQLSTATE 57014; its caller checks
/// util::throw_if_interrupted() first, so that the command ends with Error(interrupted) at once
/// instead of when a long statement (a `sql:` step, the EXPLAIN ANALYZE run) returns. Does
/// nothing before util::install_interrupt_handlers().
class CancelOnInterrupt {
 public:
  explicit CancelOnInterrupt(std::function<void()> cancel);
  /// For a libpqxx connection: pqxx::connection_base::cancel_query() (PQgetCancel and PQcancel).
  explicit CancelOnInterrupt(Connection& conn);
  /// Stops the watching thread and joins it.
  ~CancelOnInterrupt();
  CancelOnInterrupt(const CancelOnInterrupt&) = delete;
  CancelOnInterrupt& operator=(const CancelOnInterrupt&) = delete;

 private:
  int m_stop[2] = {-1, -1};  // written by the destructor so the thread's poll() returns
  std::thread m_thread;
};

/// Error(gate_failed) for a failed statement: "SQLSTATE <code>: <server message>", plus
/// "(query line N)" when the server reported a position.
Error translate(const pqxx::sql_error& e, const std::string& where);

/// Adds connect_timeout (when absent), fallback_application_name and client_encoding=UTF8.
ConnectionInfo with_client_defaults(ConnectionInfo info);

/// Sends this process's own connections that carry `tcp`'s host, port, user and password (the
/// credentials of a server it started itself: the local provider's throwaway cluster) over
/// that server's Unix socket in `socket_dir` instead: no TCP, TLS probe or SCRAM exchange per
/// connection. The socket folder is private (0700, inside the run's 0700 folder) and the
/// cluster authenticates it as `trust`, as the provider's own start-up connection already
/// does. Children (probes, setup commands, the stages' commands) still get `tcp`, so what a
/// stage measures is unchanged. Connection::info() and every message keep naming `tcp`.
void route_over_socket(const ConnectionInfo& tcp, const std::filesystem::path& socket_dir);
/// Ends route_over_socket() for `tcp`'s host and port (its server stopped); never throws.
void end_socket_route(const ConnectionInfo& tcp) noexcept;
/// `info` as this process connects to it: over the socket of a route_over_socket() whose host,
/// port, user and password it carries (password removed), else `info` itself.
ConnectionInfo routed(const ConnectionInfo& info);

/// Runs a multi-statement SQL script in one simple-query round trip: PostgreSQL runs it as one
/// implicit transaction unless the script has BEGIN/COMMIT of its own. On error throws
/// Error(gate_failed) with where = "<display_name>:<line>:<col>" of the error position (or just
/// the name when the server gave none) and what = "SQLSTATE <code>: <message>" + DETAIL/HINT.
/// Uses libpq directly: libpqxx 6.4 frees the PGresult, and with it PG_DIAG_STATEMENT_POSITION,
/// before it throws. A SIGINT/SIGTERM cancels the script (CancelOnInterrupt): Error(interrupted).
void run_script(const ConnectionInfo& info, const std::string& sql,
                const std::string& display_name);

/// Where in `sql` the server finds an error, found by preparing (parsing and planning, not
/// running) it on a fresh libpq connection with `param_count` untyped parameters: the 1-based
/// line and column of PG_DIAG_STATEMENT_POSITION, or nullopt when it prepares fine or the server
/// names no position. For messages after libpqxx 6.4 dropped the position; never throws.
std::optional<std::pair<int, int>> locate_error(const ConnectionInfo& info, const std::string& sql,
                                                int param_count);

/// 1-based line and column (in characters, as PostgreSQL counts) of the 1-based character
/// `position` in UTF-8 `text`.
std::pair<int, int> line_col(const std::string& text, int position);

}  // namespace coldgate::db
