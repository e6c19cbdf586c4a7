// The server-side profile end to end: the real binary, a real PostgreSQL from the local
// provider, command stages that are small applications (psql clients).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "results/json.hpp"
#include "support/cluster.hpp"
#include "support/support.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

using testing::TempDir;
using testing::run_coldgate;
using testing::slurp;

// 40 rows: fewer than autovacuum's analyze threshold (50), so "never analyzed" stays true.
constexpr const char* k_schema =
    "CREATE TABLE item (id int PRIMARY KEY, name text, price numeric);\n"
    "INSERT INTO item SELECT g, 'item ' || g, g * 1.5 FROM generate_series(1, 40) g;\n";

// A client that looks items up one statement at a time: N statements of one fingerprint.
std::string one_by_one(int n) {
  return "    command: [sh, -c, 'for i in $(seq 1 " + std::to_string(n) +
         "); do echo \"select name from item where id = $i;\"; done | psql -XAtq >/dev/null']\n";
}

struct ProfileTest : ::testing::Test {
  void config(const std::string& stages, bool analyze = true, const std::string& database =
                                                                  "{ provider: local }") {
    dir.write("schema.sql", k_schema);
    dir.write("coldgate.yaml", "version: 1\n"
                               "database: " + database + "\n"
                               "setup: [ { sql: schema.sql }" +
                                   std::string(analyze ? ", { analyze: true }" : "") + " ]\n"
                               "defaults: { runs: 2, warm: 0 }\n"
                               "stages:\n" + stages);
  }
  testing::RunResult run(std::vector<std::string> args = {}) {
    args.insert(args.begin(), "run");
    return run_coldgate(args, dir.path(), "", {"CI=", "GITHUB_ACTIONS="});
  }
  Results results(const std::string& file = "coldgate-out/results.json") {
    return results::from_json(slurp(dir / file), file);
  }
  static const StageResult& stage(const Results& r, const std::string& name) {
    for (const auto& s : r.stages) {
      if (s.name == name) return s;
    }
    ADD_FAILURE() << "no stage " << name;
    static StageResult none;
    return none;
  }
  // The last remedy called `name` in the trial, or nullptr.
  static const Remedy* remedy(const Results& r, const std::string& name) {
    const Remedy* found = nullptr;
    for (const auto& m : r.remedies) {
      if (m.remedy == name) found = &m;
    }
    return found;
  }
  static std::vector<const Diagnosis*> diagnoses(const Results& r, const std::string& stage) {
    std::vector<const Diagnosis*> out;
    for (const auto& d : r.diagnoses) {
      if (d.stage == stage) out.push_back(&d);
    }
    return out;
  }
  // Each diagnosis on a line of its own, for a failure's message.
  static std::string describe(const std::vector<const Diagnosis*>& found) {
    std::string out;
    for (const Diagnosis* d : found) out += "\n  " + std::string(to_string(d->kind)) + ": " + d->message;
    return out;
  }
  TempDir dir;
};

TEST_F(ProfileTest, CommandStagesGetTheServerSideFiguresAndEachDiagnosisWhereItBelongs) {
  config("  - name: jit-app\n"
         "    command: [psql, -XAtq, -c, 'SET jit_above_cost = 0; SET jit_inline_above_cost = 0; "
         "SET jit_optimize_above_cost = 0; select sum(price * id) from item']\n"
         "  - name: n-plus-one\n" + one_by_one(50) +
         "  - name: plain\n"
         "    command: [psql, -XAtq, -c, 'select count(*) from item']\n");
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Results res = results();
  EXPECT_EQ(res.profile_note, "");

  // (a) JIT-heavy: the select's JIT is more than half its execution, every run.
  const StageResult& jit = stage(res, "jit-app");
  EXPECT_EQ(jit.find("db_queries")->cold, (std::vector<double>{4, 4}));  // 3 SETs + the select
  EXPECT_GT(jit.find("db_jit_functions")->cold[0], 0);
  EXPECT_GT(jit.find("db_jit_ms")->cold[1], 0);
  auto jd = diagnoses(res, "jit-app");
  ASSERT_EQ(jd.size(), 1u);
  EXPECT_EQ(jd[0]->kind, results::DiagnosisKind::jit_dominates);
  EXPECT_EQ(jd[0]->query, "select sum(price * id) from item");
  auto select = std::find_if(jit.queries.begin(), jit.queries.end(),
                             [](const QueryStats& q) { return q.query.starts_with("select"); });
  ASSERT_NE(select, jit.queries.end());
  EXPECT_EQ(jd[0]->queryid, select->queryid);
  EXPECT_NE(jd[0]->message.find("run `SET LOCAL jit = off;` right before that statement"),
            std::string::npos)
      << jd[0]->message;
  ASSERT_TRUE(select->total_cost);  // its plan-only EXPLAIN gave the estimate
  EXPECT_GT(*select->total_cost, 0);

  // (b) N+1: one fingerprint, 50 calls in every cold run, counted exactly.
  const StageResult& n1 = stage(res, "n-plus-one");
  EXPECT_EQ(n1.find("db_queries")->cold, (std::vector<double>{50, 50}));
  EXPECT_EQ(n1.find("db_rows")->cold, (std::vector<double>{40, 40}));  // ids 41–50 do not exist
  ASSERT_EQ(n1.queries.size(), 1u);
  EXPECT_EQ(n1.queries[0].query, "select name from item where id = $1");
  EXPECT_EQ(n1.queries[0].calls, 50);
  auto nd = diagnoses(res, "n-plus-one");
  ASSERT_EQ(nd.size(), 1u);
  EXPECT_EQ(nd[0]->kind, results::DiagnosisKind::repeated_query);
  EXPECT_EQ(nd[0]->queryid, n1.queries[0].queryid);
  EXPECT_EQ(nd[0]->data.at("calls"), 50);

  // (c) Nothing special: the figures, no finding.
  const StageResult& plain = stage(res, "plain");
  EXPECT_EQ(plain.find("db_queries")->cold, (std::vector<double>{1, 1}));
  EXPECT_EQ(plain.find("db_jit_functions")->cold, (std::vector<double>{0, 0}));
  EXPECT_GT(plain.find("db_exec_ms")->cold[0], 0);
  EXPECT_TRUE(diagnoses(res, "plain").empty()) << describe(diagnoses(res, "plain"));

  // The report's Database section and the diagnoses, from the same figures.
  std::string report = slurp(dir / "coldgate-out/report.md");
  EXPECT_NE(report.find("### Database"), std::string::npos) << report;
  EXPECT_NE(report.find("<details><summary>n-plus-one: 50 statements per cold run"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("| `select name from item where id = $1` | 50 | 40 |"), std::string::npos)
      << report;
}

TEST_F(ProfileTest, NeverAnalyzedTablesOfAnApplicationAreFound) {
  config("  - name: reader\n"
         "    command: [psql, -XAtq, -c, 'select count(*) from item where price > 3']\n",
         /*analyze=*/false);
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Results res = results();
  // Its one statement plans once per run, in a fresh backend, so however slow a loaded
  // machine makes that plan, planning_exceeds_execution has nothing to say of it.
  auto d = diagnoses(res, "reader");
  ASSERT_EQ(d.size(), 1u) << describe(d);
  EXPECT_EQ(d[0]->kind, results::DiagnosisKind::never_analyzed);
  EXPECT_NE(d[0]->message.find("(public.item)"), std::string::npos) << d[0]->message;
}

TEST_F(ProfileTest, TheOffSwitchLeavesTheProfileOut) {
  config("  - name: counted\n"
         "    query: select count(*) from item\n"
         "  - name: quiet\n"
         "    query: select count(*) from item\n"
         "    profile: false\n");
  ASSERT_EQ(run().exit_code, 0);
  Results res = results();
  EXPECT_NE(stage(res, "counted").find("db_queries"), nullptr);
  EXPECT_EQ(stage(res, "quiet").find("db_queries"), nullptr);
  EXPECT_TRUE(stage(res, "quiet").queries.empty());

  config("  - name: counted\n"
         "    query: select count(*) from item\n",
         true, "{ provider: local, profile: false }");
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  res = results();
  EXPECT_EQ(stage(res, "counted").find("db_queries"), nullptr);
  EXPECT_EQ(res.profile_note, "");  // turned off, not missing: nothing to say
  EXPECT_EQ(res.environment.postgres_settings.count("shared_preload_libraries"), 0u);
}

TEST_F(ProfileTest, AnExternalServerWithoutTheExtensionGetsANoteNotAnError) {
  // The suite's own cluster starts without pg_stat_statements preloaded.
  std::string url = testing::fresh_database("profile_external").url();
  config("  - name: counted\n"
         "    query: select count(*) from item\n",
         true, "{ provider: external, url: '" + url + "' }");
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Results res = results();
  EXPECT_NE(res.profile_note.find("pg_stat_statements is not installed in database "
                                  "profile_external"),
            std::string::npos)
      << res.profile_note;
  EXPECT_NE(res.profile_note.find("shared_preload_libraries"), std::string::npos);
  EXPECT_EQ(stage(res, "counted").find("db_queries"), nullptr);
  EXPECT_NE(r.err.find("note: no server-side profile: pg_stat_statements is not installed"),
            std::string::npos)
      << r.err;
  std::string report = slurp(dir / "coldgate-out/report.md");
  EXPECT_NE(report.find("ℹ️ No server-side profile: pg_stat_statements is not installed"),
            std::string::npos)
      << report;
}

TEST_F(ProfileTest, MoreQueriesAreARegressionEvenWhenTheWallTimeHidesIt) {
  config("  - name: lookups\n" + one_by_one(5));
  ASSERT_EQ(run().exit_code, 0);
  std::filesystem::copy_file(dir / "coldgate-out/results.json", dir / "base.json");

  // 5 → 8 statements: under min_query_delta (10), no regression.
  config("  - name: lookups\n" + one_by_one(8));
  auto same = run({"--baseline", "base.json"});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  Results res = results();
  ASSERT_TRUE(res.gate);
  auto verdict = [&](const Results& x) {
    for (const auto& v : x.gate->metrics) {
      if (v.metric == "db_queries") return v;
    }
    ADD_FAILURE() << "db_queries not gated";
    return MetricVerdict{};
  };
  EXPECT_EQ(verdict(res).verdict, Verdict::same);
  EXPECT_EQ(verdict(res).reason, "+3 statements: under min_query_delta 10");

  // 5 → 51: 10.2× and 46 more, a new N+1.
  config("  - name: lookups\n" + one_by_one(51));
  auto worse = run({"--baseline", "base.json"});
  EXPECT_EQ(worse.exit_code, 1) << worse.out << worse.err;
  res = results();
  EXPECT_EQ(verdict(res).verdict, Verdict::regression);
  EXPECT_EQ(verdict(res).reason,
            "10.2× ≥ max_query_ratio 2, +46 statements ≥ min_query_delta 10");
  EXPECT_NE(worse.out.find("lookups db_queries"), std::string::npos) << worse.out;
}

// An ORM's list page and its second page: the statements differ only past the statement
// table's cut (OFFSET), so their shortened texts are the same. Each keeps the id of its whole
// text, whether a command stage's client or a SQL stage's probe ran it: two ids, not one, and
// the same statement has the same id on both paths.
TEST_F(ProfileTest, StatementsThatDifferPastTheCutKeepApartTextIds) {
  const std::string page =
      "select i.id, i.name, i.price from item i where i.id > 0 and i.id < 1000 and i.name like "
      "'item%' and i.name <> 'none' and i.price > 0 and i.price < 100000 and i.price <> 7 and "
      "i.id <> 999 and coalesce(i.name, '') <> 'x' order by i.id limit 5";
  dir.write("pages.sql", page + ";\n" + page + ";\n" + page + " offset 5;\n");
  config("  - name: pages\n"
         "    command: [psql, -XAtq, -f, pages.sql]\n"
         "  - name: first-page\n"
         "    query: \"" + page + "\"\n");
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Results res = results();
  const StageResult& pages = stage(res, "pages");
  ASSERT_EQ(pages.queries.size(), 2u);
  const QueryStats& first = pages.queries[0].calls == 2 ? pages.queries[0] : pages.queries[1];
  const QueryStats& second = &first == &pages.queries[0] ? pages.queries[1] : pages.queries[0];
  EXPECT_EQ(first.calls, 2);
  EXPECT_EQ(second.calls, 1);
  EXPECT_EQ(first.query, second.query);  // the cut falls before OFFSET
  EXPECT_EQ(first.query.substr(first.query.size() - 4), " …") << first.query;
  EXPECT_EQ(first.text_id.size(), 16u);
  EXPECT_EQ(second.text_id.size(), 16u);
  EXPECT_NE(first.text_id, second.text_id);

  const StageResult& sql = stage(res, "first-page");
  ASSERT_EQ(sql.queries.size(), 1u);
  EXPECT_EQ(sql.queries[0].query, first.query);
  EXPECT_EQ(sql.queries[0].text_id, first.text_id);
}

// TypeORM's findOne({slug}) as pg_stat_statements stores it: every column under an alias, joins
// on long aliases, the looked-up value last. One lookup per name, each with another name.
std::string orm_lookup(int i) {
  std::string columns;
  for (const char* a : {"ArticleEntity", "ArticleEntity__author", "ArticleEntity__comments",
                        "ArticleEntity__favoritedBy"}) {
    for (const char* c : {"id", "name", "price"}) {
      for (int k = 0; k < 3; ++k) {
        columns += std::string(columns.empty() ? "" : ", ") + "\"" + a + "\".\"" + c +
                   "\" AS \"" + a + "_" + c + std::to_string(k) + "\"";
      }
    }
  }
  return "SELECT " + columns +
         " FROM item \"ArticleEntity\" LEFT JOIN item \"ArticleEntity__author\" ON "
         "\"ArticleEntity__author\".\"id\"=\"ArticleEntity\".\"id\" LEFT JOIN item "
         "\"ArticleEntity__comments\" ON \"ArticleEntity__comments\".\"id\"=\"ArticleEntity\".\"id\" "
         "LEFT JOIN item \"ArticleEntity__favoritedBy\" ON \"ArticleEntity__favoritedBy\".\"id\"="
         "\"ArticleEntity\".\"id\" WHERE \"ArticleEntity\".\"name\" = 'item " +
         std::to_string(i) + "' LIMIT 1;\n";
}

// The trial's findOne({slug}): its stored text is cut before its WHERE, and it was called "the
// same text every call". Its shape comes from the whole text: a lookup by key, an N+1 — unless
// the stage says it makes one request per lookup (`requests:`), where it is the stage's own loop
// and a lookup per item within each request is the N+1.
TEST_F(ProfileTest, AnOrmLookupCutBeforeItsWhereIsAnNPlusOneAndRequestsAreJudgedEach) {
  std::string lookups, pages;
  for (int i = 1; i <= 20; ++i) {
    lookups += orm_lookup(i);
    pages += orm_lookup(i);
    for (int item = 1; item <= 25; ++item)
      pages += "select price from item where id = " + std::to_string(item) + ";\n";
  }
  dir.write("lookups.sql", lookups);
  dir.write("pages.sql", pages);
  config("  - name: lookups\n"
         "    command: [psql, -XAtq, -f, lookups.sql]\n"
         "  - name: article-pages\n"
         "    command: [psql, -XAtq, -f, pages.sql]\n"
         "    requests: 20\n");
  auto r = run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Results res = results();
  std::map<std::string, std::vector<const Diagnosis*>> repeated;
  for (const auto& d : res.diagnoses) {
    if (d.kind == results::DiagnosisKind::repeated_query) repeated[d.stage].push_back(&d);
  }
  // One statement, 20 calls; its stored text shows no parameter.
  const StageResult& l = stage(res, "lookups");
  const QueryStats* lookup = nullptr;
  for (const auto& q : l.queries) {
    if (q.query.find("ArticleEntity") != std::string::npos) lookup = &q;
  }
  ASSERT_NE(lookup, nullptr);
  EXPECT_EQ(lookup->calls, 20);
  EXPECT_EQ(lookup->query.find('$'), std::string::npos) << "not cut before its WHERE: " << lookup->query;
  ASSERT_EQ(repeated["lookups"].size(), 1u);
  EXPECT_EQ(repeated["lookups"][0]->facts.at("shape"), "per_row") << repeated["lookups"][0]->message;
  // Per request: the lookup by slug is once per request, no finding; the lookup per item is.
  ASSERT_EQ(repeated["article-pages"].size(), 1u);
  const Diagnosis& n1 = *repeated["article-pages"][0];
  EXPECT_EQ(n1.query, "select price from item where id = $1");
  EXPECT_EQ(n1.facts.at("shape"), "per_row");
  EXPECT_EQ(n1.data.at("calls_per_request"), 25);
  EXPECT_NE(n1.message.find("ran 25 times per request (500 per cold run of 20 requests"),
            std::string::npos)
      << n1.message;
}

// A pull request that deletes the query that ran before a page's lookup. In a fresh backend the
// first statement to plan over `item` reads its catalog rows, and pg_stat_statements counts
// planning's blocks with the statement's: the lookup's blocks per call rise with nothing changed
// in its plan or data. The gate judges the captured plans' execution blocks, which do not.
TEST_F(ProfileTest, ALookupThatNowPlansFirstIsNotALostIndex) {
  const std::string lookup = "select name from item where id = 7";
  // Times left out of the gate: a loaded machine's may differ; the statements are the point.
  const std::string gate =
      "gate: { metrics: [db_queries], min_blocks_delta: 5, max_blocks_ratio: 2 }\n";
  config("  - name: page\n"
         "    command: [psql, -XAtq, -c, 'select count(*) from item where price > 0', -c, '" +
         lookup + "']\n");
  dir.write("coldgate.yaml", slurp(dir / "coldgate.yaml") + gate);
  auto base_run = run();
  ASSERT_EQ(base_run.exit_code, 0) << base_run.out << base_run.err;
  std::filesystem::copy_file(dir / "coldgate-out/results.json", dir / "base.json");

  config("  - name: page\n    command: [psql, -XAtq, -c, '" + lookup + "']\n");
  dir.write("coldgate.yaml", slurp(dir / "coldgate.yaml") + gate);
  auto head_run = run({"--baseline", "base.json"});
  Results res = results();
  ASSERT_TRUE(res.gate);
  const StatementVerdict* verdict = nullptr;
  for (const auto& v : res.gate->statements) {
    if (v.query == "select name from item where id = $1") verdict = &v;
  }
  ASSERT_NE(verdict, nullptr) << head_run.out;
  ASSERT_TRUE(verdict->base && verdict->head);
  ASSERT_TRUE(verdict->base->blocks_per_call && verdict->head->blocks_per_call);
  // What pg_stat_statements says is what the old rule gated on: ≥ 2× and ≥ 5 blocks more.
  const double b = *verdict->base->blocks_per_call, h = *verdict->head->blocks_per_call;
  EXPECT_GE(h - b, 5) << b << " → " << h;
  EXPECT_GE(h, 2 * b) << b << " → " << h;
  // The plans' execution read the same: no regression, and the reason says why.
  EXPECT_EQ(head_run.exit_code, 0) << head_run.out << head_run.err;
  EXPECT_EQ(verdict->verdict, Verdict::same) << verdict->reason;
  EXPECT_EQ(verdict->plan_change, "");
  EXPECT_NE(verdict->reason.find("count planning's catalog reads too"), std::string::npos)
      << verdict->reason;
}

// ---- remedy trials (--try) ----------------------------------------------------------------

// An application whose JIT costs more than its execution (it lowers the thresholds itself), and
// that notes the settings each run got (PGOPTIONS) in order.txt.
constexpr const char* k_jit_app =
    "    command: [sh, -c, 'echo \"run:$PGOPTIONS\" >> order.txt; psql -XAtq -c \"SET "
    "jit_above_cost = 0; SET jit_inline_above_cost = 0; SET jit_optimize_above_cost = 0; select "
    "sum(price * id) from item\" > /dev/null']\n";

TEST_F(ProfileTest, TryInterleavesTheVariantsWithinTheBudgetAndRecordsEach) {
  config("  - name: app\n" + std::string(k_jit_app) + "    runs: 1\n    try_runs: 2\n");
  auto r = run({"--try"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The stage's own run, its unmeasured plan run, then as is, remedy 1, remedy 2, as is,
  // remedy 1, remedy 2.
  const std::string off = "run:-c jit=off";
  const std::string lean = "run:-c jit_inline_above_cost=-1 -c jit_optimize_above_cost=-1";
  EXPECT_EQ(slurp(dir / "order.txt"), "run:\nrun:\nrun:\n" + off + "\n" + lean + "\nrun:\n" + off +
                                          "\n" + lean + "\n");
  Results res = results();
  ASSERT_EQ(res.remedies.size(), 3u);
  EXPECT_EQ(res.remedies[0].remedy, "as is");
  EXPECT_EQ(res.remedies[1].remedy, "jit = off");
  EXPECT_EQ(res.remedies[1].settings, (std::map<std::string, std::string>{{"jit", "off"}}));
  EXPECT_EQ(res.remedies[2].remedy, "JIT without inlining and optimization");
  for (const auto& m : res.remedies) {
    EXPECT_EQ(m.stage, "app");
    EXPECT_EQ(m.error, "");
    ASSERT_NE(m.find("wall_ms"), nullptr) << m.remedy;
    EXPECT_EQ(m.find("wall_ms")->cold.size(), 2u) << m.remedy;  // try_runs: 2, no more
    EXPECT_FALSE(m.snapshot_identical) << m.remedy;             // the stage has no snapshot
  }
  EXPECT_GT(*res.remedies[0].median_of("db_jit_ms"), 0);
  EXPECT_EQ(*res.remedies[1].median_of("db_jit_ms"), 0);  // jit = off reached the application
  EXPECT_NE(res.remedies[0].note.find("the trial: 6 cold runs of 3 variants in "),
            std::string::npos)
      << res.remedies[0].note;
  std::string report = slurp(dir / "coldgate-out/report.md");
  EXPECT_NE(report.find("### Remedies measured"), std::string::npos) << report;
  // A profiled trial shows the server's time (plan + execution) beside the cold wall time.
  EXPECT_NE(report.find("| Remedy | Cold wall | Server time | JIT | vs as is | Snapshot |"),
            std::string::npos)
      << report;
}

// A query whose text depends on extra_float_digits, JIT forced on it.
constexpr const char* k_float_stage =
    "  - name: floats\n"
    "    query: select json_build_object('pi', pi(), 'total', sum(price * id)) from item\n"
    "    decode: json\n"
    "    settings: { jit_above_cost: '0', jit_inline_above_cost: '0', jit_optimize_above_cost: '0' }\n"
    "    runs: 1\n"
    "    try_runs: 2\n"
    "    snapshot: { path: snapshots/floats.json }\n"
    "    remedies:\n"
    "      - { name: fewer float digits, settings: { extra_float_digits: '0' } }\n";

TEST_F(ProfileTest, ARemedyThatChangesTheResultIsShownAsDifferingAndNeverRecommended) {
  config(k_float_stage);
  ASSERT_EQ(run({"--update-snapshots"}).exit_code, 0);
  auto r = run({"--try"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Results res = results();
  const Remedy* digits = nullptr;
  const Remedy* off = nullptr;
  for (const auto& m : res.remedies) {
    if (m.remedy == "fewer float digits") digits = &m;
    if (m.remedy == "jit = off") off = &m;
    if (m.remedy == "prepared statement") {
      EXPECT_TRUE(m.second_execution);
    }
  }
  ASSERT_NE(digits, nullptr);
  ASSERT_NE(off, nullptr);
  ASSERT_TRUE(digits->snapshot_identical);
  EXPECT_FALSE(*digits->snapshot_identical);
  EXPECT_EQ(digits->first_difference, "/pi");
  ASSERT_TRUE(off->snapshot_identical);
  EXPECT_TRUE(*off->snapshot_identical);
  std::string report = slurp(dir / "coldgate-out/report.md");
  EXPECT_NE(report.find("| fewer float digits |"), std::string::npos) << report;
  EXPECT_NE(report.find("differs at /pi |"), std::string::npos) << report;
  EXPECT_EQ(report.find("`fewer float digits`:"), std::string::npos) << report;  // not named

  // explain --try --json: the same objects, "as is" first, as one document.
  auto e = run_coldgate({"explain", "floats", "--try", "--json"}, dir.path(), "",
                        {"CI=", "GITHUB_ACTIONS="});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  auto doc = nlohmann::json::parse(e.out);
  EXPECT_EQ(doc.at("stage"), "floats");
  ASSERT_GE(doc.at("remedies").size(), 3u);
  const auto& first = doc.at("remedies").at(0);
  EXPECT_EQ(first.at("remedy"), "as is");
  for (const char* key : {"stage", "remedy", "settings", "second_execution", "metrics",
                          "snapshot_identical", "first_difference", "note", "error"})
    EXPECT_TRUE(first.contains(key)) << key;
  EXPECT_EQ(first.at("metrics").at("wall_ms").at("cold").size(), 2u);
  bool differs = false;
  for (const auto& m : doc.at("remedies")) {
    if (m.at("remedy") == "fewer float digits") {
      differs = m.at("snapshot_identical") == false && m.at("first_difference") == "/pi";
    }
  }
  EXPECT_TRUE(differs) << e.out;
}

TEST_F(ProfileTest, TheAnalyzeRemedyRunsInACopyWithTheEstimateBeforeAndAfter) {
  config("  - name: pricey\n"
         "    query: select json_agg(id order by id) from item where price > 30\n"
         "    decode: json\n"
         "    runs: 1\n"
         "    try_runs: 1\n"
         "    snapshot: { path: snapshots/pricey.json }\n",
         /*analyze=*/false);
  ASSERT_EQ(run({"--update-snapshots"}).exit_code, 0);
  auto r = run({"--try"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Results res = results();
  const Remedy* analyze = remedy(res, "ANALYZE");
  ASSERT_NE(analyze, nullptr) << r.out;
  EXPECT_EQ(analyze->error, "");
  ASSERT_TRUE(analyze->snapshot_identical);
  EXPECT_TRUE(*analyze->snapshot_identical);
  EXPECT_EQ(analyze->note.rfind("cost estimate ", 0), 0u) << analyze->note;
  EXPECT_NE(analyze->note.find(" → "), std::string::npos) << analyze->note;
}

// PostgreSQL cuts a name to 63 bytes: a copy named "<63-byte name>_try_analyze_<pid>" would be
// cut to the source's own name — the trial dropped the stages' database itself. The copy's name
// now cuts the source name instead, and the stage after the trial still reads its database.
TEST_F(ProfileTest, TheAnalyzeCopyOfADatabaseWithALongNameIsItsOwnDatabase) {
  const std::string name(63, 'd');
  config("  - name: pricey\n"
         "    query: select json_agg(id order by id) from item where price > 30\n"
         "    decode: json\n"
         "    runs: 1\n"
         "    try_runs: 1\n"
         "  - name: after\n"
         "    query: select count(*) from item\n"
         "    runs: 1\n",
         /*analyze=*/false, "{ provider: local, name: " + name + " }");
  auto r = run({"--try"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Results res = results();
  const Remedy* analyze = remedy(res, "ANALYZE");
  ASSERT_NE(analyze, nullptr) << r.out;
  EXPECT_EQ(analyze->error, "");
  EXPECT_EQ(stage(res, "after").error, "");
}

}  // namespace
}  // namespace coldgate::measure
