#include <gtest/gtest.h>

#include <cstdlib>

#include "config/config.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::config {
namespace {

using coldgate::testing::TempDir;
namespace fs = std::filesystem;

TEST(ConfigLoad, MinimalConfigGetsDefaults) {
  Config c =
      parse("version: 1\nstages:\n  - name: q\n    query: select 1\n", "/abs/dir/coldgate.yaml");
  EXPECT_EQ(c.file, fs::path("/abs/dir/coldgate.yaml"));
  EXPECT_EQ(c.base_dir, fs::path("/abs/dir"));
  EXPECT_EQ(c.version, 1);
  EXPECT_EQ(c.database.provider, Provider::local);
  EXPECT_EQ(c.database.name, "coldgate");
  EXPECT_FALSE(c.database.version.has_value());
  EXPECT_EQ(c.database.image, "");
  EXPECT_TRUE(c.setup.empty());
  EXPECT_TRUE(c.build.empty());
  EXPECT_EQ(c.report.title, "coldgate");
  EXPECT_FALSE(c.report.comment);
  EXPECT_EQ(c.gate.max_ratio, 10);
  EXPECT_EQ(c.gate.warn_ratio, 2);
  EXPECT_EQ(c.gate.min_delta, Duration(20));
  EXPECT_EQ(c.gate.min_delta_bytes, 16ull << 20);
  ASSERT_EQ(c.stages.size(), 1u);
  const Stage& s = c.stages[0];
  EXPECT_EQ(s.name, "q");
  EXPECT_EQ(s.query, "select 1");
  EXPECT_FALSE(s.is_command());
  EXPECT_EQ(s.runs, 5);
  EXPECT_EQ(s.warm, 5);
  EXPECT_EQ(s.cold, ColdMode::process);
  EXPECT_EQ(s.timeout, Duration(600000));
  EXPECT_EQ(s.decode, Decode::none);
  EXPECT_FALSE(s.snapshot.has_value());
  EXPECT_EQ(s.where.str(), "/abs/dir/coldgate.yaml:3:5");
}

TEST(ConfigLoad, RelativeFileNameIsKeptForMessagesAndMadeAbsolute) {
  Config c = parse("version: 1\n", "sub/coldgate.yaml");
  EXPECT_EQ(c.file, (fs::current_path() / "sub/coldgate.yaml").lexically_normal());
  EXPECT_EQ(c.base_dir, (fs::current_path() / "sub").lexically_normal());
  EXPECT_EQ(c.database.where.str(), "sub/coldgate.yaml:1:1");
}

TEST(ConfigLoad, DefaultsApplyToStagesThatDoNotSetThem) {
  Config c = parse(R"(version: 1
defaults: { runs: 3, warm: 0, cold: restart, timeout: 90s }
stages:
  - name: a
    query: select 1
  - name: b
    query: select 1
    runs: 7
    warm: 2
    cold: process
    timeout: 1.5s
)",
                   "/d/c.yaml");
  EXPECT_EQ(c.default_runs, 3);
  EXPECT_EQ(c.default_warm, 0);
  EXPECT_EQ(c.default_cold, ColdMode::restart);
  EXPECT_EQ(c.default_timeout, Duration(90000));
  EXPECT_EQ(c.stages[0].runs, 3);
  EXPECT_EQ(c.stages[0].warm, 0);
  EXPECT_EQ(c.stages[0].cold, ColdMode::restart);
  EXPECT_EQ(c.stages[0].timeout, Duration(90000));
  EXPECT_EQ(c.stages[1].runs, 7);
  EXPECT_EQ(c.stages[1].warm, 2);
  EXPECT_EQ(c.stages[1].cold, ColdMode::process);
  EXPECT_EQ(c.stages[1].timeout, Duration(1500));
}

TEST(ConfigLoad, RelativePathsResolveAgainstTheConfigFolder) {
  TempDir dir;
  dir.write("conf/sql/q.sql", "select 1");
  dir.write("conf/schema.sql", "");
  dir.write("conf/dump/toc.dat", "");
  dir.write("abs.sql", "");
  auto file = dir.write("conf/coldgate.yaml",
                        "version: 1\n"
                        R"(setup:
  - sql: schema.sql
  - psql: ./sql/../schema.sql
  - restore: dump
  - sql: )" + (dir / "abs.sql").string() +
                            R"(
  - command: [./tools/init, --fast]
  - command: make data
  - analyze: true
  - analyze: false
stages:
  - name: q
    sql: sql/q.sql
    snapshot: { path: ../snaps/q.json }
  - name: c
    command: ./measure
    snapshot: { from: out/c.json }
  - name: d
    command: [./measure]
    snapshot: { from: stdout, path: /tmp/d.json }
)");
  Config c = load(file);
  const fs::path base = (dir / "conf");
  EXPECT_EQ(c.base_dir, base);
  ASSERT_EQ(c.setup.size(), 7u);
  EXPECT_EQ(c.setup[0].kind, SetupStep::Kind::sql);
  EXPECT_EQ(c.setup[0].file, base / "schema.sql");
  EXPECT_EQ(c.setup[1].kind, SetupStep::Kind::psql);
  EXPECT_EQ(c.setup[1].file, base / "schema.sql");
  EXPECT_EQ(c.setup[2].kind, SetupStep::Kind::restore);
  EXPECT_EQ(c.setup[2].file, base / "dump");
  EXPECT_EQ(c.setup[3].file, dir / "abs.sql");
  EXPECT_EQ(c.setup[4].kind, SetupStep::Kind::command);
  EXPECT_EQ(c.setup[4].argv, (std::vector<std::string>{"./tools/init", "--fast"}));
  EXPECT_EQ(c.setup[4].shell, "");
  EXPECT_EQ(c.setup[5].shell, "make data");
  EXPECT_TRUE(c.setup[5].argv.empty());
  EXPECT_EQ(c.setup[6].kind, SetupStep::Kind::analyze);
  EXPECT_EQ(c.setup[6].where.str(), file.string() + ":9:5");
  EXPECT_EQ(c.setup[1].file_given, "./sql/../schema.sql");
  EXPECT_EQ(c.setup[1].key, "setup[1].psql");
  EXPECT_EQ(c.setup[1].value_where.str(), file.string() + ":4:11");
  EXPECT_EQ(c.setup[4].key, "setup[4].command[0]");
  EXPECT_EQ(c.setup[4].value_where.str(), file.string() + ":7:15");
  EXPECT_EQ(c.stages[0].sql, base / "sql/q.sql");
  EXPECT_EQ(c.stages[0].snapshot->path, dir / "snaps/q.json");
  EXPECT_EQ(c.stages[0].snapshot->from, "");
  EXPECT_EQ(c.stages[1].shell, "./measure");
  EXPECT_TRUE(c.stages[1].is_command());
  EXPECT_EQ(c.stages[1].snapshot->from, (base / "out/c.json").string());
  EXPECT_FALSE(c.stages[1].snapshot->from_stdout);
  EXPECT_EQ(c.stages[1].snapshot->path, base / "snapshots/c.json");
  EXPECT_EQ(c.stages[2].command, (std::vector<std::string>{"./measure"}));
  EXPECT_TRUE(c.stages[2].snapshot->from_stdout);
  EXPECT_EQ(c.stages[2].snapshot->from, "");
  EXPECT_EQ(c.stages[2].snapshot->path, fs::path("/tmp/d.json"));
}

TEST(ConfigLoad, PsqlStepTakesAFileOrItsOptions) {
  TempDir dir;
  auto file = dir / "coldgate.yaml";
  Config c = parse(R"(version: 1
database: { name: chinook }
setup:
  - psql: db/plain.sql
  - psql:
      file: db/chinook.sql
      database: postgres
      variables: { band: "AC/DC", year: 1973, live: true }
  - psql: { file: db/more.sql }
)",
                   file);
  ASSERT_EQ(c.setup.size(), 3u);
  EXPECT_EQ(c.setup[0].file, dir / "db/plain.sql");
  EXPECT_EQ(c.setup[0].database, "");
  EXPECT_TRUE(c.setup[0].variables.empty());
  EXPECT_EQ(c.setup[1].kind, SetupStep::Kind::psql);
  EXPECT_EQ(c.setup[1].file, dir / "db/chinook.sql");
  EXPECT_EQ(c.setup[1].file_given, "db/chinook.sql");
  EXPECT_EQ(c.setup[1].database, "postgres");
  EXPECT_EQ(c.setup[1].variables,
            (std::map<std::string, std::string>{{"band", "AC/DC"}, {"live", "true"}, {"year", "1973"}}));
  EXPECT_EQ(c.setup[1].key, "setup[1].psql.file");
  EXPECT_EQ(c.setup[1].value_where.str(), file.string() + ":6:13");
  EXPECT_EQ(c.setup[2].database, "");
  EXPECT_EQ(c.setup[2].file, dir / "db/more.sql");
}

TEST(ConfigLoad, SnapshotShorthandAndDefaults) {
  Config c = parse(R"(version: 1
stages:
  - name: sql-true
    query: select 1
    snapshot: true
  - name: cmd-true
    command: [x]
    snapshot: yes
  - name: off
    query: select 1
    snapshot: false
  - name: mapped
    query: select 1
    snapshot:
      ordered: [/log, /items/*/tags]
      identity: [key]
      redact: [/**/updated_at]
      redact_ids: true
      max_depth: 10000
)",
                   "/w/coldgate.yaml");
  ASSERT_TRUE(c.stages[0].snapshot);
  EXPECT_EQ(c.stages[0].snapshot->path, fs::path("/w/snapshots/sql-true.json"));
  EXPECT_EQ(c.stages[0].snapshot->from, "");
  EXPECT_EQ(c.stages[0].snapshot->where.str(), "/w/coldgate.yaml:5:15");
  EXPECT_EQ(c.stages[0].snapshot->canon.identity, (std::vector<std::string>{"$id", "id"}));
  EXPECT_EQ(c.stages[0].snapshot->canon.max_depth, 128u);
  ASSERT_TRUE(c.stages[1].snapshot);
  EXPECT_EQ(c.stages[1].snapshot->path, fs::path("/w/snapshots/cmd-true.json"));
  EXPECT_TRUE(c.stages[1].snapshot->from_stdout);
  EXPECT_FALSE(c.stages[2].snapshot);
  const Snapshot& m = *c.stages[3].snapshot;
  EXPECT_EQ(m.path, fs::path("/w/snapshots/mapped.json"));
  EXPECT_EQ(m.canon.ordered, (std::vector<std::string>{"/log", "/items/*/tags"}));
  EXPECT_EQ(m.canon.identity, (std::vector<std::string>{"key"}));
  EXPECT_EQ(m.canon.redact, (std::vector<std::string>{"/**/updated_at"}));
  EXPECT_TRUE(m.canon.redact_ids);
  EXPECT_EQ(m.canon.max_depth, 10000u);
}

// `ordered: [""]` is the root (RFC 6901's empty pointer), as `coldgate canon --ordered ''` takes
// it: a SQL stage's rows keep the query's order.
TEST(ConfigLoad, TheEmptyPatternIsTheWholeDocument) {
  Config c = parse(R"(version: 1
stages:
  - name: rows
    query: select 1
    snapshot: { ordered: [""], redact: ['', /a] }
)",
                   "/w/coldgate.yaml");
  ASSERT_TRUE(c.stages[0].snapshot);
  EXPECT_EQ(c.stages[0].snapshot->canon.ordered, (std::vector<std::string>{""}));
  EXPECT_EQ(c.stages[0].snapshot->canon.redact, (std::vector<std::string>{"", "/a"}));
}

TEST(ConfigLoad, PerStageGateOverridesTopLevel) {
  Config c = parse(R"(version: 1
gate:
  max_ratio: 8
  warn_ratio: 1.5
  min_delta: 50ms
  min_delta_bytes: 1MiB
  metrics: [wall_ms, peak_rss_bytes]
  require_same_environment: true
stages:
  - name: a
    query: select 1
  - name: b
    query: select 1
    gate: { max_ratio: 20, min_delta: 1s }
)",
                   "/w/c.yaml");
  EXPECT_EQ(c.gate.max_ratio, 8);
  EXPECT_EQ(c.gate.warn_ratio, 1.5);
  EXPECT_EQ(c.gate.min_delta, Duration(50));
  EXPECT_EQ(c.gate.min_delta_bytes, 1ull << 20);
  EXPECT_EQ(c.gate.metrics, (std::vector<std::string>{"wall_ms", "peak_rss_bytes"}));
  EXPECT_TRUE(c.gate.require_same_environment);
  const Gate& a = c.stages[0].gate;
  EXPECT_EQ(a.max_ratio, 8);
  EXPECT_EQ(a.min_delta, Duration(50));
  const Gate& b = c.stages[1].gate;
  EXPECT_EQ(b.max_ratio, 20);
  EXPECT_EQ(b.warn_ratio, 1.5);
  EXPECT_EQ(b.min_delta, Duration(1000));
  EXPECT_EQ(b.min_delta_bytes, 1ull << 20);
  EXPECT_EQ(b.metrics, c.gate.metrics);
  EXPECT_TRUE(b.require_same_environment);
}

TEST(ConfigLoad, SettingsParamsAndDecode) {
  Config c = parse(R"(version: 1
database:
  settings: { jit: on, shared_buffers: 128MB, work_mem: 4096, quoted: "true", flag: false }
stages:
  - name: q
    query: select $1, $2, $3, $4
    params: [1, null, 'null', ~, true, "", 2.50]
    settings: { jit: off, "plan_cache_mode": force_generic_plan }
    decode: json
)",
                   "/w/c.yaml");
  EXPECT_EQ(c.database.settings, (std::map<std::string, std::string>{{"jit", "on"},
                                                                     {"shared_buffers", "128MB"},
                                                                     {"work_mem", "4096"},
                                                                     {"quoted", "true"},
                                                                     {"flag", "off"}}));
  const Stage& s = c.stages[0];
  EXPECT_EQ(s.query, "select $1, $2, $3, $4");
  EXPECT_EQ(s.params, (std::vector<std::string>{"1", "", "null", "", "true", "", "2.50"}));
  EXPECT_EQ(s.params_null, (std::vector<bool>{false, true, false, true, false, false, false}));
  EXPECT_EQ(s.settings, (std::map<std::string, std::string>{
                            {"jit", "off"}, {"plan_cache_mode", "force_generic_plan"}}));
  EXPECT_EQ(s.decode, Decode::json);
}

TEST(ConfigLoad, CommandStageSettingsAndHowTheyReachItsClients) {
  Config c = parse(R"(version: 1
stages:
  - name: app
    command: [./app]
    settings: { jit: off, work_mem: 64MB }
  - name: driver
    command: [dotnet, run]
    settings: { jit: false }
    settings_via: role
  - name: explicit
    command: [./app]
    settings_via: pgoptions
  - name: q
    query: select 1
)",
                   "/w/c.yaml");
  EXPECT_EQ(c.stages[0].settings,
            (std::map<std::string, std::string>{{"jit", "off"}, {"work_mem", "64MB"}}));
  EXPECT_EQ(c.stages[0].settings_via, SettingsVia::pgoptions);
  EXPECT_EQ(c.stages[1].settings, (std::map<std::string, std::string>{{"jit", "off"}}));
  EXPECT_EQ(c.stages[1].settings_via, SettingsVia::role);
  EXPECT_TRUE(c.stages[2].settings.empty());
  EXPECT_EQ(c.stages[2].settings_via, SettingsVia::pgoptions);
  EXPECT_EQ(c.stages[3].settings_via, SettingsVia::pgoptions);
}

// `requests:` says how many requests one run of a command stage makes (repeated_query judges
// calls per request); 1 when not set.
TEST(ConfigLoad, ACommandStageSaysHowManyRequestsItMakes) {
  Config c = parse(R"(version: 1
stages:
  - name: article-pages
    command: [./load-pages, "20"]
    requests: 20
  - name: one-page
    command: [./load-pages, "1"]
)",
                   "/w/c.yaml");
  EXPECT_EQ(c.stages[0].requests, 20);
  EXPECT_EQ(c.stages[1].requests, 1);
}

TEST(ConfigLoad, Providers) {
  Config c = parse("version: 1\ndatabase: { provider: container }\n", "/w/c.yaml");
  EXPECT_EQ(c.database.provider, Provider::container);
  EXPECT_EQ(c.database.image, "postgres:15");
  c = parse(
      "version: 1\ndatabase: { provider: container, version: 16, engine: podman, run_args: "
      "[--shm-size=1g] }\n",
      "/w/c.yaml");
  EXPECT_EQ(c.database.image, "postgres:16");
  EXPECT_EQ(c.database.engine, "podman");
  EXPECT_EQ(c.database.run_args, (std::vector<std::string>{"--shm-size=1g"}));
  c = parse("version: 1\ndatabase: { provider: container, image: 'ghcr.io/x/pg:17' }\n",
            "/w/c.yaml");
  EXPECT_EQ(c.database.image, "ghcr.io/x/pg:17");
  c = parse(R"(version: 1
database:
  provider: external
  url: postgresql://u@h/db
  restart_command: systemctl restart postgresql
stages:
  - name: a
    query: select 1
    cold: restart
)",
            "/w/c.yaml");
  EXPECT_EQ(c.database.provider, Provider::external);
  EXPECT_EQ(c.database.url, "postgresql://u@h/db");
  EXPECT_EQ(c.database.restart_command, "systemctl restart postgresql");
  EXPECT_EQ(c.stages[0].cold, ColdMode::restart);
  EXPECT_EQ(c.database.where.str(), "/w/c.yaml:3:3");
  // bindir: a server unpacked by hand, relative to the config's folder; absolute kept.
  c = parse("version: 1\ndatabase: { bindir: ../pg/17/bin, version: 17 }\n", "/w/ci/c.yaml");
  EXPECT_EQ(c.database.bindir, fs::path("/w/pg/17/bin"));
  EXPECT_EQ(c.database.version, 17);
  c = parse("version: 1\ndatabase: { bindir: /opt/pg/bin }\n", "/w/c.yaml");
  EXPECT_EQ(c.database.bindir, fs::path("/opt/pg/bin"));
  EXPECT_TRUE(parse("version: 1\n", "/w/c.yaml").database.bindir.empty());
}

TEST(ConfigLoad, EnvironmentExpansionInEveryStringScalar) {
  ::setenv("COLDGATE_TEST_DB", "postgresql://ci@db/app", 1);
  ::setenv("COLDGATE_TEST_RUNS", "9", 1);
  ::unsetenv("COLDGATE_TEST_NOPE");
  Config c = parse(R"(version: 1
database:
  provider: external
  url: ${COLDGATE_TEST_DB}
  name: ${COLDGATE_TEST_NOPE:-fallback}
build: ["make -j$${NPROC}"]
report: { title: "Start-up on ${COLDGATE_TEST_NOPE:-main}" }
stages:
  - name: q
    query: select $1
    runs: ${COLDGATE_TEST_RUNS}
    params: ["${COLDGATE_TEST_NOPE:-}", "$$"]
)",
                   "/w/c.yaml");
  EXPECT_EQ(c.database.url, "postgresql://ci@db/app");
  EXPECT_EQ(c.database.name, "fallback");
  EXPECT_EQ(c.build, (std::vector<std::string>{"make -j${NPROC}"}));
  EXPECT_EQ(c.report.title, "Start-up on main");
  EXPECT_EQ(c.stages[0].runs, 9);
  EXPECT_EQ(c.stages[0].params, (std::vector<std::string>{"", "$$"}));
  ::unsetenv("COLDGATE_TEST_DB");
  ::unsetenv("COLDGATE_TEST_RUNS");
}

TEST(ConfigLoad, BuildAndReport) {
  Config c =
      parse("version: 1\nbuild: cmake --build build\nreport: { title: Start-up, comment: true }\n",
            "/w/c.yaml");
  EXPECT_EQ(c.build, (std::vector<std::string>{"cmake --build build"}));
  EXPECT_EQ(c.report.title, "Start-up");
  EXPECT_TRUE(c.report.comment);
}

TEST(ConfigLoad, EnvMappingKeepsItsTextForTheRunAndStagesAddToIt) {
  ::setenv("COLDGATE_TEST_APP_MODE", "test", 1);
  Config c = parse(R"(version: 1
env: { DEV_DB_HOST: '${PGHOST}', DB_URL: '${JDBC_DATABASE_URL}', MODE: '${COLDGATE_TEST_APP_MODE}', PRICE: '$${X}', N: 3 }
setup:
  - command: [./seed]
  - sql: a.sql
stages:
  - name: app
    command: [./app]
    env: { MODE: bench, PGHOST: other }
  - name: q
    query: select 1
)",
                   "/w/c.yaml");
  auto texts = [](const EnvMap& env) {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : env) out[k] = v.text;
    return out;
  };
  const std::map<std::string, std::string> top = {{"DEV_DB_HOST", "${PGHOST}"},
                                                  {"DB_URL", "${JDBC_DATABASE_URL}"},
                                                  {"MODE", "${COLDGATE_TEST_APP_MODE}"},
                                                  {"PRICE", "$${X}"},
                                                  {"N", "3"}};
  EXPECT_EQ(texts(c.env), top);
  EXPECT_EQ(texts(c.setup[0].env), top);
  EXPECT_TRUE(c.setup[1].env.empty());
  std::map<std::string, std::string> stage = top;
  stage["MODE"] = "bench";
  stage["PGHOST"] = "other";
  EXPECT_EQ(texts(c.stages[0].env), stage);
  EXPECT_TRUE(c.stages[1].env.empty());
  EXPECT_EQ(c.stages[0].env.at("MODE").key, "stages[0].env.MODE");
  EXPECT_EQ(c.stages[0].env.at("MODE").where.str(), "/w/c.yaml:9:18");
  EXPECT_EQ(c.env.at("DB_URL").where.str(), "/w/c.yaml:2:42");

  // Expanded at run time, once: the facts first, then the environment; $${ is a literal ${.
  const std::map<std::string, std::string> facts = {
      {"PGHOST", "127.0.0.1"}, {"JDBC_DATABASE_URL", "jdbc:postgresql://127.0.0.1:5/d"}};
  EXPECT_EQ(expand_env_values(c.env, facts),
            (std::vector<std::string>{"DB_URL=jdbc:postgresql://127.0.0.1:5/d",
                                      "DEV_DB_HOST=127.0.0.1", "MODE=test", "N=3",
                                      "PRICE=${X}"}));
  ::unsetenv("COLDGATE_TEST_APP_MODE");
  try {
    expand_env_values(c.env, facts);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.message(),
              "/w/c.yaml:2:72: env.MODE: environment variable 'COLDGATE_TEST_APP_MODE' is not "
              "set (use ${COLDGATE_TEST_APP_MODE:-default} for a default)");
  }
}

}  // namespace
}  // namespace coldgate::config
