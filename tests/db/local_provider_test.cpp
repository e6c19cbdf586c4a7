#include "db/local_provider.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "db/database_template.hpp"
#include "db/server_account.hpp"
#include "db/server_binaries.hpp"
#include "db/template_cache.hpp"
#include "support/cluster.hpp"
#include "support/support.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::db {
namespace {

namespace fs = std::filesystem;
using testing::postmasters_of;
using testing::shared_cluster;
using testing::small_cluster_options;

std::string show(const ConnectionInfo& info, const std::string& name) {
  Connection c(info);
  return c.exec("SHOW " + name)[0][0].c_str();
}

// A listening socket on 127.0.0.1 holding a port for the test's duration.
struct HeldPort {
  int fd = -1;
  int port = 0;
  HeldPort() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd, 1);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~HeldPort() { ::close(fd); }
};

TEST(LocalProvider, StartsConnectsAndReportsVersionAndSettings) {
  auto& cluster = shared_cluster();
  const auto& info = cluster.connection_info();
  EXPECT_EQ(info.host, "127.0.0.1");
  EXPECT_EQ(info.user, "postgres");
  EXPECT_EQ(info.dbname, "coldgate_test");
  EXPECT_FALSE(info.password.empty());

  ServerInfo server = cluster.server_info();
  EXPECT_EQ(server.version_num / 10000, cluster.binaries().major);
  EXPECT_EQ(server.version.substr(0, 2), std::to_string(cluster.binaries().major));
  EXPECT_EQ(server.settings.at("fsync"), "off");
  EXPECT_EQ(server.settings.at("full_page_writes"), "off");
  EXPECT_EQ(server.settings.at("synchronous_commit"), "off");
  EXPECT_EQ(server.settings.at("shared_buffers"), "16MB");
  EXPECT_EQ(server.settings.count("port"), 0u);  // plumbing we set ourselves is left out
  EXPECT_EQ(server.settings.count("listen_addresses"), 0u);
  EXPECT_EQ(server.settings.count("jit"), 0u);  // still the built-in default
}

TEST(LocalProvider, RunsServerAsUnprivilegedAccountWhenRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root";
  auto& cluster = shared_cluster();
  auto pid = cluster.postmaster_pid();
  ASSERT_GT(pid, 0);
  struct stat st {};
  ASSERT_EQ(::stat(("/proc/" + std::to_string(pid)).c_str(), &st), 0);
  EXPECT_NE(st.st_uid, 0u);
  struct stat data {};
  ASSERT_EQ(::stat(cluster.data_dir().c_str(), &data), 0);
  EXPECT_EQ(data.st_uid, st.st_uid);
}

TEST(LocalProvider, TcpNeedsThePassword) {
  auto info = shared_cluster().connection_info();
  info.password = "wrong";
  try {
    Connection c(info);
    FAIL() << "connected with a wrong password";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("password authentication failed"), std::string::npos) << e.message();
    EXPECT_EQ(e.message().find("wrong"), std::string::npos) << "password shown: " << e.message();
  }
}

TEST(LocalProvider, AppliesConfiguredSettingsOverFastDefaults) {
  auto opts = small_cluster_options();
  opts.settings["jit"] = "off";
  opts.settings["work_mem"] = "8MB";
  opts.settings["fsync"] = "on";
  LocalProvider p(opts);
  p.start();
  EXPECT_TRUE(p.template_was_cached());  // the shared cluster or an earlier run built it
  EXPECT_EQ(show(p.connection_info(), "jit"), "off");
  EXPECT_EQ(show(p.connection_info(), "work_mem"), "8MB");
  EXPECT_EQ(show(p.connection_info(), "fsync"), "on");
  EXPECT_EQ(show(p.connection_info(), "full_page_writes"), "off");
  auto server = p.server_info();
  EXPECT_EQ(server.settings.at("jit"), "off");
  EXPECT_EQ(server.settings.at("work_mem"), "8MB");
}

// How long a restart takes is bench/provider_times.sh's figure, against `pg_ctl restart`.
TEST(LocalProvider, RestartStartsAFreshServerOnTheSameUrl) {
  auto& cluster = shared_cluster();
  auto start_time = [&] {
    Connection c(cluster.connection_info());
    return std::string(c.exec("SELECT pg_postmaster_start_time()::text")[0][0].c_str());
  };
  std::string before = start_time();
  pid_t pid_before = cluster.postmaster_pid();
  auto url_before = cluster.connection_info().url();
  cluster.restart();
  EXPECT_NE(start_time(), before);
  EXPECT_NE(cluster.postmaster_pid(), pid_before);
  EXPECT_TRUE(postmasters_of(cluster.data_dir()).size() == 1u);
  EXPECT_EQ(cluster.connection_info().url(), url_before);
}

TEST(LocalProvider, StopLeavesNoProcessAndNoFiles) {
  LocalProvider p(small_cluster_options());
  p.start();
  fs::path data = p.data_dir(), run = p.run_dir();
  ASSERT_EQ(postmasters_of(data).size(), 1u);
  p.stop();
  EXPECT_TRUE(postmasters_of(data).empty());
  EXPECT_FALSE(fs::exists(run));
  EXPECT_TRUE(p.run_dir().empty());
  p.stop();  // twice is fine
}

TEST(LocalProvider, DestructorTearsDownOnException) {
  fs::path data, run;
  try {
    LocalProvider p(small_cluster_options());
    p.start();
    data = p.data_dir();
    run = p.run_dir();
    throw std::runtime_error("stage failed");
  } catch (const std::runtime_error&) {
  }
  ASSERT_FALSE(data.empty());
  EXPECT_TRUE(postmasters_of(data).empty());
  EXPECT_FALSE(fs::exists(run));
}

TEST(LocalProvider, ClusterOfSigkilledRunIsRemovedByNextStart) {
  auto child = testing::fork_child([](int out) {
    LocalProvider p(small_cluster_options());
    p.start();
    testing::write_line(out, p.data_dir().string());
    ::pause();  // until SIGKILL
  });
  fs::path data = child.read_line();
  ASSERT_FALSE(data.empty());
  ASSERT_EQ(data.string().rfind("error:", 0), std::string::npos) << data;
  ::kill(child.pid, SIGKILL);
  EXPECT_EQ(child.wait(), 128 + SIGKILL);
  ASSERT_EQ(postmasters_of(data).size(), 1u) << "the orphan should still run before the next start";

  LocalProvider next(small_cluster_options());
  next.start();
  EXPECT_TRUE(postmasters_of(data).empty());
  EXPECT_FALSE(fs::exists(data.parent_path()));
}

TEST(LocalProvider, SigintUnwindsAndTearsDown) {
  auto child = testing::fork_child([](int out) {
    util::install_interrupt_handlers();
    LocalProvider p(small_cluster_options());
    p.start();
    testing::write_line(out, p.data_dir().string());
    while (util::interrupted() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    util::throw_if_interrupted();  // the orderly unwind: the destructor stops the server
  });
  fs::path data = child.read_line();
  ASSERT_FALSE(data.empty());
  ASSERT_EQ(postmasters_of(data).size(), 1u);
  ::kill(child.pid, SIGINT);
  EXPECT_EQ(child.wait(), 1);  // Error(interrupted) reached the child's top level
  EXPECT_TRUE(postmasters_of(data).empty());
  EXPECT_FALSE(fs::exists(data.parent_path()));
}

TEST(LocalProvider, NoServerBinariesNamesWhatWasSearched) {
  auto opts = small_cluster_options();
  opts.version = 9;
  LocalProvider p(opts);
  try {
    p.start();
    FAIL() << "started without binaries";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_EQ(e.message(),
              "database.version: no PostgreSQL 9 server binaries found (searched: "
              "/usr/lib/postgresql/9/bin, /usr/pgsql-9/bin, pg_config --bindir, PATH); install "
              "postgresql-9, set database.bindir to the bin folder of a PostgreSQL 9, or change "
              "database.version");
  }
  EXPECT_TRUE(p.run_dir().empty());
}

TEST(LocalProvider, ABindirWithoutAServerOrOfAnotherMajorIsAConfigError) {
  testing::TempDir dir;
  auto opts = small_cluster_options();
  opts.bindir = dir.path();
  opts.where = "coldgate.yaml:3:3";
  try {
    LocalProvider(opts).start();
    FAIL() << "started without binaries";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.message(), "coldgate.yaml:3:3: database.bindir: " + dir.path().string() +
                            " has no runnable postgres and initdb; point it at the bin folder of "
                            "a PostgreSQL installation");
  }
  // The distribution's server, asked for as another major.
  auto found = find_server_binaries(std::nullopt, "");
  opts.bindir = found.bindir;
  opts.version = found.major + 1;
  try {
    LocalProvider(opts).start();
    FAIL() << "started PostgreSQL " << found.major << " for " << *opts.version;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.message(), fmt::format("coldgate.yaml:3:3: database.bindir: {} holds PostgreSQL "
                                       "{}, not the {} "
                                       "database.version asks for; change one of them",
                                       found.bindir.string(), found.major, found.major + 1));
  }
}

TEST(LocalProvider, FixedPortTakenIsAClearError) {
  HeldPort held;
  auto opts = small_cluster_options();
  opts.port = held.port;
  LocalProvider p(opts);
  try {
    p.start();
    FAIL() << "started on a taken port";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "database: port " + std::to_string(held.port) + " on 127.0.0.1 is already in use");
  }
  EXPECT_TRUE(p.run_dir().empty());  // cleaned up after the failed start
}

TEST(LocalProvider, TakenPortIsRetriedWithAnother) {
  HeldPort held;
  auto opts = small_cluster_options();
  opts.first_port = held.port;
  LocalProvider p(opts);
  p.start();
  EXPECT_NE(p.connection_info().port, held.port);
  EXPECT_EQ(show(p.connection_info(), "port"), std::to_string(p.connection_info().port));
}

TEST(LocalProvider, StartupFailureShowsServerLogTail) {
  auto opts = small_cluster_options();
  opts.settings["shared_buffers"] = "lots";
  LocalProvider p(opts);
  try {
    p.start();
    FAIL() << "started with a bad setting";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("database: PostgreSQL server did not start (exit status 1); "
                               "last 20 lines of its log:\n"),
              std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("invalid value for parameter \"shared_buffers\": \"lots\""),
              std::string::npos)
        << e.message();
  }
}

// The server program asked once for its version while its file stays the same: each start
// would otherwise run `postgres --version` (~25 ms).
TEST(LocalProvider, AServersVersionIsAskedOnceWhileItsProgramIsTheSame) {
  testing::TempDir dir;
  const auto real = find_server_binaries(std::nullopt, "");
  const fs::path bindir = dir / "bin";
  fs::create_directories(bindir);
  // The real server, through a script that counts how often it is started.
  auto write_postgres = [&](const std::string& extra) {
    std::ofstream(bindir / "postgres") << "#!/bin/sh\necho started >> " << (dir / "count").string()
                                       << "\n" << extra << "exec " << (real.bindir / "postgres").string()
                                       << " \"$@\"\n";
    fs::permissions(bindir / "postgres", fs::perms::owner_all);
  };
  write_postgres("");
  fs::create_symlink(real.bindir / "initdb", bindir / "initdb");
  auto starts = [&] {
    std::error_code ec;
    return fs::exists(dir / "count", ec) ? testing::slurp(dir / "count").size() / 8 : 0;
  };
  const fs::path cache = dir / "cache";
  auto first = server_binaries_in(bindir, std::nullopt, "", cache);
  EXPECT_EQ(first.version_text, real.version_text);
  EXPECT_EQ(starts(), 1u);
  auto second = server_binaries_in(bindir, std::nullopt, "", cache);
  EXPECT_EQ(second.version_text, real.version_text);
  EXPECT_EQ(second.major, real.major);
  EXPECT_EQ(starts(), 1u);  // from the cache
  // Another program in its place (an upgrade): asked again.
  write_postgres("# upgraded\n");
  auto third = server_binaries_in(bindir, std::nullopt, "", cache);
  EXPECT_EQ(third.version_text, real.version_text);
  EXPECT_EQ(starts(), 2u);
  // Without a cache folder: asked every time.
  server_binaries_in(bindir, std::nullopt, "");
  EXPECT_EQ(starts(), 3u);
}

TEST(LocalProvider, MissingVersionFindsNewest) {
  auto b = find_server_binaries(std::nullopt, "");
  EXPECT_GE(b.major, 10);
  EXPECT_TRUE(fs::exists(b.bindir / "postgres"));
  EXPECT_EQ(parse_major("postgres (PostgreSQL) 9.6.24"), 9);
  EXPECT_EQ(parse_major("postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)"), 15);
  EXPECT_EQ(parse_major("nonsense"), 0);
}

}  // namespace
}  // namespace coldgate::db

namespace coldgate::db {
namespace {

TEST(LocalProvider, DatabaseComesFromTheTemplatesSpareOne) {
  auto& cluster = testing::shared_cluster();
  Connection c(cluster.socket_info("postgres"));
  auto count = [&](const std::string& name) {
    return c.exec_params("SELECT count(*) FROM pg_database WHERE datname = $1", {name})[0][0]
        .as<int>();
  };
  EXPECT_EQ(count("coldgate_test"), 1);
  EXPECT_EQ(count("coldgate_spare"), 0);  // renamed, not copied
}

}  // namespace
}  // namespace coldgate::db

namespace coldgate::db {
namespace {

// Whether the server sees `info`'s connection over TCP: inet_client_addr() is NULL on a Unix
// socket.
std::string client_addr(const ConnectionInfo& info) {
  Connection c(info);
  auto r = c.exec("SELECT coalesce(host(inet_client_addr()), 'socket')");
  return r[0][0].c_str();
}

TEST(LocalProvider, OwnConnectionsTakeThePrivateSocketOthersAndChildrenKeepTcp) {
  auto& cluster = testing::shared_cluster();
  const ConnectionInfo& own = cluster.connection_info();
  EXPECT_EQ(client_addr(own), "socket");
  EXPECT_EQ(routed(own).host, (cluster.run_dir() / "socket").string());
  EXPECT_TRUE(routed(own).password.empty());
  // What children get (DATABASE_URL, PG*) still names TCP with the password.
  EXPECT_EQ(own.host, "127.0.0.1");
  EXPECT_NE(own.url().find("127.0.0.1"), std::string::npos);
  // A role of the user's own, with its own password: TCP and its own authentication.
  ConnectionInfo app = testing::fresh_database("socket_route");
  {
    Connection admin(own);
    admin.exec("DROP ROLE IF EXISTS socket_route_app");
    admin.exec("CREATE ROLE socket_route_app LOGIN PASSWORD 'app-secret'");
  }
  app.user = "socket_route_app";
  app.password = "app-secret";
  EXPECT_EQ(client_addr(app), "127.0.0.1");
  app.password = "wrong";
  EXPECT_THROW(client_addr(app), Error);
  Connection(own).exec("DROP ROLE socket_route_app");
}

// A run on a throwaway cluster leaves its isolation template to the cluster's removal (no
// DROP DATABASE and its checkpoint at the end); every other template is dropped as before.
TEST(LocalProvider, ATemplateLeftToTheServersRemovalIsNotDropped) {
  auto& cluster = testing::shared_cluster();
  const ConnectionInfo info = testing::fresh_database("template_left");
  Connection admin(cluster.socket_info("postgres"));
  auto there = [&](const std::string& name) {
    return admin.exec_params("SELECT count(*) FROM pg_database WHERE datname = $1", {name})[0][0]
        .as<int>();
  };
  std::string left;
  {
    DatabaseTemplate kept(info);
    left = kept.template_name();
    kept.leave_to_server_removal();
  }
  EXPECT_EQ(there(left), 1);
  std::string dropped;
  {
    DatabaseTemplate ordinary(info);
    dropped = ordinary.template_name();
    EXPECT_EQ(there(dropped), 1);
  }
  EXPECT_EQ(there(dropped), 0);
  admin.exec("DROP DATABASE " + admin.raw().quote_name(left));
}

// What the server log (log_connections, each line led by its backend's pid) says of the
// connections coldgate made itself (application_name coldgate; the runs' are named
// coldgate/<stage>/…, psql's psql) before the stage's first one: how many, how many over TCP.
TEST(LocalProvider, ARunsOwnChecksTakeTheSocketAndFewBackendsBeforeTheFirstRun) {
  testing::TempDir dir;
  dir.write("count.sh",
            "set -e\n"
            "log=\"$(dirname \"$(psql -XAtc 'show data_directory')\")/server.log\"\n"
            "awk '/connection received: host=/ { host[$1] = $5 }\n"
            "     /connection authorized: .*application_name=coldgate\\// { exit }\n"
            "     /connection authorized: .*application_name=coldgate$/ {\n"
            "       own++; if (host[$1] != \"host=[local]\") tcp++ }\n"
            "     END { print own + 0, tcp + 0 }' \"$log\" > own.txt\n");
  dir.write("coldgate.yaml",
            "version: 1\n"
            "database: { provider: local, settings: { log_connections: 'on', "
            "log_line_prefix: '%p ' } }\n"
            "defaults: { runs: 1, warm: 0 }\n"
            "stages:\n"
            "  - name: count\n"
            "    command: [sh, count.sh]\n");
  auto r = testing::run_coldgate({"run", "--no-ci", "--out", (dir / "out").string()}, dir.path(),
                                 "", {"CI=", "GITHUB_ACTIONS="});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string counts = testing::slurp(dir / "own.txt");
  int own = 0;
  int tcp = -1;
  ASSERT_EQ(std::sscanf(counts.c_str(), "%d %d", &own, &tcp), 2) << counts;
  // Every one over the private socket (before: all but the start-up's over TCP, with SCRAM).
  EXPECT_EQ(tcp, 0) << counts;
  // The provider's start-up one, which then serves setup's check of the maintenance database
  // and the template; one to the stages' database for setup's check, the profile, the plan
  // capture and isolation's checks, closed before the template is made from it; the stage's
  // profile resets: 3 (8 before they shared connections: db::OwnConnections; 4 before the
  // start-up one was handed on).
  EXPECT_LE(own, 3) << counts;
  EXPECT_GE(own, 3) << counts;
}

// Every file of `tree` below it, with its bytes: what a cluster copy must equal.
std::map<std::string, std::string> files_of(const fs::path& tree) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(tree)) {
    const std::string rel = e.path().lexically_relative(tree).string();
    out[rel] = e.is_regular_file() ? testing::slurp(e.path()) : "<" + std::to_string(static_cast<int>(e.symlink_status().type())) + ">";
  }
  return out;
}

TEST(LocalProvider, AStoppedClusterIsMadeTheTemplateAgainAndTheNextStartTakesIt) {
  testing::TempDir dir;
  auto opts = small_cluster_options();
  opts.cache_dir = dir / "cache";  // its own template and spare: no other test takes them
  auto spares = [&] {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir / "cache" / "templates"))
      if (e.path().extension() == ".spare") out.push_back(e.path());
    return out;
  };
  fs::path template_dir;
  {
    LocalProvider first(opts);
    first.start();
    EXPECT_FALSE(first.spare_was_taken());
    Connection admin(first.socket_info("postgres"));
    admin.exec("CREATE DATABASE scratch");
    admin.exec("ALTER SYSTEM SET work_mem = '7MB'");  // postgresql.auto.conf, a template file
    Connection db(first.socket_info("coldgate_test"));
    db.exec("CREATE TABLE t AS SELECT g FROM generate_series(1, 20000) g");
    admin.exec("CHECKPOINT");  // the changes in the files, not only in shared buffers
    first.stop();
    ASSERT_EQ(spares().size(), 1u);
    template_dir = fs::path(spares()[0].string().substr(0, spares()[0].string().size() - 6));
  }
  // Byte for byte what a copy of the template would be.
  EXPECT_EQ(files_of(spares()[0]), files_of(template_dir));

  LocalProvider second(opts);
  second.start();
  EXPECT_TRUE(second.spare_was_taken());
  EXPECT_TRUE(spares().empty());
  Connection db(second.socket_info("coldgate_test"));
  EXPECT_EQ(std::string(db.exec("SELECT count(*) FROM pg_class WHERE relname = 't'")[0][0].c_str()), "0");
  EXPECT_EQ(std::string(db.exec("SELECT count(*) FROM pg_database WHERE datname = 'scratch'")[0][0].c_str()), "0");
  EXPECT_EQ(show(second.connection_info(), "work_mem"), "4MB");
  db.exec("CREATE TABLE u (id int)");
  second.stop();
  ASSERT_EQ(spares().size(), 1u);
  EXPECT_EQ(files_of(spares()[0]), files_of(template_dir));

  // A server that did not end by itself (killed here, as an OOM kill would) is not parked: its
  // processes may still write.
  LocalProvider third(opts);
  third.start();
  EXPECT_TRUE(third.spare_was_taken());
  ASSERT_EQ(::kill(third.postmaster_pid(), SIGKILL), 0);
  const fs::path run_dir = third.run_dir();
  third.stop();
  EXPECT_TRUE(spares().empty());
  EXPECT_FALSE(fs::exists(run_dir));
}

// The copy each start makes when there is no spare (a $TMPDIR on another filesystem than the
// cache, as in CI): every entry with the template's bytes, mode and owner.
TEST(LocalProvider, ACopyOfTheTemplateKeepsEachFilesBytesModeAndOwner) {
  testing::TempDir dir;
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  const auto binaries = find_server_binaries(std::nullopt, "");
  const auto account = server_account();
  auto scratch = [&](const std::string& name) {
    fs::create_directories(dir / name);
    give_to(dir / name, account);
    return dir / name;
  };
  const Materialized built =
      materialize_cluster(binaries, dir / "cache", account, scratch("a"), dir / "a" / "data");
  ASSERT_FALSE(built.cached);
  const Materialized copied =
      materialize_cluster(binaries, dir / "cache", account, scratch("b"), dir / "b" / "data");
  EXPECT_TRUE(copied.cached);
  EXPECT_FALSE(copied.spare);
  EXPECT_EQ(files_of(dir / "b" / "data"), files_of(built.template_dir));
  for (const auto& e : fs::recursive_directory_iterator(built.template_dir)) {
    const fs::path copy = dir / "b" / "data" / e.path().lexically_relative(built.template_dir);
    struct stat a {}, b {};
    ASSERT_EQ(::lstat(e.path().c_str(), &a), 0);
    ASSERT_EQ(::lstat(copy.c_str(), &b), 0) << copy;
    EXPECT_EQ(a.st_mode, b.st_mode) << copy;
    EXPECT_EQ(a.st_uid, b.st_uid) << copy;
    if (S_ISREG(a.st_mode)) {
      EXPECT_EQ(a.st_mtim.tv_nsec, b.st_mtim.tv_nsec) << copy;
    }
  }
}

TEST(LocalProvider, ASpareWhoseTemplateIsGoneIsRemovedAsAbandoned) {
  testing::TempDir dir;
  const fs::path templates = dir / "templates";
  fs::create_directories(templates / "pg15-0123456789abcdef");
  fs::create_directories(templates / "pg15-0123456789abcdef.spare" / "base");
  fs::create_directories(templates / "pg15-fedcba9876543210.spare" / "base");
  EXPECT_EQ(remove_abandoned_template_copies(dir.path()), 1);
  EXPECT_TRUE(fs::exists(templates / "pg15-0123456789abcdef.spare"));
  EXPECT_FALSE(fs::exists(templates / "pg15-fedcba9876543210.spare"));
}

}  // namespace
}  // namespace coldgate::db
