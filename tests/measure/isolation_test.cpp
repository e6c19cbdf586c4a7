// `isolation: run | stage | none`: which state of the stages' database each cold run finds,
// through the real binary on real servers (a local one coldgate starts, and the suite's cluster
// as an external one).
#include <gtest/gtest.h>

#include "db/connection.hpp"
#include "results/json.hpp"
#include "support/cluster.hpp"
#include "support/support.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

using testing::TempDir;
using testing::run_coldgate;
using testing::slurp;

// A stage that changes the schema and writes a row, as an ORM's start-up `sync({alter: true})`
// does: on a database it has run on before, ADD COLUMN fails.
const std::string k_migrate =
    "  - name: migrate\n"
    "    command: [psql, -X, -q, -v, ON_ERROR_STOP=1, -c, \"ALTER TABLE item ADD COLUMN note "
    "text; INSERT INTO item (id, name, price) SELECT max(id) + 1, 'new', 0 FROM item\"]\n";
// A later stage whose figures depend on what it finds.
const std::string k_read =
    "  - name: read\n"
    "    query: select id, name from item where id > 49 order by id\n"
    "    snapshot: { ordered: [''] }\n";

// The copies a run's stderr says it made, as "<stage>: <which>" in order.
std::vector<std::string> copies(const std::string& err) {
  std::vector<std::string> out;
  const std::string mark = ": fresh copy of the database for ";
  for (std::size_t at = err.find(mark); at != std::string::npos; at = err.find(mark, at + 1)) {
    const std::size_t start = err.rfind("coldgate: ", at) + 10;
    const std::size_t end = err.find_first_of("(\n", at);
    std::string which = err.substr(at + mark.size(), end - at - mark.size());
    while (!which.empty() && which.back() == ' ') which.pop_back();
    out.push_back(err.substr(start, at - start) + ": " + which);
  }
  return out;
}

struct Isolation : ::testing::Test {
  // A config of `stages` on a local server (or `database`), 50 items loaded by setup.
  void config(const std::string& stages, const std::string& defaults,
              const std::string& database = "{ provider: local }",
              const std::string& extra_setup = "") {
    dir.write("schema.sql",
              "CREATE TABLE item (id int PRIMARY KEY, name text, price numeric);\n"
              "INSERT INTO item SELECT g, 'item ' || g, g * 1.5 FROM generate_series(1, 50) g;\n");
    dir.write("coldgate.yaml", "version: 1\n"
                               "database: " + database + "\n"
                               "setup: [ { sql: schema.sql }" + extra_setup + " ]\n"
                               "defaults: " + defaults + "\n"
                               "stages:\n" + stages);
  }
  testing::RunResult run(std::vector<std::string> env = {}) {
    env.push_back("CI=");
    env.push_back("GITHUB_ACTIONS=");
    return run_coldgate({"run", "--no-ci"}, dir.path(), "", env);
  }
  Results results() {
    return results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  }
  const StageResult& stage(const Results& r, const std::string& name) {
    for (const auto& s : r.stages) {
      if (s.name == name) return s;
    }
    ADD_FAILURE() << "no stage " << name;
    static StageResult none;
    return none;
  }
  std::string candidate(const std::string& name) {
    return slurp(dir / ("snapshots/" + name + ".json.new"));
  }
  TempDir dir;
};

const std::string k_fifty = "[\n  {\n    \"id\": 50,\n    \"name\": \"item 50\"\n  }\n]\n";
const std::string k_fifty_one = "[\n  {\n    \"id\": 50,\n    \"name\": \"item 50\"\n  },\n"
                                "  {\n    \"id\": 51,\n    \"name\": \"new\"\n  }\n]\n";

TEST_F(Isolation, RunGivesEveryColdRunTheDatabaseAsSetupLeftIt) {
  config(k_migrate + k_read, "{ runs: 3, warm: 1, isolation: run }");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;  // no committed snapshot
  Results res = results();
  EXPECT_EQ(res.warnings, std::vector<std::string>{});
  // Each of its cold runs found the table without the column, and its plan run too.
  const StageResult& migrate = stage(res, "migrate");
  EXPECT_EQ(migrate.error, "");
  ASSERT_NE(migrate.find("db_queries"), nullptr);
  EXPECT_EQ(migrate.find("db_queries")->cold, (std::vector<double>{2, 2, 2}));
  // The later stage reads what setup loaded, whatever the stage before it wrote.
  const StageResult& read = stage(res, "read");
  EXPECT_EQ(read.error, "");
  EXPECT_EQ(read.find("rows")->cold, (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(read.find("rows")->warm, (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(read.find("db_rows")->cold, (std::vector<double>{1, 1, 1}));
  ASSERT_TRUE(read.snapshot);
  EXPECT_EQ(read.snapshot->status, SnapshotStatus::missing);
  EXPECT_EQ(candidate("read"), k_fifty);
  // pg_stat_statements keys its entries by database oid, which each copy changes; the query id
  // stays (a template copy keeps the relations' oids), so the runs' statements are one entry.
  ASSERT_EQ(read.queries.size(), 1u);
  EXPECT_EQ(read.queries[0].calls, 1);
  ASSERT_TRUE(read.queries[0].plan);  // the plan run's statement resolved on its own copy
  // A copy after each run that wrote, none after a read.
  EXPECT_EQ(copies(r.err), (std::vector<std::string>{"migrate: cold run 2/3", "migrate: cold run 3/3",
                                                     "migrate: the plan run", "read: cold run 1/3"}))
      << r.err;
  EXPECT_EQ(migrate.isolation, "run");
  EXPECT_EQ(read.isolation, "run");
}

TEST_F(Isolation, NoneLetsAStageChangeWhatItsOwnNextRunAndTheLaterStagesFind) {
  // The same config without isolation: the figures depend on the order of runs and stages.
  config(k_migrate + k_read, "{ runs: 3, warm: 1, isolation: none }");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  Results res = results();
  const StageResult& migrate = stage(res, "migrate");
  EXPECT_NE(migrate.error.find("cold run 2/3: exit status 1"), std::string::npos)
      << migrate.error;
  EXPECT_NE(migrate.error.find("column \"note\" of relation \"item\" already exists"),
            std::string::npos)
      << migrate.error;
  const StageResult& read = stage(res, "read");
  EXPECT_EQ(read.isolation, "none");
  EXPECT_EQ(read.find("rows")->cold, (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(read.find("db_rows")->cold, (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(candidate("read"), k_fifty_one);
}

TEST_F(Isolation, StageGivesEachStageOneCopyThatItsRunsShare) {
  const std::string grow =
      "  - name: grow\n"
      "    query: insert into item select max(id) + 1, 'grown', 0 from item returning id\n"
      "    snapshot: true\n";
  config(grow + k_read, "{ runs: 2, warm: 0, isolation: stage }");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  Results res = results();
  // Its second run found the first one's row.
  const StageResult& g = stage(res, "grow");
  ASSERT_TRUE(g.snapshot);
  EXPECT_EQ(g.snapshot->status, SnapshotStatus::nondeterministic);
  EXPECT_EQ(g.snapshot->message,
            "cold runs 1 and 2 loaded different documents: first difference at /0/id (1 path "
            "differs)");
  // The next stage got a copy of its own, as setup left it.
  const StageResult& read = stage(res, "read");
  EXPECT_EQ(read.isolation, "stage");
  EXPECT_EQ(read.find("rows")->cold, (std::vector<double>{1, 1}));
  EXPECT_EQ(candidate("read"), k_fifty);

  // The same stage under `run`: both runs insert the same row.
  config(grow + "    isolation: run\n" + k_read, "{ runs: 2, warm: 0, isolation: stage }");
  r = run();
  res = results();
  EXPECT_EQ(stage(res, "grow").snapshot->status, SnapshotStatus::missing);
  EXPECT_EQ(candidate("grow"), "[\n  {\n    \"id\": 51\n  }\n]\n");
}

TEST_F(Isolation, ACopyIsMadeOnlyAfterARunThatChangedTheDatabase) {
  // A copy is a new database: a new oid.
  const std::string oid = "(select oid::text from pg_database where datname = current_database())";
  config("  - name: reader\n"
         "    query: select " + oid + " as db\n"
         "    runs: 3\n"
         "    snapshot: true\n"
         "  - name: restarted\n"
         "    query: select " + oid + " as db\n"
         "    cold: restart\n"
         "    snapshot: true\n"
         "  - name: writer\n"
         "    query: insert into item select max(id) + 1, " + oid + ", 0 from item returning id, name\n"
         "    snapshot: true\n",
         "{ runs: 2, warm: 0, isolation: run }");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  Results res = results();
  // Reading changed nothing: its runs (and its plan run) found the one database, across
  // restarts too.
  EXPECT_EQ(stage(res, "reader").snapshot->status, SnapshotStatus::missing);
  EXPECT_EQ(stage(res, "restarted").snapshot->status, SnapshotStatus::missing);
  EXPECT_EQ(candidate("restarted"), candidate("reader"));
  EXPECT_EQ(copies(r.err), (std::vector<std::string>{"writer: cold run 2/2", "writer: the plan run"}))
      << r.err;
  // Each of the writer's runs got a copy of its own, with what setup loaded.
  const StageResult& w = stage(res, "writer");
  EXPECT_EQ(w.snapshot->status, SnapshotStatus::nondeterministic);
  EXPECT_EQ(w.snapshot->message,
            "cold runs 1 and 2 loaded different documents: first difference at /0/name (1 path "
            "differs)");
  // Its first run needed none: the reader had left the database as setup did.
  const std::string reader = candidate("reader");
  const std::string key = "\"db\": \"";
  const auto at = reader.find(key) + key.size();
  const std::string setup_oid = reader.substr(at, reader.find('"', at) - at);
  EXPECT_NE(w.snapshot->diff.find("-    \"name\": \"" + setup_oid + "\""), std::string::npos)
      << w.snapshot->diff;
}

// Under `ab` both sides keep a template on one server, so one side's copy takes transaction ids
// while the other side's database is unchanged: those are coldgate's own, not a run's write.
// A stage that only reads gets no copy on either side; one that writes gets one before each of
// its later runs on both.
TEST_F(Isolation, UnderAbOneSidesCopyIsNotAWriteToTheOther) {
  config("  - name: read\n"
         "    query: select id, name from item where id > 49 order by id\n"
         "    runs: 3\n"
         "  - name: writer\n"
         "    query: insert into item select max(id) + 1, 'w', 0 from item returning 1 as one\n",
         "{ runs: 2, warm: 0, isolation: run }");
  // Gated on a count, so that the verdict (an A/A: exit 0) does not hang on the machine's speed.
  dir.write("coldgate.yaml", slurp(dir / "coldgate.yaml") + "gate: { metrics: [db_queries] }\n");
  dir.write(".gitignore", "coldgate-out/\nsnapshots/\n");
  testing::run_git(dir.path(), {"init", "-q"});
  testing::run_git(dir.path(), {"add", "-A"});
  testing::run_git(dir.path(), {"commit", "-q", "-m", "base"});
  const std::string base = testing::run_git(dir.path(), {"rev-parse", "HEAD"});
  dir.write("README.md", "docs only\n");
  testing::run_git(dir.path(), {"add", "-A"});
  testing::run_git(dir.path(), {"commit", "-q", "-m", "head: docs"});
  auto r = run_coldgate({"ab", "--base", base, "--allow-no-baseline"}, dir.path(), "",
                        {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_HEAD_REF="});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // None for `read`, on either side.
  std::vector<std::string> got = copies(r.err);
  // Base run i, then head run i: base's first write is base's, so head's first run needs none.
  EXPECT_EQ(got, (std::vector<std::string>{"base: writer: cold run 2/2", "head: writer: cold run 2/2",
                                            "base: writer: the plan run", "head: writer: the plan run"}))
      << r.err;
}

// The pull request makes a read-only stage write: its runs on head take transaction ids
// between base's runs, which are base's side's no write. Base's database stays as it was, so
// base gets no copy between its cold runs (nor for its plan run); head one before each run
// after its first.
TEST_F(Isolation, UnderAbTheOtherSidesWritesAreNoWriteToAReadOnlyStage) {
  config("  - name: probe\n"
         "    query: select count(*) as n from item\n"
         "    runs: 3\n",
         "{ warm: 0, isolation: run }");
  dir.write("coldgate.yaml", slurp(dir / "coldgate.yaml") + "gate: { metrics: [db_queries] }\n");
  dir.write(".gitignore", "coldgate-out/\nsnapshots/\n");
  testing::run_git(dir.path(), {"init", "-q"});
  testing::run_git(dir.path(), {"add", "-A"});
  testing::run_git(dir.path(), {"commit", "-q", "-m", "base"});
  const std::string base = testing::run_git(dir.path(), {"rev-parse", "HEAD"});
  std::string yaml = slurp(dir / "coldgate.yaml");
  const std::string read = "select count(*) as n from item";
  yaml.replace(yaml.find(read), read.size(),
               "insert into item select max(id) + 1, 'w', 0 from item returning 1 as n");
  dir.write("coldgate.yaml", yaml);
  testing::run_git(dir.path(), {"commit", "-q", "-am", "head: the stage writes"});
  auto r = run_coldgate({"ab", "--base", base, "--allow-no-baseline"}, dir.path(), "",
                        {"CI=", "GITHUB_ACTIONS=", "GITHUB_BASE_REF=", "GITHUB_HEAD_REF="});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(copies(r.err), (std::vector<std::string>{"head: probe: cold run 2/3",
                                                      "head: probe: cold run 3/3",
                                                      "head: probe: the plan run"}))
      << r.err;
}

TEST_F(Isolation, ACopyKeepsTheDatabasesSettings) {
  // Set by setup for the database and for the role in it: TEMPLATE copies neither.
  dir.write("settings.sql",
            "ALTER DATABASE coldgate SET work_mem = '3MB';\n"
            "ALTER ROLE CURRENT_USER IN DATABASE coldgate SET search_path = app, \"$user\", public;\n"
            "CREATE SCHEMA app;\n");
  // It writes, so its second run gets a copy: the same row (51) and the same settings.
  config("  - name: settings\n"
         "    query: insert into item select max(id) + 1, 'new', 0 from item returning id, "
         "current_setting('work_mem') as work_mem, current_setting('search_path') as "
         "search_path\n"
         "    snapshot: true\n",
         "{ runs: 2, warm: 0, isolation: run }", "{ provider: local }", ", { sql: settings.sql }");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  Results res = results();
  EXPECT_EQ(stage(res, "settings").error, "");
  EXPECT_EQ(stage(res, "settings").snapshot->status, SnapshotStatus::missing);  // not differing
  EXPECT_EQ(candidate("settings"),
            "[\n  {\n    \"id\": 51,\n    \"search_path\": \"app, \\\"$user\\\", public\",\n"
            "    \"work_mem\": \"3MB\"\n  }\n]\n");
}

// ---------------------------------------------------------------------------------------------
// An external server: nothing coldgate made outlives the run

struct ExternalIsolation : Isolation {
  void SetUp() override { url = testing::fresh_database(k_db).url(); }
  // Runs `statement` in `database` as the suite's superuser.
  pqxx::result sql(const std::string& statement, const std::string& database = "postgres") {
    db::Connection conn(testing::shared_cluster().socket_info(database));
    return conn.exec(statement);
  }
  // The databases of the cluster whose name starts with the test's.
  std::vector<std::string> databases() {
    std::vector<std::string> out;
    for (const auto& row : sql("SELECT datname FROM pg_database WHERE datname LIKE '" +
                               std::string(k_db) + "%' ORDER BY 1")) {
      out.push_back(row[0].c_str());
    }
    return out;
  }
  static constexpr const char* k_db = "coldgate_isolation";
  std::string url;
};

TEST_F(ExternalIsolation, NoTemplateOrCopyIsLeftAfterARunOrAFailingStage) {
  config(k_migrate + k_read +
             "  - name: broken\n"
             "    query: select 1/0\n",
         "{ runs: 2, warm: 0, isolation: run }", "{ provider: external, url: '" + url + "' }");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  Results res = results();
  EXPECT_EQ(res.warnings, std::vector<std::string>{});
  EXPECT_EQ(stage(res, "migrate").error, "");
  EXPECT_EQ(candidate("read"), k_fifty);
  EXPECT_NE(stage(res, "broken").error.find("division by zero"), std::string::npos);
  EXPECT_EQ(databases(), std::vector<std::string>{k_db});
  // The database the URL names is still there, as the last run left it.
  EXPECT_EQ(std::string(sql("SELECT count(*) FROM item", k_db)[0][0].c_str()), "50");
}

TEST_F(ExternalIsolation, ARoleWithoutCreatedbGetsOneNoteAndTheStagesShareTheDatabase) {
  sql("DROP ROLE IF EXISTS coldgate_plain");
  sql("CREATE ROLE coldgate_plain LOGIN PASSWORD 'plain-pw'");
  sql(std::string("ALTER DATABASE ") + k_db + " OWNER TO coldgate_plain");
  db::ConnectionInfo info = db::ConnectionInfo::parse(url, "url");
  info.user = "coldgate_plain";
  info.password = "plain-pw";
  config(k_migrate + k_read, "{ runs: 1, warm: 0 }",
         "{ provider: external, url: '" + info.url() + "' }");
  auto r = run();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  Results res = results();
  const std::string note =
      "isolation: role coldgate_plain may not create databases, so each cold run cannot get a "
      "fresh copy of coldgate_isolation: the stages share one database in their order "
      "(isolation: none); to isolate them, ALTER ROLE coldgate_plain CREATEDB";
  EXPECT_EQ(res.warnings, std::vector<std::string>{note});
  EXPECT_NE(r.err.find("note: " + note), std::string::npos) << r.err;
  EXPECT_EQ(stage(res, "migrate").error, "");
  EXPECT_EQ(candidate("read"), k_fifty_one);  // it saw what migrate wrote
  EXPECT_EQ(stage(res, "read").isolation, "none");
  EXPECT_EQ(copies(r.err), std::vector<std::string>{});
  EXPECT_EQ(databases(), std::vector<std::string>{k_db});

  // What the note says to do is enough.
  sql("ALTER ROLE coldgate_plain CREATEDB");
  sql(std::string("DROP DATABASE ") + k_db + " WITH (FORCE)");
  url = testing::fresh_database(k_db).url();
  sql(std::string("ALTER DATABASE ") + k_db + " OWNER TO coldgate_plain");
  r = run();
  res = results();
  EXPECT_EQ(res.warnings, std::vector<std::string>{});
  EXPECT_EQ(candidate("read"), k_fifty);
  EXPECT_EQ(databases(), std::vector<std::string>{k_db});
  sql(std::string("DROP DATABASE ") + k_db + " WITH (FORCE)");
  sql("DROP ROLE coldgate_plain");
}

}  // namespace
}  // namespace coldgate::measure
