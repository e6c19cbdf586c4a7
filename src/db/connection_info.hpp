#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coldgate::db {

/// Where a server is and who we are on it: the pieces of a libpq connection string.
struct ConnectionInfo {
  std::string host;  // host name, IP address, or Unix socket folder (starts with '/')
  int port = 5432;
  std::string user;
  std::string password;  // empty: none (trust, .pgpass or PGPASSWORD of the caller)
  std::string dbname;
  std::map<std::string, std::string> options;  // other libpq keywords (sslmode, connect_timeout…)

  /// Parses a libpq URL (`postgresql://…`) or key=value string with libpq's own parser
  /// (PQconninfoParse); throws Error(usage) with `where` and libpq's message, password masked.
  static ConnectionInfo parse(std::string_view text, const std::string& where);

  /// libpq key=value conninfo, values quoted as libpq requires.
  std::string conninfo() const;
  /// `postgresql://user:password@host:port/dbname?k=v`, percent-encoded; a socket folder goes
  /// into `?host=`. With `mask_password` the password shows as `***` (for messages and logs).
  std::string url(bool mask_password = false) const;
  /// The URL with the password masked: for every message that names the server.
  std::string display() const { return url(true); }
  /// `PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE DATABASE_URL` as "K=V" entries for a child
  /// (PGPASSWORD only when a password is set), plus `PGCONNECT_TIMEOUT`/`PGSSLMODE` when set.
  std::vector<std::string> env() const;
  /// `jdbc:postgresql://host:port/dbname?user=…&password=…` (and `&sslmode=` when set), the
  /// form JDBC drivers and the apps built on them read; values percent-encoded (RFC 3986), as
  /// the driver decodes them. A socket folder has no JDBC form: it stands as the host.
  std::string jdbc_url() const;
  /// What an `env:` value's `${NAME}` may name (config::connection_fact_names()): PGHOST PGPORT
  /// PGUSER PGPASSWORD ("" without a password) PGDATABASE DATABASE_URL JDBC_DATABASE_URL.
  std::map<std::string, std::string> facts() const;
  /// Names of the PG* variables that env() may set, for SpawnOptions::env_unset (so a caller's
  /// stray PGPASSWORD or PGSERVICE cannot redirect a child).
  static std::vector<std::string> env_names();
};

/// Where passwords stand in a libpq URL (`user:PASSWORD@`) or key=value string (`password=…`,
/// also a URL's `?password=`), as written: {byte offset, length} pairs in order, a quoted
/// value with its quotes. Empty when there is none. For masking and for `coldgate init`.
std::vector<std::pair<std::size_t, std::size_t>> password_spans(std::string_view text);

}  // namespace coldgate::db
