// `coldgate explain STAGE`: the real binary on a real PostgreSQL from the local provider.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

TEST_F(ExplainTest, UnknownStageOrStatementWithTryIsAUsageError) {
  auto unknown = run_coldgate({"explain", "totl"}, dir.path());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err,
            "coldgate: error: explain: no stage 'totl' in coldgate.yaml (did you mean 'total'?)\n");
  // A name like none of them: the stages it has.
  auto unlike = run_coldgate({"explain", "nosuch"}, dir.path());
  EXPECT_EQ(unlike.exit_code, 2);
  EXPECT_EQ(unlike.err, "coldgate: error: explain: no stage 'nosuch' in coldgate.yaml (its stages: "
                            "total, scan, lookup, cmd)\n");
  auto both = run_coldgate({"explain", "cmd", "--try", "--statement", "1"}, dir.path());
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_EQ(both.err, "coldgate: error: explain: --statement picks a plan to print; --try "
                      "measures the stage's remedies: give one of them\n");
}

// A command that runs no SQL has no plan to show, and says so.
TEST_F(ExplainTest, ACommandStageThatRunsNoStatementSaysSo) {
  auto r = run_coldgate({"explain", "cmd"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "stage cmd: no statement was planned in its run\n\nDiagnoses:\n  none\n");
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

namespace coldgate::cli {
namespace {

// A command stage (a psql client) whose three statements read a table of 20,000 rows: one scans
// it through a filter, one looks a row up by its key, one joins it with itself.
struct StatementPlansTest : ::testing::Test {
  void SetUp() override {
    dir.write("schema.sql",
              "CREATE TABLE book (id int PRIMARY KEY, author int NOT NULL, title text);\n"
              "INSERT INTO book SELECT g, g % 500, 'title ' || g FROM generate_series(1, 20000) g;\n");
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: local }\n"
              "setup: [ { sql: schema.sql }, { analyze: true } ]\n"
              "stages:\n"
              "  - name: app\n"
              "    command: [psql, -XAtq, -c, 'select count(*) from book where author = 7', -c, "
              "'select title from book where id = 42', -c, 'select count(*) from book b join "
              "book a on a.id = b.author where b.id < 30']\n"
              "  - name: broken\n"
              "    command: [psql, -XAtq, -v, ON_ERROR_STOP=1, -c, 'select nope from book']\n"
              "  - name: lookup\n"
              "    query: select title from book where id = $1\n"
              "    params: [42]\n");
  }
  // The queryids of the "Statement <queryid> · " headers, in order.
  static std::vector<std::string> headers(const std::string& out) {
    std::vector<std::string> ids;
    std::size_t at = 0;
    while ((at = out.find("\nStatement ", at)) != std::string::npos) {
      at += 11;
      ids.push_back(out.substr(at, out.find(' ', at) - at));
    }
    return ids;
  }
  // The text of one statement's section: its header to the next blank line.
  static std::string section(const std::string& out, const std::string& queryid) {
    std::size_t at = out.find("\nStatement " + queryid + " · ");
    if (at == std::string::npos) return "";
    return out.substr(at + 1, out.find("\n\n", at + 1) - at - 1);
  }
  TempDir dir;
};

TEST_F(StatementPlansTest, ACommandStageShowsEachStatementsActualPlanAndOneOnRequest) {
  auto r = run_coldgate({"explain", "app"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("stage app: 3 statements planned; the plan of each one's costliest call, "
                        "the costliest statements in all first\n",
                        0),
            0u)
      << r.out;
  auto ids = headers(r.out);
  ASSERT_EQ(ids.size(), 3u) << r.out;
  std::string scan, lookup, join;
  for (const auto& id : ids) {
    std::string s = section(r.out, id);
    if (s.find("author = 7") != std::string::npos) scan = id;
    if (s.find("where id = $1") != std::string::npos) lookup = id;  // the normalized text
    if (s.find("join book a") != std::string::npos) join = id;
  }
  ASSERT_FALSE(scan.empty() || lookup.empty() || join.empty()) << r.out;
  // Each under its own header, as psql prints it: what scanned, its filter, the rows removed,
  // the buffers; actual rows without per-node timing.
  std::string s = section(r.out, scan);
  EXPECT_NE(s.find("\nAggregate  (cost="), std::string::npos) << s;
  EXPECT_NE(s.find("->  Seq Scan on public.book  (cost="), std::string::npos) << s;
  EXPECT_NE(s.find("Filter: (book.author = 7)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("Rows Removed by Filter: 19960\n"), std::string::npos) << s;
  EXPECT_NE(s.find("(actual rows=40 loops=1)"), std::string::npos) << s;
  EXPECT_NE(s.find("Buffers: shared "), std::string::npos) << s;
  std::string l = section(r.out, lookup);
  EXPECT_NE(l.find("\nIndex Scan using book_pkey on public.book  (cost="), std::string::npos) << l;
  EXPECT_NE(l.find("Index Cond: (book.id = 42)\n"), std::string::npos) << l;
  std::string j = section(r.out, join);
  EXPECT_NE(j.find(" Join  (cost="), std::string::npos) << j;  // whichever join the planner chose
  EXPECT_NE(j.find("Index Cond: (b.id < 30)\n"), std::string::npos) << j;
  EXPECT_NE(r.out.find("\nDiagnoses:\n"), std::string::npos) << r.out;

  // One statement: only its plan.
  auto one = run_coldgate({"explain", "app", "--statement", lookup}, dir.path());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.rfind("stage app: statement " + lookup + ", the plan of its costliest call\n",
                          0),
            0u)
      << one.out;
  EXPECT_EQ(headers(one.out), std::vector<std::string>{lookup}) << one.out;
  EXPECT_NE(one.out.find("Index Scan using book_pkey on public.book"), std::string::npos);
  EXPECT_EQ(one.out.substr(0, one.out.find("\nDiagnoses:\n")).find("Seq Scan"), std::string::npos)
      << one.out;

  // The costliest one only.
  auto top = run_coldgate({"explain", "app", "--top", "1"}, dir.path());
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_EQ(headers(top.out).size(), 1u) << top.out;
  EXPECT_NE(top.out.find("\n… 2 more: --top 0 shows them all, --statement QUERYID one\n"),
            std::string::npos)
      << top.out;
}

TEST_F(StatementPlansTest, AnUnknownQueryidIsAUsageErrorListingTheStagesStatements) {
  auto r = run_coldgate({"explain", "app", "--statement", "12345"}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  std::string prefix = "coldgate: error: explain: stage 'app' ran no statement 12345; its statements: ";
  ASSERT_NE(r.err.find(prefix), std::string::npos) << r.err;
  std::string line = r.err.substr(r.err.find(prefix));
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;  // one line
  EXPECT_EQ(std::count(line.begin(), line.end(), ','), 2) << line;    // three queryids
  EXPECT_TRUE(r.out.empty()) << r.out;
  // Not a queryid at all: refused before any server starts.
  auto bad = run_coldgate({"explain", "app", "--statement", "abc"}, dir.path());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("coldgate: error: explain: --statement abc: a queryid is a whole number"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(bad.err.find("setup"), std::string::npos) << bad.err;
}

TEST_F(StatementPlansTest, JsonGivesEachStatementsQueryidTextDurationShapeAndPlan) {
  auto r = run_coldgate({"explain", "app", "--json"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 3u) << r.out;
  double previous = 1e300;
  for (const auto& p : doc) {
    EXPECT_TRUE(p["queryid"].is_string());
    EXPECT_TRUE(p["query"].is_string());
    EXPECT_EQ(p["shape_id"].get<std::string>().size(), 16u);
    EXPECT_TRUE(p["plan"].is_object());
    EXPECT_TRUE(p["plan"].contains("Node Type"));
    // The costliest in all first: each statement's calls and the server time of them all, at
    // least its costliest call's.
    ASSERT_TRUE(p["calls"].is_number()) << p;
    EXPECT_GE(p["calls"].get<double>(), 1) << p;
    EXPECT_GE(p["total_ms"].get<double>(), p["duration_ms"].get<double>()) << p;
    EXPECT_LE(p["total_ms"].get<double>(), previous);
    previous = p["total_ms"].get<double>();
  }
  // --statement picks the same one in JSON.
  std::string id = doc[1]["queryid"];
  auto one = run_coldgate({"explain", "app", "--json", "--statement", id}, dir.path());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  auto single = nlohmann::json::parse(one.out);
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0]["queryid"], id);
  EXPECT_EQ(single[0]["shape_id"], doc[1]["shape_id"]);
}

TEST_F(StatementPlansTest, ACommandThatFailsSaysItsErrorAndExits1) {
  auto r = run_coldgate({"explain", "broken"}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("coldgate: error: stage broken: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("column \"nope\" does not exist"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// A SQL stage has one statement: --statement takes its queryid (the report's statement table
// lists it) and prints its actual plan; another is refused with the one there is.
TEST_F(StatementPlansTest, ASqlStageTakesItsOwnQueryid) {
  auto wrong = run_coldgate({"explain", "lookup", "--statement", "12345"}, dir.path());
  EXPECT_EQ(wrong.exit_code, 2) << wrong.err;
  std::string prefix =
      "coldgate: error: explain: stage 'lookup' ran no statement 12345; its statements: ";
  auto at = wrong.err.find(prefix);
  ASSERT_NE(at, std::string::npos) << wrong.err;
  std::string listed = wrong.err.substr(at + prefix.size());
  listed = listed.substr(0, listed.find('\n'));
  ASSERT_FALSE(listed.empty());
  std::string id = listed.substr(0, listed.find(','));
  auto r = run_coldgate({"explain", "lookup", "--statement", id}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Index Scan using book_pkey on public.book"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nStatement " + id + " · "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace coldgate::cli
