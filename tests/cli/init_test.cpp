// `coldgate init` through the binary: the kind of dump it detects, the setup step it writes for
// each, the external provider without the password, and that coldgate's own loader reads what
// it wrote. tests/cli/golden/init-*.yaml hold two whole files (COLDGATE_UPDATE_GOLDEN=1 rewrites
// them, support/golden.hpp; review the diff before committing).
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/init_command.hpp"
#include "cli/orm.hpp"
#include "config/config.hpp"
#include "support/golden.hpp"
#include "support/support.hpp"

namespace coldgate::testing {
namespace {

namespace fs = std::filesystem;

void expect_golden(const std::string& name, const std::string& actual) {
  testing::expect_golden(source_dir() / "tests/cli/golden" / name, actual);
}

// What pg_dump writes for a small database: schema, then COPY … FROM stdin data ended by `\.`.
const char* k_pg_dump = R"(--
-- PostgreSQL database dump
--

-- Dumped from database version 15.8 (Debian 15.8-0+deb12u1)
-- Dumped by pg_dump version 15.8 (Debian 15.8-0+deb12u1)

SET statement_timeout = 0;
SELECT pg_catalog.set_config('search_path', '', false);

CREATE TABLE public.accounts (
    id integer NOT NULL,
    name text
);

COPY public.accounts (id, name) FROM stdin;
1	ada
2	\N
\.

CREATE DATABASE not_this_one;
)";

// The setup step lines of a written config (those after "setup:" up to the blank line).
std::string setup_lines(const std::string& yaml) {
  auto start = yaml.find("\nsetup:");
  if (start == std::string::npos) return {};
  start = yaml.find('\n', start + 1) + 1;
  return yaml.substr(start, yaml.find("\n\n", start) - start + 1);
}

// The `migrate:` section of a written config with the comment line above it, or "".
std::string migrate_lines(const std::string& yaml) {
  auto start = yaml.find("\nmigrate:\n");
  if (start == std::string::npos) return {};
  start = yaml.rfind('\n', start - 1) + 1;
  return yaml.substr(start, yaml.find("\n\n", start) - start + 1);
}

// The `database:` section of a written config.
std::string database_lines(const std::string& yaml) {
  auto start = yaml.find("\ndatabase:\n");
  if (start == std::string::npos) return {};
  start += 1;
  return yaml.substr(start, yaml.find("\n\n", start) - start + 1);
}

class Init : public ::testing::Test {
 protected:
  RunResult init(const std::vector<std::string>& args) {
    std::vector<std::string> all{"init"};
    all.insert(all.end(), args.begin(), args.end());
    return run_coldgate(all, dir_.path());
  }
  TempDir dir_;
};

TEST_F(Init, APgDumpWithCopyFromStdinGetsAPsqlStepAndLoads) {
  dir_.write("db/dump.sql", k_pg_dump);
  auto r = init({"--from-dump", "db/dump.sql"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "detected db/dump.sql: a psql script (line 16: COPY … FROM stdin) → setup step psql\n"
            "wrote coldgate.yaml: stages table-rows (a query) and schema (a command), each with a "
            "snapshot\n"
            "next: coldgate run   (the first run exits 1: no snapshot is committed yet; then "
            "coldgate review)\n");
  EXPECT_EQ(r.err, "");
  std::string yaml = slurp(dir_ / "coldgate.yaml");
  expect_golden("init-from-dump.yaml", yaml);

  config::Config cfg = config::load(dir_ / "coldgate.yaml");
  EXPECT_EQ(cfg.database.provider, config::Provider::local);
  EXPECT_EQ(cfg.database.name, "coldgate");
  ASSERT_EQ(cfg.setup.size(), 2u);
  EXPECT_EQ(cfg.setup[0].kind, config::SetupStep::Kind::psql);
  EXPECT_EQ(cfg.setup[0].file, fs::canonical(dir_ / "db/dump.sql"));
  EXPECT_EQ(cfg.setup[1].kind, config::SetupStep::Kind::analyze);
  ASSERT_EQ(cfg.stages.size(), 2u);
  EXPECT_EQ(cfg.stages[0].name, "table-rows");
  EXPECT_FALSE(cfg.stages[0].is_command());
  EXPECT_EQ(cfg.stages[0].decode, config::Decode::json);
  ASSERT_TRUE(cfg.stages[0].snapshot);
  EXPECT_EQ(cfg.stages[0].snapshot->path, fs::canonical(dir_.path()) / "snapshots/table-rows.json");
  EXPECT_EQ(cfg.stages[1].name, "schema");
  EXPECT_TRUE(cfg.stages[1].is_command());
  EXPECT_EQ(cfg.stages[1].command.front(), "psql");
  EXPECT_EQ(cfg.stages[1].command.size(), 6u);
  ASSERT_TRUE(cfg.stages[1].snapshot);
  EXPECT_EQ(cfg.stages[1].snapshot->path, fs::canonical(dir_.path()) / "snapshots/schema.json");
  EXPECT_TRUE(cfg.stages[1].snapshot->from_stdout);
  // Both read the catalog for coldgate, not for the application: no profile, no diagnoses.
  EXPECT_FALSE(cfg.stages[0].profile);
  EXPECT_FALSE(cfg.stages[1].profile);
  // Neither counts nor lists a migration tool's bookkeeping.
  for (const char* table : {"'SequelizeMeta'", "'django_migrations'", "'schema_migrations'",
                            "'ar_internal_metadata'", "'alembic_version'", "'knex_migrations'",
                            "'knex_migrations_lock'", "'flyway_schema_history'",
                            "'__EFMigrationsHistory'", "'migrations'", "'_prisma_migrations'"}) {
    EXPECT_NE(cfg.stages[0].query.find(table), std::string::npos) << table;
    EXPECT_NE(cfg.stages[1].command.back().find(table), std::string::npos) << table;
  }
}

TEST_F(Init, AnotherMetaCommandIsNamedWithItsLine) {
  dir_.write("seed.sql", "-- seed\n\\set ON_ERROR_STOP on\ninsert into t values (1);\n");
  auto r = init({"--from-dump", "seed.sql"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1),
            "detected seed.sql: a psql script (line 2: \\set) → setup step psql\n");
  EXPECT_EQ(setup_lines(slurp(dir_ / "coldgate.yaml")),
            "  - psql: seed.sql                # COPY … FROM stdin and meta-commands need psql\n"
            "  - analyze: true                 # statistics for the planner\n");
}

TEST_F(Init, PlainSqlWithoutMetaCommandsGetsASqlStep) {
  dir_.write("db/schema.sql", "create table t (id int primary key);\ninsert into t values (1);\n");
  auto r = init({"--from-dump", "db/schema.sql"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1),
            "detected db/schema.sql: plain SQL without psql meta-commands → setup step sql\n");
  std::string yaml = slurp(dir_ / "coldgate.yaml");
  EXPECT_EQ(setup_lines(yaml),
            "  - sql: db/schema.sql            # through libpq, in one transaction\n"
            "  - analyze: true                 # statistics for the planner\n");
  // No "Dumped from" line: the version stays the default, commented out.
  EXPECT_NE(yaml.find("  # version: 15                   # default: the newest installed\n"),
            std::string::npos);
  auto cfg = config::load(dir_ / "coldgate.yaml");
  EXPECT_EQ(cfg.setup.at(0).kind, config::SetupStep::Kind::sql);
}

TEST_F(Init, AScriptThatCreatesItsDatabaseAndConnectsRunsInPostgres) {
  // pg_dump --create: the script makes the database and \connects into it.
  dir_.write("app.sql",
             "CREATE DATABASE shop WITH TEMPLATE = template0 ENCODING = 'UTF8';\n"
             "ALTER DATABASE shop OWNER TO postgres;\n"
             "\\connect shop\n"
             "CREATE TABLE public.t (id integer);\n");
  auto r = init({"--from-dump", "app.sql"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1),
            "detected app.sql: a psql script that creates database shop and connects to it (line "
            "3) → setup step psql in database postgres; the stages use shop\n");
  std::string yaml = slurp(dir_ / "coldgate.yaml");
  EXPECT_EQ(database_lines(yaml),
            "database:\n"
            "  provider: local                 # a throwaway cluster of this machine's PostgreSQL\n"
            "  # version: 15                   # default: the newest installed\n"
            "  name: shop                      # the dump creates it: the stages run in it\n"
            "  # settings: {shared_buffers: 256MB}  # as production has them\n");
  EXPECT_EQ(setup_lines(yaml),
            "  - psql: {file: app.sql, database: postgres}  # the script creates shop itself\n"
            "  - analyze: true                 # statistics for the planner\n");
  auto cfg = config::load(dir_ / "coldgate.yaml");
  EXPECT_EQ(cfg.database.name, "shop");
  ASSERT_EQ(cfg.setup.size(), 2u);
  EXPECT_EQ(cfg.setup[0].kind, config::SetupStep::Kind::psql);
  EXPECT_EQ(cfg.setup[0].database, "postgres");
  EXPECT_EQ(cfg.setup[0].file, fs::canonical(dir_ / "app.sql"));
  // Without a DROP DATABASE first the run drops the empty database it made for the stages
  // (SetupTest.APsqlScriptCreatingTheStagesDatabaseFindsRoomOnTheRunsOwnServer): no note.
  EXPECT_EQ(r.out.find("without dropping it first"), std::string::npos) << r.out;

  // pg_dump --create --clean --if-exists drops it first: the same config.
  fs::remove(dir_ / "coldgate.yaml");
  dir_.write("clean.sql",
             "DROP DATABASE IF EXISTS shop;\n"
             "CREATE DATABASE shop WITH TEMPLATE = template0 ENCODING = 'UTF8';\n"
             "\\connect shop\n");
  auto clean = init({"--from-dump", "clean.sql"});
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(clean.out.find("without dropping it first"), std::string::npos) << clean.out;
  EXPECT_NE(slurp(dir_ / "coldgate.yaml").find("  - psql: {file: clean.sql, database: postgres}"),
            std::string::npos);
}

TEST_F(Init, TheChinookScriptsConnectWithASemicolonNamesTheDatabaseWithoutIt) {
  // The Chinook PostgreSQL script writes `\c chinook;`: psql connects to chinook.
  dir_.write("Chinook_PostgreSql.sql",
             "DROP DATABASE IF EXISTS chinook;\n"
             "CREATE DATABASE chinook;\n"
             "\\c chinook;\n"
             "CREATE TABLE artist (artist_id int PRIMARY KEY, name text);\n");
  auto r = init({"--from-dump", "Chinook_PostgreSql.sql"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("detected Chinook_PostgreSql.sql: a psql script that creates database "
                       "chinook and connects to it (line 3) → setup step psql in database "
                       "postgres; the stages use chinook\n"),
            std::string::npos)
      << r.out;
  auto cfg = config::load(dir_ / "coldgate.yaml");
  EXPECT_EQ(cfg.database.name, "chinook");
  ASSERT_EQ(cfg.setup.size(), 2u);
  EXPECT_EQ(cfg.setup[0].database, "postgres");

  // A quoted semicolon is the name's own.
  fs::remove(dir_ / "coldgate.yaml");
  dir_.write("odd.sql", "CREATE DATABASE \"odd;\";\n\\c \"odd;\";\n");
  auto odd = init({"--from-dump", "odd.sql"});
  EXPECT_EQ(odd.exit_code, 0) << odd.err;
  EXPECT_NE(odd.out.find("the stages use odd;\n"), std::string::npos) << odd.out;
}

TEST_F(Init, AQuotedDatabaseNameAsPgDumpWritesItIsQuotedInTheConfig) {
  dir_.write("app.sql",
             "CREATE DATABASE \"Shop Data\" WITH TEMPLATE = template0;\n"
             "\\connect -reuse-previous=on \"dbname='Shop Data'\"\n");
  auto r = init({"--from-dump", "app.sql"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(slurp(dir_ / "coldgate.yaml")
                .find("  name: \"Shop Data\"               # the dump creates it: the stages run in it\n"),
            std::string::npos)
      << slurp(dir_ / "coldgate.yaml");
}

TEST_F(Init, ADumpOfSeveralDatabasesNamesTheOthers) {
  dir_.write("all.sql",
             "\\connect template1\n"
             "CREATE DATABASE one;\n"
             "CREATE DATABASE two;\n"
             "\\connect one\n"
             "\\connect two\n");
  auto r = init({"--from-dump", "all.sql"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("the stages use one\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nthe dump also creates two: set database.name to the one the stages "
                       "should use\n"),
            std::string::npos)
      << r.out;
}

TEST_F(Init, ArchivesGetARestoreStepAndLoad) {
  std::string custom = "PGDMP";
  custom += std::string("\x01\x0e\x00\x04\x08\x01\x01", 7);
  dir_.write("db/app.dump", custom);
  std::string tar(1024, '\0');
  tar.replace(0, 8, "toc.dat");
  tar.replace(257, 5, "ustar");
  dir_.write("db/app.tar", tar);
  dir_.write("db/app.dir/toc.dat", "PGDMP");
  struct Case {
    const char* dump;
    const char* what;
    const char* step;
  };
  for (auto [dump, what, step] : {
           Case{"db/app.dump", "a custom-format archive (pg_dump -Fc: starts with PGDMP)",
                "  - restore: db/app.dump          # pg_restore --no-owner --no-privileges\n"},
           Case{"db/app.tar", "a tar-format archive (pg_dump -Ft)",
                "  - restore: db/app.tar           # pg_restore --no-owner --no-privileges\n"},
           Case{"db/app.dir", "a directory-format archive (pg_dump -Fd: toc.dat)",
                "  - restore: db/app.dir           # pg_restore --no-owner --no-privileges\n"}}) {
    fs::remove(dir_ / "coldgate.yaml");
    auto r = init({"--from-dump", dump});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1),
              std::string("detected ") + dump + ": " + what + " → setup step restore\n");
    std::string yaml = slurp(dir_ / "coldgate.yaml");
    EXPECT_EQ(setup_lines(yaml).substr(0, setup_lines(yaml).find('\n') + 1), step);
    auto cfg = config::load(dir_ / "coldgate.yaml");
    EXPECT_EQ(cfg.setup.at(0).kind, config::SetupStep::Kind::restore) << dump;
  }
}

TEST_F(Init, PathsAreRelativeToTheConfigsFolder) {
  dir_.write("db/dump.sql", k_pg_dump);
  auto r = init({"--from-dump", "db/dump.sql", "-o", "ci/coldgate.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string yaml = slurp(dir_ / "ci/coldgate.yaml");
  EXPECT_EQ(setup_lines(yaml).substr(0, setup_lines(yaml).find('\n') + 1),
            "  - psql: ../db/dump.sql          # COPY … FROM stdin and meta-commands need psql\n");
  EXPECT_EQ(r.out.substr(r.out.rfind("next:")),
            "next: coldgate run -c ci/coldgate.yaml   (the first run exits 1: no snapshot is "
            "committed yet; then coldgate review -c ci/coldgate.yaml)\n");
  auto cfg = config::load(dir_ / "ci/coldgate.yaml");
  EXPECT_EQ(cfg.setup.at(0).file, fs::canonical(dir_ / "db/dump.sql"));
  EXPECT_EQ(cfg.stages.at(0).snapshot->path, fs::canonical(dir_.path()) / "ci/snapshots/table-rows.json");
}

TEST_F(Init, NeverOverwritesAFile) {
  dir_.write("coldgate.yaml", "mine\n");
  dir_.write("db/dump.sql", k_pg_dump);
  auto r = init({"--from-dump", "db/dump.sql"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: coldgate.yaml: already exists, and init never overwrites a "
                   "file: pass -o PATH for another one, or remove it\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(slurp(dir_ / "coldgate.yaml"), "mine\n");
}

TEST_F(Init, DumpsItCannotReadAreRefusedWithWhatToDo) {
  dir_.write("empty.sql", "");
  dir_.write("dump.sql.gz", std::string("\x1f\x8b\x08\x00", 4) + "rest");
  dir_.write("photo.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  fs::create_directories(dir_ / "folder");
  for (auto [dump, message] : {
           std::pair{"missing.sql", "missing.sql: not found; pass the path of a pg_dump file or folder"},
           {"empty.sql", "empty.sql: is empty; pass the output of pg_dump"},
           {"dump.sql.gz", "dump.sql.gz: is gzip-compressed; unpack it first (gunzip -k "
                           "dump.sql.gz) and pass the uncompressed file"},
           {"photo.png", "photo.png: is neither SQL text nor a pg_dump archive (a custom-format "
                         "one starts with PGDMP); pass the output of pg_dump"},
           {"folder", "folder: is a folder without toc.dat, so not a directory-format pg_dump "
                      "archive; pass a dump file or the folder `pg_dump -Fd` wrote"}}) {
    auto r = init({"--from-dump", dump});
    EXPECT_EQ(r.exit_code, 2) << dump;
    EXPECT_EQ(r.err, std::string("coldgate: error: ") + message + "\n");
    EXPECT_FALSE(fs::exists(dir_ / "coldgate.yaml")) << dump;
  }
}

TEST_F(Init, FromUrlWritesTheExternalProviderWithoutThePassword) {
  const std::string url = "postgresql://app:s3cr%40t@db.example:6543/shop?sslmode=require";
  auto r = init({"--from-url", url});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "external server postgresql://app:***@db.example:6543/shop?sslmode=require → "
            "database.provider external\n"
            "wrote coldgate.yaml: stages table-rows (a query) and schema (a command), each with a "
            "snapshot\n"
            "the password is not written into coldgate.yaml: its url reads ${COLDGATE_DB_PASSWORD}; "
            "before coldgate run:\n"
            "  export COLDGATE_DB_PASSWORD='s3cr%40t'\n"
            "next: coldgate run   (the first run exits 1: no snapshot is committed yet; then "
            "coldgate review)\n");
  std::string yaml = slurp(dir_ / "coldgate.yaml");
  EXPECT_EQ(yaml.find("s3cr"), std::string::npos) << yaml;
  expect_golden("init-from-url.yaml", yaml);

  ScopedEnv password("COLDGATE_DB_PASSWORD", "s3cr%40t");
  auto cfg = config::load(dir_ / "coldgate.yaml");
  EXPECT_EQ(cfg.database.provider, config::Provider::external);
  EXPECT_EQ(cfg.database.url, url);  // the variable gives back the URL as it was given
  EXPECT_TRUE(cfg.setup.empty());
}

TEST_F(Init, FromUrlKeepsAConninfoPasswordsQuotesAndAUrlWithoutOneAsItIs) {
  const std::string conninfo = "host=db.example user=app password='a b\\'c' dbname=shop";
  auto r = init({"--from-url", conninfo});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n  export COLDGATE_DB_PASSWORD='a b\\'\\''c'\n"), std::string::npos) << r.out;
  EXPECT_NE(slurp(dir_ / "coldgate.yaml")
                .find("  url: \"host=db.example user=app password='${COLDGATE_DB_PASSWORD}' dbname=shop\"\n"),
            std::string::npos);
  {
    ScopedEnv password("COLDGATE_DB_PASSWORD", "a b\\'c");
    EXPECT_EQ(config::load(dir_ / "coldgate.yaml").database.url, conninfo);
  }

  fs::remove(dir_ / "coldgate.yaml");
  auto plain = init({"--from-url", "postgresql://app@db.example/shop"});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("export"), std::string::npos) << plain.out;
  EXPECT_NE(slurp(dir_ / "coldgate.yaml").find("  url: \"postgresql://app@db.example/shop\"\n"),
            std::string::npos);
  EXPECT_EQ(config::load(dir_ / "coldgate.yaml").database.url, "postgresql://app@db.example/shop");
}

TEST_F(Init, AMalformedUrlIsRefusedWithItsPasswordMasked) {
  auto r = init({"--from-url", "postgresql://app:hunter2@db.example:notaport/shop"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: --from-url: invalid port 'notaport' in "
                   "'postgresql://app:***@db.example:notaport/shop'\n");
  auto junk = init({"--from-url", "host=db password=hunter2 nonsense"});
  EXPECT_EQ(junk.exit_code, 2);
  EXPECT_EQ(junk.err, "coldgate: error: --from-url: invalid connection string 'host=db "
                      "password=*** nonsense': missing \"=\" after \"nonsense\" in connection info "
                      "string\n");
  EXPECT_FALSE(fs::exists(dir_ / "coldgate.yaml"));
}

TEST_F(Init, DumpAndUrlExcludeEachOther) {
  auto r = init({"--from-dump", "a.sql", "--from-url", "postgresql://h/d"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: init: --from-dump excludes --from-url; see coldgate init --help\n");
}

TEST_F(Init, WithoutADumpTheStarterLoadsAndSaysWhatToAdd) {
  auto r = init({});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "wrote coldgate.yaml: stages table-rows (a query) and schema (a command), each with a "
            "snapshot\n"
            "no data is loaded yet: uncomment a setup step for your dump (or run coldgate init "
            "--from-dump FILE, or --setup 'COMMAND' for your migrations, instead)\n"
            "next: coldgate run   (the first run exits 1: no snapshot is committed yet; then "
            "coldgate review)\n");
  auto cfg = config::load(dir_ / "coldgate.yaml");
  EXPECT_TRUE(cfg.setup.empty());
  EXPECT_EQ(cfg.stages.size(), 2u);
}

TEST_F(Init, SetupExcludesADumpAndAUrl) {
  auto r = init({"--setup", "make db", "--from-dump", "a.sql"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: init: --from-dump excludes --setup; see coldgate init --help\n");
  auto empty = init({"--setup", " "});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, "coldgate: error: init: --setup needs a command; pass one\n");
  EXPECT_FALSE(fs::exists(dir_ / "coldgate.yaml"));
}

// The folder shapes of the ORMs init knows: without a dump, URL or --setup it says what it
// recognised and the init --setup line to run, and writes nothing (that line would then find a
// file in its way).
TEST_F(Init, AnOrmsFolderGetsTheInitSetupLineToRunAndNothingWritten) {
  struct Case {
    std::vector<std::pair<std::string, std::string>> files;
    std::string said;  // the first two lines
    std::string note;  // the note line, or ""
  };
  const std::string sequelize_json =
      R"({"dependencies": {"pg": "^8.11.0", "sequelize": "^6.35.0"},
          "devDependencies": {"sequelize-cli": "^6.6.0"}})";
  const std::vector<Case> cases = {
      {{{"manage.py", "#!/usr/bin/env python\n"},
        {"shop/fixtures/catalog.json", "[]"},
        {"shop/fixtures/users.json", "[]"},
        {"shop/management/commands/seed_orders.py", ""},
        {"shop/management/commands/refresh.py", ""}},
       "recognised Django (manage.py): its migrations and seeds make the database; run them "
       "through init:\n"
       "  coldgate init --setup 'python3 manage.py migrate' --setup 'python3 manage.py loaddata "
       "catalog users' --setup 'python3 manage.py seed_orders'\n",
       "note: settings.py's DATABASES must read DATABASE_URL (or PGHOST, PGPORT, PGUSER, "
       "PGPASSWORD, PGDATABASE)\n"},
      // An app two folders down (apps/core/); installed packages and a virtualenv hold no app
      // of the project's.
      {{{"manage.py", ""},
        {"apps/core/management/commands/__init__.py", ""},
        {"apps/core/management/commands/seed.py", ""},
        {"node_modules/pkg/management/commands/seed_npm.py", ""},
        {"venv/pyvenv.cfg", "home = /usr/bin\n"},
        {"venv/lib/django_seed/management/commands/seed_venv.py", ""},
        {".git/hooks/management/commands/seed_git.py", ""}},
       "recognised Django (manage.py): its migrations and seeds make the database; run them "
       "through init:\n"
       "  coldgate init --setup 'python3 manage.py migrate' --setup 'python3 manage.py seed'\n",
       "note: settings.py's DATABASES must read DATABASE_URL (or PGHOST, PGPORT, PGUSER, "
       "PGPASSWORD, PGDATABASE)\n"},
      {{{"manage.py", ""}},
       "recognised Django (manage.py): its migrations and seeds make the database; run them "
       "through init:\n"
       "  coldgate init --setup 'python3 manage.py migrate'\n",
       "note: settings.py's DATABASES must read DATABASE_URL (or PGHOST, PGPORT, PGUSER, "
       "PGPASSWORD, PGDATABASE)\n"},
      {{{"bin/rails", "#!/usr/bin/env ruby\n"}, {"db/schema.rb", ""}, {"db/seeds.rb", ""}},
       "recognised Rails (bin/rails): its migrations and seeds make the database; run them "
       "through init:\n"
       "  coldgate init --setup 'bin/rails db:schema:load db:seed'\n",
       ""},
      {{{"bin/rails", ""}, {"db/migrate/20240101000000_create_users.rb", ""}},
       "recognised Rails (bin/rails): its migrations and seeds make the database; run them "
       "through init:\n"
       "  coldgate init --setup 'bin/rails db:migrate'\n",
       ""},
      {{{"alembic.ini", "[alembic]\n"}, {"migrations/env.py", ""}},
       "recognised Alembic (alembic.ini): its migrations and seeds make the database; run them "
       "through init:\n"
       "  coldgate init --setup 'alembic upgrade head'\n",
       "note: the migrations' env.py must take its URL from DATABASE_URL\n"},
      {{{"Shop.sln", ""},
        {"Api/Api.csproj",
         "<Project Sdk=\"Microsoft.NET.Sdk.Web\"><ItemGroup><PackageReference "
         "Include=\"Npgsql.EntityFrameworkCore.PostgreSQL\" Version=\"8.0.4\" /><PackageReference "
         "Include=\"Microsoft.EntityFrameworkCore.Design\" Version=\"8.0.8\" />"
         "</ItemGroup></Project>\n"}},
       "recognised EF Core (Api/Api.csproj: Microsoft.EntityFrameworkCore): its migrations and "
       "seeds make the database; run them through init:\n"
       "  coldgate init --setup 'dotnet ef database update --project Api'\n",
       "note: the DbContext's connection string must come from the environment (PGHOST, PGPORT, "
       "PGUSER, PGPASSWORD, PGDATABASE)\n"},
      {{{"package.json", sequelize_json}, {"migrations/20240101-create-users.js", ""},
        {"seeders/20240102-users.js", ""}},
       "recognised Sequelize (package.json: sequelize): its migrations and seeds make the "
       "database; run them through init:\n"
       "  coldgate init --setup 'npx sequelize-cli db:migrate' --setup 'npx sequelize-cli "
       "db:seed:all'\n",
       "note: config/config.json's environment must have \"use_env_variable\": "
       "\"DATABASE_URL\"\n"},
      {{{"package.json", R"({"dependencies": {"typeorm": "^0.3.20", "pg": "^8"}})"},
        {"src/data-source.ts", ""}},
       "recognised TypeORM (package.json: typeorm): its migrations and seeds make the database; "
       "run them through init:\n"
       "  coldgate init --setup 'npx typeorm-ts-node-commonjs migration:run -d "
       "src/data-source.ts'\n",
       "note: the data source must read DATABASE_URL\n"},
      // TypeORM 0.2's CLI has no -d: ormconfig or TYPEORM_* (a NestJS app of 2020).
      {{{"package.json", R"({"dependencies": {"typeorm": "^0.2.25", "pg": "^8"}})"},
        {"tsconfig.json", "{}"}},
       "recognised TypeORM 0.2 (package.json: typeorm ^0.2.25): its migrations and seeds make "
       "the database; run them through init:\n"
       "  coldgate init --setup 'npx ts-node ./node_modules/typeorm/cli.js migration:run'\n",
       "note: TypeORM 0.2 reads its connection from ormconfig, or from the TYPEORM_* variables "
       "when TYPEORM_URL is set: TYPEORM_CONNECTION=postgres, TYPEORM_URL=$DATABASE_URL, with "
       "TYPEORM_ENTITIES and TYPEORM_MIGRATIONS\n"},
      {{{"package.json", R"({"devDependencies": {"typeorm": "~0.2.45"}})"}},
       "recognised TypeORM 0.2 (package.json: typeorm ~0.2.45): its migrations and seeds make "
       "the database; run them through init:\n"
       "  coldgate init --setup 'npx typeorm migration:run'\n",
       "note: TypeORM 0.2 reads its connection from ormconfig, or from the TYPEORM_* variables "
       "when TYPEORM_URL is set: TYPEORM_CONNECTION=postgres, TYPEORM_URL=$DATABASE_URL, with "
       "TYPEORM_ENTITIES and TYPEORM_MIGRATIONS\n"},
      {{{"package.json", R"({"dependencies": {"knex": "^3.1.0", "pg": "^8"}})"},
        {"seeds/01_users.js", ""}},
       "recognised Knex (package.json: knex): its migrations and seeds make the database; run "
       "them through init:\n"
       "  coldgate init --setup 'npx knex migrate:latest' --setup 'npx knex seed:run'\n",
       "note: the knexfile's connection must read DATABASE_URL\n"},
      {{{"package.json", R"({"devDependencies": {"prisma": "^5.22.0"},
                             "dependencies": {"@prisma/client": "^5.22.0"},
                             "prisma": {"seed": "node prisma/seed.js"}})"}},
       "recognised Prisma (package.json: prisma): its migrations and seeds make the database; "
       "run them through init:\n"
       "  coldgate init --setup 'npx prisma migrate deploy' --setup 'npx prisma db seed'\n",
       ""},
  };
  for (const auto& c : cases) {
    TempDir folder;
    for (const auto& [name, text] : c.files) folder.write(name, text);
    auto r = run_coldgate({"init"}, folder.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    // Each line's first command is the ORM's migrate command, but Rails' loading its schema.
    const bool migrates = c.said.find("db:schema:load") == std::string::npos;
    EXPECT_EQ(r.out, c.said +
                         (migrates ? "its migrate command becomes the config's migrate:, which "
                                     "coldgate ab runs on a copy of base's data\n"
                                   : "") +
                         c.note + "nothing written (with commands of your own, pass those as "
                                  "--setup)\n");
    EXPECT_FALSE(fs::exists(folder / "coldgate.yaml")) << c.said;
  }
}

TEST_F(Init, TheInitSetupLineKeepsTheOutputPath) {
  dir_.write("alembic.ini", "[alembic]\n");
  auto r = init({"-o", "ci/coldgate.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n  coldgate init --setup 'alembic upgrade head' -o ci/coldgate.yaml\n"),
            std::string::npos)
      << r.out;
  // A package.json without an ORM's package is no ORM; a dump still wins over recognition.
  TempDir web;
  web.write("package.json", R"({"dependencies": {"react": "^18"}})");
  auto plain = run_coldgate({"init"}, web.path());
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(fs::exists(web / "coldgate.yaml"));
  dir_.write("db/dump.sql", k_pg_dump);
  auto dump = init({"--from-dump", "db/dump.sql"});
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_TRUE(fs::exists(dir_ / "coldgate.yaml"));
}

// What init --setup writes (without running the commands, which needs a server): in a Django
// folder the recipe's migrate command becomes the config's migrate: and its step `- migrate`,
// also when --setup names the interpreter by its path; the seed stays a command: step; and
// coldgate's loader reads the file back as such.
TEST_F(Init, TheOrmsMigrateCommandIsWrittenAsMigrateAndTheFileLoads) {
  dir_.write("manage.py", "#!/usr/bin/env python\n");
  dir_.write("shop/fixtures/shop.json", "[]");
  const auto orm = cli::recognise_orm(dir_.path());
  ASSERT_TRUE(orm);
  EXPECT_EQ(orm->migrate, "python3 manage.py migrate");
  ASSERT_EQ(orm->setup,
            (std::vector<std::string>{"python3 manage.py migrate", "python3 manage.py loaddata shop"}));

  for (const std::string& migrate : {std::string("python3 manage.py migrate"),
                                     std::string("/usr/bin/python3  manage.py migrate")}) {
    const std::vector<std::string> commands{migrate, "python3 manage.py loaddata shop"};
    const std::string yaml = cli::setup_config(commands, &*orm, "");
    EXPECT_EQ(migrate_lines(yaml),
              "# coldgate ab runs the pull request's migration on a copy of base's data.\n"
              "migrate:\n"
              "  command: \"" + migrate + "\"  # /bin/sh -c, with PGHOST … DATABASE_URL set\n");
    EXPECT_EQ(setup_lines(yaml),
              "  # Django (manage.py): the application's own migrations and seeds build the "
              "database,\n"
              "  # as `coldgate init --setup` ran them.\n"
              "  - migrate                       # the migrate: command above\n"
              "  - command: \"python3 manage.py loaddata shop\"  # /bin/sh -c, with PGHOST … "
              "DATABASE_URL set\n"
              "  - analyze: true                 # statistics for the planner\n");
    // The migrate: section comes before setup:, whose `- migrate` needs it.
    EXPECT_LT(yaml.find("\nmigrate:\n"), yaml.find("\nsetup:"));
    const fs::path file = dir_ / "coldgate.yaml";
    fs::remove(file);
    dir_.write("coldgate.yaml", yaml);
    const config::Config cfg = config::load(file);
    EXPECT_EQ(cfg.migrate.shell, migrate);
    EXPECT_EQ(cfg.migrate.key, "migrate.command");
    ASSERT_EQ(cfg.setup.size(), 3u);
    EXPECT_EQ(cfg.setup[0].kind, config::SetupStep::Kind::migrate);
    EXPECT_EQ(cfg.setup[0].shell, migrate);
    EXPECT_EQ(cfg.setup[1].kind, config::SetupStep::Kind::command);
    EXPECT_EQ(cfg.setup[1].shell, "python3 manage.py loaddata shop");
    EXPECT_EQ(cfg.setup[2].kind, config::SetupStep::Kind::analyze);
    EXPECT_EQ(cfg.stages.size(), 2u);
  }

  // From another folder the migrate command goes there first, as the steps do.
  const std::string elsewhere = cli::setup_config({"python3 manage.py migrate"}, &*orm, "cd .. && ");
  EXPECT_NE(elsewhere.find("\n  command: \"cd .. && python3 manage.py migrate\""), std::string::npos)
      << elsewhere;
  // Another command (more words, or no ORM) stays a command: step and no migrate: is written.
  for (const auto& [command, recipe] :
       {std::pair{std::string("python3 manage.py migrate --fake"), &*orm},
        std::pair{std::string("python3 manage.py migrate"), static_cast<const cli::OrmRecipe*>(nullptr)}}) {
    const std::string yaml = cli::setup_config({command}, recipe, "");
    EXPECT_EQ(migrate_lines(yaml), "") << command;
    EXPECT_NE(setup_lines(yaml).find("  - command: \"" + command + "\""), std::string::npos) << yaml;
  }
  // Rails with a committed schema loads it: its migrate command is no setup step of its own.
  TempDir rails;
  rails.write("bin/rails", "");
  rails.write("db/schema.rb", "");
  const auto loads = cli::recognise_orm(rails.path());
  ASSERT_TRUE(loads);
  EXPECT_EQ(loads->migrate, "bin/rails db:migrate");
  EXPECT_FALSE(cli::is_migrate_command(*loads, loads->setup.at(0)));
}

}  // namespace
}  // namespace coldgate::testing
