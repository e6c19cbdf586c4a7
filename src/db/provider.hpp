#pragma once

#include <filesystem>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "db/connection_info.hpp"
#include "util/error.hpp"

namespace coldgate::db {

class Connection;

/// What the results' environment block says about the server.
struct ServerInfo {
  std::string version;  // server_version, e.g. "15.8 (Debian 15.8-0+deb12u1)"
  int version_num = 0;  // server_version_num, e.g. 150008
  /// Settings that differ from PostgreSQL's built-in defaults (see read_server_info()):
  /// name → value with its unit ("128MB", "off").
  std::map<std::string, std::string> settings;
};

/// Gives a running PostgreSQL server: `local` (a throwaway cluster), `container` (docker or
/// podman), `external` (a URL). A provider owns what it starts: its destructor stops it, on every exit path.
class Provider {
 public:
  virtual ~Provider() = default;
  Provider() = default;
  Provider(const Provider&) = delete;
  Provider& operator=(const Provider&) = delete;

  /// "local", "external", "container".
  virtual std::string name() const = 0;
  /// Brings the server up and creates/opens the configured database; throws Error
  /// (infrastructure) when it cannot. Call once.
  virtual void start() = 0;
  /// Makes the server cold: a fresh server process with empty shared_buffers. Returns when it
  /// accepts connections again. The OS page cache is NOT dropped. Throws Error.
  virtual void restart() = 0;
  /// Stops what start() started and removes its files; safe to call twice; never throws.
  virtual void stop() noexcept = 0;
  /// What start(), stop() and restart() could not remove so far, one "what (why)" each: a
  /// killed server's /dev/shm segment that a process still maps (a killed run's, at start).
  virtual std::vector<std::string> left_behind() const { return {}; }
  /// Servers of killed coldgate runs that start() stopped and removed (their owner is gone).
  virtual int stale_servers_removed() const { return 0; }
  /// What start() put right on a server that outlives its runs, of killed coldgate runs: one
  /// item each ("database shop renamed back from …", "dropped database shop_scale4").
  virtual std::vector<std::string> repaired() const { return {}; }
  /// Where the server keeps its data and the room there, for a full disk's message: "the
  /// cluster /tmp/coldgate-pg-x/data, 141.2 MiB, on a filesystem of 150.0 MiB with 0.0 MiB
  /// free (9.5 MiB when it was made)"; "" when this provider cannot see the server's disk.
  virtual std::string storage() const { return ""; }
  /// How to reach the configured database (valid after start()).
  virtual const ConnectionInfo& connection_info() const = 0;
  /// Folder with client programs (psql, pg_restore) matching the server; nullopt: use PATH.
  virtual std::optional<std::filesystem::path> client_bindir() const { return std::nullopt; }
  /// What the server wrote to its log (stderr) from byte `from` on; nullopt when this provider
  /// cannot read its server's log (external). Throws Error(infrastructure) when reading fails.
  virtual std::optional<std::string> read_log(std::uint64_t from) const {
    (void)from;
    return std::nullopt;
  }
  /// Server version and non-default settings, read over a fresh connection (the local
  /// provider: what start() read on its own). Throws Error.
  virtual ServerInfo server_info() const;
  /// The connection start() made to the maintenance database `postgres` and left open with no
  /// session state, for the caller to keep instead of opening another (a backend start, ~14 ms);
  /// null when there is none or it was taken. Never throws.
  virtual std::unique_ptr<Connection> take_start_connection() noexcept;
};

/// `cause` as the full disk it is, when its text says a disk filled (util::says_disk_full) or,
/// failing that, the server's log does (a PANIC on a WAL write, whose client saw only the
/// aftermath: "not yet accepting connections"; local and container providers): Error
/// (infrastructure) at the same place, its text followed by the log's line when that decided,
/// the room the server had (Provider::storage) and what to do — a full disk is never the
/// change's fault. nullopt when neither says so. Never throws.
std::optional<Error> disk_full(const Error& cause, const Provider& provider) noexcept;

/// Why a server that did not start refused one of the config's `database.settings`, from its
/// log's FATAL line that names the parameter ("invalid value for parameter \"max_connections\":
/// \"abc\"", "unrecognized configuration parameter \"foo\"", and its DETAIL), or a library of
/// shared_preload_libraries it could not load: Error(usage) at that setting's name
/// (`settings_where`: name → "file:line:col"). nullopt when the log names none of them.
std::optional<Error> refused_setting(const std::string& server_log,
                                     const std::map<std::string, std::string>& settings_where);

/// What to do about a setting the server refused, from its message: "check the name (SHOW ALL
/// lists the server's)" when the name is unknown ("unrecognized configuration parameter"), else
/// "fix the value".
std::string refusal_hint(std::string_view server_message);

/// The provider `database.provider` names, not yet started.
std::unique_ptr<Provider> make_provider(const config::Database& database);

/// Reads server_version(_num) and pg_settings rows whose source is not 'default', 'override'
/// (computed by the server: data_checksums, wal_buffers…), 'client' or 'session' (set by this
/// connection), leaving out the connection plumbing a local provider sets itself
/// (port, listen_addresses, unix_socket_directories, cluster_name) and file locations.
ServerInfo read_server_info(Connection& conn);

}  // namespace coldgate::db
