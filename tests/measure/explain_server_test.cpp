// parse_explain on what a real PostgreSQL (the suite's cluster) prints, JIT on and off.
#include <gtest/gtest.h>

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
