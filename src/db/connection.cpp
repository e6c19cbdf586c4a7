#include "db/connection.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <libpq-fe.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>

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

}  // namespace

ConnectionInfo with_client_defaults(ConnectionInfo info) {
  info.options.try_emplace("connect_timeout", std::to_string(k_default_connect_timeout_s));
  info.options.try_emplace("fallback_application_name", "coldgate");
  info.options["client_encoding"] = "UTF8";
  return info;
}

Connection::Connection(const ConnectionInfo& info) : m_info(info) {
  try {
    m_conn = std::make_unique<pqxx::connection>(with_client_defaults(info).conninfo());
  } catch (const std::exception& e) {
    throw Error(ExitCode::infrastructure, "database",
                fmt::format("cannot connect to {}: {}", info.display(), trim(e.what())));
  }
  m_quiet = silence_notices(*m_conn);
}

Connection::~Connection() {
  m_quiet.reset();  // unregisters from the connection, so it must go first
}

pqxx::result Connection::exec(const std::string& sql, const std::string& where) {
  try {
    pqxx::nontransaction tx(*m_conn);
    return tx.exec(sql);
  } catch (const pqxx::sql_error& e) {
    throw translate(e, where);
  } catch (const pqxx::broken_connection& e) {
    throw Error(ExitCode::infrastructure, where,
                fmt::format("lost connection to {}: {}", m_info.display(), trim(e.what())));
  }
}

pqxx::result Connection::exec_params(const std::string& sql,
                                     const std::vector<std::optional<std::string>>& params,
                                     const std::string& where) {
  try {
    pqxx::nontransaction tx(*m_conn);
    return db::exec_params(tx, sql, params);
  } catch (const pqxx::sql_error& e) {
    throw translate(e, where);
  } catch (const pqxx::broken_connection& e) {
    throw Error(ExitCode::infrastructure, where,
                fmt::format("lost connection to {}: {}", m_info.display(), trim(e.what())));
  }
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
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn(
      PQconnectdb(with_client_defaults(info).conninfo().c_str()), PQfinish);
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
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn(
      PQconnectdb(with_client_defaults(info).conninfo().c_str()), PQfinish);
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
