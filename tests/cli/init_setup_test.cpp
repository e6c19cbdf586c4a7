// `coldgate init --setup` on the example applications of tests/apps/, as a new user of an ORM
// application goes from a clone to a passing gate: init runs the application's own migrate and
// seed commands on a throwaway local cluster and writes them as setup steps (the migrate
// command as the config's migrate: and its step `- migrate`); the first run
// gives the snapshots (exit 1: none committed yet), accept takes them, the second run passes.
// The starter's stages leave out the migration tools' bookkeeping tables and get no diagnosis
// about their own catalog queries. The Django app runs on Debian's python3-django
// (/usr/bin/python3), the Sequelize app on the npm packages ci/setup.sh --test installs into
// build-tools/apps/sequelize/.
#include <gtest/gtest.h>

#include <filesystem>

#include "config/config.hpp"
#include "results/json.hpp"
#include "results/results.hpp"
#include "support/apps.hpp"
#include "support/support.hpp"

namespace coldgate::testing {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> k_local{"CI=", "GITHUB_ACTIONS="};  // a developer's shell

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// init --setup, then run (snapshots missing), accept, run (passes); checks what each says.
void clone_to_passing_gate(const fs::path& app, const std::vector<std::string>& setup,
                           const std::string& init_out, const std::string& table_rows,
                           const std::vector<std::string>& bookkeeping) {
  std::vector<std::string> args{"init"};
  for (const auto& command : setup) {
    args.push_back("--setup");
    args.push_back(command);
  }
  auto init = run_coldgate(args, app, {}, k_local);
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(init.out, init_out);

  config::Config cfg = config::load(app / "coldgate.yaml");
  EXPECT_EQ(cfg.database.provider, config::Provider::local);
  ASSERT_EQ(cfg.setup.size(), setup.size() + 1);
  // The first command is the ORM's migrate command: the config's migrate:, run as `- migrate`
  // (and by ab on a copy of base's data); the seeds stay command: steps.
  EXPECT_EQ(cfg.migrate.shell, setup[0]);
  EXPECT_EQ(cfg.setup[0].kind, config::SetupStep::Kind::migrate);
  EXPECT_EQ(cfg.setup[0].shell, setup[0]);
  for (std::size_t i = 1; i < setup.size(); ++i) {
    EXPECT_EQ(cfg.setup[i].kind, config::SetupStep::Kind::command);
    EXPECT_EQ(cfg.setup[i].shell, setup[i]);
  }
  EXPECT_EQ(cfg.setup.back().kind, config::SetupStep::Kind::analyze);

  auto first = run_coldgate({"run"}, app, {}, k_local);
  EXPECT_EQ(first.exit_code, 1) << first.err;
  EXPECT_TRUE(ends_with(first.err, "coldgate: failed: 2 snapshots missing (table-rows, schema); "
                                   "results in coldgate-out/results.json\n"))
      << first.err;
  EXPECT_EQ(slurp(app / "snapshots/table-rows.json.new"), table_rows);
  const std::string schema = slurp(app / "snapshots/schema.json.new");
  for (const auto& table : bookkeeping) {
    EXPECT_EQ(schema.find(table), std::string::npos) << table << " in\n" << schema;
  }
  // The starter's stages are catalog queries of coldgate's: no diagnosis about them.
  auto results = results::from_json(slurp(app / "coldgate-out/results.json"), "results.json");
  for (const auto& d : results.diagnoses) ADD_FAILURE() << d.stage << ": " << results::to_string(d.kind) << ": " << d.message;

  auto accept = run_coldgate({"accept"}, app, {}, k_local);
  EXPECT_EQ(accept.exit_code, 0) << accept.err;
  EXPECT_EQ(accept.out,
            "accepted table-rows: snapshots/table-rows.json\n"
            "accepted schema: snapshots/schema.json\n");
  EXPECT_EQ(slurp(app / "snapshots/table-rows.json"), table_rows);

  auto second = run_coldgate({"run"}, app, {}, k_local);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(ends_with(second.err, "coldgate: passed: 2 stages, 2 snapshots match; results in "
                                    "coldgate-out/results.json\n"))
      << second.err;
}

TEST(InitSetup, TheDjangoExampleFromCloneToAPassingGate) {
  TempDir dir;
  const fs::path app = dir / "shop";
  clone_example_app("django", app);
  clone_to_passing_gate(
      app, {"/usr/bin/python3 manage.py migrate", "/usr/bin/python3 manage.py loaddata shop"},
      "recognised Django (manage.py)\n"
      "the setup commands made 3 tables with 24 rows (public.shop_category 3, "
      "public.shop_product 9, public.shop_review 12)\n"
      "migration bookkeeping, left out of the stages: public.django_migrations (1 row)\n"
      "wrote coldgate.yaml: stages table-rows (a query) and schema (a command), each with a "
      "snapshot\n"
      "next: coldgate run   (the first run exits 1: no snapshot is committed yet; then coldgate "
      "review)\n",
      "{\n"
      "  \"public.shop_category\": 3,\n"
      "  \"public.shop_product\": 9,\n"
      "  \"public.shop_review\": 12\n"
      "}\n",
      {"django_migrations"});
  const std::string yaml = slurp(app / "coldgate.yaml");
  EXPECT_NE(yaml.find("  # Django (manage.py): the application's own migrations and seeds build "
                      "the database,\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("# coldgate ab runs the pull request's migration on a copy of base's data.\n"
                      "migrate:\n"
                      "  command: \"/usr/bin/python3 manage.py migrate\"  # /bin/sh -c"),
            std::string::npos)
      << yaml;
}

TEST(InitSetup, TheSequelizeExampleFromCloneToAPassingGate) {
  const fs::path modules = source_dir() / "build-tools/apps/sequelize/node_modules";
  ASSERT_TRUE(fs::is_directory(modules))
      << modules << " is missing: ci/setup.sh --test installs the Sequelize example's packages";
  TempDir dir;
  const fs::path app = dir / "blog";
  clone_example_app("sequelize", app);
  fs::create_directory_symlink(modules, app / "node_modules");
  clone_to_passing_gate(
      app, {"npx sequelize-cli db:migrate", "npx sequelize-cli db:seed:all"},
      "recognised Sequelize (package.json: sequelize)\n"
      "the setup commands made 3 tables with 306 rows (public.Authors 6, public.Comments 240, "
      "public.Posts 60)\n"
      "migration bookkeeping, left out of the stages: public.SequelizeMeta (3 rows)\n"
      "wrote coldgate.yaml: stages table-rows (a query) and schema (a command), each with a "
      "snapshot\n"
      "next: coldgate run   (the first run exits 1: no snapshot is committed yet; then coldgate "
      "review)\n",
      "{\n"
      "  \"public.Authors\": 6,\n"
      "  \"public.Comments\": 240,\n"
      "  \"public.Posts\": 60\n"
      "}\n",
      {"SequelizeMeta"});
}

// TypeORM 0.2 reads its connection from TYPEORM_* variables. Those init's commands ran with
// become the config's env: — a secret as a reference to coldgate's environment, never its
// value — so that setup runs the same in a shell (or CI) without them.
TEST(InitSetup, WhatTheOrmReadFromTheShellBecomesTheConfigsEnv) {
  TempDir dir;
  const fs::path app = dir / "api";
  fs::create_directories(app);
  dir.write("api/package.json", R"({"dependencies": {"typeorm": "^0.2.25", "pg": "^8"}})");
  // Stands in for TypeORM's CLI: fails as it does (MissingDriverError) without its variables.
  const std::string migrate =
      "if [ \"$TYPEORM_CONNECTION\" != postgres ] || [ -z \"$TYPEORM_PASSWORD\" ]; then "
      "echo 'MissingDriverError: Wrong driver: \"undefined\" given.' >&2; exit 1; fi; "
      "psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE TABLE article (id int); INSERT INTO article "
      "VALUES (1)'";
  auto init = run_coldgate({"init", "--setup", migrate}, app, {},
                           {"CI=", "GITHUB_ACTIONS=", "TYPEORM_CONNECTION=postgres",
                            "TYPEORM_PASSWORD=s3cret-pw", "TYPEORM_LOGGING="});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_NE(init.out.find("\nthe setup commands ran with TYPEORM_CONNECTION, TYPEORM_PASSWORD from "
                          "this shell: written as the config's env:, the secret TYPEORM_PASSWORD "
                          "as a reference to the environment: set it where coldgate runs (a CI "
                          "secret)\n"),
            std::string::npos)
      << init.out;
  const std::string yaml = slurp(app / "coldgate.yaml");
  EXPECT_EQ(yaml.find("s3cret-pw"), std::string::npos) << yaml;
  testing::ScopedEnv password("TYPEORM_PASSWORD", "s3cret-pw");  // the load checks ${NAME}
  const config::Config cfg = config::load(app / "coldgate.yaml");
  ASSERT_EQ(cfg.env.size(), 2u) << yaml;
  EXPECT_EQ(cfg.env.at("TYPEORM_CONNECTION").text, "postgres");
  EXPECT_EQ(cfg.env.at("TYPEORM_PASSWORD").text, "${TYPEORM_PASSWORD}");

  // Without TYPEORM_CONNECTION in the environment, setup runs: the config says it.
  auto run = run_coldgate({"run"}, app, {},
                          {"CI=", "GITHUB_ACTIONS=", "TYPEORM_CONNECTION=",
                           "TYPEORM_PASSWORD=s3cret-pw"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(ends_with(run.err, "coldgate: failed: 2 snapshots missing (table-rows, schema); "
                                 "results in coldgate-out/results.json\n"))
      << run.err;
}

TEST(InitSetup, AFailingCommandWritesNothingAndLeavesNoCluster) {
  TempDir dir;
  const fs::path tmp = dir / "tmp";
  make_server_tmpdir(dir, tmp);
  fs::create_directories(dir / "app");
  const std::string failing = "echo migrating; echo 'relation \"users\" does not exist' >&2; exit 3";
  auto r = run_coldgate({"init", "--setup", "true", "--setup", failing}, dir / "app", {},
                        {"CI=", "TMPDIR=" + tmp.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(ends_with(r.err,
                        "coldgate: error: init --setup 'echo migrating; echo '\\''relation "
                        "\"users\" does not exist'\\'' >&2; exit 3': failed (exit status 3); "
                        "nothing written, the cluster removed: fix the command (or the project) "
                        "and run init again:\n"
                        "relation \"users\" does not exist\n"))
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "app/coldgate.yaml"));
  for (const auto& e : fs::directory_iterator(tmp)) ADD_FAILURE() << "left behind: " << e.path();
}

}  // namespace
}  // namespace coldgate::testing
