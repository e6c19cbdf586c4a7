#include "db/connection.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

#include "db/connection_info.hpp"
#include "db/own_connections.hpp"
#include "support/cluster.hpp"
#include "util/error.hpp"

namespace coldgate::db {
namespace {

TEST(DbConnectionInfo, ParsesUrl) {
  auto i =
      ConnectionInfo::parse("postgresql://app:s%40cret@db.example:6543/shop?sslmode=require", "");
  EXPECT_EQ(i.host, "db.example");
  EXPECT_EQ(i.port, 6543);
  EXPECT_EQ(i.user, "app");
  EXPECT_EQ(i.password, "s@cret");
  EXPECT_EQ(i.dbname, "shop");
  EXPECT_EQ(i.options.at("sslmode"), "require");
  EXPECT_EQ(i.url(), "postgresql://app:s%40cret@db.example:6543/shop?sslmode=require");
  EXPECT_EQ(i.display(), "postgresql://app:***@db.example:6543/shop?sslmode=require");
}

TEST(DbConnectionInfo, ParsesKeyValueAndQuotes) {
  auto i = ConnectionInfo::parse("host=/run/pg port=5433 user=u password='a b\\'c' dbname=d", "");
  EXPECT_EQ(i.host, "/run/pg");
  EXPECT_EQ(i.password, "a b'c");
  EXPECT_EQ(i.conninfo(), "host='/run/pg' port='5433' user='u' password='a b\\'c' dbname='d'");
  EXPECT_EQ(i.url(true), "postgresql://u:***@/d?host=%2Frun%2Fpg&port=5433");
  auto again = ConnectionInfo::parse(i.conninfo(), "");
  EXPECT_EQ(again.password, i.password);
}

TEST(DbConnectionInfo, EnvForChildren) {
  ConnectionInfo i{
      .host = "127.0.0.1", .port = 5500, .user = "postgres", .password = "pw", .dbname = "app"};
  auto env = i.env();
  std::vector<std::string> want{"PGHOST=127.0.0.1",
                                "PGPORT=5500",
                                "PGUSER=postgres",
                                "PGDATABASE=app",
                                "DATABASE_URL=postgresql://postgres:pw@127.0.0.1:5500/app",
                                "PGPASSWORD=pw"};
  EXPECT_EQ(env, want);
}

TEST(DbConnectionInfo, FactsForEnvValuesWithTheJdbcUrlPercentEncoded) {
  ConnectionInfo i{.host = "127.0.0.1",
                   .port = 5500,
                   .user = "app user",
                   .password = "p@ss/w:rd+1",
                   .dbname = "shop",
                   .options = {{"sslmode", "require"}, {"connect_timeout", "5"}}};
  EXPECT_EQ(i.facts(),
            (std::map<std::string, std::string>{
                {"PGHOST", "127.0.0.1"},
                {"PGPORT", "5500"},
                {"PGUSER", "app user"},
                {"PGPASSWORD", "p@ss/w:rd+1"},
                {"PGDATABASE", "shop"},
                {"DATABASE_URL", "postgresql://app%20user:p%40ss%2Fw%3Ard%2B1@127.0.0.1:5500/"
                                 "shop?connect_timeout=5&sslmode=require"},
                {"JDBC_DATABASE_URL", "jdbc:postgresql://127.0.0.1:5500/shop?user=app%20user&"
                                      "password=p%40ss%2Fw%3Ard%2B1&sslmode=require"}}));
  // Without a password: PGPASSWORD is empty and the JDBC URL has none.
  ConnectionInfo v6{.host = "::1", .port = 5432, .user = "u", .dbname = "d"};
  EXPECT_EQ(v6.facts().at("PGPASSWORD"), "");
  EXPECT_EQ(v6.jdbc_url(), "jdbc:postgresql://[::1]:5432/d?user=u");
}

TEST(DbConnectionInfo, InvalidStringIsUsageErrorWithPasswordMasked) {
  try {
    ConnectionInfo::parse("postgresql://u:topsecret@host:notaport/db", "coldgate.yaml:3:8");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.where(), "coldgate.yaml:3:8");
    EXPECT_EQ(e.message().find("topsecret"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("postgresql://u:***@host:notaport/db"), std::string::npos)
        << e.message();
  }
}

TEST(DbConnection, ExecWithParamsAndNull) {
  Connection c(testing::shared_cluster().connection_info());
  auto r = c.exec_params("SELECT $1::int + 1, $2::text IS NULL", {std::string("41"), std::nullopt});
  EXPECT_EQ(r[0][0].as<int>(), 42);
  EXPECT_TRUE(r[0][1].as<bool>());
}

TEST(DbConnection, SqlErrorCarriesSqlstateAndServerMessage) {
  Connection c(testing::shared_cluster().connection_info());
  try {
    c.exec("SELECT 1;\nSELECT * FROM no_such_table", "stage config-load");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::gate_failed);
    EXPECT_EQ(e.message(),
              "stage config-load: SQLSTATE 42P01: relation \"no_such_table\" does "
              "not exist (query line 2)");
  }
}

TEST(DbConnection, ScriptErrorHasFileLineColumn) {
  auto info = testing::fresh_database("conn_script");
  try {
    run_script(
        info,
        "CREATE TABLE t (id int);\n-- ünïcode comment\nINSERT INTO t VALUES (1);\n  SELEC 1;\n",
        "schema.sql");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "schema.sql:4:3: SQLSTATE 42601: syntax error at or near \"SELEC\"");
  }
  // One implicit transaction: the table from line 1 was rolled back.
  Connection c(info);
  EXPECT_EQ(c.exec("SELECT to_regclass('t') IS NULL")[0][0].as<bool>(), true);
}

TEST(DbConnection, LineColCountsCharacters) {
  EXPECT_EQ(line_col("abc", 1), std::make_pair(1, 1));
  EXPECT_EQ(line_col("ab\ncd", 4), std::make_pair(2, 1));
  EXPECT_EQ(line_col("é\nxé y", 6), std::make_pair(2, 4));
}

// How long the refusal takes is bench/provider_times.sh's figure, against libpq's own connect.
TEST(DbConnection, ConnectFailureNamesHostNotPassword) {
  ConnectionInfo i{
      .host = "127.0.0.1", .port = 1, .user = "u", .password = "hunter2", .dbname = "d"};
  try {
    Connection c(i);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_EQ(
        e.message().rfind("database: cannot connect to postgresql://u:***@127.0.0.1:1/d: ", 0), 0u)
        << e.message();
    EXPECT_EQ(e.message().find("hunter2"), std::string::npos);
  }
}

// A connection string's own connect_timeout is what libpq waits (the silent server of
// ExternalProvider.SilentServerFailsWhenTheConnectTimeoutFires); without one, the default.
TEST(DbConnection, ClientDefaultsKeepTheConnectTimeoutGiven) {
  auto given = ConnectionInfo::parse("postgresql://app@127.0.0.1:5432/shop?connect_timeout=2", "");
  EXPECT_EQ(with_client_defaults(given).options.at("connect_timeout"), "2");
  EXPECT_NE(with_client_defaults(given).conninfo().find("connect_timeout='2'"), std::string::npos);
  auto none = ConnectionInfo::parse("postgresql://app@127.0.0.1:5432/shop", "");
  EXPECT_EQ(with_client_defaults(none).options.at("connect_timeout"),
            std::to_string(k_default_connect_timeout_s));
}


// A run's checks before its first cold run share a backend per database: to() gives the one kept
// again, take() hands it over (the first stage's profile), close() ends it (before CREATE
// DATABASE … TEMPLATE), and the maintenance database gets its own.
TEST(DbOwnConnections, OneBackendPerDatabaseUntilTakenOrClosed) {
  const ConnectionInfo stages = testing::fresh_database("own_connections");
  const ConnectionInfo maintenance = maintenance_database(stages);
  EXPECT_EQ(maintenance.dbname, "postgres");
  Connection watcher(maintenance);
  auto pid = [](Connection& c) { return c.exec("SELECT pg_backend_pid()")[0][0].as<int>(); };
  // Waits for the backend's exit (a state), at most 10 s.
  auto gone = [&](int backend) {
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
         std::chrono::steady_clock::now() < until;
         std::this_thread::sleep_for(std::chrono::milliseconds(10))) {
      if (watcher
              .exec_params("SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int",
                           {std::to_string(backend)})[0][0]
              .as<int>() == 0)
        return true;
    }
    return false;
  };
  OwnConnections own;
  const int first = pid(own.to(stages));
  EXPECT_EQ(pid(own.to(stages)), first);
  EXPECT_EQ(own.to(stages).info().dbname, stages.dbname);
  const int admin = pid(own.to(maintenance));
  EXPECT_NE(admin, first);
  EXPECT_EQ(pid(own.to(maintenance)), admin);

  own.close(stages);
  EXPECT_TRUE(gone(first));
  const int second = pid(own.to(stages));
  EXPECT_NE(second, first);

  std::unique_ptr<Connection> taken = own.take(stages);
  ASSERT_TRUE(taken);
  EXPECT_EQ(pid(*taken), second);
  EXPECT_FALSE(own.take(stages));  // handed over once
  EXPECT_NE(pid(own.to(stages)), second);

  // Without an OwnConnections, each caller opens its own.
  std::unique_ptr<Connection> fresh;
  Connection& alone = kept_or_new(nullptr, stages, fresh);
  EXPECT_EQ(fresh.get(), &alone);
  EXPECT_EQ(&kept_or_new(&own, maintenance, fresh), &own.to(maintenance));
}

}  // namespace
}  // namespace coldgate::db
