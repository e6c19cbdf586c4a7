// The ORM recipes of docs/orm.md, run as a new user runs them: each example application of
// tests/apps/ with its recipe.yaml as coldgate.yaml goes from a clone to a passing gate through
// its own migrations, seeds and loading code (run → the snapshot is missing → accept → run
// passes), and a pull request that drops an eager load is caught as an N+1 while the snapshot
// stays identical. The recipes the page shows are these files, byte for byte.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "results/json.hpp"
#include "results/results.hpp"
#include "support/apps.hpp"
#include "support/support.hpp"

namespace coldgate::testing {
namespace {

namespace fs = std::filesystem;

// A developer's shell, with Debian's python3 (which has python3-django, python3-sqlalchemy and
// python3-alembic) before any other python3 on PATH.
std::vector<std::string> developer_env() {
  const char* path = std::getenv("PATH");
  return {"CI=", "GITHUB_ACTIONS=", std::string("PATH=/usr/bin:") + (path ? path : "")};
}

// tests/apps/<name> cloned into `to`, its recipe.yaml as coldgate.yaml.
void clone_app(const std::string& name, const fs::path& to) {
  clone_example_app(name, to);
  fs::copy_file(to / "recipe.yaml", to / "coldgate.yaml");
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// run (the snapshot is missing: exit 1), accept, run (passes); returns the passing run's results.
results::Results clone_to_passing_gate(const fs::path& app, const std::string& stage) {
  auto first = run_coldgate({"run"}, app, {}, developer_env());
  EXPECT_EQ(first.exit_code, 1) << first.err;
  EXPECT_TRUE(ends_with(first.err, "coldgate: failed: 1 snapshot missing (" + stage +
                                       "); results in coldgate-out/results.json\n"))
      << first.err;
  auto accept = run_coldgate({"accept"}, app, {}, developer_env());
  EXPECT_EQ(accept.exit_code, 0) << accept.err;
  EXPECT_EQ(accept.out, "accepted " + stage + ": snapshots/" + stage + ".json\n");
  auto second = run_coldgate({"run"}, app, {}, developer_env());
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(ends_with(second.err, "coldgate: passed: 1 stage, 1 snapshot match; results in "
                                    "coldgate-out/results.json\n"))
      << second.err;
  return results::from_json(slurp(app / "coldgate-out/results.json"), "results.json");
}

// The stage's statements per cold run (all runs alike: the counts are deterministic).
double queries_per_run(const results::Results& res) {
  EXPECT_EQ(res.stages.size(), 1u);
  if (res.stages.empty() || res.stages[0].find("db_queries") == nullptr) return -1;
  const auto& cold = res.stages[0].find("db_queries")->cold;
  for (double q : cold) EXPECT_EQ(q, cold.front());
  return cold.front();
}

TEST(OrmRecipes, ThePageShowsTheTestedRecipesByteForByte) {
  const std::string page = slurp(source_dir() / "docs/orm.md");
  for (const char* app : {"django", "sqlalchemy", "sequelize"}) {
    const std::string file = std::string("tests/apps/") + app + "/recipe.yaml";
    const std::string shown = "<!-- " + file + " -->\n```yaml\n" + slurp(source_dir() / file) + "```\n";
    EXPECT_NE(page.find(shown), std::string::npos) << file << " is not shown as it is";
  }
}

TEST(OrmRecipes, Django) {
  TempDir dir;
  const fs::path app = dir / "shop";
  clone_app("django", app);
  results::Results res = clone_to_passing_gate(app, "load-feed");
  EXPECT_GT(queries_per_run(res), 0);
  const std::string snapshot = slurp(app / "snapshots/load-feed.json");
  EXPECT_NE(snapshot.find("\"category\": \""), std::string::npos) << snapshot;
}

TEST(OrmRecipes, SqlalchemyWithItsOwnVariablesAndAnNPlusOneCaught) {
  TempDir dir;
  const fs::path app = dir / "shop";
  clone_app("sqlalchemy", app);
  results::Results base = clone_to_passing_gate(app, "load-orders");
  const double eager = queries_per_run(base);
  fs::copy_file(app / "coldgate-out/results.json", dir / "main.json");

  // The pull request: the eager loads go, the orders and their lines load lazily.
  const fs::path code = app / "load_orders.py";
  std::string text = slurp(code);
  const std::string eager_line = "if os.environ.get(\"SHOP_LAZY\") != \"1\":";
  ASSERT_NE(text.find(eager_line), std::string::npos);
  text.replace(text.find(eager_line), eager_line.size(), "if False:");
  std::ofstream(code, std::ios::binary | std::ios::trunc) << text;

  auto pr = run_coldgate({"run", "--baseline", (dir / "main.json").string()}, app, {},
                         developer_env());
  EXPECT_EQ(pr.exit_code, 1) << pr.err;
  auto res = results::from_json(slurp(app / "coldgate-out/results.json"), "results.json");
  // The same document: one customer query, one orders query per customer (200), one lines
  // query per order (1,000), where the eager loads took four (selectinload asks for 500 ids a
  // statement: one for the 200 customers' orders, two for the 1,000 orders' lines).
  ASSERT_TRUE(res.stages[0].snapshot);
  EXPECT_EQ(res.stages[0].snapshot->status, results::SnapshotStatus::match);
  EXPECT_EQ(queries_per_run(res), eager - 4 + 1 + 200 + 1000);
  bool named = false;
  for (const auto& d : res.diagnoses)
    named = named || (d.stage == "load-orders" && d.kind == "repeated_query");
  EXPECT_TRUE(named) << pr.out;
  EXPECT_NE(pr.out.find("load-orders db_queries"), std::string::npos) << pr.out;
}

TEST(OrmRecipes, Sequelize) {
  const fs::path modules = source_dir() / "build-tools/apps/sequelize/node_modules";
  ASSERT_TRUE(fs::is_directory(modules))
      << modules << " is missing: ci/setup.sh --test installs the Sequelize example's packages";
  TempDir dir;
  const fs::path app = dir / "blog";
  clone_app("sequelize", app);
  fs::create_directory_symlink(modules, app / "node_modules");
  results::Results res = clone_to_passing_gate(app, "load-feed");
  EXPECT_GT(queries_per_run(res), 0);
  const std::string snapshot = slurp(app / "snapshots/load-feed.json");
  EXPECT_NE(snapshot.find("\"comments\": "), std::string::npos) << snapshot;
}

}  // namespace
}  // namespace coldgate::testing
