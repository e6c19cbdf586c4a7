// The migration gate through Django's own migrate command: a pull request's AddIndex on a
// table of 300,000 reviews, and the same index with AddIndexConcurrently, each measured by
// `coldgate ab` on a copy of base's data.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "results/json.hpp"
#include "support/apps.hpp"
#include "support/support.hpp"

namespace coldgate::testing {
namespace {

namespace fs = std::filesystem;

// Debian's python3 (with python3-django and python3-psycopg2) before any other on PATH.
std::vector<std::string> developer_env() {
  const char* path = std::getenv("PATH");
  return {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_HEAD_REF=",
          std::string("PATH=/usr/bin:") + (path ? path : "")};
}

struct DjangoMigration : ::testing::Test {
  void SetUp() override {
    clone_example_app("django", app);
    std::ofstream(app / "coldgate.yaml", std::ios::binary)
        << "version: 1\n"
           "database: { name: shop }\n"
           "migrate:\n"
           "  command: python3 manage.py migrate --no-input\n"
           "setup:\n"
           "  - migrate\n"
           "  - command: python3 manage.py loaddata shop\n"
           "  - sql: reviews.sql\n"
           "defaults: { runs: 1, warm: 0 }\n"
           "gate:\n"
           "  migration: { max_lock_wait: 1s }\n"
           "stages:\n"
           "  - name: reviews\n"
           "    query: SELECT count(*) AS n FROM shop_review WHERE rating = 5\n";
    // At least 300,000 reviews, spread over the fixture's products.
    std::ofstream(app / "reviews.sql", std::ios::binary)
        << "INSERT INTO shop_review (product_id, rating, body) SELECT p.id, g % 5 + 1, '' FROM "
           "shop_product p CROSS JOIN generate_series(1, (300000 + (SELECT count(*) FROM "
           "shop_product) - 1) / (SELECT count(*) FROM shop_product)) g;\n";
    run_git(app, {"add", "-A"});
    run_git(app, {"commit", "-q", "-m", "base: 300,000 reviews"});
    run_git(app, {"update-ref", "refs/heads/base", "HEAD"});
    run_git(app, {"checkout", "-q", "-b", "pr"});
  }
  // With `try_fixes`, `coldgate ab --try`.
  RunResult pull_request(const std::string& migration, bool try_fixes = false) {
    std::ofstream(app / "shop/migrations/0002_review_rating_idx.py", std::ios::binary) << migration;
    run_git(app, {"add", "-A"});
    run_git(app, {"commit", "-q", "-m", "pr: an index on the reviews' rating"});
    std::vector<std::string> args{"ab", "--base", "base"};
    if (try_fixes) args.push_back("--try");
    return run_coldgate(args, app, "", developer_env());
  }
  results::Results results() {
    return results::from_json(slurp(app / "coldgate-out/results.json"), "results.json");
  }
  TempDir dir;
  fs::path app = dir / "shop";
};

TEST_F(DjangoMigration, AddIndexOnALargeTableIsARegressionWithAddIndexConcurrentlyAsTheFix) {
  auto r = pull_request(
      "from django.db import migrations, models\n\n\n"
      "class Migration(migrations.Migration):\n"
      "    dependencies = [(\"shop\", \"0001_initial\")]\n"
      "    operations = [\n"
      "        migrations.AddIndex(model_name=\"review\",\n"
      "                            index=models.Index(fields=[\"rating\"], name=\"review_rating_idx\")),\n"
      "    ]\n",
      true);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  EXPECT_EQ(res.migration->source, "command `python3 manage.py migrate --no-input`");
  const results::MigrationFinding* f = nullptr;
  for (const auto& x : res.migration->findings) {
    if (x.kind == results::MigrationFindingKind::index_build) f = &x;
  }
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, results::MigrationSeverity::regression);
  EXPECT_EQ(f->table, "public.shop_review");
  EXPECT_EQ(f->index, "public.review_rating_idx");
  EXPECT_GE(f->rows, 300000);
  EXPECT_EQ(f->statement, "CREATE INDEX \"review_rating_idx\" ON \"shop_review\" (\"rating\")");
  EXPECT_NE(f->fix.find("AddIndexConcurrently"), std::string::npos) << f->fix;
  // Django runs the migration in one transaction: the write probe waited for the whole of it.
  const results::MigrationTable* t = nullptr;
  for (const auto& x : res.migration->tables) {
    if (x.name == "public.shop_review") t = &x;
  }
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->probed);
  EXPECT_EQ(t->lock, "ShareLock");
  EXPECT_TRUE(res.migration->drift.empty());
  // --try: the SQL Django sent, measured alone and with CONCURRENTLY, each on a copy of base's
  // 300,000 reviews — what AddIndexConcurrently would run.
  ASSERT_EQ(res.migration->trials.size(), 1u);
  const auto& trial = res.migration->trials[0];
  EXPECT_EQ(trial.fix, std::vector<std::string>{
                           "CREATE INDEX CONCURRENTLY \"review_rating_idx\" ON \"shop_review\" (\"rating\")"});
  ASSERT_TRUE(trial.before && trial.after) << trial.error;
  EXPECT_EQ(trial.before->regressions, 1u);
  EXPECT_EQ(trial.after->regressions, 0u);
  EXPECT_TRUE(trial.fixed);
}

TEST_F(DjangoMigration, AddIndexConcurrentlyPasses) {
  auto r = pull_request(
      "from django.contrib.postgres.operations import AddIndexConcurrently\n"
      "from django.db import migrations, models\n\n\n"
      "class Migration(migrations.Migration):\n"
      "    atomic = False\n"
      "    dependencies = [(\"shop\", \"0001_initial\")]\n"
      "    operations = [\n"
      "        AddIndexConcurrently(model_name=\"review\",\n"
      "                             index=models.Index(fields=[\"rating\"], name=\"review_rating_idx\")),\n"
      "    ]\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  EXPECT_TRUE(res.migration->findings.empty());
  bool concurrent = false;
  for (const auto& s : res.migration->statements) {
    concurrent |= s.query == "CREATE INDEX CONCURRENTLY \"review_rating_idx\" ON \"shop_review\" (\"rating\")";
  }
  EXPECT_TRUE(concurrent);
  // Safe and without a warning ("safe but 1 warning"); a passing verdict may go on to say what
  // got faster, which the runs' noise decides.
  EXPECT_NE(r.err.find("the migration safe"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("the migration safe but"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace coldgate::testing
