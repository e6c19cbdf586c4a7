#include "cli/db_command.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "support/cluster.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::cli {
using db::Connection;
using db::ConnectionInfo;
using db::default_cache_dir;
namespace {

namespace fs = std::filesystem;

std::string write_config(const testing::TempDir& dir) {
  dir.write("schema.sql",
            "CREATE TABLE greeting (text text);\nINSERT INTO greeting VALUES ('hi');\n");
  return dir
      .write("coldgate.yaml",
             "version: 1\n"
             "database:\n"
             "  provider: local\n"
             "  name: app\n"
             "  settings: { shared_buffers: 16MB, max_connections: '20' }\n"
             "setup:\n"
             "  - sql: schema.sql\n"
             "stages:\n"
             "  - name: q\n"
             "    query: SELECT text FROM greeting\n")
      .string();
}

// `db up` in a forked child whose stdout is the pipe; returns the child and the URL line.
testing::Child start_up(const std::string& config) {
  return testing::fork_child([config](int out) {
    ::dup2(out, STDOUT_FILENO);
    int code = run_db("up", config);
    std::cout.flush();
    ::_exit(code);
  });
}

TEST(DbCommand, UpPrintsUrlUrlRepeatsItDownStopsIt) {
  testing::TempDir dir;
  auto config = write_config(dir);
  auto child = start_up(config);
  std::string url = child.read_line();
  ASSERT_EQ(url.rfind("postgresql://postgres:", 0), 0u) << url;
  auto info = ConnectionInfo::parse(url, "");
  EXPECT_EQ(info.dbname, "app");
  {
    Connection c(info);
    EXPECT_EQ(std::string(c.exec("SELECT text FROM greeting")[0][0].c_str()), "hi");
  }

  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run_db("url", config), 0);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), url + "\n");

  try {
    run_db("up", config);
    FAIL() << "a second db up of the same config started";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(e.message().find("is already running"), std::string::npos) << e.message();
  }

  EXPECT_EQ(run_db("down", config), 0);
  EXPECT_EQ(child.wait(), 0);
  EXPECT_THROW(Connection{info}, Error);
  EXPECT_FALSE(fs::exists(db_up_state_path(default_cache_dir(), config)));
  try {
    run_db("url", config);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "no `coldgate db up` is running for " + config);
  }
}

TEST(DbCommand, CtrlCStopsTheServer) {
  testing::TempDir dir;
  auto config = write_config(dir);
  auto child = start_up(config);
  std::string url = child.read_line();
  ASSERT_EQ(url.rfind("postgresql://", 0), 0u) << url;
  ::kill(child.pid, SIGINT);
  EXPECT_EQ(child.wait(), 0);
  EXPECT_THROW(Connection{ConnectionInfo::parse(url, "")}, Error);
}

// A `db up` killed with SIGKILL cannot remove its state file, which holds the URL with the
// password: the file is 0600 from its creation, and the next `db down`, `db up` or `run`
// removes it. Each test has a cache folder of its own, so no other command sweeps it meanwhile.
struct KilledUp : ::testing::Test {
  testing::TempDir cache;
  testing::ScopedEnv xdg{"XDG_CACHE_HOME", cache.path().c_str()};
  testing::TempDir tmp;  // the `db up`s' work folders: what a killed one left is seen here
  // As /tmp is: the server's unprivileged account reaches its own folder under it.
  int tmp_mode_set = ::chmod(tmp.path().c_str(), 01777);
  testing::ScopedEnv tmpdir{"TMPDIR", tmp.path().c_str()};
  testing::TempDir dir;

  // The `coldgate-up-*` work folders in this test's TMPDIR.
  std::vector<std::string> work_dirs() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(tmp.path())) {
      std::string name = e.path().filename().string();
      if (name.rfind("coldgate-up-", 0) == 0) out.push_back(name);
    }
    return out;
  }

  // Starts `db up` of `config`, reads its URL, kills it with SIGKILL and reaps it (waitpid).
  std::string up_and_kill(const std::string& config) {
    auto child = start_up(config);
    std::string url = child.read_line();
    EXPECT_EQ(url.rfind("postgresql://postgres:", 0), 0u) << url;
    ::kill(child.pid, SIGKILL);
    EXPECT_EQ(child.wait(), 128 + SIGKILL);
    return url;
  }
};

TEST_F(KilledUp, ItsStateFileIsPrivateAndDownRemovesItAndStopsItsServer) {
  auto config = write_config(dir);
  const std::string url = up_and_kill(config);
  const fs::path state = db_up_state_path(default_cache_dir(), config);
  ASSERT_EQ(state.parent_path().parent_path(), cache.path() / "coldgate");
  struct stat st{};
  ASSERT_EQ(::stat(state.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string text = testing::slurp(state);
  EXPECT_NE(text.find("\nurl=" + url + "\n"), std::string::npos) << text;
  const std::string pid = text.substr(4, text.find('\n') - 4);  // "pid=N\n…"
  const auto info = ConnectionInfo::parse(url, "");
  { Connection still_there(info); }  // nothing stopped the server it started

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_db("down", config), 0);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "coldgate: the `coldgate db up` of " + config + " (pid " + pid +
                ") had ended without stopping (killed?); removed its state file and what it left "
                "running\n");
  EXPECT_FALSE(fs::exists(state));
  EXPECT_THROW(Connection{info}, Error);
  EXPECT_EQ(work_dirs(), std::vector<std::string>{});
  try {
    run_db("down", config);
    FAIL() << "a second down found a db up";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "no `coldgate db up` is running for " + config);
  }
}

TEST_F(KilledUp, TheNextUpOfAnotherConfigRemovesItsStateFile) {
  auto config = write_config(dir);
  up_and_kill(config);
  const fs::path state = db_up_state_path(default_cache_dir(), config);
  ASSERT_TRUE(fs::exists(state));

  testing::TempDir other;
  auto other_config = write_config(other);
  auto child = start_up(other_config);
  std::string url = child.read_line();
  ASSERT_EQ(url.rfind("postgresql://", 0), 0u) << url;
  EXPECT_FALSE(fs::exists(state));
  EXPECT_TRUE(fs::exists(db_up_state_path(default_cache_dir(), other_config)));
  EXPECT_EQ(run_db("down", other_config), 0);
  EXPECT_EQ(child.wait(), 0);
  EXPECT_EQ(work_dirs(), std::vector<std::string>{});
}

TEST_F(KilledUp, TheNextRunRemovesItsStateFile) {
  auto config = write_config(dir);
  const std::string url = up_and_kill(config);
  const fs::path state = db_up_state_path(default_cache_dir(), config);
  ASSERT_TRUE(fs::exists(state));
  ASSERT_EQ(work_dirs().size(), 1u);  // the killed one's
  auto r = testing::run_coldgate({"run", "--no-ci"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(state));
  EXPECT_EQ(work_dirs(), std::vector<std::string>{});
  EXPECT_THROW(Connection{ConnectionInfo::parse(url, "")}, Error);  // its server was stopped
}

TEST(DbCommand, UnknownActionIsUsageError) {
  try {
    run_db("sideways", "coldgate.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.message(), "unknown db action 'sideways'; use up, down or url");
  }
}

}  // namespace
}  // namespace coldgate::cli
