#include "db/external_provider.hpp"

#include <fmt/core.h>
#include <libpq-fe.h>

#include <thread>

#include "db/connection.hpp"
#include "db/database_template.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::db {

ExternalProvider::ExternalProvider(const config::Database& database)
    : m_restart_command(database.restart_command),
      m_where(database.where.file.empty() ? "" : database.where.str()) {
  if (database.url.empty()) {
    throw usage_error(m_where, "database.url: required for provider: external");
  }
  m_info = ConnectionInfo::parse(database.url, m_where.empty() ? "database.url" : m_where);
  if (m_info.dbname.empty() && !database.name.empty()) m_info.dbname = database.name;
}

void ExternalProvider::start() {
  // Before the first connection to the configured database: a killed run may have left it
  // under another name.
  m_repaired = tidy_left_databases(m_info);
  Connection probe(m_info);
}

void ExternalProvider::restart() {
  if (m_restart_command.empty()) {
    throw usage_error(m_where,
                      "database.restart_command: needed for `cold: restart` with provider: "
                      "external (a shell command that restarts the server)");
  }
  util::SpawnOptions opts{.argv = {"/bin/sh", "-c", m_restart_command},
                          .env = m_info.env(),
                          .env_unset = ConnectionInfo::env_names()};
  auto r = util::run(opts, std::chrono::minutes(5));
  if (!r.status.ok()) {
    throw Error(ExitCode::infrastructure, "database.restart_command",
                fmt::format("`{}` failed ({}):\n{}", m_restart_command, r.status.describe(),
                            util::tail_lines(r.err, 20)));
  }
  wait_until_ready(m_info, std::chrono::seconds(60), "database.restart_command");
}

void wait_until_ready(const ConnectionInfo& info, std::chrono::milliseconds timeout,
                      const std::string& where) {
  std::string conninfo = with_client_defaults(info).conninfo();
  auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    util::throw_if_interrupted();
    if (PQping(conninfo.c_str()) == PQPING_OK) return;
    if (std::chrono::steady_clock::now() > until) {
      throw Error(ExitCode::infrastructure, where,
                  fmt::format("{} did not accept connections within {} ms", info.display(),
                              timeout.count()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace coldgate::db
