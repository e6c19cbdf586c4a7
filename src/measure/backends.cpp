#include "measure/backends.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>

#include "db/connection.hpp"
#include "util/error.hpp"

namespace coldgate::measure {
namespace {

using Clock = std::chrono::steady_clock;

// FNV-1a, 32 bits: a stable short tag for a stage name cut to fit.
std::uint32_t fnv1a(const std::string& s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

const char* const k_listed =
    "SELECT pid, state FROM pg_stat_activity WHERE application_name = $1 "
    "AND pid <> pg_backend_pid()";

// Sends pg_cancel_backend or pg_terminate_backend to each pid; keeps the first failure.
void signal_each(db::Connection& conn, const pqxx::result& rows, const char* function,
                 std::string& error) {
  for (const auto& row : rows) {
    try {
      conn.exec_params(fmt::format("SELECT {}($1)", function), {std::string(row[0].c_str())},
                       function);
    } catch (const Error& e) {
      if (error.empty()) error = e.message();
    }
  }
}

// Asks until pg_stat_activity lists no backend named `name` or `wait` has passed; returns the
// backends still listed (each statement its own transaction: a fresh view of the activity).
pqxx::result wait_gone(db::Connection& conn, const std::string& name,
                       std::chrono::milliseconds wait) {
  auto until = Clock::now() + wait;
  for (;;) {
    pqxx::result rows = conn.exec_params(k_listed, {name}, "pg_stat_activity");
    if (rows.empty() || Clock::now() >= until) return rows;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

std::string run_application_name(const std::string& stage, int run) {
  const std::string prefix = "coldgate/";
  const std::string suffix = fmt::format("/{}/{}", run, static_cast<long>(::getpid()));
  const std::size_t room = k_max_application_name - prefix.size() - suffix.size();
  if (stage.size() <= room) return prefix + stage + suffix;
  std::string tag = fmt::format("~{:08x}", fnv1a(stage));
  return prefix + stage.substr(0, room - tag.size()) + tag + suffix;
}

std::string EndedBackends::note(const std::string& application_name) const {
  // Not reached at all (error, found == 0): the run's clients most likely were not either, and
  // a lost server is the runner's own finding.
  std::string out;
  if (active > 0) {
    const char* how = terminated > 0 ? "ended with pg_terminate_backend" : "cancelled";
    out += active == 1 ? fmt::format("; its query was still running on the server and was {}", how)
                       : fmt::format(
                             "; {} of its queries were still running on the server and "
                             "were {}",
                             active, how);
  }
  if (left > 0) {
    out += fmt::format(
        "; {} of its server sessions (application_name '{}') did not end{}: later stages may be "
        "slower, end them with pg_terminate_backend()",
        left, application_name, error.empty() ? "" : " (" + error + ")");
  }
  return out;
}

EndedBackends end_backends(const db::ConnectionInfo& server, const std::string& application_name,
                           std::chrono::milliseconds cancel_wait,
                           std::chrono::milliseconds terminate_wait) {
  EndedBackends r;
  try {
    db::ConnectionInfo info = server;
    info.options["connect_timeout"] = "5";
    info.options.erase("application_name");  // ours must not be one of the run's
    db::Connection conn(info);
    pqxx::result listed = conn.exec_params(k_listed, {application_name}, "pg_stat_activity");
    r.found = static_cast<int>(listed.size());
    for (const auto& row : listed) {
      std::string state = row[1].is_null() ? "" : row[1].c_str();
      if (state == "active" || state == "fastpath function call") ++r.active;
    }
    if (listed.empty()) return r;
    signal_each(conn, listed, "pg_cancel_backend", r.error);
    pqxx::result rest = wait_gone(conn, application_name, cancel_wait);
    if (rest.empty()) return r;
    r.terminated = static_cast<int>(rest.size());
    signal_each(conn, rest, "pg_terminate_backend", r.error);
    r.left = static_cast<int>(wait_gone(conn, application_name, terminate_wait).size());
  } catch (const Error& e) {
    if (r.error.empty()) r.error = e.message();
  } catch (const std::exception& e) {
    if (r.error.empty()) r.error = e.what();
  }
  return r;
}

std::string with_note(std::string error, const std::string& note) {
  const std::string tail = "; stderr ends:";
  std::size_t at = std::min(error.find('\n'), error.size());
  if (at >= tail.size() && error.compare(at - tail.size(), tail.size(), tail) == 0) {
    at -= tail.size();
  }
  error.insert(at, note);
  return error;
}

RunSessions::RunSessions(db::ConnectionInfo server, const std::string& stage, int run)
    : m_server(std::move(server)),
      m_name(run_application_name(stage, run)),
      m_exceptions(std::uncaught_exceptions()) {}

RunSessions::~RunSessions() {
  if (!m_ended && std::uncaught_exceptions() > m_exceptions) end_backends(m_server, m_name);
}

db::ConnectionInfo RunSessions::named(db::ConnectionInfo info) const {
  info.options["application_name"] = m_name;
  return info;
}

std::string RunSessions::end(std::string error) {
  m_ended = true;
  return with_note(std::move(error), end_backends(m_server, m_name).note(m_name));
}

}  // namespace coldgate::measure
