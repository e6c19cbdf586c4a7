// Data scales on a real local server (`scales: [1, 4, 16]`): setup loads each scale into a
// database of its own with the scale as psql's :scale and $COLDGATE_SCALE, the stages run on
// each, and each statement's growth is fitted from its counts — an N+1 whose calls grow with
// the data, an index lookup whose blocks per call stay flat, the same lookup without the index
// growing linearly, a nested loop over a scan growing quadratically. `ab` fails a pull request
// that drops an index on a table of 200 rows at scale 1, where no count at scale 1 moves past a
// threshold, on its growth alone; an A/A pair has no growth verdict but `same`; `stack` fails
// that pull request and only it.
#include <gtest/gtest.h>

#include <map>

#include "results/growth.hpp"
#include "results/json.hpp"
#include "support/support.hpp"

namespace coldgate::measure {
namespace {

using testing::run_coldgate;
using testing::run_git;
using testing::slurp;
using testing::TempDir;

// item: 200 rows a scale, 4 per realm (realms grow with the scale too); item_plain the same
// without its index; a and b for the nested loop (20 and 100 rows a scale, wide enough that
// pages grow with the rows). `scale.txt` records what each setup saw, for the test. One cold
// run a stage and scale: growth is fitted from counts (calls, rows and blocks per call), the
// same in every run, and only db_queries is gated.
constexpr const char* k_data = R"(\set ON_ERROR_STOP on
CREATE TABLE realm (id int PRIMARY KEY);
INSERT INTO realm SELECT g FROM generate_series(1, 24 * :scale) g;
CREATE TABLE item (id int PRIMARY KEY, realm_id int NOT NULL, pad text);
INSERT INTO item SELECT g, 1 + g % (50 * :scale), repeat('x', 100) FROM generate_series(1, 200 * :scale) g;
CREATE INDEX item_realm ON item (realm_id);
CREATE TABLE item_plain AS SELECT * FROM item;
CREATE TABLE a (k int, pad text);
INSERT INTO a SELECT g, repeat('a', 200) FROM generate_series(1, 20 * :scale) g;
CREATE TABLE b (k int, pad text);
INSERT INTO b SELECT g, repeat('b', 200) FROM generate_series(1, 100 * :scale) g;
)";

// The N+1: the realms, then one count per realm.
constexpr const char* k_app = R"(import os, psycopg2
conn = psycopg2.connect(os.environ['DATABASE_URL'])
cur = conn.cursor()
cur.execute('select id from realm order by id')
for (r,) in cur.fetchall():
    cur.execute('select count(*) from item where realm_id = %s', (r,))
    cur.fetchall()
conn.close()
)";

const std::string k_count = "select count(*) from item where realm_id = $1";
const std::string k_lookup = "select id, pad from item where realm_id = $1";
const std::string k_plain = "select id, pad from item_plain where realm_id = $1";
const std::string k_join = "select count(*) from a join b on a.k = b.k";

testing::RunResult coldgate(const TempDir& dir, std::vector<std::string> args) {
  return run_coldgate(args, dir.path(), "",
                      {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_HEAD_REF=",
                       "GITHUB_STEP_SUMMARY=", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME="});
}

const results::StatementGrowth* statement(const results::StageResult& s, const std::string& query) {
  if (!s.growth) return nullptr;
  for (const auto& g : s.growth->statements) {
    if (g.query == query) return &g;
  }
  return nullptr;
}

const results::StageResult* stage(const results::Results& r, const std::string& name) {
  for (const auto& s : r.stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(GrowthRun, EachStatementsGrowthFromThreeScales) {
  TempDir dir;
  dir.write("coldgate.yaml", R"(version: 1
database: { provider: local }
scales: [1, 4, 16]
production_scale: 100
setup:
  - psql: data.psql
  - command: [sh, -c, 'echo "$COLDGATE_SCALE" >> scale.txt']
  - analyze: true
defaults: { runs: 1, warm: 0 }
stages:
  - name: n-plus-one
    command: [/usr/bin/python3, app.py]
  - name: lookup
    query: select id, pad from item where realm_id = 7
  - name: scan
    query: select id, pad from item_plain where realm_id = 7
  - name: nested
    query: select count(*) from a join b on a.k = b.k
    settings: { enable_hashjoin: "off", enable_mergejoin: "off", enable_material: "off" }
    scales: [1, 4, 16]
gate: { metrics: [db_queries] }
)");
  dir.write("data.psql", k_data);
  dir.write("app.py", k_app);
  auto run = coldgate(dir, {"run"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // Setup ran once a scale, with the scale.
  EXPECT_EQ(slurp(dir / "scale.txt"), "1\n4\n16\n");
  EXPECT_NE(run.err.find("setup scale 4: psql data.psql"), std::string::npos) << run.err;
  const results::Results r = results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");

  const auto* n1 = stage(r, "n-plus-one");
  ASSERT_TRUE(n1 && n1->growth) << run.err;
  EXPECT_EQ(n1->growth->scales, (std::vector<double>{1, 4, 16}));
  EXPECT_EQ(n1->growth->production_scale, 100.0);
  EXPECT_EQ(n1->growth->error, "");
  const auto* count = statement(*n1, k_count);
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(results::growth_values(count->calls), "24 → 96 → 384");
  EXPECT_EQ(count->calls.growth, results::GrowthClass::linear);
  ASSERT_TRUE(count->calls.projected);
  EXPECT_NEAR(*count->calls.projected, 2400, 24);
  EXPECT_EQ(count->rows_per_call.growth, results::GrowthClass::constant);
  EXPECT_EQ(n1->growth->queries.growth, results::GrowthClass::linear);
  // The stage's database time, planning + execution, at every scale.
  for (const auto& v : n1->growth->time_ms.values) EXPECT_TRUE(v && *v > 0);
  // The N+1's diagnosis says that it grows.
  bool n1_named = false;
  for (const auto& d : r.diagnoses) {
    if (d.kind != results::DiagnosisKind::repeated_query || d.query != k_count) continue;
    n1_named = true;
    EXPECT_NE(d.message.find("its calls grow linearly with the data (24 → 96 → 384 per run): an N+1 "
                             "that grows"),
              std::string::npos)
        << d.message;
    EXPECT_EQ(d.facts.at("growth"), "linear");
  }
  EXPECT_TRUE(n1_named) << "no repeated_query for " << k_count;

  // The same lookup with its index and without.
  const auto* lookup = statement(*stage(r, "lookup"), k_lookup);
  ASSERT_NE(lookup, nullptr);
  EXPECT_EQ(lookup->blocks_per_call.growth, results::GrowthClass::constant) << results::growth_values(lookup->blocks_per_call);
  EXPECT_EQ(lookup->rows_per_call.growth, results::GrowthClass::constant);
  EXPECT_EQ(results::growth_values(lookup->rows_per_call), "4 → 4 → 4");
  const auto* plain = statement(*stage(r, "scan"), k_plain);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->blocks_per_call.growth, results::GrowthClass::linear) << results::growth_values(plain->blocks_per_call);
  EXPECT_EQ(plain->rows_per_call.growth, results::GrowthClass::constant);
  // 200 rows at scale 1 are read whole in a few pages: too few for missing_index, whose figures
  // are the first scale's. The scales show what the scan grows into, and name the index.
  bool scan_named = false;
  for (const auto& d : r.diagnoses) {
    if (d.stage != "scan") continue;
    EXPECT_NE(d.kind, results::DiagnosisKind::missing_index) << d.message;
    if (d.kind != results::DiagnosisKind::scan_grows) continue;
    scan_named = true;
    EXPECT_EQ(d.query, k_plain);
    EXPECT_NE(d.message.find("reads blocks per call that grow linearly with the data ("), std::string::npos)
        << d.message;
    EXPECT_NE(d.message.find("while it returns the same rows per call (4 → 4 → 4): it is a Seq Scan on "
                             "public.item_plain"),
              std::string::npos)
        << d.message;
    EXPECT_EQ(d.facts.at("index"), "CREATE INDEX ON public.item_plain (realm_id)") << d.message;
    EXPECT_EQ(d.facts.at("growth"), "linear");
  }
  EXPECT_TRUE(scan_named) << "no scan_grows for the scan";
  for (const auto& d : r.diagnoses) EXPECT_FALSE(d.stage == "lookup" && d.kind == results::DiagnosisKind::scan_grows) << d.message;

  // A nested loop whose inner side is a scan: quadratic.
  const auto* join = statement(*stage(r, "nested"), k_join);
  ASSERT_NE(join, nullptr);
  EXPECT_EQ(join->blocks_per_call.growth, results::GrowthClass::quadratic) << results::growth_values(join->blocks_per_call);
  EXPECT_EQ(join->calls.growth, results::GrowthClass::constant);

  // The report's Growth section says it, with the projection marked as one.
  const std::string report = slurp(dir / "coldgate-out/report.md");
  EXPECT_NE(report.find("### Growth"), std::string::npos) << report;
  EXPECT_NE(report.find("24 → 96 → 384 · **linear**"), std::string::npos) << report;
  EXPECT_NE(report.find("calls grow linearly with the data: an N+1 that grows"), std::string::npos) << report;
  EXPECT_NE(report.find("Projected per run at ×100"), std::string::npos) << report;
  EXPECT_NE(report.find("an estimate, not a measurement"), std::string::npos) << report;
  // The scales' databases are gone with the run: nothing but the snapshot's folder is left.
  EXPECT_FALSE(std::filesystem::exists(dir / "coldgate-out/explain/scale-coldgate_scale4"));
}

// Every stage fails at the first scale: no further scale is set up (its setup would load data
// nothing reads), and the run says so in one line.
TEST(GrowthRun, WhenEveryStageFailsAtTheFirstScaleNoFurtherScaleIsSetUp) {
  TempDir dir;
  dir.write("coldgate.yaml", R"(version: 1
database: { provider: local }
scales: [1, 4, 16]
setup:
  - command: [sh, -c, 'echo "$COLDGATE_SCALE" >> scale.txt']
defaults: { runs: 1, warm: 0 }
stages:
  - name: divides
    query: select 1/0
  - name: missing
    query: select * from nowhere
)");
  auto run = coldgate(dir, {"run"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(slurp(dir / "scale.txt"), "1\n");
  EXPECT_NE(run.err.find("\ncoldgate: scales: every stage failed (at scale 1), so scales 4, 16 are "
                         "not set up\n"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("setup scale 4"), std::string::npos) << run.err;
}

// ab: the pull request drops the index of a table of 200 rows at scale 1.
struct GrowthAbTest : ::testing::Test {
  void SetUp() override {
    dir.write("coldgate.yaml", R"(version: 1
database: { provider: local }
scales: [1, 4, 16]
setup: [ { psql: data.psql }, { analyze: true } ]
defaults: { runs: 1, warm: 0 }
stages:
  - name: lookup
    query: select id, pad from item where realm_id = 7
gate: { metrics: [db_queries] }
)");
    dir.write(".gitignore", "coldgate-out/\n");
    dir.write("data.psql", k_data);
    run_git(dir.path(), {"init", "-q"});
    commit("base");
    run_git(dir.path(), {"branch", "-m", "main"});
  }
  void commit(const std::string& message) {
    run_git(dir.path(), {"add", "-A"});
    run_git(dir.path(), {"commit", "-q", "-m", message});
  }
  results::Results results() {
    return results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  }
  TempDir dir;
};

TEST_F(GrowthAbTest, ADroppedIndexIsARegressionThroughItsGrowthAlone) {
  run_git(dir.path(), {"checkout", "-q", "-b", "noindex"});
  std::string data = k_data;
  data.replace(data.find("CREATE INDEX item_realm ON item (realm_id);\n"),
               std::string("CREATE INDEX item_realm ON item (realm_id);\n").size(), "");
  dir.write("data.psql", data);
  commit("migration: drop the realm index");
  auto ab = coldgate(dir, {"ab", "--base", "main", "--no-cache"});
  EXPECT_EQ(ab.exit_code, 1) << ab.out << ab.err;
  const results::Results r = results();
  ASSERT_TRUE(r.gate);
  const results::StatementVerdict* v = nullptr;
  for (const auto& s : r.gate->statements) {
    if (s.query == k_lookup) v = &s;
  }
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(results::to_string(v->verdict), "regression") << v->reason;
  EXPECT_EQ(v->growth_change, "blocks per call: constant → linear");
  EXPECT_EQ(v->reason.rfind("blocks per call grow linearly with the data (", 0), 0u) << v->reason;
  EXPECT_NE(v->reason.find("instead of staying constant ("), std::string::npos) << v->reason;
  // At scale 1 the counts alone pass: no count threshold is what fails it.
  EXPECT_EQ(v->reason.find("≥ min_blocks_delta"), std::string::npos) << v->reason;
  EXPECT_EQ(v->base->calls, v->head->calls);
  ASSERT_TRUE(v->base->blocks_per_call && v->head->blocks_per_call);
  EXPECT_LT(*v->head->blocks_per_call - *v->base->blocks_per_call, 100) << v->reason;
  for (const auto& m : r.gate->metrics) EXPECT_NE(results::to_string(m.verdict), "regression") << m.metric;
  // The verdict names the statement; the report lists it with its growth.
  EXPECT_NE(ab.err.find("statement `select id, pad from item where realm_id = $1`"), std::string::npos) << ab.err;
  const std::string report = slurp(dir / "coldgate-out/report.md");
  EXPECT_NE(report.find("blocks per call: constant → linear"), std::string::npos) << report;
}

TEST_F(GrowthAbTest, AnAAPairHasNoGrowthVerdictButSame) {
  run_git(dir.path(), {"checkout", "-q", "-b", "aa"});
  dir.write("data.psql", std::string("-- the same data, another comment\n") + k_data);
  commit("a/a: a comment only");
  auto ab = coldgate(dir, {"ab", "--base", "main", "--no-cache"});
  EXPECT_EQ(ab.exit_code, 0) << ab.out << ab.err;
  const results::Results r = results();
  ASSERT_TRUE(r.gate);
  ASSERT_FALSE(r.gate->statements.empty());
  for (const auto& s : r.gate->statements) {
    EXPECT_EQ(results::to_string(s.verdict), "same") << s.query << ": " << s.reason;
    EXPECT_EQ(s.growth_change, "") << s.query;
    ASSERT_TRUE(s.base && s.head) << s.query;
    EXPECT_EQ(s.base->growth, s.head->growth) << s.query;
  }
  const auto* st = stage(r, "lookup");
  ASSERT_TRUE(st && st->growth);
  EXPECT_EQ(statement(*st, k_lookup)->blocks_per_call.growth, results::GrowthClass::constant);
}


// stack: main → aa (a comment only) → noindex (the index dropped). Each commit is measured at
// every scale once; the pull request that drops the index fails on its growth, the one below it
// passes with `same` alone.
TEST_F(GrowthAbTest, AStackFailsThePullRequestThatDropsTheIndexAndOnlyIt) {
  run_git(dir.path(), {"checkout", "-q", "-b", "aa"});
  dir.write("data.psql", std::string("-- the same data, another comment\n") + k_data);
  commit("a/a: a comment only");
  run_git(dir.path(), {"checkout", "-q", "-b", "noindex"});
  std::string data = std::string("-- the same data, another comment\n") + k_data;
  data.replace(data.find("CREATE INDEX item_realm ON item (realm_id);\n"),
               std::string("CREATE INDEX item_realm ON item (realm_id);\n").size(), "");
  dir.write("data.psql", data);
  commit("migration: drop the realm index");
  auto stack = coldgate(dir, {"stack", "main", "aa", "noindex", "--no-cache"});
  EXPECT_EQ(stack.exit_code, 1) << stack.out << stack.err;
  auto verdicts = [&](const std::string& side) {
    const auto r = results::from_json(slurp(dir / ("coldgate-out/stack/" + side + "/results.json")), side);
    std::map<std::string, std::string> out;
    if (!r.gate) return out;
    for (const auto& v : r.gate->statements) {
      out[v.query] = std::string(results::to_string(v.verdict)) + (v.growth_change.empty() ? "" : " (" + v.growth_change + ")");
    }
    const auto* st = stage(r, "lookup");
    out["growth of the lookup's blocks per call"] =
        st && st->growth && statement(*st, k_lookup) ? std::string(results::to_string(statement(*st, k_lookup)->blocks_per_call.growth))
                                                          : "none";
    return out;
  };
  const auto aa = verdicts("1-aa");
  EXPECT_EQ(aa.at(k_lookup), "same");
  EXPECT_EQ(aa.at("growth of the lookup's blocks per call"), "constant");
  const auto noindex = verdicts("2-noindex");
  EXPECT_EQ(noindex.at(k_lookup), "regression (blocks per call: constant → linear)");
  EXPECT_EQ(noindex.at("growth of the lookup's blocks per call"), "linear");
}

}  // namespace
}  // namespace coldgate::measure
