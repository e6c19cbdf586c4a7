#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "config/config.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::config {
namespace {

using coldgate::testing::TempDir;

struct Failure {
  std::string where;
  std::string what;
};

// The error parsing `yaml` as `file` throws; fails the test when there is none.
Failure failure(const std::string& yaml, const std::filesystem::path& file = "coldgate.yaml") {
  try {
    parse(yaml, file);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return {e.where(), e.what()};
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return {};
}

#define EXPECT_CONFIG_ERROR(yaml, expected_where, expected_what) \
  do {                                                           \
    Failure f_ = failure(yaml);                                  \
    EXPECT_EQ(f_.where, expected_where);                         \
    EXPECT_EQ(f_.what, expected_what);                           \
  } while (0)

TEST(ConfigErrors, UnknownKeyWithHintPointsAtTheKey) {
  EXPECT_CONFIG_ERROR(R"(version: 1
stages:
  - name: a
    query: select 1
    snapshot:
      pth: out.json
)",
                      "coldgate.yaml:6:7",
                      "stages[0].snapshot: unknown key 'pth' (did you mean 'path'?)");
}

TEST(ConfigErrors, AKeyOneLevelOffSaysWhereItBelongs) {
  // `ordered:` beside `snapshot:` instead of under it.
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: a\n    query: select 1\n    snapshot:\n"
                      "      path: a.json\n    ordered: true\n",
                      "coldgate.yaml:7:5",
                      "stages[0]: unknown key 'ordered' here: it is a key of 'snapshot', so indent "
                      "it under 'snapshot:'");
  // `runs:` under `snapshot:` instead of beside it.
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: a\n    query: select 1\n    snapshot:\n"
                      "      path: a.json\n      runs: 3\n",
                      "coldgate.yaml:7:7",
                      "stages[0].snapshot: unknown key 'runs' here: it belongs one level up, "
                      "beside 'snapshot:', so line it up with 'snapshot:'");
  // A top-level key under `database:`, and a database key at the top.
  EXPECT_CONFIG_ERROR("version: 1\ndatabase:\n  provider: local\n  stages: []\n",
                      "coldgate.yaml:4:3",
                      "database: unknown key 'stages' here: it belongs one level up, beside "
                      "'database:', so line it up with 'database:'");
  EXPECT_CONFIG_ERROR("version: 1\nprovider: local\n", "coldgate.yaml:2:1",
                      "unknown key 'provider' here: it is a key of 'database', so indent it under "
                      "'database:'");
}

TEST(ConfigErrors, UnknownKeyWithoutCloseMatchListsValidKeys) {
  EXPECT_CONFIG_ERROR("version: 1\nreport:\n  colour: red\n", "coldgate.yaml:3:3",
                      "report: unknown key 'colour'; valid keys are 'title' and 'comment'");
}

TEST(ConfigErrors, UnknownTopLevelKey) {
  EXPECT_CONFIG_ERROR("version: 1\nstagess: []\n", "coldgate.yaml:2:1",
                      "unknown key 'stagess' (did you mean 'stages'?)");
}

TEST(ConfigErrors, UnknownStageKeyTransposition) {
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: a\n    query: select 1\n    tiemout: 1s\n",
                      "coldgate.yaml:5:5",
                      "stages[0]: unknown key 'tiemout' (did you mean 'timeout'?)");
}

TEST(ConfigErrors, WrongTypes) {
  EXPECT_CONFIG_ERROR("version: 1\ndefaults:\n  runs: five\n", "coldgate.yaml:3:9",
                      "defaults.runs: expected a positive integer, got 'five'");
  EXPECT_CONFIG_ERROR("version: 1\ndefaults:\n  runs: 0\n", "coldgate.yaml:3:9",
                      "defaults.runs: expected a positive integer, got '0'");
  EXPECT_CONFIG_ERROR("version: 1\ndefaults: { warm: -1 }\n", "coldgate.yaml:2:19",
                      "defaults.warm: expected a non-negative integer, got '-1'");
  EXPECT_CONFIG_ERROR(R"(version: 1
stages:
  - name: a
    query: select 1
  - name: b
    query: select $1
    params: 7
)",
                      "coldgate.yaml:7:13", "stages[1].params: expected a list");
  EXPECT_CONFIG_ERROR("version: 1\nstages: { a: 1 }\n", "coldgate.yaml:2:9",
                      "stages: expected a list");
  EXPECT_CONFIG_ERROR("version: 1\ndatabase: [local]\n", "coldgate.yaml:2:11",
                      "database: expected a mapping, got a list");
  // A key that lost its ':' alone under its parent: valid YAML, the text "provider local".
  EXPECT_CONFIG_ERROR("version: 1\ndatabase:\n  provider local\nstages:\n  - name: a\n"
                      "    query: select 1\n",
                      "coldgate.yaml:3:3",
                      "database: expected a mapping, got 'provider local', which has no ':'; "
                      "write 'provider: local'");
  EXPECT_CONFIG_ERROR("version: 1\ndatabase: local\n", "coldgate.yaml:2:11",
                      "database: expected a mapping, got 'local'");
  EXPECT_CONFIG_ERROR("version: 1\nreport: { comment: maybe }\n", "coldgate.yaml:2:20",
                      "report.comment: expected true or false, got 'maybe'");
  EXPECT_CONFIG_ERROR("version: 1\nreport: { title: [a] }\n", "coldgate.yaml:2:18",
                      "report.title: expected a string, got a list");
}

TEST(ConfigErrors, EmptyValueIsReportedAtItsKey) {
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name:\n    query: select 1\n", "coldgate.yaml:3:5",
                      "stages[0].name: has no value");
}

TEST(ConfigErrors, EnumWithHint) {
  EXPECT_CONFIG_ERROR("version: 1\ndatabase:\n  provider: lokal\n", "coldgate.yaml:3:13",
                      "database.provider: expected one of 'local', 'container' or 'external', got "
                      "'lokal' (did you mean 'local'?)");
  EXPECT_CONFIG_ERROR("version: 1\ndefaults: { cold: server }\n", "coldgate.yaml:2:19",
                      "defaults.cold: expected 'process' or 'restart', got 'server'");
  EXPECT_CONFIG_ERROR("version: 1\ndatabase: { provider: container, engine: nerdctl }\n",
                      "coldgate.yaml:2:42",
                      "database.engine: expected 'docker' or 'podman', got 'nerdctl'");
}

TEST(ConfigErrors, MissingRequiredKeyPointsAtTheParentMapping) {
  EXPECT_CONFIG_ERROR(R"(version: 1
stages:
  - name: a
    query: select 1
  - name: b
    query: select 2
  - name: c
    query: select 3
  - query: select 4
    runs: 1
)",
                      "coldgate.yaml:9:5", "stages[3]: missing required key 'name'");
}

TEST(ConfigErrors, Version) {
  EXPECT_CONFIG_ERROR("stages: []\n", "coldgate.yaml:1:1", "missing required key 'version'");
  EXPECT_CONFIG_ERROR("version: 2\nnew_in_v2: x\n", "coldgate.yaml:1:10",
                      "version: unsupported version 2 (this coldgate reads version 1)");
  EXPECT_CONFIG_ERROR("version: one\n", "coldgate.yaml:1:10",
                      "version: expected a positive integer, got 'one'");
}

TEST(ConfigErrors, PostgresMajorVersionBefore10) {
  EXPECT_CONFIG_ERROR("version: 1\ndatabase:\n  version: 9\n", "coldgate.yaml:3:12",
                      "database.version: PostgreSQL 9 is not supported; use a major version of 10 "
                      "or newer (e.g. 15)");
}

TEST(ConfigErrors, StageKinds) {
  EXPECT_CONFIG_ERROR(
      R"(version: 1
stages:
  - name: config-load
    sql: q.sql
    command: [./x]
)",
      "coldgate.yaml:5:5",
      "stages[0] (config-load): has both 'sql' and 'command'; a stage is either a SQL "
      "query or a command");
  EXPECT_CONFIG_ERROR(
      "version: 1\nstages:\n  - name: q\n    query: select 1\n    command: x\n",
      "coldgate.yaml:5:5",
      "stages[0] (q): has both 'query' and 'command'; a stage is either a SQL query "
      "or a command");
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: q\n    sql: q.sql\n    query: select 1\n",
                      "coldgate.yaml:5:5",
                      "stages[0] (q): has both 'sql' and 'query'; give the SQL as a file (sql) or "
                      "inline (query), not both");
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: config-load\n    runs: 3\n",
                      "coldgate.yaml:3:5",
                      "stages[0] (config-load): needs one of 'sql', 'query' or 'command'");
}

TEST(ConfigErrors, SqlOnlyKeysOnACommandStage) {
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: c\n    command: [x]\n    decode: json\n",
                      "coldgate.yaml:5:5",
                      "stages[0].decode: only SQL stages take 'decode'; this stage is a command");
  EXPECT_CONFIG_ERROR(
      "version: 1\nstages:\n  - name: q\n    query: select 1\n    snapshot: { from: o.json }\n",
      "coldgate.yaml:5:17",
      "stages[0].snapshot.from: only command stages have 'from'; a SQL stage's "
      "snapshot is its query result");
}

TEST(ConfigErrors, RequestsIsForCommandStagesAndAtLeastOne) {
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: q\n    query: select 1\n    requests: 20\n",
                      "coldgate.yaml:5:5",
                      "stages[0].requests: only command stages take 'requests'; a SQL stage runs "
                      "its one query once per run (remove the key)");
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: c\n    command: [x]\n    requests: 0\n",
                      "coldgate.yaml:5:15", "stages[0].requests: expected a positive integer, got '0'");
}

TEST(ConfigErrors, SettingsViaIsForCommandStagesAndNamesItsChoices) {
  EXPECT_CONFIG_ERROR(
      "version: 1\nstages:\n  - name: q\n    query: select 1\n    settings: { jit: off }\n"
      "    settings_via: role\n",
      "coldgate.yaml:6:5",
      "stages[0].settings_via: only command stages take 'settings_via'; a SQL stage's settings "
      "are SET LOCAL in its own transaction (remove the key)");
  EXPECT_CONFIG_ERROR(
      "version: 1\nstages:\n  - name: c\n    command: [x]\n    settings_via: rol\n",
      "coldgate.yaml:5:19",
      "stages[0].settings_via: expected 'pgoptions' or 'role', got 'rol' (did you mean 'role'?)");
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: c\n    command: [x]\n    settings_via: env\n",
                      "coldgate.yaml:5:19",
                      "stages[0].settings_via: expected 'pgoptions' or 'role', got 'env'");
  EXPECT_CONFIG_ERROR(
      "version: 1\nstages:\n  - name: c\n    command: [x]\n    settings_via: [role]\n",
      "coldgate.yaml:5:19", "stages[0].settings_via: expected 'pgoptions' or 'role', got a list");
  EXPECT_CONFIG_ERROR(
      "version: 1\nstages:\n  - name: c\n    command: [x]\n    settings: { 'jit off': 1 }\n",
      "coldgate.yaml:5:17", "stages[0].settings: 'jit off' is not a PostgreSQL setting name");
}

TEST(ConfigErrors, RemediesNeedANameOfTheirOwnAndSettings) {
  const std::string head = "version: 1\nstages:\n  - name: q\n    query: select 1\n    remedies:\n";
  EXPECT_CONFIG_ERROR(head + "      - { name: jit = off, settings: { jit: 'on' } }\n",
                      "coldgate.yaml:6:17",
                      "stages[0].remedies[0].name: 'jit = off' is the name of coldgate's own "
                      "variant; name yours otherwise");
  EXPECT_CONFIG_ERROR(head + "      - { name: a, settings: { work_mem: 1MB } }\n"
                             "      - { name: a, settings: { work_mem: 2MB } }\n",
                      "coldgate.yaml:7:17",
                      "stages[0].remedies[1].name: duplicate remedy name 'a' (first at "
                      "coldgate.yaml:6:9)");
  EXPECT_CONFIG_ERROR(head + "      - { name: a }\n", "coldgate.yaml:6:9",
                      "stages[0].remedies[0]: missing required key 'settings' (what the remedy "
                      "sets)");
}

TEST(ConfigErrors, DuplicateStageNamePointsAtTheSecond) {
  EXPECT_CONFIG_ERROR(
      R"(version: 1
stages:
  - name: a
    query: select 1
  - name: b
    query: select 1
  - name: c
    query: select 1
  - name: d
    query: select 1
  - name: plugins
    query: select 1
  - name: plugins
    command: [./m]
)",
      "coldgate.yaml:13:11",
      "stages[5].name: duplicate stage name 'plugins' (first at coldgate.yaml:11:11)");
}

TEST(ConfigErrors, InvalidStageName) {
  EXPECT_CONFIG_ERROR(
      "version: 1\nstages:\n  - name: my stage\n    query: select 1\n", "coldgate.yaml:3:11",
      "stages[0].name: 'my stage' is not a valid stage name: use letters, digits, '.', "
      "'_' and '-', starting with a letter or digit (it becomes a file name)");
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: ../x\n    query: select 1\n",
                      "coldgate.yaml:3:11",
                      "stages[0].name: '../x' is not a valid stage name: use letters, digits, '.', "
                      "'_' and '-', starting with a letter or digit (it becomes a file name)");
}

TEST(ConfigErrors, DuplicateMappingKeyPointsAtTheSecond) {
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: a\n    query: select 1\n    name: b\n",
                      "coldgate.yaml:5:5",
                      "stages[0]: duplicate key 'name' (first at coldgate.yaml:3:5)");
  EXPECT_CONFIG_ERROR("version: 1\nversion: 1\n", "coldgate.yaml:2:1",
                      "duplicate key 'version' (first at coldgate.yaml:1:1)");
  EXPECT_CONFIG_ERROR("version: 1\ndatabase:\n  settings: { jit: on, jit: off }\n",
                      "coldgate.yaml:3:24",
                      "database.settings: duplicate key 'jit' (first at coldgate.yaml:3:15)");
}

TEST(ConfigErrors, YamlSyntaxErrorHasFileLineColumn) {
  // Where the fix goes: the '[' that nothing closes, not the end of the file.
  EXPECT_CONFIG_ERROR("version: 1\nstages: [a,\nb: 2\n", "coldgate.yaml:2:9",
                      "invalid YAML: this '[' is not closed; close it with ']', or quote the "
                      "value if it is text");
  EXPECT_CONFIG_ERROR("", "coldgate.yaml:1:1",
                      "the file is empty; a config starts with 'version: 1'");
  EXPECT_CONFIG_ERROR("- 1\n", "coldgate.yaml:1:1",
                      "expected a mapping of keys (version, database, stages, …)");
  EXPECT_CONFIG_ERROR("version: 1\n---\nversion: 1\n", "coldgate.yaml:3:1",
                      "the file holds more than one YAML document; a config is one document");
}

TEST(ConfigErrors, ReferencedFileMissing) {
  TempDir dir;
  auto file = dir / "coldgate.yaml";
  const std::string base = dir.path().string();
  auto f = failure("version: 1\nstages:\n  - name: q\n    sql: config/demo/q.sql\n", file);
  EXPECT_EQ(f.where, file.string() + ":4:10");
  EXPECT_EQ(f.what,
            "stages[0].sql: file not found: config/demo/q.sql (relative to the config's folder " +
                base + "); fix the path or add the file");
}

// The error check_setup() throws for a config that loads; fails the test when there is none.
Failure setup_failure(const std::string& yaml, const std::filesystem::path& file) {
  Config c = parse(yaml, file);  // what setup names is not checked by loading
  try {
    check_setup(c);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return {e.where(), e.what()};
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return {};
}

TEST(ConfigErrors, SetupFileMissingIsACheckSetupErrorWithAHint) {
  TempDir dir;
  auto file = dir / "coldgate.yaml";
  const std::string base = dir.path().string();
  auto f = setup_failure("version: 1\nsetup:\n  - sql: schema.sql\n", file);
  EXPECT_EQ(f.where, file.string() + ":3:10");
  EXPECT_EQ(f.what, "setup[0].sql: file not found: schema.sql (relative to the config's folder " +
                        base + "); fix the path or add the file");
  f = setup_failure("version: 1\nsetup:\n  - analyze: true\n  - psql: /nonexistent/dump.sql\n",
                    file);
  EXPECT_EQ(f.where, file.string() + ":4:11");
  EXPECT_EQ(f.what, "setup[1].psql: file not found: /nonexistent/dump.sql; fix the path or add "
                    "the file");
  f = setup_failure("version: 1\nsetup:\n  - restore: data.dump\n", file);
  EXPECT_EQ(f.what, "setup[0].restore: file not found: data.dump (relative to the config's "
                    "folder " + base + "); fix the path or add the file");
  f = setup_failure("version: 1\nsetup:\n  - psql: { file: db/chinook.sql, database: postgres }\n",
                    file);
  EXPECT_EQ(f.where, file.string() + ":3:19");
  EXPECT_EQ(f.what, "setup[0].psql.file: file not found: db/chinook.sql (relative to the "
                    "config's folder " + base + "); fix the path or add the file");
  dir.write("sqldir/x", "");
  f = setup_failure("version: 1\nsetup:\n  - sql: sqldir\n", file);
  EXPECT_EQ(f.what, "setup[0].sql: " + base + "/sqldir is a folder; expected a file");
  // A directory-format dump is a folder.
  EXPECT_NO_THROW(check_setup(parse("version: 1\nsetup:\n  - restore: sqldir\n", file)));
}

TEST(ConfigErrors, SetupCommandProgramIsFoundAsTheStepWouldRunIt) {
  TempDir dir;
  auto file = dir / "coldgate.yaml";
  const std::string base = dir.path().string();
  auto f = setup_failure("version: 1\nsetup:\n  - command: [coldgate-no-such-program, --fast]\n",
                         file);
  EXPECT_EQ(f.where, file.string() + ":3:15");
  EXPECT_EQ(f.what, "setup[0].command[0]: program not found: coldgate-no-such-program (looked up "
                    "on PATH, as the step runs it); install it, or name it by its path from the "
                    "config's folder, e.g. ./tools/coldgate-no-such-program");
  f = setup_failure("version: 1\nsetup:\n  - command: ./tools/seed.sh --all\n", file);
  EXPECT_EQ(f.where, file.string() + ":3:14");
  EXPECT_EQ(f.what, "setup[0].command: program not found: ./tools/seed.sh (relative to the "
                    "config's folder " + base + "); fix the path or add the file");
  // Relative to the config's folder, not to the current one.
  auto script = dir.write("tools/seed.sh", "echo seeded\n");
  f = setup_failure("version: 1\nsetup:\n  - command: [./tools/seed.sh, --all]\n", file);
  EXPECT_EQ(f.what, "setup[0].command[0]: ./tools/seed.sh is not executable; chmod +x it, or run "
                    "it through its interpreter: [sh, ./tools/seed.sh, --all]");
  f = setup_failure("version: 1\nsetup:\n  - command: tools/seed.sh\n", file);
  EXPECT_EQ(f.what, "setup[0].command: tools/seed.sh is not executable; chmod +x it, or run it "
                    "through its interpreter: sh tools/seed.sh");
  f = setup_failure("version: 1\nsetup:\n  - command: [./tools]\n", file);
  EXPECT_EQ(f.what, "setup[0].command[0]: ./tools is a folder, not a program");
  std::filesystem::permissions(script, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  EXPECT_NO_THROW(check_setup(parse("version: 1\nsetup:\n  - command: [./tools/seed.sh]\n"
                                    "  - command: tools/seed.sh --all\n  - command: [sh, -c, x]\n",
                                    file)));
  // A shell string is checked only when it starts with a plain word that is not the shell's:
  // what follows `cd x &&`, a variable or an assignment is the shell's to find.
  EXPECT_NO_THROW(check_setup(parse(
      "version: 1\nsetup:\n  - command: cd db && ./coldgate-no-such-program\n"
      "  - command: FOO=1 coldgate-no-such-program\n  - command: '\"$TOOL\" x'\n"
      "  - command: for f in *.sql; do psql -f $f; done\n  - command: echo hi\n",
      file)));
  f = setup_failure("version: 1\nsetup:\n  - command: coldgate-no-such-program --seed | tee log\n",
                    file);
  EXPECT_EQ(f.what, "setup[0].command: program not found: coldgate-no-such-program (looked up on "
                    "PATH, as the step runs it); install it, or name it by its path from the "
                    "config's folder, e.g. ./tools/coldgate-no-such-program");
}

// The error check_stages() throws for a config that loads; fails the test when there is none.
Failure stage_failure(const std::string& yaml, const std::filesystem::path& file) {
  Config c = parse(yaml, file);  // a stage's program is not checked by loading
  try {
    check_stages(c, c.stages);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return {e.where(), e.what()};
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return {};
}

// A command stage's program is found as the run starts it, like a setup command's: one line
// naming the key, the stage and what to do, at the value's file:line:col.
TEST(ConfigErrors, StageCommandProgramIsFoundAsTheStageWouldRunIt) {
  TempDir dir;
  auto file = dir / "coldgate.yaml";
  const std::string base = dir.path().string();
  const std::string head = "version: 1\nstages:\n  - name: rows\n    query: select 1\n";
  auto f = stage_failure(head + "  - name: app\n    command: [coldgate-no-such-app, --start]\n",
                         file);
  EXPECT_EQ(f.where, file.string() + ":6:15");
  EXPECT_EQ(f.what, "stages[1].command[0] (stage app): program not found: coldgate-no-such-app "
                    "(looked up on PATH, as the stage runs it); install it, or name it by its "
                    "path from the config's folder, e.g. ./tools/coldgate-no-such-app");
  f = stage_failure(head + "  - name: app\n    command: ./bin/app --start | tee log\n", file);
  EXPECT_EQ(f.where, file.string() + ":6:14");
  EXPECT_EQ(f.what, "stages[1].command (stage app): program not found: ./bin/app (relative to "
                    "the config's folder " + base + "); fix the path or add the file");
  auto app = dir.write("bin/app", "echo started\n");
  f = stage_failure(head + "  - name: app\n    command: [bin/app]\n", file);
  EXPECT_EQ(f.what, "stages[1].command[0] (stage app): bin/app is not executable; chmod +x it, "
                    "or run it through its interpreter: [sh, bin/app]");
  std::filesystem::permissions(app, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  // There (relative to the config's folder, not the current one), the shell's own, a SQL
  // stage: nothing to say.
  EXPECT_NO_THROW({
    Config c = parse(head + "  - name: app\n    command: [./bin/app]\n"
                            "  - name: app2\n    command: bin/app --all\n"
                            "  - name: app3\n    command: cd bin && ./coldgate-no-such-app\n"
                            "  - name: app4\n    command: [sh, -c, x]\n",
                     file);
    check_stages(c, c.stages);
  });
  // Only the stages given are checked (run --stage, explain STAGE).
  Config c = parse(head + "  - name: app\n    command: [coldgate-no-such-app]\n", file);
  EXPECT_NO_THROW(check_stages(c, {c.stages[0]}));
  EXPECT_NO_THROW(check_setup(c)) << "a stage's program is not setup's to check";
}

TEST(ConfigErrors, PsqlStepWithOptions) {
  EXPECT_CONFIG_ERROR("version: 1\nsetup:\n  - psql: { database: postgres }\n",
                      "coldgate.yaml:3:11",
                      "setup[0].psql: missing required key 'file' (the script psql runs: {file: "
                      "dump.sql})");
  EXPECT_CONFIG_ERROR("version: 1\nsetup:\n  - psql: { file: a.sql, datbase: postgres }\n",
                      "coldgate.yaml:3:26",
                      "setup[0].psql: unknown key 'datbase' (did you mean 'database'?)");
  EXPECT_CONFIG_ERROR("version: 1\nsetup:\n  - psql: { file: a.sql, variables: { my-var: 1 } }\n",
                      "coldgate.yaml:3:39",
                      "setup[0].psql.variables: 'my-var' is not a psql variable name (letters, "
                      "digits and '_')");
  EXPECT_CONFIG_ERROR(
      "version: 1\nsetup:\n  - psql: { file: a.sql, variables: { ON_ERROR_STOP: 0 } }\n",
      "coldgate.yaml:3:39",
      "setup[0].psql.variables: ON_ERROR_STOP is always 1: a failing statement fails the step");
  EXPECT_CONFIG_ERROR("version: 1\nsetup:\n  - psql: [a.sql]\n", "coldgate.yaml:3:11",
                      "setup[0].psql: expected a file name, or {file: FILE, database: NAME, "
                      "variables: {k: v}}, got a list");
  EXPECT_CONFIG_ERROR("version: 1\nsetup:\n  - sql: { file: a.sql }\n", "coldgate.yaml:3:10",
                      "setup[0].sql: expected a file name, got a mapping");
}

// Each syntax error where it is fixed, with what to do.
TEST(ConfigErrors, YamlSyntaxErrorsArePlacedWhereTheyAreFixedWithAHint) {
  const std::string indentation =
      "; check this line's indentation: a key lines up with the other keys of its mapping, a "
      "list item's keys with the key after its '- '";
  // A key less indented than its mapping's.
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: a\n    query: select 1\n   runs: 3\n",
                      "coldgate.yaml:5:4", "invalid YAML: end of sequence not found" + indentation);
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n- name: a\n   query: select 1\n", "coldgate.yaml:4:9",
                      "invalid YAML: illegal map value" + indentation);
  // A key without its ':' is a plain value that runs on: yaml-cpp stops a line later.
  EXPECT_CONFIG_ERROR("version: 1\ndatabase:\n  settings:\n    jit: off\n  provider local\n"
                      "stages:\n  - name: a\n    query: select 1\n",
                      "coldgate.yaml:5:3",
                      "invalid YAML: 'provider local' has no ':', so it runs on into the next "
                      "line; write 'provider: local'");
  // A list item's text is not a key: only the indentation is to check.
  EXPECT_CONFIG_ERROR("version: 1\nsetup:\n  - psql -f x\n    sql: a.sql\n", "coldgate.yaml:4:8",
                      "invalid YAML: illegal map value" + indentation);
  // A flow list or mapping left open: at its bracket, past brackets in quotes and comments.
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: a\n    query: [select 1\n    runs: 3\n",
                      "coldgate.yaml:4:12",
                      "invalid YAML: this '[' is not closed; close it with ']', or quote the "
                      "value if it is text");
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: a\n    query: \"select '[' \" # [\n"
                      "    runs: [3\n",
                      "coldgate.yaml:5:11",
                      "invalid YAML: this '[' is not closed; close it with ']', or quote the "
                      "value if it is text");
  EXPECT_CONFIG_ERROR("version: 1\ndatabase: { provider: local, settings: { jit: off }\n"
                      "stages:\n  - name: a\n    query: select 1\n",
                      "coldgate.yaml:2:11",
                      "invalid YAML: this '{' is not closed; close it with '}', or quote the "
                      "value if it is text");
}

TEST(ConfigErrors, PlainValueHoldingColonSpaceGetsTheQuotedValueAsHint) {
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: a\n    query: select 1 as \"x: y\"\n",
                      "coldgate.yaml:4:26",
                      "invalid YAML: illegal map value; a plain value cannot hold ': ' — quote "
                      "the value: 'select 1 as \"x: y\"'");
  EXPECT_CONFIG_ERROR("version: 1\nreport:\n  title: value: more   # a comment\n",
                      "coldgate.yaml:3:15",
                      "invalid YAML: illegal map value; a plain value cannot hold ': ' — quote "
                      "the value: \"value: more\"");
  EXPECT_CONFIG_ERROR("version: 1\nsetup:\n  - command: echo it's: done\n",
                      "coldgate.yaml:3:23",
                      "invalid YAML: illegal map value; a plain value cannot hold ': ' — quote "
                      "the value: \"echo it's: done\"");
}

TEST(ConfigErrors, SetupSteps) {
  EXPECT_CONFIG_ERROR(
      "version: 1\nsetup:\n  - sql: a.sql\n    psql: b.sql\n", "coldgate.yaml:4:5",
      "setup[0]: has both 'sql' and 'psql'; each setup step does one thing (make them "
      "two list items)");
  EXPECT_CONFIG_ERROR("version: 1\nsetup:\n  - {}\n", "coldgate.yaml:3:5",
                      "setup[0]: needs one of 'sql', 'psql', 'restore', 'command' or 'analyze'");
  EXPECT_CONFIG_ERROR("version: 1\nsetup:\n  - command: []\n", "coldgate.yaml:3:14",
                      "setup[0].command: is empty; give the program and its arguments");
  EXPECT_CONFIG_ERROR("version: 1\nsetup:\n  - sqll: a.sql\n", "coldgate.yaml:3:5",
                      "setup[0]: unknown key 'sqll' (did you mean 'sql'?)");
}

TEST(ConfigErrors, UnsetEnvironmentVariable) {
  ::unsetenv("COLDGATE_TEST_UNSET_FOO");
  EXPECT_CONFIG_ERROR(
      R"(version: 1
stages:
  - name: a
    query: select 1
  - name: b
    command: ["${COLDGATE_TEST_UNSET_FOO}", x]
)",
      "coldgate.yaml:6:15",
      "stages[1].command[0]: environment variable 'COLDGATE_TEST_UNSET_FOO' is not set "
      "(use ${COLDGATE_TEST_UNSET_FOO:-default} for a default)");
  EXPECT_CONFIG_ERROR(
      "version: 1\nreport: { title: 'a ${oops' }\n", "coldgate.yaml:2:18",
      "report.title: unterminated '${' in 'a ${oops' (write $${ for a literal '${')");
}

TEST(ConfigErrors, Database) {
  EXPECT_CONFIG_ERROR(
      "version: 1\ndatabase:\n  provider: external\n", "coldgate.yaml:3:3",
      "database: missing required key 'url' (the external provider connects to it)");
  EXPECT_CONFIG_ERROR(
      "version: 1\ndatabase:\n  provider: external\n  url: ${COLDGATE_TEST_UNSET_URL:-}\n",
      "coldgate.yaml:4:8",
      "database.url: is empty; the external provider needs a libpq URL or conninfo string");
  EXPECT_CONFIG_ERROR("version: 1\ndatabase:\n  version: fifteen\n", "coldgate.yaml:3:12",
                      "database.version: expected a positive integer, got 'fifteen'");
  EXPECT_CONFIG_ERROR("version: 1\ndatabase:\n  settings: { 'jit off': 1 }\n", "coldgate.yaml:3:15",
                      "database.settings: 'jit off' is not a PostgreSQL setting name");
  EXPECT_CONFIG_ERROR(
      "version: 1\ndatabase:\n  settings: { jit: [1] }\n", "coldgate.yaml:3:20",
      "database.settings.jit: expected a setting value (text, number or boolean), got a list");
}

TEST(ConfigErrors, RestartOnExternalNeedsRestartCommand) {
  const std::string head = "version: 1\ndatabase: { provider: external, url: postgresql:///x }\n";
  EXPECT_CONFIG_ERROR(head + R"(stages:
  - name: a
    query: select 1
  - name: b
    query: select 1
  - name: c
    query: select 1
  - name: d
    query: select 1
    cold: restart
)",
                      "coldgate.yaml:12:11",
                      "stages[3].cold: 'restart' needs a server coldgate can restart; the external "
                      "provider has none — set database.restart_command or use cold: process");
  EXPECT_CONFIG_ERROR(
      head + "defaults: { cold: restart }\nstages:\n  - name: a\n    query: select 1\n",
      "coldgate.yaml:3:19",
      "defaults.cold: 'restart' needs a server coldgate can restart; the external "
      "provider has none — set database.restart_command or use cold: process");
}

TEST(ConfigErrors, Gate) {
  EXPECT_CONFIG_ERROR("version: 1\ngate: { max_ratio: 1 }\n", "coldgate.yaml:2:20",
                      "gate.max_ratio: expected a number greater than 1, got '1'");
  EXPECT_CONFIG_ERROR("version: 1\ngate: { warn_ratio: ten }\n", "coldgate.yaml:2:21",
                      "gate.warn_ratio: expected a number greater than 1, got 'ten'");
  EXPECT_CONFIG_ERROR("version: 1\ngate: { max_ratio: 10, warn_ratio: 20 }\n", "coldgate.yaml:2:36",
                      "gate.warn_ratio: must not exceed max_ratio (10), got 20");
  EXPECT_CONFIG_ERROR(R"(version: 1
gate: { warn_ratio: 3 }
stages:
  - name: a
    query: select 1
    gate: { max_ratio: 2.5 }
)",
                      "coldgate.yaml:6:24",
                      "stages[0].gate.max_ratio: must not be below warn_ratio (3), got 2.5");
  EXPECT_CONFIG_ERROR(
      "version: 1\ngate:\n  metrics: [wall_ms, Peak-RSS]\n", "coldgate.yaml:3:22",
      "gate.metrics[1]: 'Peak-RSS' is not a metric name; metric names are lowercase "
      "letters, digits and '_' (e.g. wall_ms)");
  EXPECT_CONFIG_ERROR("version: 1\ngate: { min_delta: 20 }\n", "coldgate.yaml:2:20",
                      "gate.min_delta: '20' has no unit; write e.g. 20ms, 20s or 20m");
  EXPECT_CONFIG_ERROR(
      "version: 1\ngate: { min_delta_bytes: 16MB/s }\n", "coldgate.yaml:2:26",
      "gate.min_delta_bytes: unknown unit 'MB/s' in '16MB/s'; use B, kB, MB, GB, TB "
      "(powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)");
  EXPECT_CONFIG_ERROR("version: 1\ngate: { require_same_environment: sometimes }\n",
                      "coldgate.yaml:2:35",
                      "gate.require_same_environment: expected true or false, got 'sometimes'");
}

TEST(ConfigErrors, Snapshot) {
  EXPECT_CONFIG_ERROR(
      R"(version: 1
stages:
  - name: a
    query: select 1
    snapshot:
      redact: [/ok, updated_at]
)",
      "coldgate.yaml:6:21",
      "stages[0].snapshot.redact[1]: invalid path pattern 'updated_at': a pattern is a "
      "JSON Pointer and starts with '/' (e.g. /log, /**/updated_at), or is '' for the whole "
      "document");
  EXPECT_CONFIG_ERROR(
      "version: 1\nstages:\n  - name: a\n    query: x\n    snapshot: { ordered: ['/a~2'] }\n",
      "coldgate.yaml:5:27",
      "stages[0].snapshot.ordered[0]: invalid path pattern '/a~2': '~' must be "
      "followed by 0 or 1 (~0 stands for '~', ~1 for '/', RFC 6901)");
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: a\n    query: x\n    snapshot: [a]\n",
                      "coldgate.yaml:5:15",
                      "stages[0].snapshot: expected true (snapshot at snapshots/<stage>.json) or a "
                      "mapping (path, from, ordered, identity, redact, redact_ids, max_depth), "
                      "got a list");
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: a\n    query: x\n    snapshot: { max_depth: 0 }\n",
                      "coldgate.yaml:5:28",
                      "stages[0].snapshot.max_depth: expected a positive integer, got '0'");
  EXPECT_CONFIG_ERROR(
      "version: 1\nstages:\n  - name: a\n    query: x\n    snapshot: { max_depth: 10001 }\n",
      "coldgate.yaml:5:28",
      "stages[0].snapshot.max_depth: at most 10000 levels: the canonical text grows with the "
      "square of the nesting (30,000 levels print as 1.8 GB); flatten the document instead");
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: a\n    query: x\n    snapshot: always\n",
                      "coldgate.yaml:5:15",
                      "stages[0].snapshot: expected true or false, got 'always'");
}

TEST(ConfigErrors, Timeouts) {
  EXPECT_CONFIG_ERROR("version: 1\ndefaults: { timeout: 0s }\n", "coldgate.yaml:2:22",
                      "defaults.timeout: a timeout must be longer than 0ms");
  EXPECT_CONFIG_ERROR(
      "version: 1\nstages:\n  - name: a\n    query: x\n    timeout: 10 minutes\n",
      "coldgate.yaml:5:14",
      "stages[0].timeout: unknown unit 'minutes' in '10 minutes'; use ms, s, m or h");
}

TEST(ConfigErrors, LoadNamesUnreadableFile) {
  // Nothing was read, so the error names the file alone: there is no line or column to give.
  TempDir dir;
  const std::filesystem::path missing = dir / "missing.yaml";
  try {
    load(missing);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.message(), missing.string() + ": cannot read file: No such file or directory");
  }
}

}  // namespace
// PostgreSQL receives queries as UTF-8: a Latin-1 file is refused at load, naming the byte.
TEST(ConfigErrors, AQueryThatIsNotUtf8IsRefusedAtItsByte) {
  TempDir dir;
  dir.write("q.sql", "select 'caf\xE9' as x\n");
  auto yaml = dir.write("coldgate.yaml", "version: 1\nstages:\n  - name: latin\n    sql: q.sql\n");
  try {
    load(yaml);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.where(), yaml.string() + ":4:10");
    EXPECT_EQ(std::string(e.what()),
              "stages[0].sql: q.sql: byte 11 (0xE9) is not UTF-8; PostgreSQL receives queries as UTF-8: save the "
                  "SQL as UTF-8");
  }
  EXPECT_CONFIG_ERROR("version: 1\nstages: [ { name: q, query: \"select '\xC3('\" } ]\n",
                      "coldgate.yaml:2:29",
                      "stages[0].query: byte 8 (0xC3) is not UTF-8; PostgreSQL receives queries "
                      "as UTF-8: save the SQL as UTF-8");
}

TEST(ConfigErrors, EnvMappingIsForCommandsWithNamesAndVariablesThatExist) {
  ::unsetenv("COLDGATE_TEST_UNSET_ENV");
  EXPECT_CONFIG_ERROR("version: 1\nstages:\n  - name: q\n    query: select 1\n    env: { A: b }\n",
                      "coldgate.yaml:5:5",
                      "stages[0].env: only command stages take 'env'; a SQL stage starts no "
                      "program of yours (remove the key)");
  EXPECT_CONFIG_ERROR("version: 1\nenv:\n  DB-HOST: x\n", "coldgate.yaml:3:3",
                      "env: 'DB-HOST' is not an environment variable name (letters, digits and "
                      "'_', not starting with a digit)");
  EXPECT_CONFIG_ERROR(
      "version: 1\nstages:\n  - name: app\n    command: [./app]\n    env: { 9LIVES: x }\n",
      "coldgate.yaml:5:12",
      "stages[0].env: '9LIVES' is not an environment variable name (letters, digits and '_', "
      "not starting with a digit)");
  EXPECT_CONFIG_ERROR("version: 1\nenv:\n  DB_URL: 'jdbc:${PGHOST}/${COLDGATE_TEST_UNSET_ENV}'\n",
                      "coldgate.yaml:3:11",
                      "env.DB_URL: environment variable 'COLDGATE_TEST_UNSET_ENV' is not set (use "
                      "${COLDGATE_TEST_UNSET_ENV:-default} for a default)");
  EXPECT_CONFIG_ERROR("version: 1\nenv:\n  HOSTS: [a, b]\n", "coldgate.yaml:3:10",
                      "env.HOSTS: expected a value (text or number), got a list");
  EXPECT_CONFIG_ERROR("version: 1\nenv:\n  EMPTY:\n", "coldgate.yaml:3:3", "env.EMPTY: has no value");
}

}  // namespace coldgate::config
