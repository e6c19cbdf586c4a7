#include "db/provider.hpp"

#include <set>

#include "db/connection.hpp"
#include "db/container_provider.hpp"
#include "db/external_provider.hpp"
#include "db/local_provider.hpp"
#include "util/error.hpp"

namespace coldgate::db {

ServerInfo Provider::server_info() const {
  Connection conn(connection_info());
  return read_server_info(conn);
}

ServerInfo read_server_info(Connection& conn) {
  static const std::set<std::string> k_plumbing = {
      "port",     "listen_addresses", "unix_socket_directories", "cluster_name",     "config_file",
      "hba_file", "ident_file",       "data_directory",          "external_pid_file"};
  ServerInfo info;
  auto v = conn.exec(
      "SELECT current_setting('server_version'), "
      "current_setting('server_version_num')::int");
  info.version = v[0][0].c_str();
  info.version_num = v[0][1].as<int>();
  // current_setting() formats with units ("128MB"); pg_settings lists only what we may see.
  auto rows = conn.exec(
      "SELECT name, current_setting(name) FROM pg_settings "
      "WHERE source NOT IN ('default', 'override', 'client', 'session') ORDER BY name");
  for (const auto& r : rows) {
    std::string name = r[0].c_str();
    if (!k_plumbing.count(name)) info.settings[name] = r[1].c_str();
  }
  return info;
}

std::unique_ptr<Provider> make_provider(const config::Database& database) {
  switch (database.provider) {
    case config::Provider::local:
      return std::make_unique<LocalProvider>(LocalOptions::from(database));
    case config::Provider::external:
      return std::make_unique<ExternalProvider>(database);
    case config::Provider::container:
      return std::make_unique<ContainerProvider>(ContainerOptions::from(database));
  }
  throw usage_error(database.where.str(), "database.provider: unknown provider");
}

}  // namespace coldgate::db
