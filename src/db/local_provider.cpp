// The local provider: postgres runs as our child (util::Process, own process group) rather than
// daemonized by pg_ctl, so the postmaster's PID is ours to wait on, its exit is noticed at once,
// and util::Process's destructor is a last line of defence that kills the whole group.
#include "db/local_provider.hpp"

#include <fmt/core.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "db/profile.hpp"
#include "db/spare_cluster.hpp"
#include "db/template_cache.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::db {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// Free space for unprivileged writers on `dir`'s filesystem; -1 when it cannot be read.
std::int64_t free_bytes(const fs::path& dir) {
  struct statvfs fs_stat {};
  if (::statvfs(dir.c_str(), &fs_stat) != 0) return -1;
  return static_cast<std::int64_t>(fs_stat.f_bavail) * static_cast<std::int64_t>(fs_stat.f_frsize);
}

constexpr auto k_ready_timeout = 60s;     // start to accepting connections
constexpr auto k_shutdown_timeout = 15s;  // signal to exit, before SIGKILL
constexpr int k_port_attempts = 10;

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// libpq's text of a connection refused because the server is not up yet (PostgreSQL 14–18).
bool not_up_yet(const std::string& message) {
  for (const char* text : {"the database system is starting up",
                           "the database system is not yet accepting connections",
                           "No such file or directory", "Connection refused"}) {
    if (message.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string random_password() {
  std::random_device rd;  // /dev/urandom on Linux
  std::string out;
  for (int i = 0; i < 24; ++i) out += "0123456789abcdef"[rd() % 16];
  return out;
}

std::string read_from(const fs::path& path, std::uintmax_t offset) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

fs::path make_run_dir(const std::optional<ServerAccount>& account) {
  std::string tmpl = (util::temp_base() / (work_dir_prefix("coldgate-pg-") + "XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw Error(ExitCode::infrastructure, tmpl,
                fmt::format("cannot create cluster folder: {}", std::strerror(errno)));
  }
  fs::path dir = tmpl;
  fs::create_directory(dir / "socket");
  ::chmod((dir / "socket").c_str(), 0700);
  give_to(dir, account);
  return dir;
}

}  // namespace

std::map<std::string, std::string> fast_settings() {
  return {{"fsync", "off"}, {"full_page_writes", "off"}, {"synchronous_commit", "off"}};
}

LocalOptions LocalOptions::from(const config::Database& database) {
  LocalOptions o;
  o.version = database.version;
  o.bindir = database.bindir;
  o.dbname = database.name;
  // Every run is profiled through pg_stat_statements unless the config turns it off.
  o.settings = database.settings;
  o.profile = database.profile;
  o.where = database.where.file.empty() ? "" : database.where.str();
  for (const auto& [name, where] : database.settings_where) o.settings_where[name] = where.str();
  return o;
}

LocalProvider::LocalProvider(LocalOptions options) : m_options(std::move(options)) {}

LocalProvider::~LocalProvider() {
  stop();
}

ConnectionInfo LocalProvider::socket_info(const std::string& dbname) const {
  ConnectionInfo info;
  info.host = (m_run_dir / "socket").string();
  info.port = m_port;
  info.user = "postgres";
  info.dbname = dbname;
  return info;
}

void LocalProvider::start() {
  try {
    m_cache_dir = m_options.cache_dir.empty() ? default_cache_dir() : m_options.cache_dir;
    m_stale_removed = remove_stale_clusters(m_cache_dir, &m_left_behind);
    m_binaries = m_options.bindir.empty()
                     ? find_server_binaries(m_options.version, m_options.where, m_cache_dir)
                     : server_binaries_in(m_options.bindir, m_options.version, m_options.where,
                                          m_cache_dir);
    m_account = server_account();
    m_run_dir = make_run_dir(m_account);
    m_free_before_bytes = free_bytes(m_run_dir);
    m_marker = std::make_unique<RunMarker>(m_cache_dir, m_run_dir, data_dir());
    const Materialized made =
        materialize_cluster(m_binaries, m_cache_dir, m_account, m_run_dir, data_dir());
    m_template_cached = made.cached;
    m_spare_taken = made.spare;
    m_template_dir = made.template_dir;

    if (m_options.port) {
      try_launch(*m_options.port, true);
    } else {
      bool up = false;
      for (int attempt = 0; attempt < k_port_attempts && !up; ++attempt) {
        int port = attempt == 0 && m_options.first_port ? *m_options.first_port : free_port();
        up = try_launch(port, false);
      }
      if (!up) {
        throw Error(ExitCode::infrastructure, m_options.where,
                    fmt::format("database: no free TCP port on 127.0.0.1 after {} attempts",
                                k_port_attempts));
      }
    }

    // TCP gets a fresh random password (pg_hba: scram-sha-256); the socket folder is private.
    std::string password = random_password();
    {
      std::unique_ptr<Connection> ready = std::move(m_ready);
      Connection& admin = *ready;
      admin.exec(fmt::format("ALTER ROLE postgres PASSWORD '{}'", password));
      const std::string& name = m_options.dbname;
      if (name == "postgres" || name == "template1" || name == "template0") {
        admin.exec(fmt::format("DROP DATABASE {}", k_spare_database));
      } else if (name != k_spare_database) {
        admin.exec(fmt::format("ALTER DATABASE {} RENAME TO {}", k_spare_database,
                               admin.raw().quote_name(name)));
      }
      m_server_info = read_server_info(admin);
      m_start = std::move(ready);
    }
    m_info = ConnectionInfo{.host = "127.0.0.1",
                            .port = m_port,
                            .user = "postgres",
                            .password = password,
                            .dbname = m_options.dbname};
    // coldgate's own connections take the private socket; the children keep TCP.
    route_over_socket(m_info, m_run_dir / "socket");
  } catch (...) {
    stop();
    throw;
  }
}

std::optional<std::string> LocalProvider::read_log(std::uint64_t from) const {
  if (m_run_dir.empty()) return std::nullopt;
  return read_from(m_run_dir / "server.log", from);
}

bool LocalProvider::try_launch(int port, bool fixed) {
  fs::path log = m_run_dir / "server.log";
  std::error_code ec;
  auto log_offset = fs::exists(log, ec) ? fs::file_size(log, ec) : 0;
  std::map<std::string, std::string> settings = fast_settings();
  for (const auto& [k, v] : m_options.profile
                                ? with_profile_settings(m_options.settings, m_binaries.major,
                                                        has_auto_explain(m_binaries.bindir))
                                : m_options.settings) {
    settings[k] = v;
  }
  std::vector<std::string> argv{(m_binaries.bindir / "postgres").string(),
                                "-D",
                                data_dir().string(),
                                "-p",
                                std::to_string(port),
                                "-c",
                                "listen_addresses=127.0.0.1",
                                "-c",
                                "unix_socket_directories=" + (m_run_dir / "socket").string(),
                                "-c",
                                "cluster_name=coldgate"};
  for (const auto& [k, v] : settings) {
    argv.push_back("-c");
    argv.push_back(k + "=" + v);
  }
  util::SpawnOptions opts{.argv = argv,
                          .cwd = m_run_dir,
                          .env_unset = {"PGDATA", "PGPORT", "PGHOST"},
                          .capture_stdout = false,
                          .capture_stderr = false,
                          .stdout_path = log,
                          .stderr_path = log};
  if (m_account) {
    opts.uid = m_account->uid;
    opts.gid = m_account->gid;
  }
  m_port = port;
  m_server = std::make_unique<util::Process>(opts);
  m_marker->set_postmaster(m_server->pid());

  auto deadline = std::chrono::steady_clock::now() + k_ready_timeout;
  for (;;) {
    util::throw_if_interrupted();
    // The first connection that succeeds is start()'s own: a ping would start a backend more.
    try {
      m_ready = std::make_unique<Connection>(socket_info("postgres"));
    } catch (const Error& e) {
      // Not up yet: no socket, or the postmaster's "starting up" (SQLSTATE 57P03, whose text is
      // all libpq passes on). Anything else refuses us for good, and says why. A ping first
      // would start a backend of its own, the slowest of all: it builds the relcache files.
      if (e.code() == ExitCode::interrupted || !not_up_yet(e.message())) throw;
    }
    if (m_ready) {
      // Its dynamic shared memory segments, for the clean-up after a SIGKILL (ours or anyone's).
      m_segments = shared_memory_segments_of(m_server->pid());
      m_marker->set_segments(m_segments);
      return true;
    }
    if (m_server->wait_exited(5ms)) {
      util::ExitStatus status = m_server->wait();
      m_server.reset();
      std::string out = read_from(log, log_offset);
      bool in_use = out.find("Address already in use") != std::string::npos;
      if (in_use && !fixed) return false;
      if (in_use) {
        throw Error(ExitCode::infrastructure, m_options.where,
                    fmt::format("database: port {} on 127.0.0.1 is already in use", port));
      }
      if (auto refused = refused_setting(out, m_options.settings_where)) throw *refused;
      throw Error(ExitCode::infrastructure, m_options.where,
                  fmt::format("database: PostgreSQL server did not start ({}); last 20 lines of "
                              "its log:\n{}",
                              status.describe(), util::tail_lines(out, 20)));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::string out = read_from(log, log_offset);
      shutdown(SIGKILL);
      throw Error(ExitCode::infrastructure, m_options.where,
                  fmt::format("database: PostgreSQL server did not accept connections within {} "
                              "s; last 20 lines of its log:\n{}",
                              k_ready_timeout.count(), util::tail_lines(out, 20)));
    }
  }
}

std::string LocalProvider::storage() const {
  if (m_run_dir.empty()) return "";
  struct statvfs fs_stat {};
  if (::statvfs(m_run_dir.c_str(), &fs_stat) != 0) return "";
  std::int64_t used = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(data_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) used += static_cast<std::int64_t>(it->file_size(ec));
  }
  auto mib = [](double bytes) { return fmt::format("{:.1f} MiB", bytes / (1 << 20)); };
  std::string text = fmt::format(
      "the cluster {}, {}, on a filesystem of {} with {} free",
      util::display_path(data_dir()), mib(static_cast<double>(used)),
      mib(static_cast<double>(fs_stat.f_blocks) * fs_stat.f_frsize),
      mib(static_cast<double>(fs_stat.f_bavail) * fs_stat.f_frsize));
  if (m_free_before_bytes >= 0) {
    text += fmt::format(" ({} before the cluster was made)", mib(static_cast<double>(m_free_before_bytes)));
  }
  return text;
}

void LocalProvider::restart() {
  if (!m_server)
    throw Error(ExitCode::infrastructure, "database", "restart: server is not running");
  ::kill(m_server->pid(), SIGINT);  // fast shutdown: clients disconnected, checkpoint, exit
  ::kill(m_server->pid(), SIGCONT);  // a stopped postmaster obeys too
  if (!m_server->wait_exited(k_shutdown_timeout)) m_server->signal_group(SIGKILL);
  m_server->wait();  // reaps; throws Error(interrupted) on SIGINT/SIGTERM to us (stop() then)
  m_server.reset();
  remove_left_segments();
  m_start.reset();  // its backend went with the server
  try_launch(m_port, true);  // same port: the URL handed out stays valid
  m_ready.reset();
}

void LocalProvider::remove_left_segments() noexcept {
  // A server that stopped cleanly removed them itself: one lstat each, and /proc is not read.
  remove_orphaned_segments(m_segments, std::chrono::seconds(30), &m_left_behind);
  m_segments.clear();
}

bool LocalProvider::shutdown(int sig) noexcept {
  if (!m_server) return false;
  bool by_itself = false;
  try {
    if (m_server->pid() > 0) {
      // What its processes map now, beside the control segment recorded when it was ready
      // (none when it was killed before: try_launch's timeout): a server killed by us or by
      // anyone leaves them all. One walk of /proc; a server that stops cleanly removes them.
      for (auto& name : shared_memory_segments_of_cluster(data_dir())) {
        if (std::find(m_segments.begin(), m_segments.end(), name) == m_segments.end())
          m_segments.push_back(std::move(name));
      }
      const bool running = !m_server->wait_exited(std::chrono::milliseconds(0));
      ::kill(m_server->pid(), sig);
      ::kill(m_server->pid(), SIGCONT);  // a stopped postmaster (SIGSTOP, a debugger) obeys too
      by_itself = running && m_server->wait_exited(k_shutdown_timeout);
      if (!by_itself) m_server->signal_group(SIGKILL);
      by_itself = m_server->wait().ok() && by_itself;
    }
  } catch (...) {
    // Interrupted while reaping: the child is gone either way (Process::wait reaps first).
    by_itself = false;
  }
  m_server.reset();  // a child still there is killed with its group and reaped
  remove_left_segments();  // when it had to be killed, or was killed by someone else
  return by_itself;
}

void LocalProvider::stop() noexcept {
  if (m_port != 0) end_socket_route(m_info);
  m_ready.reset();
  m_start.reset();
  // Immediate shutdown: no checkpoint, the data is thrown away. A postmaster exits after all of
  // its children, so once it did so by itself nothing writes in the cluster any more: the next
  // run may start from it, made equal to the template again.
  const bool ended = shutdown(SIGQUIT);
  if (ended && !m_template_dir.empty() && !processes_in_cluster(data_dir())) {
    park_spare_cluster(m_template_dir, data_dir());
  }
  if (!m_run_dir.empty()) {
    std::error_code ec;
    fs::remove_all(m_run_dir, ec);
    m_run_dir.clear();
  }
  m_template_dir.clear();
  m_marker.reset();
}

}  // namespace coldgate::db
