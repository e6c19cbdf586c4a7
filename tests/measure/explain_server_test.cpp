// parse_explain on what a real PostgreSQL (the suite's cluster) prints, JIT on and off.
#include <gtest/gtest.h>

#include <memory>

#include "db/connection.hpp"
#include "measure/explain.hpp"
#include "support/cluster.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

TEST(Explain, ReadsWhatTheServerPrints) {
  db::Connection conn(testing::fresh_database("explain_read"));
  auto r = conn.exec(std::string(k_explain_prefix) +
                     "select sum(g) from generate_series(1, 1000) g");
  Explain e = parse_explain(r[0][0].c_str(), "t");
  EXPECT_GT(e.execution_ms, 0);
  EXPECT_GT(e.total_cost, 0);
  EXPECT_FALSE(e.jit);

  conn.exec("SET jit = on; SET jit_above_cost = 0");
  auto j = conn.exec(std::string(k_explain_prefix) + "select sum(g) from generate_series(1, 1000) g");
  Explain je = parse_explain(j[0][0].c_str(), "t");
  EXPECT_TRUE(je.jit);
  EXPECT_GT(je.jit_functions, 0);
  EXPECT_GT(je.jit_total_ms, 0);
}

}  // namespace
}  // namespace coldgate::measure

namespace coldgate::measure {
namespace {

// The server's own text format of the same EXPLAIN: the rows of one text column, each a line.
std::string server_text(db::Connection& conn, const std::string& sql) {
  std::string out;
  for (const auto& row : conn.exec(sql)) out += std::string(row[0].c_str()) + "\n";
  return out;
}

struct PlanTextTest : ::testing::Test {
  static void SetUpTestSuite() {
    conn = std::make_unique<db::Connection>(testing::fresh_database("explain_text"));
    conn->exec(
        "CREATE TABLE item (id int PRIMARY KEY, price numeric, cat int);"
        "INSERT INTO item SELECT g, g * 1.5, g % 10 FROM generate_series(1, 10000) g;"
        "CREATE TABLE cat (id int PRIMARY KEY, name text);"
        "INSERT INTO cat SELECT g, 'c' || g FROM generate_series(0, 9) g;");
    // Hint bits and the visibility map set, statistics taken: the plans and their buffer
    // counts are the same in every execution.
    conn->exec("VACUUM ANALYZE item");
    conn->exec("VACUUM ANALYZE cat");
  }
  static void TearDownTestSuite() { conn.reset(); }
  static std::unique_ptr<db::Connection> conn;

  // coldgate's rendering of the JSON form equals the server's text form, for `options`.
  void expect_same(const std::string& options, const std::string& query) {
    const std::string json_sql = "EXPLAIN (" + options + (options.empty() ? "" : ", ") +
                                 "FORMAT JSON) " + query;
    const std::string text_sql =
        options.empty() ? "EXPLAIN " + query : "EXPLAIN (" + options + ") " + query;
    conn->exec(json_sql);  // the first execution reads the catalogs and warms the cache
    const std::string json = conn->exec(json_sql)[0][0].c_str();
    EXPECT_EQ(plan_text(json, "t"), server_text(*conn, text_sql)) << query << "\n" << json;
  }
};
std::unique_ptr<db::Connection> PlanTextTest::conn;

const char* const k_queries[] = {
    // a seq scan whose filter removes rows
    "select * from item where price > 14985",
    // an index scan's Index Cond under a hash join under a sort
    "select * from item i join cat c on c.id = i.cat where i.id < 100 order by c.name",
    "select cat, count(*) from item group by cat",
    // a bitmap heap scan's Recheck Cond over a BitmapOr
    "select * from item where id < 50 or id > 9950",
    // a nested loop's Join Filter
    "select * from cat a join cat b on a.id < b.id",
    "select * from cat where id = (select max(cat) from item)",
    "select * from cat c where exists (select 1 from item i where i.cat = c.id and i.price < 2)",
    "select * from generate_series(1, 10) g where g > 5",
    "with w as materialized (select * from cat) select * from w where id > 3",
    "select id from item where id < 10",
    "select * from cat order by name desc limit 3",
    "select * from (values (1, 'a'), (2, 'b')) v(n, s) where n > 1",
    "select * from cat a join item i on i.cat = a.id where a.id > 100",
    // an inner side never executed
    "select * from cat a left join lateral (select * from item i where i.id = a.id limit 1) x "
    "on true where a.id > 100",
};

TEST_F(PlanTextTest, PlanOnlyIsTheServersTextFormat) {
  for (const char* q : k_queries) expect_same("", q);
}

TEST_F(PlanTextTest, AnalyzeWithBuffersIsTheServersTextFormat) {
  // TIMING OFF and SUMMARY OFF: times differ between two executions, rows and buffers do not.
  for (const char* q : k_queries) expect_same("ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF", q);
}

TEST_F(PlanTextTest, MergeJoinAndParallelPlans) {
  conn->exec("SET enable_hashjoin = off; SET enable_nestloop = off");
  expect_same("ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF",
              "select * from item i join cat c on c.id = i.cat where i.id < 100");
  conn->exec("RESET enable_hashjoin; RESET enable_nestloop");
  // How many workers are launched depends on the machine at that moment: plan-only.
  conn->exec("SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
             "SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2");
  expect_same("", "select count(*) from item where price > 100");
  conn->exec("RESET ALL");
}

TEST_F(PlanTextTest, GenericPlanOfAnApplicationsStatement) {
  // How coldgate plans a command stage's statements: PREPARE, then EXPLAIN EXECUTE with NULLs
  // under force_generic_plan.
  conn->exec("SET plan_cache_mode = force_generic_plan");
  conn->exec("PREPARE app_stmt(int) AS select * from item where id = $1 and price > 2");
  expect_same("", "EXECUTE app_stmt(NULL)");
  const std::string json = conn->exec("EXPLAIN (FORMAT JSON) EXECUTE app_stmt(NULL)")[0][0].c_str();
  EXPECT_EQ(plan_text(json, "t"),
            "Index Scan using item_pkey on item  (cost=0.29..8.30 rows=1 width=14)\n"
            "  Index Cond: (id = $1)\n"
            "  Filter: (price > '2'::numeric)\n");
  conn->exec("DEALLOCATE app_stmt; RESET plan_cache_mode");
}

TEST_F(PlanTextTest, TheSeqScanFilterAndItsRowsRemovedWithBuffers) {
  const std::string sql =
      "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF, FORMAT JSON) "
      "select * from item where price > 14985";
  conn->exec(sql);  // the planner's catalog reads: none in the next one
  const std::string json = conn->exec(sql)[0][0].c_str();
  EXPECT_EQ(plan_text(json, "t"),
            "Seq Scan on item  (cost=0.00..181.00 rows=10 width=14) (actual rows=10 loops=1)\n"
            "  Filter: (price > '14985'::numeric)\n"
            "  Rows Removed by Filter: 9990\n"
            "  Buffers: shared hit=56\n");
}

}  // namespace
}  // namespace coldgate::measure
