// The timed side of bench/provider_times.sh: each figure beside its anchor, both measured in
// this process on one steady clock and interleaved run by run, so that the machine's load at
// any moment falls on both. Prints one line per sample, "FIGURE SIDE MS".
//
//   provider_times local N      restart (LocalProvider::restart() vs `pg_ctl restart` on a
//                               second cluster from the same template, binaries and settings),
//                               then connecting through the external provider and
//                               db::Connection vs libpq's PQconnectdb: to a live server, to a
//                               refused port, to a silent listener (connect_timeout=2)
//   provider_times container N  ContainerProvider::start() to ready vs `podman run` of the
//                               same image and server arguments to a login; a missing image's
//                               failure vs `podman pull` of it
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "db/container_provider.hpp"
#include "db/external_provider.hpp"
#include "db/local_provider.hpp"
#include "db/server_account.hpp"
#include "db/template_cache.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace fs = std::filesystem;
using namespace coldgate;
using Clock = std::chrono::steady_clock;

namespace {

void emit(const std::string& figure, const std::string& side, Clock::time_point t0) {
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  std::cout << figure << ' ' << side << ' ' << ms << std::endl;
}

enum class Outcome { succeeds, fails };

// Times `what`; an Error it throws is the expected outcome of a failing connect, not the
// benchmark's failure.
void timed(const std::string& figure, const std::string& side, Outcome outcome,
           const std::function<void()>& what) {
  const bool must_fail = outcome == Outcome::fails;
  auto t0 = Clock::now();
  try {
    what();
  } catch (const Error& e) {
    if (!must_fail) throw;
    emit(figure, side, t0);
    return;
  }
  if (must_fail) throw std::runtime_error(figure + " " + side + ": connected, expected a failure");
  emit(figure, side, t0);
}

// libpq's own connect and close: what every connection of coldgate's rests on.
void libpq_connect(const std::string& conninfo, bool must_fail) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  bool ok = PQstatus(c) == CONNECTION_OK;
  PQfinish(c);
  if (ok == must_fail)
    throw std::runtime_error("libpq: unexpected connect outcome for " + conninfo);
  if (!ok) throw Error(ExitCode::infrastructure, "libpq", "failed as expected");
}

config::Database external(const std::string& url) {
  config::Database d;
  d.provider = config::Provider::external;
  d.url = url;
  return d;
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::vector<std::string> cmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> out;
  for (std::string arg; std::getline(in, arg, '\0');) out.push_back(arg);
  return out;
}

// The postmaster's `-c` settings as the local provider gave them, for pg_ctl's -o (a shell
// word each), with the anchor's own port and socket folder.
std::string postmaster_options(pid_t pid, const fs::path& socket_dir, int port) {
  std::string out = "-p " + std::to_string(port);
  auto args = cmdline(pid);
  for (std::size_t i = 1; i + 1 < args.size(); ++i) {
    if (args[i] != "-c") continue;
    std::string setting = args[++i];
    if (setting.rfind("unix_socket_directories=", 0) == 0) {
      setting = "unix_socket_directories=" + socket_dir.string();
    }
    if (setting.find('\'') != std::string::npos) throw std::runtime_error("quote in " + setting);
    out += " -c '" + setting + "'";
  }
  return out;
}

int local(int n) {
  db::LocalProvider provider(db::LocalOptions::from(config::Database{}));  // a run's defaults
  provider.start();
  std::cerr << "local: " << provider.binaries().version_text << "\n";

  // The anchor: the same template, binaries and settings, started and restarted by pg_ctl as
  // the server's account, as one would by hand.
  auto account = db::server_account();
  std::string tmpl = (util::temp_base() / "coldgate-bench-anchor-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl);
  fs::path anchor = tmpl;
  fs::create_directory(anchor / "socket");
  db::give_to(anchor, account);
  db::materialize_cluster(provider.binaries(), db::default_cache_dir(), account, anchor,
                          anchor / "data");
  fs::path pg_ctl = provider.binaries().bindir / "pg_ctl";
  // pg_ctl's output goes to a file, not a pipe: the server it starts would inherit a pipe and
  // hold it open, and util::run waits a while for a captured pipe's end.
  const fs::path log = anchor / "pg_ctl.log";
  auto run_pg_ctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {pg_ctl.string(), "-D", (anchor / "data").string()});
    util::SpawnOptions o{.argv = args,
                         .cwd = anchor,
                         .env_unset = {"PGDATA", "PGPORT", "PGHOST"},
                         .capture_stdout = false,
                         .capture_stderr = false,
                         .stdout_path = log,
                         .stderr_path = log};
    if (account) {
      o.uid = account->uid;
      o.gid = account->gid;
    }
    auto r = util::run(o, std::chrono::minutes(2));
    if (!r.status.ok()) throw std::runtime_error("pg_ctl failed, see " + log.string());
  };
  struct Cleanup {
    std::function<void()> f;
    ~Cleanup() { f(); }
  } cleanup{[&] {
    try {
      run_pg_ctl({"-m", "immediate", "stop"});
    } catch (...) {
    }
    std::error_code ec;
    fs::remove_all(anchor, ec);
  }};
  const std::string server_log = (anchor / "server.log").string();
  run_pg_ctl({"-l", server_log, "-w", "-o",
              postmaster_options(provider.postmaster_pid(), anchor / "socket", free_port()),
              "start"});

  for (int i = 0; i < n; ++i) {
    auto ours = [&] {
      timed("restart", "coldgate", Outcome::succeeds, [&] { provider.restart(); });
    };
    auto theirs = [&] {
      timed("restart", "pg_ctl", Outcome::succeeds, [&] {
        run_pg_ctl({"-l", server_log, "-m", "fast", "-w", "restart"});
      });
    };
    if (i % 2 == 0) {
      ours();
      theirs();
    } else {
      theirs();
      ours();
    }
  }

  const std::string live = provider.connection_info().url();
  const std::string refused = "postgresql://app:hunter2@127.0.0.1:1/shop";
  const db::ConnectionInfo refused_info{
      .host = "127.0.0.1", .port = 1, .user = "u", .password = "hunter2", .dbname = "d"};
  for (int i = 0; i < n; ++i) {
    timed("connect-live", "external", Outcome::succeeds,
          [&] { db::ExternalProvider(external(live)).start(); });
    timed("connect-live", "libpq", Outcome::succeeds, [&] { libpq_connect(live, false); });
    timed("connect-refused", "external", Outcome::fails,
          [&] { db::ExternalProvider(external(refused)).start(); });
    timed("connect-refused", "connection", Outcome::fails, [&] { db::Connection c(refused_info); });
    timed("connect-refused", "libpq", Outcome::fails, [&] { libpq_connect(refused, true); });
  }

  // A loopback listener that never answers: the handshake completes in the kernel, the
  // startup reply never comes, so libpq waits for connect_timeout.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(fd, 64);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string silent =
      "postgresql://app@127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/shop?connect_timeout=2";
  for (int i = 0; i < std::min(n, 3); ++i) {
    timed("connect-silent", "external", Outcome::fails,
          [&] { db::ExternalProvider(external(silent)).start(); });
    timed("connect-silent", "libpq", Outcome::fails, [&] { libpq_connect(silent, true); });
  }
  ::close(fd);
  return 0;
}

util::RunOutput engine(const std::vector<std::string>& args, std::chrono::seconds limit) {
  std::vector<std::string> argv{"podman"};
  argv.insert(argv.end(), args.begin(), args.end());
  return util::run({.argv = argv}, limit);
}

std::string checked(const std::vector<std::string>& args) {
  auto r = engine(args, std::chrono::seconds(120));
  if (!r.status.ok()) throw std::runtime_error("podman " + args[0] + ": " + r.err);
  return r.out;
}

int container(int n) {
  config::Database database;
  database.provider = config::Provider::container;
  db::ContainerOptions options = db::ContainerOptions::from(database);  // a run's defaults
  options.engine = "podman";
  options.image = "postgres:15";

  // One start first: a warm engine and page cache for both sides, and the server arguments
  // the provider gives the image, which the anchor gives it too.
  std::vector<std::string> server_args;
  {
    db::ContainerProvider p(options);
    p.start();
    std::istringstream cmd(checked(
        {"inspect", "--format", "{{range .Config.Cmd}}{{println .}}{{end}}", p.container_name()}));
    for (std::string line; std::getline(cmd, line);) {
      if (!line.empty()) server_args.push_back(line);
    }
    p.stop();
  }
  const std::string name = "coldgate-bench-anchor-" + std::to_string(::getpid());
  auto anchor = [&] {
    std::vector<std::string> run = {"run",
                                    "-d",
                                    "--name",
                                    name,
                                    "-p",
                                    "127.0.0.1::5432",
                                    "-e",
                                    "POSTGRES_PASSWORD=anchor",
                                    "-e",
                                    "POSTGRES_USER=postgres",
                                    "-e",
                                    "POSTGRES_DB=coldgate",
                                    "-e",
                                    "POSTGRES_INITDB_ARGS=--no-sync",
                                    "--stop-timeout",
                                    "0",
                                    options.image};
    run.insert(run.end(), server_args.begin(), server_args.end());
    checked(run);
    std::string port = checked({"port", name, "5432/tcp"});
    port = port.substr(port.rfind(':') + 1);
    while (!port.empty() && port.back() == '\n') port.pop_back();
    // Ready as the provider defines it: a login to the database, tried every 50 ms.
    const std::string conninfo = "host=127.0.0.1 port=" + port +
                                 " user=postgres password=anchor dbname=coldgate connect_timeout=2";
    for (auto until = Clock::now() + std::chrono::minutes(2);;) {
      PGconn* c = PQconnectdb(conninfo.c_str());
      bool ok = PQstatus(c) == CONNECTION_OK;
      PQfinish(c);
      if (ok) return;
      if (Clock::now() > until) throw std::runtime_error("anchor container not ready");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  auto remove_anchor = [&]() noexcept {
    try {
      engine({"rm", "-f", "-v", name}, std::chrono::seconds(120));
    } catch (...) {
    }
  };
  struct Cleanup {
    std::function<void()> f;
    ~Cleanup() { f(); }
  } cleanup{remove_anchor};

  for (int i = 0; i < n; ++i) {
    auto ours = [&] {
      db::ContainerProvider p(options);
      timed("container-start", "coldgate", Outcome::succeeds, [&] { p.start(); });
      p.stop();
    };
    auto theirs = [&] {
      timed("container-start", "podman-run", Outcome::succeeds, anchor);
      remove_anchor();
    };
    if (i % 2 == 0) {
      ours();
      theirs();
    } else {
      theirs();
      ours();
    }
  }

  db::ContainerOptions missing = options;
  missing.image = "postgres:99";
  for (int i = 0; i < std::min(n, 3); ++i) {
    timed("container-missing-image", "coldgate", Outcome::fails,
          [&] { db::ContainerProvider(missing).start(); });
    timed("container-missing-image", "podman-pull", Outcome::fails, [&] {
      if (!engine({"pull", missing.image}, std::chrono::minutes(10)).status.ok()) {
        throw Error(ExitCode::infrastructure, "podman", "pull failed as expected");
      }
    });
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string what = argc > 1 ? argv[1] : "";
  int n = argc > 2 ? std::atoi(argv[2]) : 10;
  if (what == "local") return local(n);
  if (what == "container") return container(n);
  std::cerr << "usage: provider_times local|container N\n";
  return 2;
} catch (const Error& e) {
  std::cerr << "provider_times: " << e.message() << "\n";
  return 1;
} catch (const std::exception& e) {
  std::cerr << "provider_times: " << e.what() << "\n";
  return 1;
}
