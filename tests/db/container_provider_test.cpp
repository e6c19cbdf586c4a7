// The container provider on real containers: podman directly, and the docker CLI talking to
// `podman system service` (ci/setup-podman.sh). A machine that is not set up fails these tests
// with a message naming the script; they never skip. Container starts cost seconds each, so
// one test checks a whole lifecycle.
#include "db/container_provider.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "support/cluster.hpp"
#include "support/containers.hpp"
#include "support/support.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::db {
namespace {

using testing::container_options;
using testing::container_setup_problem;
using testing::containers_of_run;
using testing::engine_call;
using testing::engine_ok;

std::string one(const ConnectionInfo& info, const std::string& sql) {
  Connection c(info);
  return c.exec(sql)[0][0].c_str();
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// PID of a process that has ended (forked and reaped), for a leftover with a dead owner.
pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

// A labelled, never started container as a run owned by `owner` would leave it.
std::string create_labelled(const std::string& engine, const std::string& run_id, pid_t owner,
                            long long owner_start) {
  return engine_call(engine,
                     {"create", "--label", "coldgate.run=" + run_id, "--label",
                      "coldgate.owner=" + std::to_string(owner), "--label",
                      "coldgate.owner_start=" + std::to_string(owner_start), "--label",
                      "coldgate.host=" + host_name(), "-e", "POSTGRES_PASSWORD=x", "postgres:15"});
}

// PATH replaced for one scope (engine look-ups read it).
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& path) {
    if (const char* old = std::getenv("PATH")) m_old = old;
    ::setenv("PATH", path.c_str(), 1);
  }
  ~ScopedPath() {
    if (m_old) {
      ::setenv("PATH", m_old->c_str(), 1);
    } else {
      ::unsetenv("PATH");
    }
  }

 private:
  std::optional<std::string> m_old;
};

void write_executable(const std::filesystem::path& path) {
  std::ofstream(path) << "#!/bin/sh\nexit 1\n";
  ::chmod(path.c_str(), 0755);
}

// ---- through podman and through the docker CLI ------------------------------------------------

class ContainerProviderTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ContainerProviderTest, StartsRestartsAndRemovesEverything) {
  const std::string engine = GetParam();
  ASSERT_EQ(container_setup_problem(engine), "");

  // Leftovers: one whose owner has exited (stale), one owned by us (alive: must be kept).
  std::string tag = std::to_string(::getpid());
  std::string stale_run = "stale" + tag, live_run = "live" + tag;
  create_labelled(engine, stale_run, dead_pid(), 1);
  create_labelled(engine, live_run, ::getpid(), process_start_time(::getpid()));

  auto options = container_options(engine);
  options.settings = {{"work_mem", "7MB"}};
  options.run_args = {"--label", "coldgate.test=run-args"};
  db::ContainerProvider p(options);
  EXPECT_EQ(p.name(), "container");
  p.start();

  EXPECT_TRUE(containers_of_run(engine, stale_run).empty()) << "start() removes stale containers";
  EXPECT_EQ(containers_of_run(engine, live_run).size(), 1u) << "a live owner's container stays";
  engine_call(engine, {"rm", "-f", "-v", containers_of_run(engine, live_run).at(0)});

  const ConnectionInfo& info = p.connection_info();
  EXPECT_EQ(info.host, "127.0.0.1");
  EXPECT_EQ(info.user, "postgres");
  EXPECT_EQ(info.dbname, "coldgate_test");
  EXPECT_EQ(info.password.size(), 24u);
  // Published on the loopback address only, at the port connection_info() names.
  EXPECT_EQ(engine_call(engine, {"port", p.container_name(), "5432/tcp"}),
            "127.0.0.1:" + std::to_string(info.port));
  std::string labels =
      engine_call(engine, {"inspect", "--format",
                           "{{index .Config.Labels \"coldgate.run\"}} {{index .Config.Labels "
                           "\"coldgate.owner\"}} {{index .Config.Labels \"coldgate.test\"}}",
                           p.container_name()});
  EXPECT_EQ(labels, p.run_id() + " " + std::to_string(::getpid()) + " run-args");
  std::string volumes = engine_call(
      engine, {"inspect", "--format", "{{range .Mounts}}{{.Name}} {{end}}", p.container_name()});
  EXPECT_FALSE(volumes.empty()) << "the image's VOLUME gives the container an anonymous volume";

  EXPECT_EQ(one(info, "SELECT current_database()"), "coldgate_test");
  EXPECT_EQ(one(info, "SHOW fsync"), "off");
  EXPECT_EQ(one(info, "SHOW full_page_writes"), "off");
  EXPECT_EQ(one(info, "SHOW synchronous_commit"), "off");
  EXPECT_EQ(one(info, "SHOW work_mem"), "7MB");
  ServerInfo server = p.server_info();
  EXPECT_EQ(server.version_num / 10000, 15);
  EXPECT_EQ(server.settings.at("work_mem"), "7MB");
  ConnectionInfo wrong = info;
  wrong.password = "wrong";
  EXPECT_THROW(Connection c(wrong), Error) << "TCP needs the run's password";

  std::string started = one(info, "SELECT pg_postmaster_start_time()::text");
  p.restart();
  EXPECT_NE(one(p.connection_info(), "SELECT pg_postmaster_start_time()::text"), started);
  EXPECT_EQ(one(p.connection_info(), "SHOW work_mem"), "7MB");

  std::string run_id = p.run_id();
  p.stop();
  EXPECT_TRUE(containers_of_run(engine, run_id).empty());
  if (engine != "podman") {
    EXPECT_TRUE(containers_of_run("podman", run_id).empty());
  }
  std::istringstream names(volumes);
  for (std::string v; names >> v;) {
    EXPECT_FALSE(engine_ok(engine, {"volume", "inspect", v})) << "anonymous volume " << v;
  }
  p.stop();  // a second stop is a no-op
}

// How long the failed pull takes is bench/provider_times.sh's figure (--container), against
// the engine's own `pull`.
TEST_P(ContainerProviderTest, MissingImageIsAClearErrorWithTheEnginesWords) {
  const std::string engine = GetParam();
  ASSERT_EQ(container_setup_problem(engine), "");
  auto options = container_options(engine);
  options.image = "";
  options.version = 99;
  options.where = "coldgate.yaml:2:3";
  db::ContainerProvider p(options);
  EXPECT_EQ(p.image(), "postgres:99");
  try {
    p.start();
    FAIL() << "started without an image";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_EQ(e.where(), "coldgate.yaml:2:3");
    std::string what = e.what();
    const std::string first =
        "image postgres:99 not found locally and could not be pulled; build or pull it first\n";
    EXPECT_EQ(what.substr(0, first.size()), first) << what;
    EXPECT_GT(what.size(), first.size()) << "the engine's stderr tail follows";
  }
  EXPECT_TRUE(containers_of_run(engine, p.run_id()).empty());
}

// A setting the server refuses stops the container's postgres at start: the config's error at
// that setting's name, and the container is gone.
TEST_P(ContainerProviderTest, ARefusedSettingIsAConfigErrorAtItsName) {
  const std::string engine = GetParam();
  ASSERT_EQ(container_setup_problem(engine), "");
  auto options = container_options(engine);
  options.settings["shared_buffers"] = "nonsense";
  options.settings_where["shared_buffers"] = "coldgate.yaml:6:15";
  options.where = "coldgate.yaml:2:3";
  db::ContainerProvider p(options);
  try {
    p.start();
    FAIL() << "started with shared_buffers = nonsense";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.message(),
              "coldgate.yaml:6:15: database.settings.shared_buffers: the server refused it: "
              "invalid value for parameter \"shared_buffers\": \"nonsense\" — fix the value or "
              "remove the setting");
  }
  p.stop();
  EXPECT_TRUE(containers_of_run(engine, p.run_id()).empty());
}

INSTANTIATE_TEST_SUITE_P(ContainerEngines, ContainerProviderTest,
                         ::testing::Values("podman", "docker"),
                         [](const auto& info) { return info.param; });

// The config's own shared_preload_libraries kept beside pg_stat_statements, as for `local`
// (podman only: the image's server, not the engine, loads them).
TEST(ContainerProviderProfile, KeepsTheConfiguredLibrariesBesideTheProfiles) {
  ASSERT_EQ(container_setup_problem("podman"), "");
  config::Database database;
  database.settings = {{"shared_preload_libraries", "auto_explain"}};
  auto options = db::ContainerOptions::from(database);
  auto test_options = container_options("podman");
  options.engine = test_options.engine;
  options.image = test_options.image;
  options.dbname = test_options.dbname;
  options.engine_env = test_options.engine_env;
  db::ContainerProvider p(options);
  p.start();
  EXPECT_EQ(one(p.connection_info(), "SHOW shared_preload_libraries"),
            "auto_explain,pg_stat_statements");
  // auto_explain's own setting exists only when the library is loaded.
  EXPECT_EQ(one(p.connection_info(), "SHOW auto_explain.log_min_duration"), "-1");
  EXPECT_EQ(one(p.connection_info(), "SHOW compute_query_id"), "on");
  p.stop();
}

// The plan run's two needs: auto_explain set up for JSON plans, and the server's log readable
// through the engine, from an offset on (what a plan run reads after its marker).
TEST(ContainerProviderProfile, PreloadsAutoExplainForPlanRunsAndReadsTheServersLog) {
  ASSERT_EQ(container_setup_problem("podman"), "");
  auto options = container_options("podman");
  options.profile = true;
  db::ContainerProvider p(options);
  p.start();
  EXPECT_EQ(one(p.connection_info(), "SHOW auto_explain.log_format"), "json");
  EXPECT_EQ(one(p.connection_info(), "SHOW auto_explain.log_min_duration"), "-1");
  auto before = p.read_log(0);
  ASSERT_TRUE(before.has_value());
  const std::string marker = "coldgate-test-marker-" + std::to_string(::getpid());
  Connection(p.connection_info()).exec("DO $$BEGIN RAISE LOG '" + marker + "'; END$$");
  // The engine hands the container's stderr on a moment later: wait for the line, not a time.
  std::string after;
  for (int i = 0; i < 3000 && after.find(marker) == std::string::npos; ++i) {
    after = p.read_log(before->size()).value_or("");
    if (after.find(marker) == std::string::npos) ::usleep(10000);
  }
  EXPECT_NE(after.find(marker), std::string::npos) << after;
  p.stop();
  EXPECT_FALSE(p.read_log(0).has_value());
}

// ---- exit paths (podman only: the engine does not matter here) --------------------------------

TEST(ContainerProviderExit, ContainerExitingDuringStartShowsItsLog) {
  ASSERT_EQ(container_setup_problem("podman"), "");
  auto options = container_options("podman");
  options.settings = {{"no_such_setting", "1"}};
  db::ContainerProvider p(options);
  try {
    p.start();
    FAIL() << "started with an unknown setting";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    std::string what = e.what();
    std::string head = "database: container " + p.container_name() +
                       " (postgres:15) exited during start (exit status 1); last 20 lines of "
                       "its log:\n";
    EXPECT_EQ(what.substr(0, head.size()), head) << what;
    EXPECT_NE(what.find("unrecognized configuration parameter \"no_such_setting\""),
              std::string::npos)
        << what;
  }
  EXPECT_TRUE(containers_of_run("podman", p.run_id()).empty());
}

TEST(ContainerProviderExit, NotReadyInTimeShowsTheLogAndRemovesTheContainer) {
  ASSERT_EQ(container_setup_problem("podman"), "");
  auto options = container_options("podman");
  // No TCP listener: the server runs (on its Unix socket only) but can never accept a login on
  // the published port, so the timeout is reached however fast the container starts.
  options.settings = {{"listen_addresses", ""}};
  options.ready_timeout = std::chrono::milliseconds(300);
  db::ContainerProvider p(options);
  try {
    p.start();
    FAIL() << "ready within 300 ms";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    std::string what = e.what();
    std::string head = "database: PostgreSQL in container " + p.container_name() +
                       " (postgres:15) did not accept connections on 127.0.0.1:" +
                       std::to_string(p.connection_info().port) +
                       " within 300 ms; last 20 lines of its log:\n";
    EXPECT_EQ(what.substr(0, head.size()), head) << what;
  }
  EXPECT_TRUE(containers_of_run("podman", p.run_id()).empty());
}

TEST(ContainerProviderExit, SigintUnwindsAndRemovesTheContainer) {
  ASSERT_EQ(container_setup_problem("podman"), "");
  auto child = testing::fork_child([](int out) {
    util::install_interrupt_handlers();
    db::ContainerProvider p(container_options("podman"));
    p.start();
    testing::write_line(out, p.run_id());
    while (util::interrupted() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    util::throw_if_interrupted();  // the orderly unwind: the destructor removes the container
  });
  std::string run_id = child.read_line(120'000);
  ASSERT_FALSE(run_id.empty());
  ASSERT_EQ(run_id.rfind("error:", 0), std::string::npos) << run_id;
  ASSERT_EQ(containers_of_run("podman", run_id).size(), 1u);
  ::kill(child.pid, SIGINT);
  EXPECT_EQ(child.wait(), 1);  // Error(interrupted) reached the child's top level
  EXPECT_TRUE(containers_of_run("podman", run_id).empty());
}

TEST(ContainerProviderExit, ContainerOfSigkilledRunIsRemovedAsStale) {
  ASSERT_EQ(container_setup_problem("podman"), "");
  auto child = testing::fork_child([](int out) {
    db::ContainerProvider p(container_options("podman"));
    p.start();
    testing::write_line(out, p.run_id());
    ::pause();  // until SIGKILL
  });
  std::string run_id = child.read_line(120'000);
  ASSERT_FALSE(run_id.empty());
  ASSERT_EQ(run_id.rfind("error:", 0), std::string::npos) << run_id;
  ::kill(child.pid, SIGKILL);
  EXPECT_EQ(child.wait(), 128 + SIGKILL);
  // Normally still there; a start() in a test running in parallel may have removed it already,
  // which is the behaviour under test as well.
  if (!containers_of_run("podman", run_id).empty()) {
    EXPECT_GE(remove_stale_containers(*util::find_program("podman"), {}), 1);
  }
  EXPECT_TRUE(containers_of_run("podman", run_id).empty());
}

// ---- no container needed ---------------------------------------------------------------------

TEST(ContainerProviderEngine, MissingEngineNamesTheAlternative) {
  testing::TempDir empty;
  ScopedPath path(empty.path().string());
  config::Database database;
  database.provider = config::Provider::container;
  database.engine = "docker";
  database.where = {.file = "coldgate.yaml", .line = 3, .column = 3};
  auto provider = make_provider(database);
  EXPECT_EQ(provider->name(), "container");
  try {
    provider->start();
    FAIL() << "started without an engine";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_EQ(e.message(),
              "coldgate.yaml:3:3: database.engine: docker not found on PATH; install it or set "
              "engine: podman");
  }
  try {
    find_engine("podman", "");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "database.engine: podman not found on PATH; install it or set engine: docker");
  }
  try {
    find_engine("", "");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "database.engine: neither docker nor podman found on PATH; install one or use "
              "provider: local");
  }
}

TEST(ContainerProviderEngine, DefaultEngineIsDockerThenPodman) {
  testing::TempDir bin;
  ScopedPath path(bin.path().string());
  write_executable(bin / "podman");
  EXPECT_EQ(find_engine("", ""), bin / "podman");
  write_executable(bin / "docker");
  EXPECT_EQ(find_engine("", ""), bin / "docker");
  EXPECT_EQ(find_engine("podman", ""), bin / "podman");
}

TEST(ContainerProviderEngine, UnreachableDockerServiceSaysSo) {
  if (!util::find_program("docker")) GTEST_FAIL() << "docker CLI not on PATH";
  testing::TempDir dir;
  auto options = container_options("docker");
  options.engine_env = {"DOCKER_HOST=unix://" + (dir / "none.sock").string()};
  db::ContainerProvider p(options);
  try {
    p.start();
    FAIL() << "started without a service";
  } catch (const Error& e) {
    std::string what = e.what();
    std::string head =
        "database.engine: `docker image inspect postgres:15` failed (exit status 1); is the "
        "docker service running (DOCKER_HOST)?\n";
    EXPECT_EQ(what.substr(0, head.size()), head) << what;
  }
}

TEST(ContainerProviderEngine, OptionsComeFromTheConfig) {
  config::Database database;
  database.provider = config::Provider::container;
  database.version = 16;
  database.engine = "podman";
  database.run_args = {"--shm-size=256m"};
  database.name = "app";
  database.settings = {{"jit", "off"}};
  auto o = ContainerOptions::from(database);
  EXPECT_EQ(o.engine, "podman");
  EXPECT_EQ(o.run_args, std::vector<std::string>{"--shm-size=256m"});
  EXPECT_EQ(o.dbname, "app");
  EXPECT_EQ(o.settings.at("jit"), "off");
  EXPECT_EQ(db::ContainerProvider(o).image(), "postgres:16");
  database.version.reset();
  EXPECT_EQ(db::ContainerProvider(ContainerOptions::from(database)).image(), "postgres:15");
  database.image = "registry.example/pg:15.8";
  EXPECT_EQ(db::ContainerProvider(ContainerOptions::from(database)).image(),
            "registry.example/pg:15.8");
}

}  // namespace
}  // namespace coldgate::db
