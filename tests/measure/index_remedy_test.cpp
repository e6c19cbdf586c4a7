// The plan diagnoses end to end (issue 29): the real binary, a real PostgreSQL from the local
// provider, a SQL stage and a command stage (a psycopg2 application) over a table of 2,000,000
// rows. Without the index they need, `missing_index` names the table and the column, and
// `--try` measures that index in a copy of the database: fewer blocks per call, faster, the
// same snapshot, recommended; with the index there is no diagnosis. Correlated columns give
// `misestimate`, whose ANALYZE and extended statistics are measured. What is asserted rests on
// counts (rows removed, blocks per call) and plan figures, except the recommendation, which is
// coldgate's own verdict on the measured runs (every run apart from as is's): a sequential scan
// of 2,000,000 rows against an index lookup of 500. No duration is asserted here; the margin
// between the two is bench/provider_times.sh's figure (--remedy). Parallel query is off so that
// the plans' per-loop figures are the whole scan's. A slow page whose one statement misses its
// index has it recommended on that statement's own figures (bench/remedy_under_load.sh runs it
// on a loaded machine).
#include <gtest/gtest.h>

#include <algorithm>

#include "results/json.hpp"
#include "support/support.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

using testing::run_coldgate;
using testing::slurp;
using testing::TempDir;

// 2,000,000 comments, 500 per article: article 42's are spread one in 4,000 rows, so a scan
// for them reads the whole table (~12,000 pages) and an index ~500 pages.
constexpr const char* k_comments =
    "CREATE TABLE \"Comments\" (id int PRIMARY KEY, \"articleId\" int NOT NULL, body text);\n"
    "INSERT INTO \"Comments\" SELECT g, 1 + g % 4000, 'comment ' || g\n"
    "  FROM generate_series(1, 2000000) g;\n";
constexpr const char* k_index = "CREATE INDEX comments_article ON \"Comments\" (\"articleId\");\n";
constexpr const char* k_suggested = "CREATE INDEX ON public.\"Comments\" (\"articleId\")";

// The application: the comments of articles 42 to 46, one statement each, the key sent as a
// parameter, printed as its snapshot. Five sequential scans a run against five index lookups
// keep "faster" a difference of about a second, far beyond any scheduling noise.
constexpr const char* k_app =
    "import json, os, psycopg2\n"
    "conn = psycopg2.connect(os.environ['DATABASE_URL'])\n"
    "cur = conn.cursor()\n"
    "out = {}\n"
    "for article in range(42, 47):\n"
    "    cur.execute('select id, body from \"Comments\" where \"articleId\" = %s order by id',\n"
    "                (article,))\n"
    "    out[article] = [{'id': i, 'body': b} for i, b in cur.fetchall()]\n"
    "print(json.dumps(out))\n"
    "conn.close()\n";

struct IndexRemedyTest : ::testing::Test {
  void config(const std::string& schema, const std::string& stages) {
    dir.write("schema.sql", schema);
    dir.write("app.py", k_app);
    dir.write("coldgate.yaml", "version: 1\n"
                               "database:\n"
                               "  provider: local\n"
                               "  settings: { max_parallel_workers_per_gather: 0 }\n"
                               "setup: [ { sql: schema.sql }, { analyze: true } ]\n"
                               "defaults: { runs: 1, warm: 0 }\n"
                               "stages:\n" + stages);
  }
  testing::RunResult run(std::vector<std::string> args = {}) {
    args.insert(args.begin(), "run");
    return run_coldgate(args, dir.path(), "", {"CI=", "GITHUB_ACTIONS="});
  }
  Results results() {
    return results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  }
  static std::vector<Diagnosis> of(const Results& r, const std::string& stage,
                                   DiagnosisKind kind) {
    std::vector<Diagnosis> out;
    for (const auto& d : r.diagnoses) {
      if (d.stage == stage && d.kind == kind) out.push_back(d);
    }
    return out;
  }
  static std::vector<Remedy> trial(const Results& r, const std::string& stage) {
    std::vector<Remedy> out;
    for (const auto& m : r.remedies) {
      if (m.stage == stage) out.push_back(m);
    }
    return out;
  }
  static const Remedy* named(const std::vector<Remedy>& trial, const std::string& name) {
    for (const auto& m : trial) {
      if (m.remedy == name) return &m;
    }
    return nullptr;
  }
  TempDir dir;
};

constexpr const char* k_comment_stages =
    "  - name: comments-sql\n"
    "    query: select json_agg(c.body order by c.id) from \"Comments\" c where c.\"articleId\" "
    "= 42\n"
    "    decode: json\n"
    "    snapshot: true\n"
    "    try_runs: 5\n"
    "  - name: comments-app\n"
    "    command: [/usr/bin/python3, app.py]\n"
    "    snapshot: true\n"
    "    try_runs: 5\n";

TEST_F(IndexRemedyTest, AMissingIndexIsNamedItsIndexMeasuredAndRecommendedAndGoneOnceAdded) {
  config(k_comments, k_comment_stages);
  auto first = run({"--update-snapshots"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  Results r = results();
  for (const char* stage : {"comments-sql", "comments-app"}) {
    SCOPED_TRACE(stage);
    auto d = of(r, stage, results::DiagnosisKind::missing_index);
    ASSERT_EQ(d.size(), 1u) << first.out;
    EXPECT_EQ(d[0].facts.at("table"), "public.Comments");
    EXPECT_EQ(d[0].facts.at("columns"), "articleId");
    EXPECT_EQ(d[0].facts.at("index"), k_suggested);
    EXPECT_NE(d[0].queryid, "");
    EXPECT_EQ(d[0].data.at("rows_removed_per_loop"), 1999500);
    EXPECT_EQ(d[0].data.at("rows_per_loop"), 500);
  }

  // --try: the index in a copy, interleaved with as is, 5 cold runs each.
  auto tried = run({"--try"});
  ASSERT_EQ(tried.exit_code, 0) << tried.out << tried.err;
  r = results();
  const std::string report = slurp(dir / "coldgate-out/report.md");
  for (const char* stage : {"comments-sql", "comments-app"}) {
    SCOPED_TRACE(stage);
    auto t = trial(r, stage);
    ASSERT_GE(t.size(), 2u) << tried.err;
    const Remedy& as_is = t.front();
    const Remedy* index = named(t, k_suggested);
    ASSERT_NE(index, nullptr) << tried.err;
    EXPECT_EQ(index->error, "");
    ASSERT_TRUE(index->snapshot_identical);
    EXPECT_TRUE(*index->snapshot_identical);
    // Blocks per call of the diagnosed statement: the whole table as is, ~500 pages with it.
    ASSERT_EQ(as_is.statement_blocks_per_call.size(), 1u);
    ASSERT_EQ(index->statement_blocks_per_call.size(), 1u);
    const double before = as_is.statement_blocks_per_call.begin()->second;
    const double after = index->statement_blocks_per_call.begin()->second;
    EXPECT_GT(before, 10000);
    EXPECT_LT(after * 5, before);
    // Five measured runs each, interleaved: what the recommendation below is decided on.
    const Metric* a = as_is.find("wall_ms");
    const Metric* b = index->find("wall_ms");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->cold.size(), 5u);
    EXPECT_EQ(b->cold.size(), 5u);
  }
  // Recommended, with its blocks per call, for both stages.
  std::size_t at = 0;
  int recommended = 0;
  const std::string line = std::string("`") + k_suggested + "`: ";
  while ((at = report.find(line, at)) != std::string::npos) {
    ++recommended;
    at += line.size();
  }
  EXPECT_EQ(recommended, 2) << report;
  EXPECT_NE(report.find(" faster), blocks per call "), std::string::npos) << report;

  // The same stages with the index: no diagnosis, the same snapshots.
  config(std::string(k_comments) + k_index, k_comment_stages);
  auto indexed = run();
  ASSERT_EQ(indexed.exit_code, 0) << indexed.out << indexed.err;
  r = results();
  EXPECT_TRUE(of(r, "comments-sql", results::DiagnosisKind::missing_index).empty());
  EXPECT_TRUE(of(r, "comments-app", results::DiagnosisKind::missing_index).empty());
  for (const auto& s : r.stages) {
    bool planned = std::any_of(s.queries.begin(), s.queries.end(),
                               [](const QueryStats& q) { return q.plan.has_value(); });
    EXPECT_TRUE(planned) << s.name;  // plans were taken: the silence is the index's
  }
}

// A store's dashboard page: ~1 s of the application's own work around one lookup of a coupon
// by its code, which has no index, and 20 lookups by primary key. 200,000 coupons (~1,300
// pages): the lookup scans them all, ~10 ms, against a few pages with the index — lost in the
// page's second, so the stage's wall time cannot tell the two apart.
constexpr const char* k_coupons =
    "CREATE TABLE coupon (id int PRIMARY KEY, code text NOT NULL, discount int NOT NULL);\n"
    "INSERT INTO coupon SELECT g, 'C' || lpad(g::text, 7, '0'), g % 50\n"
    "  FROM generate_series(1, 200000) g;\n";
constexpr const char* k_dashboard =
    "import json, os, time, psycopg2\n"
    "conn = psycopg2.connect(os.environ['DATABASE_URL'])\n"
    "cur = conn.cursor()\n"
    "cur.execute('select id, discount from coupon where code = %s', ('C0123456',))\n"
    "page = {'coupon': cur.fetchone(), 'items': []}\n"
    "for item in range(1, 21):\n"
    "    cur.execute('select discount from coupon where id = %s', (item,))\n"
    "    page['items'].append(cur.fetchone()[0])\n"
    "time.sleep(1)  # the rest of the page: rendering, other services\n"
    "print(json.dumps(page))\n"
    "conn.close()\n";

// Issue 52: the index that was not recommended. The page's wall time is ~1 s either way, so
// the index is judged on the statement it is aimed at: its blocks per call (counts, the same
// in every run for one plan: ~1,300 → a few dozen with planning's catalog reads) and its
// server time per call (a scan of 200,000 rows against an index lookup) lower in every run,
// its calls the same, the wall time no worse beyond as is's noise. What is asserted is the
// verdict and the figures it names; the blocks are counts, and the server time's margin is
// the whole scan's.
TEST_F(IndexRemedyTest, AnIndexForOneStatementOfASlowPageIsRecommendedOnThatStatementsFigures) {
  config(k_coupons, "  - name: dashboard\n"
                    "    command: [/usr/bin/python3, dashboard.py]\n"
                    "    snapshot: true\n"
                    "    try_runs: 5\n");
  dir.write("dashboard.py", k_dashboard);
  auto e = run_coldgate({"explain", "dashboard", "--try"}, dir.path(), "",
                        {"CI=", "GITHUB_ACTIONS="});
  ASSERT_EQ(e.exit_code, 0) << e.out << e.err;
  const std::string index = "CREATE INDEX ON public.coupon (code)";
  // The verdict names the statement's figures that decided it.
  const std::string verdict = "`" + index + "`: recommended: blocks per call ";
  const auto at = e.out.find(verdict);
  ASSERT_NE(at, std::string::npos) << e.out;
  const std::string line = e.out.substr(at, e.out.find('\n', at) - at);
  EXPECT_NE(line.find(" and server time per call "), std::string::npos) << line;
  EXPECT_NE(line.find(" in every run (its calls no more), the stage's cold wall time "),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("snapshot identical — add `" + index + "` to the schema's migrations"),
            std::string::npos)
      << line;
  // Its blocks per call: the whole table as is, a few pages with the index.
  auto number = [](const std::string& text) {
    std::string digits;
    for (char c : text) {
      if (c >= '0' && c <= '9') digits += c;
    }
    return std::stod(digits);
  };
  const std::size_t from = verdict.size();
  const std::size_t arrow = line.find(" → ", from);
  ASSERT_NE(arrow, std::string::npos) << line;
  const double before = number(line.substr(from, arrow - from));
  const double after =
      number(line.substr(arrow + 5, line.find(" and ", arrow) - arrow - 5));  // "→" is 3 bytes
  EXPECT_GT(before, 1000) << line;
  EXPECT_LT(after * 10, before) << line;
  // The table shows the statement's per-call figures, as is → with the index.
  EXPECT_NE(e.out.find("| " + index + " · blocks per call "), std::string::npos) << e.out;
  EXPECT_NE(e.out.find(", calls 1 → 1 |"), std::string::npos) << e.out;
  // Both started equally cold: as is in a copy made like the index's, after one restart.
  EXPECT_NE(e.out.find("as is ran in a copy made like the remedies', after one server restart"),
            std::string::npos)
      << e.out;
}

// a = b = id % 500: the planner multiplies their selectivities (1/500 each, from n_distinct:
// 500 values do not fit the 100 most common ones ANALYZE keeps) and expects 1 row of corr
// where 400 come, and plans the join for 1. (A filter that keeps 1 row in 500 is also a
// missing_index; its variant is measured too.)
constexpr const char* k_correlated =
    "CREATE TABLE corr (id int PRIMARY KEY, a int, b int);\n"
    "INSERT INTO corr SELECT g, g % 500, g % 500 FROM generate_series(1, 200000) g;\n"
    "CREATE TABLE other (id int PRIMARY KEY, v text);\n"
    "INSERT INTO other SELECT g, 'v' || g FROM generate_series(1, 200000) g;\n";

TEST_F(IndexRemedyTest, AMisestimateOfCorrelatedColumnsHasItsAnalyzeAndStatisticsMeasured) {
  // A psql client: its JSON line on stdout is the snapshot.
  config(k_correlated,
         "  - name: joined\n"
         "    command: [psql, -XAtq, -c, \"select json_build_object('n', count(*), 'sum', "
         "sum(o.id)) from corr c join other o on o.id = c.id where c.a = 1 and c.b = 1\"]\n"
         "    snapshot: true\n"
         "    try_runs: 2\n");
  ASSERT_EQ(run({"--update-snapshots"}).exit_code, 0);
  auto tried = run({"--try"});
  ASSERT_EQ(tried.exit_code, 0) << tried.out << tried.err;
  Results r = results();
  auto d = of(r, "joined", results::DiagnosisKind::misestimate);
  ASSERT_EQ(d.size(), 1u) << tried.out;
  EXPECT_EQ(d[0].facts.at("table"), "public.corr");
  EXPECT_EQ(d[0].facts.at("columns"), "a, b");
  EXPECT_EQ(d[0].data.at("actual_rows"), 400);
  EXPECT_GE(d[0].data.at("ratio"), 100);
  const std::string statistics = "CREATE STATISTICS public.corr_a_b_stats ON a, b FROM public.corr";
  EXPECT_EQ(d[0].facts.at("statistics"), statistics);
  auto t = trial(r, "joined");
  for (const char* name : {"ANALYZE", statistics.c_str()}) {
    SCOPED_TRACE(name);
    const Remedy* m = named(t, name);
    ASSERT_NE(m, nullptr) << tried.err;
    EXPECT_EQ(m->error, "");
    ASSERT_TRUE(m->snapshot_identical);
    EXPECT_TRUE(*m->snapshot_identical);
    const Metric* wall = m->find("wall_ms");
    ASSERT_NE(wall, nullptr);
    EXPECT_EQ(wall->cold.size(), 2u);
    EXPECT_EQ(m->statement_blocks_per_call.size(), 1u);
  }
}

}  // namespace
}  // namespace coldgate::measure
