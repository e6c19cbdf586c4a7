// `coldgate explain STAGE`: the real binary on a real PostgreSQL from the local provider.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>

#include "support/support.hpp"

namespace coldgate::cli {
namespace {

using testing::TempDir;
using testing::run_coldgate;
using testing::slurp;
namespace fs = std::filesystem;

struct ExplainTest : ::testing::Test {
  void SetUp() override {
    // No `analyze:` step: the table stays never analyzed.
    dir.write("schema.sql",
              "CREATE TABLE item (id int PRIMARY KEY, price numeric);\n"
              "INSERT INTO item SELECT g, g * 1.5 FROM generate_series(1, 200) g;\n");
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: local }\n"
              "setup: [ { sql: schema.sql } ]\n"
              "stages:\n"
              "  - name: total\n"
              "    query: select sum(price * id) from item where id > $1\n"
              "    params: [10]\n"
              "    settings: { jit: 'on', jit_above_cost: '0', jit_inline_above_cost: '0', "
              "jit_optimize_above_cost: '0' }\n"
              "  - name: scan\n"
              "    query: select * from item where id = 5 or price > 290\n"
              "  - name: lookup\n"
              "    query: select price from item where id = 7\n"
              "  - name: cmd\n"
              "    command: [\"true\"]\n");
  }
  TempDir dir;
};

TEST_F(ExplainTest, PrintsThePlanTheJitBlockAndTheDiagnoses) {
  auto r = run_coldgate({"explain", "total"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("stage total (settings: jit=on, jit_above_cost=0, jit_inline_above_cost=0, "
                        "jit_optimize_above_cost=0)\nPlanning ",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("\nJIT: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" functions · generation "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(jit_above_cost 0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n\nAggregate  (cost="), std::string::npos) << r.out;  // the top node
  EXPECT_NE(r.out.find("\n  ->  "), std::string::npos) << r.out;               // its child
  EXPECT_NE(r.out.find(" on item  (cost="), std::string::npos) << r.out;  // a scan of item
  EXPECT_NE(r.out.find(" (actual time="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  Buffers: shared hit="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("- 1 table this stage's statements read was never analyzed (public.item): "
                       "their plans rest on default statistics — add `- analyze: true` to setup:"),
            std::string::npos)
      << r.out;
  // JIT on a 200-row table: compiling costs more than executing.
  EXPECT_NE(r.out.find("- JIT compiled "), std::string::npos) << r.out;

  auto json = run_coldgate({"explain", "total", "--json"}, dir.path());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.rfind("[\n  {\n    \"Plan\": {", 0), 0u) << json.out;
  EXPECT_NE(json.out.find("\"Execution Time\""), std::string::npos);
}

// What one reads a plan for, under each node as psql shows it: a seq scan's filter and the rows
// it removed, an index scan's condition, the buffers.
TEST_F(ExplainTest, ShowsFiltersIndexConditionsRowsRemovedAndBuffers) {
  auto scan = run_coldgate({"explain", "scan"}, dir.path());
  ASSERT_EQ(scan.exit_code, 0) << scan.err;
  EXPECT_NE(scan.out.find("\n\nSeq Scan on item  (cost="), std::string::npos) << scan.out;
  EXPECT_NE(scan.out.find(" loops=1)\n"
                          "  Filter: ((id = 5) OR (price > '290'::numeric))\n"
                          "  Rows Removed by Filter: 192\n"
                          "  Buffers: shared hit="),
            std::string::npos)
      << scan.out;

  auto lookup = run_coldgate({"explain", "lookup"}, dir.path());
  ASSERT_EQ(lookup.exit_code, 0) << lookup.err;
  EXPECT_NE(lookup.out.find("\n\nIndex Scan using item_pkey on item  (cost="), std::string::npos)
      << lookup.out;
  EXPECT_NE(lookup.out.find(" loops=1)\n  Index Cond: (id = 7)\n  Buffers: shared hit="),
            std::string::npos)
      << lookup.out;
}

TEST_F(ExplainTest, UnknownOrCommandStageIsAUsageError) {
  auto unknown = run_coldgate({"explain", "totl"}, dir.path());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err,
            "coldgate: error: explain: no stage 'totl' in coldgate.yaml (did you mean 'total'?)\n");
  auto command = run_coldgate({"explain", "cmd"}, dir.path());
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_EQ(command.err, "coldgate: error: explain: stage 'cmd' runs a command; EXPLAIN needs a "
                         "SQL stage (sql: or query:); `--try` measures a command stage's "
                         "remedies\n");
}

}  // namespace
}  // namespace coldgate::cli

namespace coldgate::cli {
namespace {

// The work folders under $TMPDIR whose owner file names `pid`.
std::vector<fs::path> work_dirs_of(const std::string& prefix, const std::string& pid) {
  std::vector<fs::path> found;
  const char* base = std::getenv("TMPDIR");
  for (const auto& e : fs::directory_iterator(base && *base ? base : "/tmp")) {
    std::error_code ec;
    if (e.path().filename().string().rfind(prefix, 0) != 0 || !fs::exists(e.path() / "owner", ec))
      continue;
    if (slurp(e.path() / "owner").rfind("owner_pid=" + pid + "\n", 0) == 0) found.push_back(e.path());
  }
  return found;
}

// explain keeps run's promise: a SIGKILLed explain (here by its own setup step) leaves its
// marked work folder, and the next explain removes it.
TEST_F(ExplainTest, ASigkilledExplainLeavesNothingOnceTheNextOneStarts) {
  dir.write("killer.yaml", "version: 1\n"
                           "database: { provider: local }\n"
                           "setup: [ { command: 'echo $PPID > killed.pid; kill -9 $PPID' } ]\n"
                           "stages:\n"
                           "  - name: one\n"
                           "    query: select 1\n");
  auto killed = run_coldgate({"explain", "one", "-c", "killer.yaml"}, dir.path());
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.err;
  std::string pid = slurp(dir / "killed.pid");
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  ASSERT_FALSE(pid.empty());
  ASSERT_EQ(work_dirs_of("coldgate-explain-", pid).size(), 1u);
  auto next = run_coldgate({"explain", "total"}, dir.path());
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_TRUE(work_dirs_of("coldgate-explain-", pid).empty());
}

}  // namespace
}  // namespace coldgate::cli
