// The migration gate on a real local server: `coldgate ab` runs the pull request's migration
// (a `migrate: {sql_dir}` folder) on a copy of base's data — 100,000 orders, ten times
// gate.migration.max_rewrite_rows — and judges what it
// did to the tables that were there: rewrites, index builds without CONCURRENTLY, the stall a
// write probe saw, a strong lock that waits unbounded behind an open transaction, schema drift.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "results/json.hpp"
#include "support/support.hpp"

namespace coldgate::testing {
namespace {

namespace fs = std::filesystem;

struct MigrationGate : ::testing::Test {
  // Base: the schema from 001, 100,000 orders from the seed, one stage; the lock check waits at
  // most 1 s, so a migration that sets a lock_timeout of 100 ms gives up well inside it.
  void SetUp() override {
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: local }\n"
              "migrate: { sql_dir: db/migrations }\n"
              "setup:\n"
              "  - migrate\n"
              "  - sql: db/seed.sql\n"
              "defaults: { runs: 1, warm: 0 }\n"
              "gate:\n"
              "  migration: { max_lock_wait: 1s }\n"
              "stages:\n"
              "  - name: orders\n"
              "    query: SELECT count(*) AS n FROM orders WHERE amount > 90\n");
    dir.write("db/migrations/001_schema.sql",
              "CREATE TABLE customers (id serial PRIMARY KEY, name text);\n"
              "CREATE TABLE orders (id bigserial PRIMARY KEY, customer int NOT NULL, amount int "
              "NOT NULL, note text);\n");
    dir.write("db/seed.sql",
              "INSERT INTO customers (name) SELECT 'c' || g FROM generate_series(1, 100) g;\n"
              "INSERT INTO orders (customer, amount, note) SELECT g % 100 + 1, g % 97, 'n' FROM "
              "generate_series(1, 100000) g;\n");
    dir.write(".gitignore", "coldgate-out/\n");
    run_git(dir.path(), {"init", "-q"});
    commit("base");
    run_git(dir.path(), {"checkout", "-q", "-b", "pr"});
  }
  void commit(const std::string& message) {
    run_git(dir.path(), {"add", "-A"});
    run_git(dir.path(), {"commit", "-q", "-m", message});
  }
  // The pull request: `file` added to the migrations with `sql`, then `coldgate ab`.
  // With `try_fixes`, `coldgate ab --try`: each regression's fix measured on copies.
  RunResult pull_request(const std::string& file, const std::string& sql, bool try_fixes = false) {
    dir.write("db/migrations/" + file, sql);
    commit("pr: " + file);
    return ab(try_fixes);
  }
  RunResult ab(bool try_fixes = false) {
    std::vector<std::string> args{"ab", "--base", "base"};
    if (try_fixes) args.push_back("--try");
    return run_coldgate(args, dir.path(), "",
                        {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_HEAD_REF="});
  }
  // Both sides of `trial` measured: the statement alone is the same regression, the fix leaves
  // none and is within max_stall.
  static void expect_fixed(const results::MigrationTrial& trial) {
    ASSERT_TRUE(trial.before && trial.after) << trial.error;
    EXPECT_EQ(trial.before->regressions, 1u) << "the statement alone is the same regression";
    EXPECT_EQ(trial.after->regressions, 0u);
    EXPECT_TRUE(trial.fixed);
  }
  // The one trial of `m` (ab --try), of a finding of `kind`.
  static const results::MigrationTrial* only_trial(const results::Migration& m,
                                                   results::MigrationFindingKind kind) {
    EXPECT_EQ(m.trials.size(), 1u);
    if (m.trials.size() != 1 || m.trials[0].kind != kind || m.trials[0].table != "public.orders")
      return nullptr;
    return &m.trials[0];
  }
  results::Results results() {
    return results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  }
  static const results::MigrationFinding* find(const results::Migration& m,
                                               results::MigrationFindingKind kind) {
    for (const auto& f : m.findings) {
      if (f.kind == kind) return &f;
    }
    return nullptr;
  }
  static const results::MigrationTable* table(const results::Migration& m, const std::string& name) {
    for (const auto& t : m.tables) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
  TempDir dir;
};

// With --try, the fix is measured too: the statement alone, then CONCURRENTLY, on fresh copies.
TEST_F(MigrationGate, AnIndexBuiltWithoutConcurrentlyOnALargeTableIsARegressionNamingItsFix) {
  auto r = pull_request("002_index.sql", "CREATE INDEX orders_amount_idx ON orders (amount);\n",
                        true);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("coldgate: failed: the migration: 1 regression (index_build public.orders)"),
            std::string::npos)
      << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  const auto& m = *res.migration;
  EXPECT_EQ(m.files, std::vector<std::string>{"002_index.sql"});
  const auto* f = find(m, results::MigrationFindingKind::index_build);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, results::MigrationSeverity::regression);
  EXPECT_EQ(f->table, "public.orders");
  EXPECT_EQ(f->index, "public.orders_amount_idx");
  EXPECT_EQ(f->rows, 100000);
  EXPECT_EQ(f->statement, "CREATE INDEX orders_amount_idx ON orders (amount)");
  EXPECT_NE(f->fix.find("CREATE INDEX CONCURRENTLY"), std::string::npos) << f->fix;
  // The index build asked for SHARE, which waited behind a write transaction without giving up.
  const auto* lock = find(m, results::MigrationFindingKind::lock_without_timeout);
  ASSERT_NE(lock, nullptr);
  EXPECT_EQ(lock->severity, results::MigrationSeverity::warning);
  EXPECT_EQ(lock->lock, "ShareLock");
  EXPECT_EQ(lock->table, "public.orders");
  const auto* t = table(m, "public.orders");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->probed);
  EXPECT_FALSE(t->rewritten);
  EXPECT_TRUE(m.drift_checked);
  EXPECT_TRUE(m.drift.empty());
  const std::string report = slurp(dir / "coldgate-out/report.md");
  const auto migration = report.find("### Migration");
  ASSERT_NE(migration, std::string::npos) << report;
  EXPECT_LT(migration, report.find("<details><summary>1 stage unchanged")) << report;
  EXPECT_NE(report.find("**index_build** — index public.orders_amount_idx built on public.orders "
                        "(100,000 rows) without CONCURRENTLY"),
            std::string::npos)
      << report;

  const auto* tried = only_trial(m, results::MigrationFindingKind::index_build);
  ASSERT_NE(tried, nullptr);
  const auto& trial = *tried;
  EXPECT_EQ(trial.statement, "CREATE INDEX orders_amount_idx ON orders (amount)");
  EXPECT_EQ(trial.fix, std::vector<std::string>{"CREATE INDEX CONCURRENTLY orders_amount_idx ON orders (amount)"});
  EXPECT_TRUE(trial.error.empty()) << trial.error;
  expect_fixed(trial);
  EXPECT_NE(report.find("**Fixes tried**"), std::string::npos) << report;
  EXPECT_NE(report.find("| index_build on `public.orders` | `CREATE INDEX CONCURRENTLY "
                        "orders_amount_idx ON orders (amount)` |"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("| ✅ fixed |"), std::string::npos) << report;
  EXPECT_NE(r.err.find("migrate --try: index_build on public.orders: writes waited "), std::string::npos)
      << r.err;
}

TEST_F(MigrationGate, TheSameIndexBuiltConcurrentlyPassesWithItsFigures) {
  auto r = pull_request("002_index.sql",
                        "CREATE INDEX CONCURRENTLY orders_amount_idx ON orders (amount);\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // What the new index made faster, if anything, may follow the verdict (" — 1 statement faster").
  EXPECT_NE(r.err.find("passed: 1 stage, 0 snapshots match, no regression, the migration safe"),
            std::string::npos)
      << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  EXPECT_TRUE(res.migration->findings.empty());
  EXPECT_GT(res.migration->wal_bytes, 0u);
  EXPECT_GT(res.migration->size_after_bytes, res.migration->size_before_bytes);
  const std::string report = slurp(dir / "coldgate-out/report.md");
  EXPECT_NE(report.find("✅ The migration is safe: sql_dir db/migrations on a copy of base's data:"),
            std::string::npos)
      << report;
}

TEST_F(MigrationGate, AColumnTypeChangeIsARewriteUnderAccessExclusive) {
  auto r = pull_request("002_type.sql", "ALTER TABLE orders ALTER COLUMN amount TYPE bigint;\n",
                        true);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  const auto* f = find(*res.migration, results::MigrationFindingKind::rewrite);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->table, "public.orders");
  EXPECT_EQ(f->statement, "ALTER TABLE orders ALTER COLUMN amount TYPE bigint");
  EXPECT_NE(f->fix.find("add a new column of the new type"), std::string::npos) << f->fix;
  const auto* t = table(*res.migration, "public.orders");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->rewritten);
  // The rewrite's lock, asked for behind an open write transaction: ACCESS EXCLUSIVE.
  const auto* lock = find(*res.migration, results::MigrationFindingKind::lock_without_timeout);
  ASSERT_NE(lock, nullptr);
  EXPECT_EQ(lock->lock, "AccessExclusiveLock");
  // --try: a rewrite's fix is a design change, not a statement to run instead; said, not run.
  const auto* tried = only_trial(*res.migration, results::MigrationFindingKind::rewrite);
  ASSERT_NE(tried, nullptr);
  const auto& trial = *tried;
  EXPECT_TRUE(trial.fix.empty());
  EXPECT_FALSE(trial.before);
  EXPECT_NE(trial.not_tried.find("a change of the schema's design"), std::string::npos) << trial.not_tried;
}

TEST_F(MigrationGate, ANotNullColumnWithAVolatileDefaultRewritesTheTable) {
  auto r = pull_request("002_column.sql",
                        "ALTER TABLE orders ADD COLUMN seen timestamptz NOT NULL DEFAULT "
                        "clock_timestamp();\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  const auto* f = find(*res.migration, results::MigrationFindingKind::rewrite);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->fix.find("add the column nullable"), std::string::npos) << f->fix;
}

// PostgreSQL 11 and newer store a constant default in the catalog: no rewrite. The brief ACCESS
// EXCLUSIVE of ADD COLUMN still waits unbounded behind an open transaction: a warning.
TEST_F(MigrationGate, AConstantDefaultIsMetadataOnlyAndPassesWithTheLockWarning) {
  auto r = pull_request("002_column.sql",
                        "ALTER TABLE orders ADD COLUMN flag int NOT NULL DEFAULT 0;\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  EXPECT_EQ(find(*res.migration, results::MigrationFindingKind::rewrite), nullptr);
  const auto* t = table(*res.migration, "public.orders");
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->rewritten);
  const auto* lock = find(*res.migration, results::MigrationFindingKind::lock_without_timeout);
  ASSERT_NE(lock, nullptr);
  EXPECT_EQ(lock->severity, results::MigrationSeverity::warning);
  EXPECT_NE(lock->fix.find("SET lock_timeout"), std::string::npos) << lock->fix;
  EXPECT_NE(r.err.find("the migration safe but 1 warning"), std::string::npos) << r.err;
}

TEST_F(MigrationGate, AMigrationThatSetsLockTimeoutIsNoQueueHazard) {
  auto r = pull_request("002_column.sql",
                        "SET lock_timeout = '100ms';\n"
                        "ALTER TABLE orders ADD COLUMN flag int NOT NULL DEFAULT 0;\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  EXPECT_TRUE(res.migration->lock_check);
  EXPECT_EQ(find(*res.migration, results::MigrationFindingKind::lock_without_timeout), nullptr);
}

// The lock is held for at least 1.5 s (pg_sleep): a write probe that starts meanwhile waits;
// reads under SHARE do not.
TEST_F(MigrationGate, TheWriteStallIsMeasuredAndJudgedAgainstMaxStall) {
  std::string config = slurp(dir / "coldgate.yaml");
  config.replace(config.find("max_lock_wait: 1s"), 17, "max_stall: 500ms, lock_timeout: off");
  dir.write("coldgate.yaml", config);
  auto r = pull_request("002_hold.sql",
                        "BEGIN;\nLOCK TABLE orders IN SHARE MODE;\nSELECT pg_sleep(1.5);\n"
                        "UPDATE customers SET name = name WHERE id = 1;\nCOMMIT;\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  const auto* t = table(*res.migration, "public.orders");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->lock, "ShareLock");
  EXPECT_GE(t->write_stall_ms, 1000) << "a write probe waited the lock out";
  EXPECT_LT(t->read_stall_ms, t->write_stall_ms);
  const auto* f = find(*res.migration, results::MigrationFindingKind::stall);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->table, "public.orders");
  EXPECT_FALSE(res.migration->lock_check);
}

TEST_F(MigrationGate, AnAaPairHasNoMigrationSection) {
  dir.write("README", "no migration\n");
  commit("pr: docs only");
  auto r = ab();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(results().migration);
  EXPECT_EQ(slurp(dir / "coldgate-out/report.md").find("### Migration"), std::string::npos);
}

// The seed adds a column the migrations never make: the upgraded schema is not head's fresh one.
TEST_F(MigrationGate, SchemaDriftBetweenTheUpgradeAndAFreshSetupFailsNamingTheObject) {
  dir.write("db/seed.sql", slurp(dir / "db/seed.sql") + "ALTER TABLE orders ADD COLUMN legacy int;\n");
  auto r = pull_request("002_table.sql", "CREATE TABLE coupons (code text PRIMARY KEY);\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  ASSERT_EQ(res.migration->drift.size(), 1u);
  EXPECT_EQ(res.migration->drift[0],
            "table public.orders: column `legacy integer` only in head's fresh setup");
  EXPECT_NE(r.err.find("schema drift (1 object differ"), std::string::npos) << r.err;
}

// A wide table (an ORM's articles) whose last column differs: the finding names that column and
// shows both sides of it, not the first columns of two definitions that are the same up to there.
TEST_F(MigrationGate, SchemaDriftInALateColumnOfAWideTableNamesTheColumn) {
  dir.write("db/migrations/001_schema.sql",
            slurp(dir / "db/migrations/001_schema.sql") +
                "CREATE TABLE articles (id serial PRIMARY KEY, slug varchar(255), title "
                "varchar(255), description text, body text, author_id integer, created_at "
                "timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT "
                "now(), state text);\n");
  commit("base: articles");
  run_git(dir.path(), {"branch", "-f", "base"});
  // Head's seed changes the column the migrations leave as it was.
  dir.write("db/seed.sql", slurp(dir / "db/seed.sql") +
                              "ALTER TABLE articles ALTER COLUMN state SET DEFAULT 'draft';\n");
  auto r = pull_request("002_table.sql", "CREATE TABLE coupons (code text PRIMARY KEY);\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  ASSERT_EQ(res.migration->drift.size(), 1u);
  const std::string& d = res.migration->drift[0];
  EXPECT_NE(d.find("table public.articles: column `state text` after the upgrade, `state text "
                   "DEFAULT 'draft'::text` in head's fresh setup"),
            std::string::npos)
      << d;
  EXPECT_EQ(d.find("body text"), std::string::npos) << "the columns that are the same: " << d;
  EXPECT_LE(d.size(), 400u) << d;
  EXPECT_NE(slurp(dir / "coldgate-out/report.md").find("state text DEFAULT 'draft'::text"),
            std::string::npos);
}

// Head's own seed fits the new constraint; base's rows, as production's, do not.
TEST_F(MigrationGate, AMigrationThatFailsOnBasesDataFailsTheGateWithItsError) {
  std::string seed = slurp(dir / "db/seed.sql");
  seed.replace(seed.find("g % 97"), 6, "g % 5");
  dir.write("db/seed.sql", seed);
  auto r = pull_request("002_bad.sql", "ALTER TABLE orders ADD CONSTRAINT small CHECK (amount < 5);\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("migrate (head "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the migration failed on base's data"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("violated by some row"), std::string::npos) << r.err;
}

// scales: [1, 4, 16]: base's data set up at each scale (25,000 × scale orders) and the index
// build measured on each; the blocks it reads grow with the rows — a count, so its class is the
// same on a loaded machine — and its time is projected from them to production's size.
TEST_F(MigrationGate, AtThreeScalesTheMigrationsGrowthIsFittedAndProjectedAndJudgedAtTheLargest) {
  std::string config = slurp(dir / "coldgate.yaml");
  config.replace(config.find("  - sql: db/seed.sql\n"), 21, "  - psql: db/seed.psql\n");
  config += "scales: [1, 4, 16]\nproduction_scale: 400\n";
  dir.write("coldgate.yaml", config);
  dir.write("db/seed.psql",
            "INSERT INTO customers (name) SELECT 'c' || g FROM generate_series(1, 100) g;\n"
            "INSERT INTO orders (customer, amount) SELECT g % 100 + 1, g % 97 FROM "
            "generate_series(1, 25000 * :scale) g;\n");
  fs::remove(dir / "db/seed.sql");
  commit("base at three scales");
  run_git(dir.path(), {"branch", "-f", "base"});
  auto r = pull_request("002_index.sql", "CREATE INDEX orders_amount_idx ON orders (amount);\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  const auto& m = *res.migration;
  EXPECT_EQ(m.scales, (std::vector<double>{1, 4, 16}));
  ASSERT_TRUE(m.production_scale);
  const results::MigrationGrowth* build = nullptr;
  for (const auto& g : m.growth) {
    if (g.what == "statement `CREATE INDEX orders_amount_idx ON orders (amount)`") build = &g;
  }
  ASSERT_NE(build, nullptr);
  ASSERT_EQ(build->values_ms.size(), 3u);
  for (const auto& v : build->values_ms) EXPECT_TRUE(v);
  // The heap's pages read: ×4 rows, ×4 the blocks past the catalog's (a constant part).
  EXPECT_EQ(build->counted, "its own");
  ASSERT_EQ(build->blocks.size(), 3u);
  for (const auto& b : build->blocks) ASSERT_TRUE(b);
  const double b1 = *build->blocks[0], b4 = *build->blocks[1], b16 = *build->blocks[2];
  EXPECT_LT(b1, b4);
  EXPECT_LT(b4, b16);
  const double step_ratio = (b16 - b4) / (b4 - b1);
  EXPECT_GT(step_ratio, 3.5) << b1 << " → " << b4 << " → " << b16;
  EXPECT_LT(step_ratio, 4.5) << b1 << " → " << b4 << " → " << b16;
  EXPECT_EQ(build->growth, results::GrowthClass::linear) << b1 << " → " << b4 << " → " << b16;
  ASSERT_TRUE(build->projected_ms);
  EXPECT_GT(*build->projected_ms, *build->values_ms.back());
  // The load scale's statement keeps its work: the blocks read and the WAL of the index.
  const results::MigrationStatement* index = nullptr;
  for (const auto& s : m.statements) {
    if (s.query == "CREATE INDEX orders_amount_idx ON orders (amount)") index = &s;
  }
  ASSERT_NE(index, nullptr);
  ASSERT_TRUE(index->blocks);
  EXPECT_EQ(*index->blocks, b1);
  ASSERT_TRUE(index->wal_bytes);
  EXPECT_GT(*index->wal_bytes, 0u) << "the catalog's rows of the index at least";
  // The writes' wait on the index build, at each scale, with its growth and projection.
  const results::MigrationGrowth* writes = nullptr;
  for (const auto& g : m.growth) {
    if (g.what == "writes of public.orders waited") writes = &g;
  }
  ASSERT_NE(writes, nullptr);
  EXPECT_EQ(writes->table, "public.orders");
  for (const auto& v : writes->values_ms) EXPECT_TRUE(v);
  // Counted by the statement that took the lock (seen for ~0.5 s at scale 16: sampled every
  // ~10 ms), or by all the migration's: either grows as the index build does.
  EXPECT_TRUE(writes->counted == "statement `CREATE INDEX orders_amount_idx ON orders (amount)`" ||
              writes->counted == "all statements")
      << writes->counted;
  EXPECT_EQ(writes->growth, results::GrowthClass::linear);
  EXPECT_TRUE(writes->projected_ms);
  // The index build is judged where the table is largest: 400,000 rows.
  const auto* f = find(m, results::MigrationFindingKind::index_build);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->rows, 400000);
  EXPECT_NE(f->message.find("(at scale 16, the largest)"), std::string::npos) << f->message;
  const std::string report = slurp(dir / "coldgate-out/report.md");
  EXPECT_NE(report.find("| Over the data scales | ×1 | ×4 | ×16 | Growth | ×400 (production, projected) |"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find(" linear (blocks "), std::string::npos) << report;
}

// A stack base ← pr1 (an index, concurrently) ← pr2 (a type change): each pull request's
// migration runs on the data of the commit below it.
TEST_F(MigrationGate, InAStackEachMigrationIsMeasuredOnTheDataBelowIt) {
  dir.write("db/migrations/002_index.sql",
            "CREATE INDEX CONCURRENTLY orders_amount_idx ON orders (amount);\n");
  commit("pr1: concurrent index");
  run_git(dir.path(), {"branch", "pr1"});
  run_git(dir.path(), {"checkout", "-q", "-b", "pr2"});
  dir.write("db/migrations/003_type.sql", "ALTER TABLE orders ALTER COLUMN amount TYPE bigint;\n");
  commit("pr2: type change");
  auto r = run_coldgate({"stack", "base", "pr1", "pr2"}, dir.path(), "",
                        {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_HEAD_REF="});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto pr1 = results::from_json(slurp(dir / "coldgate-out/stack/1-pr1/results.json"), "pr1");
  auto pr2 = results::from_json(slurp(dir / "coldgate-out/stack/2-pr2/results.json"), "pr2");
  ASSERT_TRUE(pr1.migration);
  EXPECT_EQ(pr1.migration->files, std::vector<std::string>{"002_index.sql"});
  EXPECT_TRUE(pr1.migration->findings.empty());
  ASSERT_TRUE(pr2.migration);
  EXPECT_EQ(pr2.migration->files, std::vector<std::string>{"003_type.sql"});
  const auto* f = find(*pr2.migration, results::MigrationFindingKind::rewrite);
  ASSERT_NE(f, nullptr);
  // pr2's migration met pr1's data: orders with pr1's index, larger than base's orders were.
  const auto* before_pr1 = table(*pr1.migration, "public.orders");
  const auto* before_pr2 = table(*pr2.migration, "public.orders");
  ASSERT_NE(before_pr1, nullptr);
  ASSERT_NE(before_pr2, nullptr);
  EXPECT_GT(before_pr2->bytes_before, before_pr1->bytes_before);
  // The stack's summary says why pr2 fails.
  const std::string summary = slurp(dir / "coldgate-out/stack/summary.md");
  EXPECT_NE(summary.find("migration · rewrite `public.orders`"), std::string::npos) << summary;
  EXPECT_TRUE(pr2.migration->drift.empty());
}

// A CHECK added valid scans 100,000 rows under ACCESS EXCLUSIVE; NOT VALID, then VALIDATE, does
// not block (the pull request of another branch off base).
// Django drops a foreign key and adds it again, valid at once, whenever db_index changes on it:
// the same name before and after, but a new constraint whose every row is checked under the lock.
TEST_F(MigrationGate, AForeignKeyDroppedAndAddedAgainValidIsAScanAsANewOneIs) {
  dir.write("db/migrations/001_schema.sql",
            slurp(dir / "db/migrations/001_schema.sql") +
                "ALTER TABLE orders ADD CONSTRAINT orders_customer_fk FOREIGN KEY (customer) "
                "REFERENCES customers (id);\n");
  commit("base with a foreign key");
  run_git(dir.path(), {"branch", "-f", "base"});
  auto r = pull_request("002_fk.sql",
                        "ALTER TABLE orders DROP CONSTRAINT orders_customer_fk;\n"
                        "ALTER TABLE orders ADD CONSTRAINT orders_customer_fk FOREIGN KEY (customer) "
                        "REFERENCES customers (id) DEFERRABLE INITIALLY DEFERRED;\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  const auto* f = find(*res.migration, results::MigrationFindingKind::validation);
  ASSERT_NE(f, nullptr) << r.err;
  EXPECT_EQ(f->table, "public.orders");
  EXPECT_EQ(f->index, "orders_customer_fk");
  EXPECT_NE(f->statement.find("FOREIGN KEY"), std::string::npos) << f->statement;
  EXPECT_NE(f->message.find("foreign key orders_customer_fk"), std::string::npos) << f->message;
}

TEST_F(MigrationGate, ACheckAddedValidIsAScanUnderTheLockAndNotValidThenValidateIsNot) {
  auto r = pull_request("002_check.sql",
                        "ALTER TABLE orders ADD CONSTRAINT amount_small CHECK (amount < 1000);\n",
                        true);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  const auto* f = find(*res.migration, results::MigrationFindingKind::validation);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->table, "public.orders");
  EXPECT_EQ(f->index, "amount_small");
  EXPECT_NE(f->fix.find("NOT VALID"), std::string::npos) << f->fix;
  // --try: the same constraint NOT VALID and validated, measured on a copy: no regression left.
  const auto* tried = only_trial(*res.migration, results::MigrationFindingKind::validation);
  ASSERT_NE(tried, nullptr);
  const auto& trial = *tried;
  EXPECT_EQ(trial.fix, (std::vector<std::string>{
                           "ALTER TABLE orders ADD CONSTRAINT amount_small CHECK (amount < 1000) NOT VALID",
                           "ALTER TABLE public.orders VALIDATE CONSTRAINT amount_small"}));
  expect_fixed(trial);

  run_git(dir.path(), {"checkout", "-q", "-b", "pr-safe", "base"});
  auto safe = pull_request("002_check.sql",
                           "ALTER TABLE orders ADD CONSTRAINT amount_small CHECK (amount < 1000) "
                           "NOT VALID;\nALTER TABLE orders VALIDATE CONSTRAINT amount_small;\n");
  EXPECT_EQ(safe.exit_code, 0) << safe.err;
  auto safe_res = results();
  ASSERT_TRUE(safe_res.migration);
  EXPECT_EQ(find(*safe_res.migration, results::MigrationFindingKind::validation), nullptr);
}

// SET NOT NULL on a column that was there checks all 100,000 rows under ACCESS EXCLUSIVE; with a
// CHECK (note IS NOT NULL) added NOT VALID and validated first, PostgreSQL skips that scan. The
// migration ALTERs the table before that too, safely and for longer (a costly CHECK validated):
// the finding names the SET NOT NULL, not the table's longest ALTER.
TEST_F(MigrationGate, SetNotNullOnALargeTableIsAScanAndAValidatedCheckFirstIsNot) {
  auto r = pull_request("002_not_null.sql",
                        "ALTER TABLE orders ADD CONSTRAINT note_sized CHECK (length(repeat(note, "
                        "500)) >= 0) NOT VALID;\n"
                        "ALTER TABLE orders VALIDATE CONSTRAINT note_sized;\n"
                        "ALTER TABLE orders ALTER COLUMN note SET NOT NULL;\n",
                        true);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto res = results();
  ASSERT_TRUE(res.migration);
  const auto* f = find(*res.migration, results::MigrationFindingKind::validation);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->index, "note");
  EXPECT_EQ(f->statement, "ALTER TABLE orders ALTER COLUMN note SET NOT NULL");
  EXPECT_NE(f->fix.find("CHECK (note IS NOT NULL) NOT VALID"), std::string::npos) << f->fix;
  // --try: the proving CHECK first, validated, then SET NOT NULL without its scan.
  const auto* tried = only_trial(*res.migration, results::MigrationFindingKind::validation);
  ASSERT_NE(tried, nullptr);
  const auto& trial = *tried;
  ASSERT_EQ(trial.fix.size(), 4u);
  EXPECT_EQ(trial.fix[0], "ALTER TABLE public.orders ADD CONSTRAINT \"note_not_null\" CHECK (note IS "
                          "NOT NULL) NOT VALID");
  EXPECT_EQ(trial.fix[2], "ALTER TABLE orders ALTER COLUMN note SET NOT NULL");
  expect_fixed(trial);

  run_git(dir.path(), {"checkout", "-q", "-b", "pr-safe", "base"});
  auto safe = pull_request("002_not_null.sql",
                           "ALTER TABLE orders ADD CONSTRAINT note_nn CHECK (note IS NOT NULL) NOT "
                           "VALID;\nALTER TABLE orders VALIDATE CONSTRAINT note_nn;\n"
                           "ALTER TABLE orders ALTER COLUMN note SET NOT NULL;\n"
                           "ALTER TABLE orders DROP CONSTRAINT note_nn;\n");
  EXPECT_EQ(safe.exit_code, 0) << safe.err;
  auto safe_res = results();
  ASSERT_TRUE(safe_res.migration);
  EXPECT_EQ(find(*safe_res.migration, results::MigrationFindingKind::validation), nullptr);
}

}  // namespace
}  // namespace coldgate::testing
