#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "db/connection.hpp"
#include "db/provider.hpp"
#include "db/server_account.hpp"
#include "db/server_binaries.hpp"
#include "util/process.hpp"

namespace coldgate::db {

class RunMarker;

/// How to make a throwaway cluster.
struct LocalOptions {
  std::optional<int> version;                   // server major; nullopt: newest found
  std::filesystem::path bindir;                 // server programs' folder; empty: searched
  std::string dbname = "coldgate";              // created after start ("postgres" is not)
  std::map<std::string, std::string> settings;  // `-c k=v`, over the fast defaults below
  /// Preload what the server-side profile needs (with_profile_settings() for the server's
  /// major, known once the binaries are found).
  bool profile = false;
  std::filesystem::path cache_dir;              // empty: default_cache_dir()
  std::optional<int> port;                      // fixed TCP port: no retry; nullopt: a free one
  std::optional<int> first_port;                // tried before free ports (tests the retry)
  std::string where;                            // config location for messages ("file:l:c")
  std::map<std::string, std::string> settings_where;  // `settings` names → "file:l:c"
  /// Options from the config's `database:` block.
  static LocalOptions from(const config::Database& database);
};

/// Settings a throwaway cluster gets unless `database.settings` says otherwise: durability off
/// (fsync, full_page_writes, synchronous_commit) — nothing in it outlives the run.
std::map<std::string, std::string> fast_settings();

/// The embedded default: initdb'd cluster (copied from a cached template) in a private temp
/// folder, `postgres` run as our child in its own process group, listening on 127.0.0.1:<free
/// port> and a private Unix socket folder. Stopped and removed by stop() / the destructor; a
/// cluster of a SIGKILLed run is removed by the next start() (see remove_stale_clusters()).
class LocalProvider : public Provider {
 public:
  explicit LocalProvider(LocalOptions options);
  ~LocalProvider() override;

  std::string name() const override { return "local"; }
  /// Finds binaries, removes stale clusters, materializes and starts the cluster, sets a random
  /// password for TCP, creates the database. Throws Error(infrastructure); a server that does not
  /// come up is reported with the last 20 lines of its log.
  void start() override;
  /// Fast shutdown (SIGINT), then start on the same port; returns when it accepts connections.
  void restart() override;
  /// Immediate shutdown (SIGQUIT: the data is thrown away), removes the folder and marker; a
  /// cluster whose server exited by itself is first parked as its template's spare
  /// (park_spare_cluster), for the next start().
  void stop() noexcept override;
  /// TCP 127.0.0.1:<port>, user postgres with its random password, the configured database.
  const ConnectionInfo& connection_info() const override { return m_info; }
  std::optional<std::filesystem::path> client_bindir() const override { return m_binaries.bindir; }
  /// What start()'s clean-up of killed runs (remove_stale_clusters), stop() and restart() kept
  /// so far: /dev/shm segments, each with the processes that still mapped it.
  std::vector<std::string> left_behind() const override { return m_left_behind; }
  int stale_servers_removed() const override { return m_stale_removed; }
  /// The data folder's size and its filesystem's room now and before the cluster was made.
  std::string storage() const override;
  /// server.log (the postgres process's stderr, across restarts) from byte `from` on.
  std::optional<std::string> read_log(std::uint64_t from) const override;

  /// Read by start() on the connection that set the password: no backend started for it.
  ServerInfo server_info() const override { return m_server_info; }
  /// start()'s own connection to `postgres` over the private socket (ALTER ROLE, the rename,
  /// the server's facts: no session state left).
  std::unique_ptr<Connection> take_start_connection() noexcept override { return std::move(m_start); }

  /// Superuser connection over the private Unix socket (no password) to `dbname`.
  ConnectionInfo socket_info(const std::string& dbname) const;
  /// The cluster's data folder (inside run_dir()).
  std::filesystem::path data_dir() const { return m_run_dir / "data"; }
  /// The private folder holding data/, socket/ and server.log; empty before start().
  const std::filesystem::path& run_dir() const { return m_run_dir; }
  /// PID of the postmaster, -1 when not running.
  pid_t postmaster_pid() const { return m_server ? m_server->pid() : -1; }
  /// The binaries in use (valid after start()).
  const ServerBinaries& binaries() const { return m_binaries; }
  /// True when start() copied a cached template instead of running initdb.
  bool template_was_cached() const { return m_template_cached; }
  /// True when start() took the template's spare (a used cluster made equal to it) by rename.
  bool spare_was_taken() const { return m_spare_taken; }

 private:
  void launch(int port);                  // spawn postgres and wait until ready; throws
  bool try_launch(int port, bool fixed);  // false: port in use (and not fixed)
  bool shutdown(int sig) noexcept;        // signal, wait, reap; true: it exited by itself
  void remove_left_segments() noexcept;   // a killed postmaster's /dev/shm segments

  LocalOptions m_options;
  ServerBinaries m_binaries;
  std::optional<ServerAccount> m_account;
  std::filesystem::path m_cache_dir;
  std::filesystem::path m_run_dir;  // empty until start() made it; removed by stop()
  std::unique_ptr<RunMarker> m_marker;
  std::unique_ptr<util::Process> m_server;  // the postmaster; null when not running
  std::unique_ptr<Connection> m_ready;      // try_launch's first connection, for start()
  std::unique_ptr<Connection> m_start;      // start()'s, once it is done: take_start_connection()
  std::vector<std::string> m_segments;      // its /dev/shm segments once it was ready
  std::vector<std::string> m_left_behind;   // what the clean-ups had to keep (left_behind())
  ConnectionInfo m_info;
  ServerInfo m_server_info;  // read by start()
  int m_port = 0;
  std::int64_t m_free_before_bytes = -1;  // free space where the cluster went, before it was made
  int m_stale_removed = 0;  // remove_stale_clusters() at start()
  bool m_template_cached = false;
  bool m_spare_taken = false;
  std::filesystem::path m_template_dir;  // what data/ was made from; empty once stopped
};

}  // namespace coldgate::db
