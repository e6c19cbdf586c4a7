#include "db/provider.hpp"

#include <fmt/core.h>

#include <set>

#include "db/connection.hpp"
#include "db/container_provider.hpp"
#include "db/external_provider.hpp"
#include "db/local_provider.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

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

namespace {

// The text after a log line's "LABEL:" and its spaces, or "".
std::string after_label(const std::string& line, std::string_view label) {
  std::size_t at = line.find(label);
  if (at == std::string::npos) return "";
  at += label.size();
  while (at < line.size() && line[at] == ' ') ++at;
  return line.substr(at);
}

}  // namespace

std::string refusal_hint(std::string_view server_message) {
  return server_message.find("unrecognized configuration parameter") != std::string_view::npos
             ? "check the name (SHOW ALL lists the server's)"
             : "fix the value";
}

std::optional<Error> refused_setting(const std::string& server_log,
                                     const std::map<std::string, std::string>& settings_where) {
  if (settings_where.empty()) return std::nullopt;
  std::vector<std::string> lines;
  for (std::size_t pos = 0; pos < server_log.size();) {
    std::size_t end = std::min(server_log.find('\n', pos), server_log.size());
    lines.push_back(server_log.substr(pos, end - pos));
    pos = end + 1;
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string fatal = after_label(lines[i], "FATAL:");
    if (fatal.empty()) continue;
    std::string name;
    std::size_t quote = fatal.find("parameter \"");
    if (quote != std::string::npos) {
      std::size_t begin = quote + 11, end = fatal.find('"', begin);
      if (end != std::string::npos) name = util::lower(fatal.substr(begin, end - begin));
    } else if (fatal.starts_with("could not access file \"") ||
               fatal.starts_with("could not load library \"")) {
      name = "shared_preload_libraries";  // the only libraries a config gives the server
    }
    if (name.empty()) continue;
    for (const auto& [key, where] : settings_where) {
      if (util::lower(key) != name) continue;
      std::string detail = i + 1 < lines.size() ? after_label(lines[i + 1], "DETAIL:") : "";
      return Error(ExitCode::usage, where,
                   fmt::format("database.settings.{}: the server refused it: {}{} — {} or remove "
                               "the setting",
                               key, fatal, detail.empty() ? "" : " (" + detail + ")",
                               refusal_hint(fatal)));
    }
  }
  return std::nullopt;
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

namespace {

// The server's own line about a full disk in its log; "" when there is none or no log to read.
std::string disk_full_in_log(const Provider& provider) noexcept {
  try {
    const auto log = provider.read_log(0);
    if (!log) return "";
    for (std::size_t pos = 0; pos < log->size();) {
      std::size_t end = log->find('\n', pos);
      if (end == std::string::npos) end = log->size();
      const std::string_view line(log->data() + pos, end - pos);
      if (util::says_disk_full(line)) return std::string(util::trim(line));
      pos = end + 1;
    }
  } catch (...) {
    // No log to read: the client's own text decides.
  }
  return "";
}

}  // namespace

std::optional<Error> disk_full(const Error& cause, const Provider& provider) noexcept {
  try {
    std::string what = cause.what();
    if (!util::says_disk_full(what)) {
      const std::string line = disk_full_in_log(provider);
      if (line.empty()) return std::nullopt;
      what += "\nThe server's log says: " + line;
    }
    const std::string storage = provider.storage();
    what += storage.empty()
                ? "\nThe disk filled (the server's, or where the step wrote): free space there; a "
                  "full disk is the machine's fault, not the change's."
                : fmt::format("\nThe disk filled: {}. Give it more room (coldgate makes its "
                              "throwaway cluster under $TMPDIR) or load less data; a full disk "
                              "is the machine's fault, not the change's.",
                              storage);
    return Error(ExitCode::infrastructure, cause.where(), what);
  } catch (...) {
    return std::nullopt;  // out of memory making the message: the cause stands as it is
  }
}

std::unique_ptr<Connection> Provider::take_start_connection() noexcept {
  return nullptr;
}

}  // namespace coldgate::db
