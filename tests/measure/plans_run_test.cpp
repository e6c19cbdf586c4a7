// Actual plans end to end: the real binary, a real PostgreSQL from the local provider with
// auto_explain preloaded, a SQL stage and a command stage (a psql client) over a table big enough
// that the index decides the plan.
#include <gtest/gtest.h>

#include <string>

#include "results/json.hpp"
#include "results/plan.hpp"
#include "support/support.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

using testing::TempDir;
using testing::run_coldgate;
using testing::slurp;

constexpr const char* k_schema =
    "CREATE TABLE comment (id int PRIMARY KEY, article_id int NOT NULL, body text);\n"
    "INSERT INTO comment SELECT g, g % 2000, 'comment ' || g FROM generate_series(1, 100000) g;\n";

struct PlansRunTest : ::testing::Test {
  void config(bool index) {
    dir.write("schema.sql", std::string(k_schema) +
                                (index ? "CREATE INDEX comment_article ON comment (article_id);\n"
                                       : ""));
    dir.write("article.sql", "SELECT id, body FROM comment WHERE article_id = 42 ORDER BY id");
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: local }\n"
              "setup: [ { sql: schema.sql }, { analyze: true } ]\n"
              "defaults: { runs: 2, warm: 0 }\n"
              "stages:\n"
              "  - name: article-sql\n"
              "    sql: article.sql\n"
              "  - name: article-app\n"
              "    command: [sh, -c, 'for a in 7 8 9; do echo \"select count(*) from comment "
              "where article_id = $a;\"; done | psql -XAtq >/dev/null']\n");
  }
  Results run() {
    auto r = run_coldgate({"run"}, dir.path(), "",
                          {"CI=", "GITHUB_ACTIONS="});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  }
  static const QueryStats* statement(const Results& r, const std::string& stage,
                                     const std::string& text) {
    for (const auto& s : r.stages) {
      if (s.name != stage) continue;
      for (const auto& q : s.queries) {
        if (q.query.find(text) != std::string::npos) return &q;
      }
    }
    ADD_FAILURE() << "no statement with '" << text << "' in stage " << stage;
    return nullptr;
  }
  // The labels of a statement's plan nodes, one per line.
  static std::string labels(const QueryStats& q) {
    std::string out;
    for (const auto& n : plan_nodes(q.plan->json, "test")) out += node_label(n) + "\n";
    return out;
  }
  TempDir dir;
};

TEST_F(PlansRunTest, EachStatementOfASqlAndACommandStageGetsItsActualPlanAndShape) {
  config(/*index=*/false);
  Results seq = run();
  EXPECT_EQ(seq.plans_note, "");
  const QueryStats* sql = statement(seq, "article-sql", "FROM comment WHERE article_id");
  const QueryStats* app = statement(seq, "article-app", "select count(*) from comment");
  ASSERT_TRUE(sql && app);
  ASSERT_TRUE(sql->plan.has_value());
  ASSERT_TRUE(app->plan.has_value());
  EXPECT_NE(labels(*sql).find("Seq Scan on public.comment"), std::string::npos) << labels(*sql);
  EXPECT_NE(labels(*app).find("Seq Scan on public.comment"), std::string::npos) << labels(*app);
  // ANALYZE and BUFFERS figures without per-node timing: rows removed, blocks, no Actual Time.
  auto nodes = plan_nodes(app->plan->json, "test");
  bool removed = false;
  for (const auto& n : nodes) {
    if (n.node_type == "Seq Scan") {
      removed = n.rows_removed_by_filter * n.loops >= 99000;
      EXPECT_GT(n.shared_blocks, 100) << app->plan->json;
    }
  }
  EXPECT_TRUE(removed) << app->plan->json;
  EXPECT_EQ(app->plan->json.find("Actual Total Time"), std::string::npos);
  EXPECT_EQ(app->plan->shape_id.size(), 16u);
  // The three calls differ only in their constant: one fingerprint, one plan.
  EXPECT_EQ(app->calls, 3);

  config(/*index=*/true);
  Results idx = run();
  const QueryStats* sql2 = statement(idx, "article-sql", "FROM comment WHERE article_id");
  const QueryStats* app2 = statement(idx, "article-app", "select count(*) from comment");
  ASSERT_TRUE(sql2 && app2 && sql2->plan && app2->plan);
  EXPECT_NE(labels(*sql2).find("comment_article"), std::string::npos) << labels(*sql2);
  EXPECT_NE(labels(*app2).find("comment_article"), std::string::npos) << labels(*app2);
  EXPECT_NE(sql2->plan->shape_id, sql->plan->shape_id);
  EXPECT_NE(app2->plan->shape_id, app->plan->shape_id);
  // The plan run is not measured: each stage keeps its own runs' samples.
  for (const auto& s : idx.stages) {
    const Metric* wall = nullptr;
    for (const auto& [name, m] : s.metrics) {
      if (name == "wall_ms") wall = &m;
    }
    ASSERT_TRUE(wall);
    EXPECT_EQ(wall->cold.size(), 2u) << s.name;
  }
}

// A plan run of a stage that scans no table of the user's would show a Result node or a catalog
// scan, which no diagnosis reads: it is skipped (docs/BENCHMARKS.md, "The trivial run's fixed
// cost"). A stage that reads a user's table, from a function-free query, still gets its plan.
TEST_F(PlansRunTest, AStageThatScansNoTableOfTheUsersGetsNoPlanRun) {
  dir.write("schema.sql", k_schema);
  dir.write("coldgate.yaml",
            "version: 1\n"
            "database: { provider: local }\n"
            "setup: [ { sql: schema.sql } ]\n"
            "defaults: { runs: 1, warm: 0 }\n"
            "stages:\n"
            "  - name: trivial\n"
            "    query: select 1 as one\n"
            "  - name: catalog\n"
            "    query: select count(*) as n from pg_class where relname = $1\n"
            "    params: [comment]\n"
            "  - name: table\n"
            "    query: select count(*) as n from comment where article_id = 7\n");
  auto r = run_coldgate({"run"}, dir.path(), "", {"CI=", "GITHUB_ACTIONS="});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Results res = results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  EXPECT_EQ(res.plans_note, "");
  // The distribution's server has its JIT package: the superuser's check without loading LLVM
  // finds it, so there is no limit to note.
  EXPECT_EQ(res.profile_limit, "");
  const QueryStats* trivial = statement(res, "trivial", "select");
  const QueryStats* catalog = statement(res, "catalog", "pg_class");
  const QueryStats* table = statement(res, "table", "from comment");
  ASSERT_TRUE(trivial && catalog && table);
  EXPECT_FALSE(trivial->plan.has_value()) << trivial->plan->json;
  EXPECT_FALSE(catalog->plan.has_value()) << catalog->plan->json;
  ASSERT_TRUE(table->plan.has_value());
  EXPECT_NE(labels(*table).find("Seq Scan on public.comment"), std::string::npos) << labels(*table);
  // Each plan run says so on its line: one, the table's.
  std::size_t plan_runs = 0;
  for (auto at = r.err.find("plan run:"); at != std::string::npos; at = r.err.find("plan run:", at + 1))
    ++plan_runs;
  EXPECT_EQ(plan_runs, 1u) << r.err;
}

}  // namespace
}  // namespace coldgate::measure
