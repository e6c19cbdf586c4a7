#include "support/cluster.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "support/support.hpp"

namespace coldgate::testing {

namespace fs = std::filesystem;

fs::path server_bindir(int major) {
  std::string command = "bash '" + (source_dir() / "ci/pg-versions.sh").string() + "' " +
                        std::to_string(major);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) return {};
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  std::istringstream lines(out);
  int got = 0;
  std::string path;
  lines >> got >> path;
  return got == major ? fs::path(path) : fs::path();
}

db::LocalOptions small_cluster_options() {
  db::LocalOptions o;
  o.dbname = "coldgate_test";
  o.settings = {{"shared_buffers", "16MB"}, {"max_connections", "20"}};
  return o;
}

db::LocalProvider& shared_cluster() {
  // Function-local static: its destructor stops the cluster when the test binary exits.
  static std::unique_ptr<db::LocalProvider> cluster = [] {
    auto c = std::make_unique<db::LocalProvider>(small_cluster_options());
    c->start();
    return c;
  }();
  return *cluster;
}

db::ConnectionInfo fresh_database(const std::string& name) {
  auto& cluster = shared_cluster();
  db::Connection admin(cluster.socket_info("postgres"));
  std::string quoted = admin.raw().quote_name(name);
  admin.exec("DROP DATABASE IF EXISTS " + quoted + " WITH (FORCE)");
  admin.exec("CREATE DATABASE " + quoted);
  db::ConnectionInfo info = cluster.connection_info();
  info.dbname = name;
  return info;
}

namespace {

// The tests' own look-ups connect under this name and leave each other out: a backend whose
// client has just closed is listed until it has exited, which happens when it happens.
constexpr const char* k_observer_name = "coldgate-tests-observer";

db::ConnectionInfo observer_info(const std::string& db) {
  db::ConnectionInfo info = shared_cluster().socket_info(db);
  info.options["application_name"] = k_observer_name;
  return info;
}

}  // namespace

std::vector<std::string> backends_of(const std::string& db) {
  db::Connection conn(observer_info(db));
  auto rows = conn.exec_params(
      "SELECT coalesce(application_name, '') || ': ' || coalesce(query, '') "
      "FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() "
      "AND application_name IS DISTINCT FROM $2",
      {db, k_observer_name});
  std::vector<std::string> out;
  for (const auto& row : rows) out.emplace_back(row[0].c_str());
  return out;
}

std::string role_settings_of(const std::string& db) {
  db::Connection conn(observer_info(db));
  auto rows = conn.exec(
      "SELECT coalesce(string_agg(c, ' ' ORDER BY c), '') FROM pg_db_role_setting s, "
      "unnest(s.setconfig) c WHERE s.setrole = 'postgres'::regrole AND s.setdatabase = "
      "(SELECT oid FROM pg_database WHERE datname = current_database())");
  return rows[0][0].c_str();
}

std::vector<pid_t> postmasters_of(const fs::path& data_dir) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = static_cast<pid_t>(std::atol(name.c_str()));
    if (db::is_postmaster_of(pid, data_dir) && db::process_start_time(pid) >= 0) out.push_back(pid);
  }
  return out;
}

void write_line(int fd, const std::string& line) {
  std::string s = line + "\n";
  [[maybe_unused]] ssize_t n = ::write(fd, s.data(), s.size());
}

Child fork_child(const std::function<void(int write_fd)>& body) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  Child c;
  c.pid = ::fork();
  if (c.pid == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      body(fds[1]);
    } catch (const std::exception& e) {
      write_line(fds[1], std::string("error: ") + e.what());
      code = 1;
    }
    ::_exit(code);  // no atexit handlers: the parent's static cluster is not ours to stop
  }
  ::close(fds[1]);
  c.read_fd = fds[0];
  return c;
}

std::string Child::read_line(int timeout_ms) {
  std::string line;
  char ch;
  while (true) {
    pollfd p{read_fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return line;
    if (::read(read_fd, &ch, 1) != 1) return line;
    if (ch == '\n') return line;
    line.push_back(ch);
  }
}

int Child::wait() {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (read_fd >= 0) ::close(read_fd);
  read_fd = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace coldgate::testing
