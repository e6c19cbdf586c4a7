#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "db/provider.hpp"

namespace coldgate::db {

/// A server someone else runs: `database.url`. start() checks it can connect (bounded by
/// connect_timeout, default 10 s); restart() runs `database.restart_command` when given.
class ExternalProvider : public Provider {
 public:
  /// Parses `database.url` (URL or key=value); throws Error(usage) when it is empty or invalid.
  explicit ExternalProvider(const config::Database& database);

  std::string name() const override { return "external"; }
  /// Puts right what killed runs left on the server first, over its maintenance database
  /// (db::tidy_left_databases: their database copies; the configured database itself when one
  /// left it under another name), then connects once to the configured database; throws
  /// Error(infrastructure) "cannot connect to <url, password masked>: …".
  void start() override;
  /// Runs restart_command with /bin/sh -c (PG* env set), then waits up to 60 s until the server
  /// accepts connections. Throws Error(usage) when no restart_command is configured,
  /// Error(infrastructure) with its stderr tail when it fails.
  void restart() override;
  /// Nothing to stop: the server is not ours.
  void stop() noexcept override {}
  const ConnectionInfo& connection_info() const override { return m_info; }
  std::vector<std::string> repaired() const override { return m_repaired; }

 private:
  ConnectionInfo m_info;
  std::vector<std::string> m_repaired;
  std::string m_restart_command;
  std::string m_where;
};

/// Polls PQping on `info` until the server accepts connections; throws Error(infrastructure)
/// after `timeout`, and Error(interrupted) on SIGINT/SIGTERM.
void wait_until_ready(const ConnectionInfo& info, std::chrono::milliseconds timeout,
                      const std::string& where);

}  // namespace coldgate::db
