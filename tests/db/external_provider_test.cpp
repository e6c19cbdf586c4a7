#include "db/external_provider.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "db/connection.hpp"
#include "support/cluster.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::db {
namespace {

config::Database external(const std::string& url, const std::string& restart = "") {
  config::Database d;
  d.provider = config::Provider::external;
  d.url = url;
  d.restart_command = restart;
  return d;
}

TEST(ExternalProvider, ConnectsToUrlAndReportsServer) {
  auto url = testing::shared_cluster().connection_info().url();
  ExternalProvider p(external(url));
  p.start();
  EXPECT_EQ(p.connection_info().url(), url);
  auto info = p.server_info();
  EXPECT_GT(info.version_num, 100000);
  EXPECT_EQ(info.settings.at("fsync"), "off");
}

TEST(ExternalProvider, KeyValueStringWorksToo) {
  auto ci = testing::shared_cluster().connection_info();
  ExternalProvider p(external(ci.conninfo()));
  p.start();
  EXPECT_EQ(p.connection_info().port, ci.port);
}

// How long the refusal takes is bench/provider_times.sh's figure, against libpq's own connect.
TEST(ExternalProvider, RefusedConnectionFailsWithPasswordMasked) {
  ExternalProvider p(external("postgresql://app:hunter2@127.0.0.1:1/shop"));
  try {
    p.start();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_EQ(
        e.message().rfind("database: cannot connect to postgresql://app:***@127.0.0.1:1/shop: "
                          "connection to server at \"127.0.0.1\", port 1 failed: Connection "
                          "refused",
                          0),
        0u)
        << e.message();
    EXPECT_EQ(e.message().find("hunter2"), std::string::npos);
  }
}

// A loopback listener that never answers: the TCP handshake completes in the kernel, the
// PostgreSQL startup reply never comes. Stands in for a blackholed host without sending
// traffic anywhere but 127.0.0.1. That the URL's connect_timeout is the one libpq gets is
// DbConnection.ClientDefaultsKeepTheConnectTimeoutGiven; how long the wait is,
// bench/provider_times.sh.
TEST(ExternalProvider, SilentServerFailsWhenTheConnectTimeoutFires) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 8), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  ExternalProvider p(
      external(fmt::format("postgresql://app@127.0.0.1:{}/shop?connect_timeout=2", port)));
  try {
    p.start();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("timeout expired"), std::string::npos) << e.message();
  }
  ::close(fd);
}

TEST(ExternalProvider, RestartWithoutCommandIsAConfigError) {
  ExternalProvider p(external(testing::shared_cluster().connection_info().url()));
  try {
    p.restart();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.message(),
              "database.restart_command: needed for `cold: restart` with provider: "
              "external (a shell command that restarts the server)");
  }
}

TEST(ExternalProvider, RestartRunsCommandWithEnvThenWaitsForServer) {
  testing::TempDir dir;
  auto out = dir / "restarted";
  ExternalProvider p(external(testing::shared_cluster().connection_info().url(),
                              "echo \"$PGPORT $PGDATABASE\" > " + out.string()));
  p.restart();
  EXPECT_EQ(testing::slurp(out), std::to_string(p.connection_info().port) + " coldgate_test\n");
}

TEST(ExternalProvider, FailingRestartCommandShowsStderr) {
  ExternalProvider p(external(testing::shared_cluster().connection_info().url(),
                              "echo 'systemctl: unit not found' >&2; exit 5"));
  try {
    p.restart();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "database.restart_command: `echo 'systemctl: unit not found' >&2; exit 5` "
              "failed (exit status 5):\nsystemctl: unit not found");
  }
}

TEST(ExternalProvider, EmptyUrlIsAConfigError) {
  try {
    ExternalProvider p(external(""));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "database.url: required for provider: external");
  }
}

}  // namespace
}  // namespace coldgate::db
