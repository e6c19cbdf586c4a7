#include "db/connection.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <libpq-fe.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <optional>

#include "db/pqxx_compat.hpp"
#include "util/process.hpp"

namespace coldgate::db {

namespace {

void discard_notice(void*, const char*) {}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// libpq's message is "ERROR:  text\nLINE 3: …\n   ^\nHINT: …"; keep the text and DETAIL/HINT.
std::string server_text(const std::string& full, int* line) {
  std::string out;
  std::size_t pos = 0;
  bool first = true;
  while (pos < full.size()) {
    auto nl = full.find('\n', pos);
    std::string l = full.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? full.size() : nl + 1;
    if (first) {
      for (const char* sev : {"ERROR:  ", "FATAL:  ", "PANIC:  "}) {
        if (l.rfind(sev, 0) == 0) l = l.substr(std::string_view(sev).size());
      }
      out = l;
      first = false;
    } else if (l.rfind("LINE ", 0) == 0) {
      if (line) *line = std::atoi(l.c_str() + 5);
    } else if (l.rfind("DETAIL:", 0) == 0 || l.rfind("HINT:", 0) == 0) {
      out += "\n" + l;
    }
  }
  return trim(out);
}

// How long a connect made after a SIGINT/SIGTERM (the clean-up of a run that was stopped) may
// take: a healthy server answers in milliseconds, a stopped one never, and the user is waiting.
constexpr std::chrono::milliseconds k_connect_after_interrupt{2000};

// Runs `connect` on a thread of its own and waits for it, or for a SIGINT/SIGTERM, whichever
// comes first: libpq's connect waits for a server that accepts the socket but never answers (a
// stopped postmaster, a hung host) until connect_timeout, and no signal ends that wait. A thread
// left waiting finishes on its own and frees what it made; the command ends meanwhile.
template <typename T>
T connect_interruptibly(std::function<T()> connect, const std::string& display) {
  const int interrupt = util::interrupt_fd();
  if (interrupt < 0) return connect();  // no handlers: nothing would end the wait anyway
  struct State {
    std::mutex mutex;
    std::optional<T> value;
    std::exception_ptr error;
    bool abandoned = false;
    int done[2] = {-1, -1};
    ~State() {
      for (int fd : done)
        if (fd >= 0) ::close(fd);
    }
  };
  auto state = std::make_shared<State>();
  if (::pipe2(state->done, O_CLOEXEC) != 0) return connect();
  std::thread([state, connect = std::move(connect)] {
    std::optional<T> value;
    std::exception_ptr error;
    try {
      value.emplace(connect());
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(state->mutex);
    if (state->abandoned) return;  // `value` closes the connection as the thread ends
    state->value = std::move(value);
    state->error = error;
    char c = 0;
    [[maybe_unused]] ssize_t n = ::write(state->done[1], &c, 1);
  }).detach();
  // After an interrupt, the clean-up's connects still run, but none may hold the exit up.
  const bool cleaning_up = util::interrupted() != 0;
  pollfd fds[2] = {{state->done[0], POLLIN, 0}, {interrupt, POLLIN, 0}};
  int ready;
  do {
    ready = ::poll(fds, cleaning_up ? 1 : 2,
                   cleaning_up ? static_cast<int>(k_connect_after_interrupt.count()) : -1);
  } while (ready < 0 && errno == EINTR);
  std::lock_guard lock(state->mutex);
  if (fds[0].revents == 0) {
    state->abandoned = true;
    if (!cleaning_up) util::throw_if_interrupted();
    throw Error(ExitCode::infrastructure, "database",
                fmt::format("cannot connect to {}: no answer within {} ms after the interrupt",
                            display, k_connect_after_interrupt.count()));
  }
  if (state->error) std::rethrow_exception(state->error);
  return std::move(*state->value);
}

using PgConn = std::unique_ptr<PGconn, void (*)(PGconn*)>;

// A libpq connection (check PQstatus), made as connect_interruptibly makes one.
PgConn connect_libpq(const ConnectionInfo& info) {
  return connect_interruptibly<PgConn>(
      [conninfo = with_client_defaults(routed(info)).conninfo()] {
        return PgConn(PQconnectdb(conninfo.c_str()), PQfinish);
      },
      info.display());
}

// route_over_socket()'s routes: "host:port" → the TCP credentials and the socket folder.
struct SocketRoute {
  ConnectionInfo tcp;
  std::string socket_dir;
};
std::mutex g_routes_mutex;
std::map<std::string, SocketRoute> g_routes;

std::string route_key(const ConnectionInfo& info) {
  return info.host + ":" + std::to_string(info.port);
}

}  // namespace

void route_over_socket(const ConnectionInfo& tcp, const std::filesystem::path& socket_dir) {
  std::lock_guard lock(g_routes_mutex);
  g_routes[route_key(tcp)] = SocketRoute{tcp, socket_dir.string()};
}

void end_socket_route(const ConnectionInfo& tcp) noexcept {
  try {
    std::lock_guard lock(g_routes_mutex);
    g_routes.erase(route_key(tcp));
  } catch (...) {
    // A lock that fails: the route stays, to a port nothing listens on.
  }
}

ConnectionInfo routed(const ConnectionInfo& info) {
  std::lock_guard lock(g_routes_mutex);
  auto it = g_routes.find(route_key(info));
  // Only coldgate's own credentials: a role setup made, with its own password, keeps TCP and
  // its own authentication.
  if (it == g_routes.end() || it->second.tcp.user != info.user ||
      it->second.tcp.password != info.password) {
    return info;
  }
  ConnectionInfo out = info;
  out.host = it->second.socket_dir;
  out.password.clear();
  // TLS options mean nothing on a Unix socket; libpq ignores sslmode there, but not all of them.
  for (const char* key : {"sslmode", "sslrootcert", "sslcert", "sslkey", "requiressl"})
    out.options.erase(key);
  return out;
}

ConnectionInfo with_client_defaults(ConnectionInfo info) {
  info.options.try_emplace("connect_timeout", std::to_string(k_default_connect_timeout_s));
  info.options.try_emplace("fallback_application_name", "coldgate");
  info.options["client_encoding"] = "UTF8";
  return info;
}

Connection::Connection(const ConnectionInfo& info) : m_info(info) {
  try {
    m_conn = connect_interruptibly<std::unique_ptr<pqxx::connection>>(
        [conninfo = with_client_defaults(routed(info)).conninfo()] {
          return std::make_unique<pqxx::connection>(conninfo);
        },
        info.display());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ExitCode::infrastructure, "database",
                fmt::format("cannot connect to {}: {}", info.display(), trim(e.what())));
  }
  m_quiet = silence_notices(*m_conn);
}

Connection::~Connection() {
  m_quiet.reset();  // unregisters from the connection, so it must go first
}

bool Connection::closed_by_server() const {
  const int fd = m_conn->sock();
  if (fd < 0) return true;
  char c;
  const ssize_t n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void Connection::check_open(const std::string& where) const {
  if (closed_by_server()) {
    throw Error(ExitCode::infrastructure, where,
                fmt::format("lost connection to {}: the server closed it", m_info.display()));
  }
}

template <typename Call>
pqxx::result Connection::autocommit(const std::string& where, Call&& call) {
  check_open(where);
  try {
    pqxx::nontransaction tx(*m_conn);
    return call(tx);
  } catch (const pqxx::sql_error& e) {
    throw translate(e, where);
  } catch (const pqxx::failure& e) {
    // broken_connection, or what libpqxx 6.4 says of a connection its server dropped during
    // the call ("Could not obtain client encoding").
    throw Error(ExitCode::infrastructure, where,
                fmt::format("lost connection to {}: {}", m_info.display(), trim(e.what())));
  }
}

pqxx::result Connection::exec(const std::string& sql, const std::string& where) {
  return autocommit(where, [&](pqxx::nontransaction& tx) { return tx.exec(sql); });
}

pqxx::result Connection::exec_params(const std::string& sql,
                                     const std::vector<std::optional<std::string>>& params,
                                     const std::string& where) {
  return autocommit(where,
                    [&](pqxx::nontransaction& tx) { return db::exec_params(tx, sql, params); });
}

Error translate(const pqxx::sql_error& e, const std::string& where) {
  int line = 0;
  std::string text = server_text(e.what(), &line);
  std::string state = e.sqlstate().empty() ? "?????" : e.sqlstate();
  std::string what = fmt::format("SQLSTATE {}: {}", state, text);
  if (line > 0) what += fmt::format(" (query line {})", line);
  return Error(ExitCode::gate_failed, where, what);
}

std::pair<int, int> line_col(const std::string& text, int position) {
  int line = 1, col = 1, chars = 1;
  for (std::size_t i = 0; i < text.size() && chars < position; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte: same character
    ++chars;
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

CancelOnInterrupt::CancelOnInterrupt(std::function<void()> cancel) {
  const int interrupt = util::interrupt_fd();
  if (interrupt < 0 || ::pipe2(m_stop, O_CLOEXEC) != 0) return;
  m_thread = std::thread([this, interrupt, cancel = std::move(cancel)] {
    pollfd fds[2] = {{interrupt, POLLIN, 0}, {m_stop[0], POLLIN, 0}};
    while (::poll(fds, 2, -1) < 0 && errno == EINTR) {
    }
    if (fds[1].revents != 0 || (fds[0].revents & POLLIN) == 0) return;
    try {
      cancel();
    } catch (const std::exception&) {
      // The server did not take the cancel: the statement ends when it ends.
    }
  });
}

CancelOnInterrupt::CancelOnInterrupt(Connection& conn)
    : CancelOnInterrupt([&raw = conn.raw()] { raw.cancel_query(); }) {}

CancelOnInterrupt::~CancelOnInterrupt() {
  if (m_thread.joinable()) {
    char c = 0;
    [[maybe_unused]] ssize_t n = ::write(m_stop[1], &c, 1);
    m_thread.join();
  }
  for (int fd : m_stop) {
    if (fd >= 0) ::close(fd);
  }
}

void run_script(const ConnectionInfo& info, const std::string& sql,
                const std::string& display_name) {
  PgConn conn = connect_libpq(info);
  if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
    std::string msg = conn ? trim(PQerrorMessage(conn.get())) : "out of memory";
    throw Error(ExitCode::infrastructure, display_name,
                fmt::format("cannot connect to {}: {}", info.display(), msg));
  }
  PQsetNoticeProcessor(conn.get(), discard_notice, nullptr);
  std::unique_ptr<PGcancel, void (*)(PGcancel*)> canceller(PQgetCancel(conn.get()), PQfreeCancel);
  std::unique_ptr<PGresult, void (*)(PGresult*)> res(nullptr, PQclear);
  {
    CancelOnInterrupt cancel([c = canceller.get()] {
      char error[256];
      PQcancel(c, error, sizeof error);
    });
    res.reset(PQexec(conn.get(), sql.c_str()));
  }
  util::throw_if_interrupted();  // cancelled by us, or it ended as the signal came
  auto status = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) {
    return;
  }
  if (status == PGRES_COPY_IN || status == PGRES_COPY_OUT) {
    throw Error(ExitCode::gate_failed, display_name,
                "COPY … FROM STDIN/TO STDOUT needs psql: use a `psql:` setup step for this file");
  }
  if (!res || !PQresultErrorField(res.get(), PG_DIAG_SQLSTATE)) {
    throw Error(
        ExitCode::infrastructure, display_name,
        fmt::format("lost connection to {}: {}", info.display(), trim(PQerrorMessage(conn.get()))));
  }
  auto field = [&](int code) {
    const char* v = PQresultErrorField(res.get(), code);
    return std::string(v ? v : "");
  };
  std::string what =
      fmt::format("SQLSTATE {}: {}", field(PG_DIAG_SQLSTATE), field(PG_DIAG_MESSAGE_PRIMARY));
  if (auto d = field(PG_DIAG_MESSAGE_DETAIL); !d.empty()) what += "\nDETAIL: " + d;
  if (auto h = field(PG_DIAG_MESSAGE_HINT); !h.empty()) what += "\nHINT: " + h;
  std::string where = display_name;
  if (auto p = field(PG_DIAG_STATEMENT_POSITION); !p.empty()) {
    auto [line, col] = line_col(sql, std::atoi(p.c_str()));
    where += fmt::format(":{}:{}", line, col);
  }
  throw Error(ExitCode::gate_failed, where, what);
}

std::optional<std::pair<int, int>> locate_error(const ConnectionInfo& info, const std::string& sql,
                                                int param_count) {
  PgConn conn(nullptr, PQfinish);
  try {
    conn = connect_libpq(info);
  } catch (const Error&) {
    return std::nullopt;  // interrupted, or no answer after an interrupt: no position to add
  }
  if (!conn || PQstatus(conn.get()) != CONNECTION_OK) return std::nullopt;
  PQsetNoticeProcessor(conn.get(), discard_notice, nullptr);
  std::unique_ptr<PGresult, void (*)(PGresult*)> res(
      PQprepare(conn.get(), "", sql.c_str(), param_count, nullptr), PQclear);
  if (!res || PQresultStatus(res.get()) != PGRES_FATAL_ERROR) return std::nullopt;
  const char* p = PQresultErrorField(res.get(), PG_DIAG_STATEMENT_POSITION);
  if (!p || !*p) return std::nullopt;
  return line_col(sql, std::atoi(p));
}

}  // namespace coldgate::db
