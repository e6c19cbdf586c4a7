#pragma once

#include <map>
#include <memory>
#include <string>

#include "db/connection_info.hpp"

namespace coldgate::db {

class Connection;

/// `server` with the server's maintenance database, `postgres`, as its database: where
/// coldgate makes, renames and drops databases (templates, copies).
ConnectionInfo maintenance_database(ConnectionInfo server);

/// coldgate's own connections to one server, kept open from setup's database check to the first
/// stage's profile, so that the checks before a stage's first cold run (setup's, the profile's,
/// the plan capture's, isolation's, the stages' settings) share a backend per database instead
/// of starting one each (a fork and a relcache load, ~14 ms). At most one connection per
/// database, opened on first use with with_client_defaults(). Only autocommit statements that
/// leave no session state behind (no SET, no role, no open transaction) may run on them, so
/// that each user finds the session as the server made it.
class OwnConnections {
 public:
  OwnConnections();
  ~OwnConnections();
  OwnConnections(const OwnConnections&) = delete;
  OwnConnections& operator=(const OwnConnections&) = delete;

  /// The kept connection to `info`'s database, opened now when none is kept or the server
  /// closed the kept one. Throws as Connection() (Error(infrastructure), Error(interrupted)).
  Connection& to(const ConnectionInfo& info);
  /// Hands the kept connection to `info`'s database over to the caller, who owns it from now
  /// on; nullptr when none is kept or the server closed it. Never throws.
  std::unique_ptr<Connection> take(const ConnectionInfo& info) noexcept;
  /// Keeps `conn` (a connection to `info`'s database with no session state, opened by someone
  /// else: the provider's start-up one) as the kept one, when none is kept yet. Never throws.
  void adopt(const ConnectionInfo& info, std::unique_ptr<Connection> conn) noexcept;
  /// Closes the kept connection to `info`'s database, if any: CREATE DATABASE … TEMPLATE it
  /// fails while another session is connected to it. Never throws.
  void close(const ConnectionInfo& info) noexcept;

 private:
  std::map<std::string, std::unique_ptr<Connection>> m_kept;  // by connection string
};

/// `own`'s kept connection to `info` when `own` is given, else a new one to
/// with_client_defaults(info), owned by `fresh`. Throws as Connection().
Connection& kept_or_new(OwnConnections* own, const ConnectionInfo& info,
                        std::unique_ptr<Connection>& fresh);

}  // namespace coldgate::db
