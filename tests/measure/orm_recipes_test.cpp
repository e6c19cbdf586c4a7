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
    named = named || (d.stage == "load-orders" && d.kind == results::DiagnosisKind::repeated_query);
  EXPECT_TRUE(named) << pr.out;
  EXPECT_NE(pr.out.find("load-orders db_queries"), std::string::npos) << pr.out;
}

// The storefront page, requested ten times a run, with its categories loaded lazily (one
// lookup per product: an N+1) or eagerly (select_related: one join per page).
std::string feed_pages(bool eager) {
  return std::string("import json\n"
                     "from django.core.management.base import BaseCommand\n"
                     "from shop.models import Product\n"
                     "class Command(BaseCommand):\n"
                     "    def handle(self, *args, **options):\n"
                     "        pages = []\n"
                     "        for _ in range(10):\n"
                     "            products = Product.objects") +
         (eager ? ".select_related(\"category\")" : "") +
         ".order_by(\"sku\")\n"
         "            pages.append([{\"sku\": p.sku, \"category\": p.category.slug} "
         "for p in products])\n"
         "        self.stdout.write(json.dumps({\"pages\": pages}))\n";
}

// The pull request that fixes an N+1 with eager loading brings in a new statement, the join,
// run as often as min_query_delta: the gate passes it as `added`, in place of the lookups that
// fell, and the snapshot proves the same document. The other way round (eager loading lost)
// fails on the new lookups.
TEST(OrmRecipes, DjangoEagerLoadingThatReplacesAnNPlusOnePassesTheGate) {
  TempDir dir;
  const fs::path app = dir / "shop";
  clone_example_app("django", app);
  const fs::path command = app / "shop/management/commands/feed_pages.py";
  std::ofstream(command, std::ios::binary) << feed_pages(false);
  std::ofstream(app / "coldgate.yaml", std::ios::binary)
      << "version: 1\n"
         "database: { name: shop }\n"
         "setup:\n"
         "  - command: python3 manage.py migrate --no-input\n"
         "  - command: python3 manage.py loaddata shop\n"
         "  - analyze: true\n"
         "stages:\n"
         "  - name: feed-pages\n"
         "    command: python3 manage.py feed_pages\n"
         "    runs: 2\n"
         "    warm: 0\n"
         "    snapshot: true\n";
  results::Results lazy = clone_to_passing_gate(app, "feed-pages");
  const double lazy_queries = queries_per_run(lazy);
  fs::copy_file(app / "coldgate-out/results.json", dir / "lazy.json");

  std::ofstream(command, std::ios::binary | std::ios::trunc) << feed_pages(true);
  auto pr = run_coldgate({"run", "--baseline", (dir / "lazy.json").string()}, app, {},
                         developer_env());
  EXPECT_EQ(pr.exit_code, 0) << pr.err;
  fs::copy_file(app / "coldgate-out/results.json", dir / "eager.json");
  auto eager = results::from_json(slurp(dir / "eager.json"), "eager.json");
  ASSERT_EQ(eager.stages.size(), 1u);
  ASSERT_TRUE(eager.stages[0].snapshot);
  EXPECT_EQ(eager.stages[0].snapshot->status, results::SnapshotStatus::match);
  // Ten pages of nine products: the product list and 90 category lookups became ten joins.
  EXPECT_EQ(queries_per_run(eager), lazy_queries - 100 + 10);
  ASSERT_TRUE(eager.gate);
  const results::StatementVerdict* join = nullptr;
  for (const auto& v : eager.gate->statements) {
    if (v.query.find("INNER JOIN \"shop_category\"") != std::string::npos) join = &v;
  }
  ASSERT_NE(join, nullptr) << pr.out;
  EXPECT_EQ(join->verdict, results::Verdict::added) << join->reason;
  EXPECT_EQ(join->head->calls, 10);
  EXPECT_TRUE(join->reason.starts_with("new statement: runs 10 times per run, in place of "
                                       "others: the stage runs 90 statements fewer per run; "
                                       "fell: `SELECT \"shop_category\"."))
      << join->reason;
  for (const auto& v : eager.gate->statements) {
    EXPECT_NE(v.verdict, results::Verdict::regression) << v.query << ": " << v.reason;
  }

  // Base eager, head lazy: the lookups are a new N+1.
  auto undone = run_coldgate({"compare", (dir / "eager.json").string(), (dir / "lazy.json").string(),
                              "--out", (dir / "undone").string()},
                             app, {}, developer_env());
  EXPECT_EQ(undone.exit_code, 1) << undone.err;
  auto judged = results::from_json(slurp(dir / "undone/results.json"), "results.json");
  ASSERT_TRUE(judged.gate);
  int regressions = 0;
  for (const auto& v : judged.gate->statements) {
    if (v.verdict != results::Verdict::regression) continue;
    ++regressions;
    EXPECT_EQ(v.reason, "new statement: runs " + std::string(v.head->calls == 90 ? "90" : "10") +
                            " times per run (≥ min_query_delta 10)");
  }
  EXPECT_EQ(regressions, 2) << undone.out;
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
