#include "db/own_connections.hpp"

#include "db/connection.hpp"

namespace coldgate::db {
namespace {

// Two infos name one session's target when their connection strings agree (host, port, user,
// password, database, options).
std::string own_connection_key(const ConnectionInfo& info) {
  return with_client_defaults(info).conninfo();
}

}  // namespace

ConnectionInfo maintenance_database(ConnectionInfo server) {
  server.dbname = "postgres";
  return server;
}

OwnConnections::OwnConnections() = default;
OwnConnections::~OwnConnections() = default;

Connection& OwnConnections::to(const ConnectionInfo& info) {
  std::unique_ptr<Connection>& kept = m_kept[own_connection_key(info)];
  if (kept && kept->closed_by_server()) kept.reset();
  if (!kept) kept = std::make_unique<Connection>(with_client_defaults(info));
  return *kept;
}

std::unique_ptr<Connection> OwnConnections::take(const ConnectionInfo& info) noexcept {
  try {
    auto it = m_kept.find(own_connection_key(info));
    if (it == m_kept.end()) return nullptr;
    std::unique_ptr<Connection> out = std::move(it->second);
    m_kept.erase(it);
    if (out && out->closed_by_server()) out.reset();
    return out;
  } catch (...) {
    return nullptr;  // no memory for the key: the caller opens its own
  }
}

void OwnConnections::adopt(const ConnectionInfo& info, std::unique_ptr<Connection> conn) noexcept {
  if (!conn) return;
  try {
    std::unique_ptr<Connection>& kept = m_kept[own_connection_key(info)];
    if (!kept) kept = std::move(conn);
  } catch (...) {
    // No memory for the key: `conn` closes, and to() opens its own.
  }
}

void OwnConnections::close(const ConnectionInfo& info) noexcept {
  try {
    m_kept.erase(own_connection_key(info));
  } catch (...) {
    // No memory for the key: a CREATE DATABASE … TEMPLATE after it says the database is in use.
  }
}

Connection& kept_or_new(OwnConnections* own, const ConnectionInfo& info,
                        std::unique_ptr<Connection>& fresh) {
  if (own) return own->to(info);
  fresh = std::make_unique<Connection>(with_client_defaults(info));
  return *fresh;
}

}  // namespace coldgate::db
