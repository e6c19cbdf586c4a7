// The statement gate on a real local server, with a small ORM-like application (psycopg2, its
// own loops) as a command stage: a new per-row statement (an N+1) and a dropped index are
// regressions naming the statement, an A/A pair is not, and `stack`, `ab` and `run --baseline
// FILE` give the same statement verdicts for the same two commits, because they rest on counts
// (calls, blocks per call) that do not depend on the machine's speed. The dropped index is also
// a plan change (Index Scan → Seq Scan) beside the statement, from the plans captured on each
// side.
#include <gtest/gtest.h>

#include <map>

#include "results/json.hpp"
#include "support/support.hpp"

namespace coldgate::gate {
namespace {

namespace fs = std::filesystem;
using testing::run_coldgate;
using testing::run_git;
using testing::slurp;
using testing::TempDir;

// 100 authors, 100,000 books with a unique isbn each (an index on it, dropped by one commit),
// 2,000 reviews. Time metrics are not gated here (gate.metrics: [db_queries]): what these
// tests decide must not depend on the machine's speed. One cold run a side: every figure
// asserted (calls per run, blocks per call, plans) is a count, the same in every run.
constexpr const char* k_schema_head =
    "CREATE TABLE author (id int PRIMARY KEY, name text);\n"
    "INSERT INTO author SELECT g, 'author ' || g FROM generate_series(1, 100) g;\n"
    "CREATE TABLE book (id int PRIMARY KEY, isbn text NOT NULL, author_id int, title text);\n"
    "INSERT INTO book SELECT g, 'isbn-' || g, 1 + g % 100, 'title ' || g\n"
    "  FROM generate_series(1, 100000) g;\n"
    "CREATE TABLE review (id int PRIMARY KEY, book_id int, stars int);\n"
    "INSERT INTO review SELECT g, 1 + g % 40, 1 + g % 5 FROM generate_series(1, 2000) g;\n"
    "CREATE INDEX review_book ON review (book_id);\n";
constexpr const char* k_isbn_index = "CREATE INDEX book_isbn ON book (isbn);\n";

// The application: the author of each of 100 books one query at a time (100 statements, an
// N+1 the base already has), and one book by isbn; `reviews` adds one count per book of the
// first 40 (the pull request's new N+1).
std::string app(bool reviews, const std::string& comment = "") {
  std::string text =
      "import os, psycopg2\n" + comment +
      "conn = psycopg2.connect(os.environ['DATABASE_URL'])\n"
      "cur = conn.cursor()\n"
      "for i in range(1, 101):\n"
      "    cur.execute('select name from author where id = %s', (i,))\n"
      "    cur.fetchall()\n"
      "cur.execute('select title from book where isbn = %s', ('isbn-4242',))\n"
      "print(cur.fetchall())\n";
  if (reviews) {
    text +=
        "for b in range(1, 41):\n"
        "    cur.execute('select count(*) from review where book_id = %s', (b,))\n"
        "    cur.fetchall()\n";
  }
  return text + "conn.close()\n";
}

struct StatementGateTest : ::testing::Test {
  void SetUp() override {
    dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: local }\n"
              "setup: [ { sql: schema.sql }, { analyze: true } ]\n"
              "defaults: { runs: 1, warm: 0 }\n"
              "stages:\n"
              "  - name: page\n"
              "    command: [/usr/bin/python3, app.py]\n"
              "gate: { metrics: [db_queries] }\n");
    dir.write(".gitignore", "coldgate-out/\nout-*/\n");
    dir.write("schema.sql", std::string(k_schema_head) + k_isbn_index);
    dir.write("app.py", app(false));
    run_git(dir.path(), {"init", "-q"});
    commit("base", "base");
    run_git(dir.path(), {"branch", "-m", "main"});
    dir.write("app.py", app(true));
    commit("n1", "n+1: count the reviews of each book");
    dir.write("app.py", app(false));
    commit("fix", "fix: no count per book");
    dir.write("schema.sql", k_schema_head);
    commit("noindex", "migration: drop the isbn index");
    dir.write("app.py", app(false, "# the same application, another comment\n"));
    commit("aa", "a/a: a comment only");
  }
  void commit(const std::string& name, const std::string& message) {
    if (name != "base") run_git(dir.path(), {"checkout", "-q", "-b", name});
    run_git(dir.path(), {"add", "-A"});
    run_git(dir.path(), {"commit", "-q", "-m", message});
    sha[name] = run_git(dir.path(), {"rev-parse", "HEAD"});
  }
  testing::RunResult coldgate(std::vector<std::string> args) {
    return run_coldgate(args, dir.path(), "",
                        {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_HEAD_REF=",
                         "GITHUB_STEP_SUMMARY=", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME="});
  }
  results::Results read(const std::string& file) {
    return results::from_json(slurp(dir / file), file);
  }
  TempDir dir;
  std::map<std::string, std::string> sha;
};

// What the statement gate said, by statement text: "verdict" for each.
std::map<std::string, std::string> verdicts(const results::Results& r) {
  std::map<std::string, std::string> out;
  if (!r.gate) return out;
  for (const auto& s : r.gate->statements) out[s.query] = std::string(results::to_string(s.verdict));
  return out;
}

const results::StatementVerdict* find(const results::Results& r, const std::string& query) {
  for (const auto& s : r.gate->statements) {
    if (s.query == query) return &s;
  }
  return nullptr;
}

std::string change_of(const results::Results& r, results::DiagnosisKind kind,
                      const std::string& query) {
  for (const auto& d : r.diagnoses) {
    if (d.kind == kind && d.query == query) return std::string(results::to_string(d.change));
  }
  return "(none)";
}

const std::string k_author = "select name from author where id = $1";
const std::string k_review = "select count(*) from review where book_id = $1";
const std::string k_isbn = "select title from book where isbn = $1";

// Checks one pull request's results, whichever command made them.
void expect_n1(const results::Results& r, const std::string& how) {
  SCOPED_TRACE(how);
  ASSERT_TRUE(r.gate);
  const auto* review = find(r, k_review);
  ASSERT_NE(review, nullptr) << how;
  EXPECT_EQ(results::to_string(review->verdict), "regression");
  EXPECT_FALSE(review->base);
  ASSERT_TRUE(review->head);
  EXPECT_EQ(review->head->calls, 40);
  EXPECT_NE(review->reason.find("new statement: runs 40 times per run"), std::string::npos)
      << review->reason;
  // The stage total moved 101 → 141: under max_query_ratio, not what caught it.
  for (const auto& m : r.gate->metrics) {
    if (m.metric == "db_queries") {
      EXPECT_EQ(results::to_string(m.verdict), "same") << m.reason;
    }
  }
  EXPECT_EQ(results::to_string(find(r, k_author)->verdict), "same");
  EXPECT_EQ(results::to_string(find(r, k_isbn)->verdict), "same");
  for (const auto& s : r.gate->statements) EXPECT_EQ(s.plan_change, "") << s.query;
  // The N+1 the pull request added is new; the one base had is not.
  EXPECT_EQ(change_of(r, results::DiagnosisKind::repeated_query, k_review), "new");
  EXPECT_EQ(change_of(r, results::DiagnosisKind::repeated_query, k_author), "also_in_base");
}

void expect_fix(const results::Results& r, const std::string& how) {
  SCOPED_TRACE(how);
  ASSERT_TRUE(r.gate);
  const auto* review = find(r, k_review);
  ASSERT_NE(review, nullptr);
  EXPECT_EQ(results::to_string(review->verdict), "faster") << review->reason;
  EXPECT_FALSE(review->head);
  EXPECT_EQ(change_of(r, results::DiagnosisKind::repeated_query, k_review), "gone");
  EXPECT_EQ(change_of(r, results::DiagnosisKind::repeated_query, k_author), "also_in_base");
}

void expect_noindex(const results::Results& r, const std::string& how) {
  SCOPED_TRACE(how);
  ASSERT_TRUE(r.gate);
  const auto* isbn = find(r, k_isbn);
  ASSERT_NE(isbn, nullptr);
  EXPECT_EQ(results::to_string(isbn->verdict), "regression") << isbn->reason;
  ASSERT_TRUE(isbn->base && isbn->head && isbn->base->blocks_per_call &&
              isbn->head->blocks_per_call);
  // An index lookup reads a handful of blocks, plus, in a fresh backend, the catalog entries
  // its first plan over the table looks up (about 50); the sequential scan every page.
  EXPECT_LE(*isbn->base->blocks_per_call, 100);
  EXPECT_GE(*isbn->head->blocks_per_call, 500);
  EXPECT_EQ(isbn->base->calls, 1);
  EXPECT_EQ(isbn->head->calls, 1);
  EXPECT_NE(isbn->reason.find("blocks per call instead of"), std::string::npos) << isbn->reason;
  EXPECT_EQ(results::to_string(find(r, k_author)->verdict), "same");
  // The plans captured on each side name the cause: the index lookup became a scan of the
  // table (parallel or not, as the planner likes on this machine), with the rows its filter
  // removed (per loop in the plan, so not asserted to the row).
  EXPECT_FALSE(isbn->base->plan_shape_id.empty());
  EXPECT_FALSE(isbn->head->plan_shape_id.empty());
  EXPECT_NE(isbn->base->plan_shape_id, isbn->head->plan_shape_id);
  EXPECT_EQ(isbn->plan_change.rfind("Index Scan using book_isbn on public.book → ", 0), 0u)
      << isbn->plan_change;
  EXPECT_NE(isbn->plan_change.find("Seq Scan on public.book ("), std::string::npos)
      << isbn->plan_change;
  EXPECT_NE(isbn->plan_change.find(" rows removed by filter)"), std::string::npos)
      << isbn->plan_change;
  EXPECT_EQ(find(r, k_author)->plan_change, "");
}

// The report beside it: a row of its own right under the isbn statement's.
void expect_noindex_report(const std::string& report, const std::string& how) {
  SCOPED_TRACE(how);
  std::size_t plan =
      report.find("\n| ↳ | | | | 🔀 plan changed | Index Scan using book_isbn on public.book → ");
  ASSERT_NE(plan, std::string::npos) << report;
  std::size_t row = report.rfind("\n| `", plan);
  ASSERT_NE(row, std::string::npos);
  const std::string isbn_row = "\n| `select title from book where isbn = $1` | 1 |";
  EXPECT_EQ(report.compare(row, isbn_row.size(), isbn_row), 0) << report.substr(row, plan - row);
  EXPECT_EQ(report.find("\n| ↳ |", plan + 1), std::string::npos) << report;
}

void expect_same(const results::Results& r, const std::string& how) {
  SCOPED_TRACE(how);
  ASSERT_TRUE(r.gate);
  ASSERT_FALSE(r.gate->statements.empty());
  for (const auto& s : r.gate->statements) {
    EXPECT_EQ(results::to_string(s.verdict), "same") << s.query << ": " << s.reason;
    EXPECT_FALSE(s.changed()) << s.query;
    EXPECT_EQ(s.plan_change, "") << s.query;
  }
  // Plans were captured on both sides (a utility statement such as BEGIN has none), and the
  // same code planned the same way.
  for (const auto& text : {k_author, k_isbn}) {
    const auto* s = find(r, text);
    ASSERT_TRUE(s && s->base && s->head) << text;
    EXPECT_FALSE(s->head->plan_shape_id.empty()) << text;
    EXPECT_EQ(s->base->plan_shape_id, s->head->plan_shape_id) << text;
  }
  for (const auto& d : r.diagnoses) EXPECT_EQ(d.change, results::DiagnosisChange::also_in_base) << d.message;
}

TEST_F(StatementGateTest, TheSameVerdictsThroughStackAbAndRunBaseline) {
  // stack: every pull request against the one below it, in one session.
  auto st = coldgate({"stack", "main", "n1", "fix", "noindex", "aa"});
  EXPECT_EQ(st.exit_code, 1) << st.out << st.err;
  results::Results s1 = read("coldgate-out/stack/1-n1/results.json");
  results::Results s2 = read("coldgate-out/stack/2-fix/results.json");
  results::Results s3 = read("coldgate-out/stack/3-noindex/results.json");
  results::Results s4 = read("coldgate-out/stack/4-aa/results.json");
  expect_n1(s1, "stack n1");
  expect_fix(s2, "stack fix");
  expect_noindex(s3, "stack noindex");
  expect_same(s4, "stack aa");

  // The report names what the pull request added, first.
  std::string report = slurp(dir / "coldgate-out/stack/1-n1/report.md");
  EXPECT_NE(report.find("### Statements that changed"), std::string::npos) << report;
  EXPECT_NE(report.find("🆕 new in this pull request"), std::string::npos) << report;
  EXPECT_NE(report.find("select count(\\*) from review"), std::string::npos) << report;
  expect_noindex_report(slurp(dir / "coldgate-out/stack/3-noindex/report.md"), "stack noindex");
  std::string junit = slurp(dir / "coldgate-out/stack/3-noindex/junit.xml");
  EXPECT_NE(junit.find("blocks per call instead of"), std::string::npos) << junit;

  // ab on each pair, measured again (no cache): the same statement verdicts.
  const std::map<std::string, const results::Results*> stacked = {
      {"n1", &s1}, {"noindex", &s3}, {"aa", &s4}};
  for (const auto& [base, head] : std::vector<std::pair<std::string, std::string>>{
           {"main", "n1"}, {"fix", "noindex"}, {"noindex", "aa"}}) {
    run_git(dir.path(), {"checkout", "-q", head});
    auto ab = coldgate({"ab", "--base", base, "--no-cache"});
    EXPECT_EQ(ab.exit_code, head == "aa" ? 0 : 1) << ab.out << ab.err;
    results::Results r = read("coldgate-out/results.json");
    EXPECT_EQ(verdicts(r), verdicts(*stacked.at(head))) << "ab " << base << ".." << head;
    if (head == "n1") expect_n1(r, "ab n1");
    if (head == "noindex") {
      expect_noindex(r, "ab noindex");
      expect_noindex_report(slurp(dir / "coldgate-out/report.md"), "ab noindex");
    }
    if (head == "aa") expect_same(r, "ab aa");
  }

  // run --baseline FILE down the stack: each commit against the results of the one below.
  std::string previous;
  for (const std::string branch : {"main", "n1", "fix", "noindex", "aa"}) {
    run_git(dir.path(), {"checkout", "-q", branch});
    std::vector<std::string> args = {"run", "--out", "out-" + branch};
    if (!previous.empty()) {
      args.push_back("--baseline");
      args.push_back("out-" + previous + "/results.json");
    }
    auto run = coldgate(args);
    bool fails = branch == "n1" || branch == "noindex";
    EXPECT_EQ(run.exit_code, fails ? 1 : 0) << branch << run.out << run.err;
    if (fails) {
      EXPECT_NE(run.err.find("statement `"), std::string::npos) << run.err;
    }
    previous = branch;
  }
  results::Results r1 = read("out-n1/results.json");
  results::Results r2 = read("out-fix/results.json");
  results::Results r3 = read("out-noindex/results.json");
  results::Results r4 = read("out-aa/results.json");
  expect_n1(r1, "run n1");
  expect_fix(r2, "run fix");
  expect_noindex(r3, "run noindex");
  expect_noindex_report(slurp(dir / "out-noindex/report.md"), "run noindex");
  expect_same(r4, "run aa");
  EXPECT_EQ(verdicts(r1), verdicts(s1));
  EXPECT_EQ(verdicts(r2), verdicts(s2));
  EXPECT_EQ(verdicts(r3), verdicts(s3));
  EXPECT_EQ(verdicts(r4), verdicts(s4));
}

}  // namespace
}  // namespace coldgate::gate
