#include "cli/db_command.hpp"

#include <gtest/gtest.h>
#include <signal.h>
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
