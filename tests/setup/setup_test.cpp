#include "setup/setup.hpp"
#include "db/catalog.hpp"

#include <gtest/gtest.h>

#include <tuple>

#include "db/connection.hpp"
#include "support/cluster.hpp"
#include "support/dumps.hpp"
#include "support/support.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::setup {
namespace {

using Kind = config::SetupStep::Kind;
using testing::TempDir;

config::SetupStep file_step(Kind kind, const std::filesystem::path& file) {
  config::SetupStep s;
  s.kind = kind;
  s.file = file;
  return s;
}

config::SetupStep shell_step(const std::string& shell) {
  config::SetupStep s;
  s.kind = Kind::command;
  s.shell = shell;
  return s;
}

struct SetupTest : ::testing::Test {
  Context context(const std::string& db) {
    return {.database = testing::fresh_database(db),
            .base_dir = dir.path(),
            .client_bindir = testing::shared_cluster().client_bindir()};
  }
  // The Error run_step throws; fails the test when it throws none.
  Error error_of(const config::SetupStep& step, const Context& c) {
    try {
      run_step(step, c);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "no error";
    return Error(ExitCode::ok, "", "");
  }
  long long count(const Context& c, const std::string& sql) {
    db::Connection conn(c.database);
    return conn.exec(sql)[0][0].as<long long>();
  }
  TempDir dir;
};

TEST_F(SetupTest, SqlFileLoadsDataInOneTransaction) {
  auto c = context("setup_sql");
  auto ok = dir.write("schema.sql",
                      "CREATE TABLE item (id int PRIMARY KEY, name text);\n"
                      "INSERT INTO item SELECT g, 'item ' || g FROM generate_series(1, 100) g;\n");
  auto r = run_step(file_step(Kind::sql, ok), c);
  EXPECT_EQ(r.kind, "sql");
  EXPECT_EQ(r.label, "sql schema.sql");
  EXPECT_GT(r.wall_ms, 0);
  EXPECT_EQ(count(c, "SELECT count(*) FROM item"), 100);

  auto bad = dir.write(
      "more.sql", "INSERT INTO item VALUES (101, 'x');\nINSERT INTO item VALUES (1, 'dup');\n");
  try {
    run_step(file_step(Kind::sql, bad), c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::gate_failed);
    EXPECT_EQ(e.message(),
              "more.sql: SQLSTATE 23505: duplicate key value violates unique "
              "constraint \"item_pkey\"\nDETAIL: Key (id)=(1) already exists.");
  }
  EXPECT_EQ(count(c, "SELECT count(*) FROM item"), 100);  // row 101 rolled back with the rest
}

TEST_F(SetupTest, SqlFileWithItsOwnTransactionsKeepsCommittedParts) {
  auto c = context("setup_sql_tx");
  auto f = dir.write("tx.sql",
                     "BEGIN;\nCREATE TABLE a (id int);\nINSERT INTO a VALUES (1);\nCOMMIT;\n"
                     "BEGIN;\nINSERT INTO a VALUES (2);\nSELECT 1/0;\nCOMMIT;\n");
  EXPECT_THROW(run_step(file_step(Kind::sql, f), c), Error);
  EXPECT_EQ(count(c, "SELECT count(*) FROM a"), 1);
}

TEST_F(SetupTest, SqlErrorShowsFileLineColumnAndSqlstate) {
  auto c = context("setup_sql_err");
  auto f =
      dir.write("sql/bad.sql", "CREATE TABLE t (id int);\n\nSELECT id FROM t WHERE nam = 1;\n");
  try {
    run_step(file_step(Kind::sql, f), c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "sql/bad.sql:3:24: SQLSTATE 42703: column \"nam\" does not exist");
  }
}

TEST_F(SetupTest, PsqlRunsMetaCommandsAndCopy) {
  auto c = context("setup_psql");
  auto f = dir.write("dump.sql",
                     "\\set ON_ERROR_STOP on\nCREATE TABLE city (id int, name text);\n"
                     "COPY city (id, name) FROM stdin;\n1\tOslo\n2\tLima\n\\.\n");
  auto r = run_step(file_step(Kind::psql, f), c);
  EXPECT_EQ(r.label, "psql dump.sql");
  EXPECT_EQ(count(c, "SELECT count(*) FROM city"), 2);
}

TEST_F(SetupTest, PsqlFailureShowsStderrTail) {
  auto c = context("setup_psql_err");
  auto f = dir.write("broken.sql", "SELECT 1;\nSELECT * FROM missing;\nSELECT 2;\n");
  try {
    run_step(file_step(Kind::psql, f), c);
    FAIL();
  } catch (const Error& e) {
    // Where psql says the script failed, with the file as the config names it.
    EXPECT_EQ(e.code(), ExitCode::gate_failed);
    EXPECT_EQ(e.message(),
              "broken.sql:2:15: psql -f broken.sql failed (exit status 3):\n"
              "psql:broken.sql:2: ERROR:  relation \"missing\" does not exist\n"
              "LINE 1: SELECT * FROM missing;\n"
              "                      ^");
  }
}

TEST_F(SetupTest, PsqlFailureIsPlacedOnTheLineTheServerMeansNotTheStatementsEnd) {
  auto c = context("setup_psql_place");
  // psql says line 6 (the `);`) for the typo on line 4, and line 12 (the `\.`) for the bad
  // second row on line 10.
  auto typo = dir.write("typo.sql",
                        "SELECT 1;\n"
                        "CREATE TABLE orders (\n"
                        "    id int PRIMARY KEY,\n"
                        "    qty intger NOT NULL,\n"
                        "    note text\n"
                        ");\n");
  Error e = error_of(file_step(Kind::psql, typo), c);
  EXPECT_EQ(e.where(), "typo.sql:4:9") << e.message();
  EXPECT_NE(e.message().find("psql:typo.sql:6: ERROR:  type \"intger\" does not exist"),
            std::string::npos)
      << e.message();

  auto copy = dir.write("copy.sql",
                        "CREATE TABLE items (id int, qty int);\n"
                        "\n"
                        "--\n"
                        "-- Data for Name: items\n"
                        "--\n"
                        "\n"
                        "\n"
                        "COPY public.items (id, qty) FROM stdin;\n"
                        "1\t2\n"
                        "2\tabc\n"
                        "3\t4\n"
                        "\\.\n");
  Error bad_row = error_of(file_step(Kind::psql, copy), c);
  EXPECT_EQ(bad_row.where(), "copy.sql:10") << bad_row.message();
  EXPECT_NE(bad_row.message().find("CONTEXT:  COPY items, line 2, column qty: \"abc\""),
            std::string::npos)
      << bad_row.message();
}

TEST_F(SetupTest, PsqlStartsInTheStepsDatabaseForAScriptThatMakesItsOwn) {
  auto c = context("setup_chinook_start");  // the stages' database, left as it is
  config::SetupStep step = file_step(Kind::psql, dir.write("chinook.sql",
                                                           testing::chinook_shaped_dump("setup_chinook", 25, true)));
  step.database = "postgres";
  step.variables = {{"artist", "1"}, {"title", "Let There Be Rock"}};
  auto r = run_step(step, c);
  EXPECT_EQ(r.label, "psql chinook.sql");
  Context chinook = c;
  chinook.database.dbname = "setup_chinook";
  EXPECT_EQ(count(chinook, "SELECT count(*) FROM artist"), 25);
  {
    db::Connection conn(chinook.database);
    // -v title=… and -v artist=1: :'title' a literal, :artist as written.
    EXPECT_EQ(std::string(conn.exec("SELECT title || ' by ' || artist_id FROM album")[0][0].c_str()),
              "Let There Be Rock by 1");
  }
  EXPECT_EQ(setup::stage_database_warning({step}, chinook), "");

  // Run again: the script drops its database, which psql is not in.
  EXPECT_NO_THROW(run_step(step, c));
}

TEST_F(SetupTest, APsqlScriptCreatingTheStagesDatabaseFindsRoomOnTheRunsOwnServer) {
  // pg_dump --create without --clean: CREATE DATABASE, no DROP first. The run made the stages'
  // database empty before setup; on its own server that empty database makes way.
  auto c = context("setup_create_only");
  c.own_server = true;
  config::SetupStep step = file_step(
      Kind::psql, dir.write("create.sql",
                            "CREATE DATABASE setup_create_only WITH TEMPLATE = template0;\n"
                            "\\connect setup_create_only\n"
                            "CREATE TABLE t (x int);\nINSERT INTO t VALUES (1), (2);\n"));
  step.database = "postgres";
  run_step(step, c);
  EXPECT_EQ(count(c, "SELECT count(*) FROM t"), 2);

  // Now it holds a table: never dropped, the script's own error stands.
  Error again = error_of(step, c);
  EXPECT_EQ(again.code(), ExitCode::gate_failed);
  EXPECT_NE(again.message().find(
                "psql:create.sql:1: ERROR:  database \"setup_create_only\" already exists"),
            std::string::npos)
      << again.message();
  EXPECT_EQ(count(c, "SELECT count(*) FROM t"), 2);

  // An external server's database is never dropped, even an empty one.
  auto external = context("setup_create_only");
  Error refused = error_of(step, external);
  EXPECT_NE(refused.message().find("already exists"), std::string::npos) << refused.message();
  EXPECT_EQ(count(external, "SELECT count(*) FROM pg_class WHERE relname = 't'"), 0);
}

TEST_F(SetupTest, AfterSetupTheOtherDatabaseWithTablesIsNamed) {
  auto c = context("setup_chinook_plain");
  config::SetupStep step =
      file_step(Kind::psql, dir.write("db/chinook.sql", testing::chinook_shaped_dump("setup_chinook2", 25, false)));
  run_step(step, c);  // psql follows the \c: the tables are in setup_chinook2
  EXPECT_EQ(count(c, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"), 0);
  EXPECT_EQ(setup::stage_database_warning({step}, c),
            "after setup the stages' database setup_chinook_plain has no tables, but database "
            "setup_chinook2 has 2 tables (did a setup script's \\c move there?); set "
            "database.name: setup_chinook2 so the stages use it, with psql: {file: "
            "db/chinook.sql, database: postgres} if the script creates setup_chinook2");
  // With a table of its own the stages' database is what setup meant.
  db::run_script(c.database, "CREATE TABLE own (x int);", "seed");
  EXPECT_EQ(setup::stage_database_warning({step}, c), "");
}

TEST_F(SetupTest, PsqlStepWhoseDatabaseIsNotThereIsAConfigError) {
  auto c = context("setup_psql_nodb");
  config::SetupStep step = file_step(Kind::psql, dir.write("x.sql", "SELECT 1;\n"));
  step.database = "setup_no_such_db";
  step.key = "setup[0].psql.file";
  step.where = {"coldgate.yaml", 3, 5};
  Error e = error_of(step, c);
  EXPECT_EQ(e.code(), ExitCode::usage);
  EXPECT_EQ(e.message(),
            "coldgate.yaml:3:5: setup[0].psql.database: the server has no database "
            "setup_no_such_db; name one it has (postgres, or the stages' setup_psql_nodb)");
}

TEST_F(SetupTest, SqlStepMeetingAMetaCommandSaysToUsePsql) {
  auto c = context("setup_sql_meta");
  for (const auto& [text, where, meta] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {testing::chinook_shaped_dump("setup_meta", 25, false), "meta.sql:3:1", "\\c"},
           {"CREATE TABLE t (x int);\n  \\copy t FROM 'x.csv'\n", "meta.sql:2:3", "\\copy"}}) {
    Error e = error_of(file_step(Kind::sql, dir.write("meta.sql", text)), c);
    EXPECT_EQ(e.code(), ExitCode::gate_failed);
    EXPECT_EQ(e.message(), where + ": " + meta +
                               " is a psql meta-command, which a sql: step cannot run (it sends "
                               "the file to the server as SQL); load the file with psql: "
                               "meta.sql");
  }
  // The script failed as a whole: nothing of it ran.
  EXPECT_EQ(count(c, "SELECT count(*) FROM pg_database WHERE datname = 'setup_meta'"), 0);
}

TEST_F(SetupTest, RunSetupNamesTheStepThatFailed) {
  auto c = context("setup_failure_label");
  std::vector<config::SetupStep> steps{
      file_step(Kind::sql, dir.write("ok.sql", "CREATE TABLE a (x int);\n")),
      file_step(Kind::sql, dir.write("bad.sql", "INSERT INTO a VALUES ('x');\n"))};
  std::vector<std::string> done;
  try {
    run_setup(steps, c, [&](const StepResult& r) { done.push_back(r.label); });
    FAIL();
  } catch (const StepFailure& f) {
    EXPECT_EQ(f.label(), "sql bad.sql");
    EXPECT_EQ(f.code(), ExitCode::gate_failed);
    EXPECT_EQ(f.message(),
              "bad.sql:1:23: SQLSTATE 22P02: invalid input syntax for type integer: \"x\"");
  }
  EXPECT_EQ(done, (std::vector<std::string>{"sql ok.sql"}));
}

TEST_F(SetupTest, RestoreLoadsCustomFormatDump) {
  auto src = context("setup_restore_src");
  db::run_script(src.database,
                 "CREATE TABLE song (id int PRIMARY KEY, title text);"
                 "INSERT INTO song SELECT g, md5(g::text) FROM generate_series(1, 50) g;",
                 "seed");
  auto dump = dir / "songs.dump";
  auto r =
      util::run({.argv = {(*src.client_bindir / "pg_dump").string(), "-Fc", "-f", dump.string()},
                 .env = src.database.env()});
  ASSERT_TRUE(r.status.ok()) << r.err;

  auto dst = context("setup_restore_dst");
  auto step = run_step(file_step(Kind::restore, dump), dst);
  EXPECT_EQ(step.label, "restore songs.dump");
  EXPECT_EQ(count(dst, "SELECT count(*) FROM song"), 50);
}

TEST_F(SetupTest, CommandGetsPgEnvironmentAndConfigFolder) {
  auto c = context("setup_cmd");
  config::SetupStep argv_step;
  argv_step.kind = Kind::command;
  argv_step.argv = {"sh", "-c",
                    "pwd > where.txt && psql -X -q -c 'CREATE TABLE made_by_cmd (x int)'"};
  run_step(argv_step, c);
  EXPECT_EQ(testing::slurp(dir / "where.txt"), dir.path().string() + "\n");
  EXPECT_EQ(count(c, "SELECT count(*) FROM pg_tables WHERE tablename = 'made_by_cmd'"), 1);

  auto r = run_step(
      shell_step("psql -X -q \"$DATABASE_URL\" -c 'INSERT INTO made_by_cmd VALUES (7)'"), c);
  EXPECT_EQ(r.label,
            "command psql -X -q \"$DATABASE_URL\" -c 'INSERT INTO made_by_cmd VALUES (7)'");
  EXPECT_EQ(count(c, "SELECT sum(x) FROM made_by_cmd"), 7);
}

TEST_F(SetupTest, CommandFindsTheServersClientProgramsFirst) {
  auto c = context("setup_cmd_path");
  ASSERT_TRUE(c.client_bindir);
  // pg_ctl is in the server's bindir only (Debian puts no pg_ctl on PATH): found there first.
  run_step(shell_step("command -v pg_ctl > which.txt; command -v psql >> which.txt"), c);
  EXPECT_EQ(testing::slurp(dir / "which.txt"),
            (*c.client_bindir / "pg_ctl").string() + "\n" + (*c.client_bindir / "psql").string() +
                "\n");
}

TEST_F(SetupTest, FailingCommandShowsLast20LinesOfStderr) {
  Context c{.database = testing::shared_cluster().connection_info(), .base_dir = dir.path()};
  try {
    run_step(shell_step("for i in $(seq 1 30); do echo \"line $i\" >&2; done; exit 4"), c);
    FAIL();
  } catch (const Error& e) {
    std::string tail;
    for (int i = 11; i <= 30; ++i) tail += "\nline " + std::to_string(i);
    EXPECT_EQ(e.message(),
              "setup command: setup command `for i in $(seq 1 30); do echo \"line $i\" "
              ">&2; done; exit 4` failed (exit status 4):" +
                  tail);
  }
}

TEST_F(SetupTest, CommandThatCannotStartNamesTheStep) {
  Context c{.database = testing::shared_cluster().connection_info(), .base_dir = dir.path()};
  config::SetupStep step;
  step.kind = Kind::command;
  step.argv = {"coldgate-no-such-program", "x"};
  step.where = {"coldgate.yaml", 3, 5};
  // The config names a program that is not there (config::check_setup finds it first).
  Error e = error_of(step, c);
  EXPECT_EQ(e.code(), ExitCode::usage);
  EXPECT_EQ(e.message(),
            "coldgate.yaml:3:5: setup command `coldgate-no-such-program x` cannot start: "
            "coldgate-no-such-program: command not found in PATH; install it, or fix the "
            "command in the config");
}

TEST_F(SetupTest, CommandNamedByAPathRunsFromTheConfigFolder) {
  Context c{.database = testing::shared_cluster().connection_info(), .base_dir = dir.path()};
  auto script = dir.write("tools/seed.sh", "#!/bin/sh\necho \"$1\" > seeded.txt\n");
  std::filesystem::permissions(script, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  config::SetupStep step;
  step.kind = Kind::command;
  step.argv = {"./tools/seed.sh", "ok"};
  EXPECT_EQ(run_step(step, c).label, "command ./tools/seed.sh ok");
  EXPECT_EQ(testing::slurp(dir / "seeded.txt"), "ok\n");
}

TEST_F(SetupTest, AnalyzeAndTablesNeverAnalyzed) {
  auto c = context("setup_analyze");
  db::run_script(c.database, "CREATE TABLE a (x int); CREATE TABLE b (y int);", "seed");
  db::Connection conn(c.database);
  EXPECT_EQ(db::never_analyzed_tables(conn), (std::vector<std::string>{"public.a", "public.b"}));
  config::SetupStep s;
  s.kind = Kind::analyze;
  EXPECT_EQ(run_step(s, c).label, "analyze");
  EXPECT_TRUE(db::never_analyzed_tables(conn).empty());
}

// A table just loaded has no visibility map: an index-only scan on it reads the heap for every
// row (as long as autovacuum has not come by, which it never does here). The analyze step
// vacuums too, so the scan reads no heap, as on a long-lived table.
TEST_F(SetupTest, AnalyzeVacuumsSoAnIndexOnlyScanReadsNoHeap) {
  auto c = context("setup_vacuum");
  db::run_script(c.database,
                 "CREATE TABLE t (id int PRIMARY KEY, pad text) WITH (autovacuum_enabled = false);"
                 "INSERT INTO t SELECT g, 'x' FROM generate_series(1, 5000) g;",
                 "seed");
  config::SetupStep s;
  s.kind = Kind::analyze;
  run_step(s, c);
  db::Connection conn(c.database);
  std::string plan;
  for (const auto& row : conn.exec(
           "SET enable_seqscan = off; SET enable_bitmapscan = off;"
           "EXPLAIN (ANALYZE, COSTS off, TIMING off, SUMMARY off, FORMAT JSON) "
           "SELECT count(id) FROM t")) {
    plan += row[0].c_str();
  }
  EXPECT_NE(plan.find("\"Node Type\": \"Index Only Scan\""), std::string::npos) << plan;
  EXPECT_NE(plan.find("\"Heap Fetches\": 0\n"), std::string::npos) << plan;
}

TEST_F(SetupTest, StepsRunInOrderFromConfig) {
  auto c = context("setup_config");
  dir.write("schema.sql", "CREATE TABLE log (n int);\n");
  dir.write("data.sql", "INSERT INTO log VALUES (1);\n");
  auto cfg = config::parse(
      "version: 1\n"
      "setup:\n"
      "  - sql: schema.sql\n"
      "  - psql: data.sql\n"
      "  - command: [psql, -X, -q, -c, 'INSERT INTO log VALUES (2)']\n"
      "  - command: psql -X -q -c 'INSERT INTO log VALUES (3)'\n"
      "  - analyze: true\n"
      "stages:\n"
      "  - name: q\n"
      "    query: SELECT 1\n",
      dir / "coldgate.yaml");
  c.base_dir = cfg.base_dir;
  auto results = run_setup(cfg.setup, c);
  std::vector<std::string> kinds;
  for (const auto& r : results) kinds.push_back(r.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"sql", "psql", "command", "command", "analyze"}));
  db::Connection conn(c.database);
  EXPECT_EQ(
      std::string(conn.exec("SELECT string_agg(n::text, ',' ORDER BY n) FROM log")[0][0].c_str()),
      "1,2,3");
}

}  // namespace
}  // namespace coldgate::setup
