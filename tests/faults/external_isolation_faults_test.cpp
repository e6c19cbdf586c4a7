// What a SIGKILLed coldgate leaves of the databases it makes on a server that outlives it — the
// suite's cluster as an `external` server — and what the next command puts right before it
// connects to the user's database: `isolation:`'s copy made again in the database's place, and
// a data scale's database (`scales:`). The real binary; pg_database and pg_stat_activity read
// by the test, which holds locks on the server so that coldgate's statement waits where the
// kill lands.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "db/database_template.hpp"
#include "db/pqxx_compat.hpp"
#include "support/cluster.hpp"
#include "support/faults.hpp"
#include "support/support.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

struct ExternalIsolationFaults : ::testing::Test {
  void use(const std::string& name) {
    url = fresh_database(name).url();
    db = name;
  }
  void write(const std::string& file, const std::string& rest) {
    f.dir.write(file, "version: 1\n"
                      "database: { provider: external, url: \"${TEST_DB_URL}\" }\n" +
                          rest);
  }
  Running start(const std::vector<std::string>& args) {
    return f.start(args, {"TEST_DB_URL=" + url});
  }
  int run(const std::vector<std::string>& args, std::string* err) {
    Running r = start(args);
    return r.finish(err);
  }
  static db::Connection admin() { return db::Connection(shared_cluster().socket_info("postgres")); }
  // Databases on the server whose name starts with `prefix`, sorted.
  static std::vector<std::string> databases(const std::string& prefix) {
    std::vector<std::string> out;
    for (const auto& row : admin().exec_params(
             "SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY 1", {prefix})) {
      out.push_back(row[0].c_str());
    }
    return out;
  }
  // Whether `name` exists and takes a connection (datallowconn, and a real connect).
  static bool connectable(const std::string& name) {
    auto rows = admin().exec_params("SELECT datallowconn FROM pg_database WHERE datname = $1", {name});
    if (rows.empty() || !rows[0][0].as<bool>()) return false;
    db::Connection conn(shared_cluster().socket_info(name));
    return conn.exec("SELECT 1")[0][0].as<int>() == 1;
  }
  // Backends other than the test's own that wait for a lock while running a statement LIKE
  // `pattern`, as their PIDs.
  static std::vector<int> waiting(const std::string& pattern) {
    std::vector<int> out;
    for (const auto& row : admin().exec_params(
             "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
             "ltrim(query) LIKE $1 AND pid <> pg_backend_pid()",
             {pattern})) {
      out.push_back(row[0].as<int>());
    }
    return out;
  }
  static bool backend_gone(int pid) {
    return admin()
        .exec_params("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", {std::to_string(pid)})[0][0]
        .as<int>() == 0;
  }

  FaultFolder f;
  std::string url, db;
};

// `isolation: run` makes the stages' database again before cold run 2 (run 1 wrote: its
// COMMENT takes a transaction id). From the moment run 1 is measured the test holds an update
// of that database's row in pg_database (ALTER DATABASE … CONNECTION LIMIT in an open
// transaction), so the statement that takes its name away or swaps it — DROP DATABASE before,
// ALTER DATABASE … RENAME now — waits on that row; coldgate is SIGKILLed while it waits, then
// the test's transaction is rolled back and the orphaned backend finishes what it was at.
TEST_F(ExternalIsolationFaults, ASigkillWhileTheDatabaseIsMadeAgainLeavesItUnderItsOwnName) {
  use("coldgate_iso_kill");
  {
    auto a = admin();
    a.exec("DO $$ BEGIN CREATE ROLE coldgate_iso_gate NOLOGIN; "
           "EXCEPTION WHEN duplicate_object THEN NULL; END $$");
  }
  f.dir.write("t.sql",
              "create table if not exists t as select generate_series(1, 1000) as i;\n"
              "create or replace function gate() returns int language plpgsql as $$ begin "
              "execute 'comment on role coldgate_iso_gate is ''run'''; return 1; end $$;\n");
  // Cold run 1 waits for the test's lock on the role (its COMMENT), and writes.
  write("kill.yaml", "defaults: { runs: 3, warm: 0, isolation: run }\n"
                     "setup: [ { sql: t.sql } ]\n"
                     "stages: [ { name: app, query: 'select gate(), count(*) from t' } ]\n");

  db::Connection gate = admin();
  pqxx::work gate_tx(gate.raw());
  gate_tx.exec("COMMENT ON ROLE coldgate_iso_gate IS 'held by the test'");

  Running r = start({"run", "-c", "kill.yaml"});
  ASSERT_TRUE(wait_for([&] { return !waiting("%gate()%").empty() || r.process->wait_exited(0ms); },
                       120s));
  ASSERT_FALSE(r.process->wait_exited(0ms)) << read_all(r.err);
  EXPECT_EQ(databases(db + "_cg_").size(), 1u) << "the template, made before cold run 1";

  db::Connection hold = admin();
  pqxx::work hold_tx(hold.raw());
  hold_tx.exec("ALTER DATABASE " + hold_tx.quote_name(db) + " CONNECTION LIMIT -1");
  gate_tx.abort();  // cold run 1 goes on, then making the database again waits for `hold`

  int backend = 0;
  Delivered d = deliver_at(
      r,
      [&] {
        for (const char* s : {"DROP DATABASE%", "ALTER DATABASE%"}) {
          auto pids = waiting(s);
          if (!pids.empty()) backend = pids[0];
        }
        return backend != 0;
      },
      SIGKILL, "SIGKILL while the stages' database is made again for cold run 2");
  ASSERT_TRUE(d.reached) << d.err;
  EXPECT_EQ(d.code, 128 + SIGKILL);
  hold_tx.abort();
  ASSERT_TRUE(wait_for([&] { return backend_gone(backend); }, 60s))
      << "the killed run's backend, once the lock is let go";

  EXPECT_TRUE(connectable(db)) << "the user's database under its own name, right after the kill";
  EXPECT_FALSE(databases(db + "_cg_").empty()) << "what the killed run left, for the next run";

  std::string err;
  EXPECT_EQ(run({"run", "-c", "kill.yaml"}, &err), 0) << err;  // the role is free: no wait
  EXPECT_NE(err.find("coldgate: repaired what a killed coldgate command left on the server: dropped "
                     "database"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(db + "_cg_"), std::string::npos) << err;
  EXPECT_NE(read_all(f.dir / "coldgate-out" / "results.json").find("\"isolation\": \"run\""),
            std::string::npos)
      << "the next run made the database again before its cold runs";
  EXPECT_TRUE(connectable(db));
  EXPECT_EQ(list(databases(db + "_cg_")), " none");
  EXPECT_EQ(admin().exec("SELECT count(*) FROM pg_database WHERE "
                         "starts_with(shobj_description(oid, 'pg_database'), 'coldgate')")[0][0]
                .as<int>(),
            0);
  f.expect_nothing_left("after the next run");
  admin().exec("DROP ROLE IF EXISTS coldgate_iso_gate");
}

// What a coldgate that dropped the database before it made it again could leave: the database
// missing, its template under `<db>_cg_<pid>_<hex>` with connections not allowed and a dead
// owner in its comment. The next run puts it back before it connects, and says so.
TEST_F(ExternalIsolationFaults, ADatabaseLeftUnderItsTemplatesNameIsRenamedBackBeforeTheRun) {
  use("coldgate_iso_left");
  const std::string tmpl = db + "_cg_" + std::to_string(dead_pid()) + "_fc296a";
  const std::string tag = std::regex_replace(db::owner_tag(), std::regex("pid=\\d+"),
                                             "pid=" + std::to_string(dead_pid()));
  {
    auto a = admin();
    a.exec("ALTER DATABASE " + a.raw().quote_name(db) + " RENAME TO " + a.raw().quote_name(tmpl));
    a.exec("ALTER DATABASE " + a.raw().quote_name(tmpl) + " WITH ALLOW_CONNECTIONS false");
    a.exec("COMMENT ON DATABASE " + a.raw().quote_name(tmpl) + " IS " +
           a.raw().quote(std::string(db::k_template_comment) + db + "\nowner: " + tag));
  }
  write("quick.yaml", "stages: [ { name: q, query: 'select 1' } ]\n");
  std::string err;
  EXPECT_EQ(run({"run", "-c", "quick.yaml"}, &err), 0) << err;
  EXPECT_NE(err.find("coldgate: repaired what a killed coldgate command left on the server: database " +
                     db + " renamed back from " + tmpl + ", connections allowed again"),
            std::string::npos)
      << err;
  EXPECT_TRUE(connectable(db));
  EXPECT_EQ(list(databases(db + "_cg_")), " none");
  f.expect_nothing_left("after the run");
}

// A data scale's database is owned from the moment it exists: SIGKILLed during scale 4's
// setup, the next run on that server — one without `scales:` — drops it.
TEST_F(ExternalIsolationFaults, AScaleDatabaseLeftByASigkilledRunIsDroppedByTheNextRun) {
  use("coldgate_iso_scale");
  write("scale.yaml",
        "scales: [1, 4]\n"
        "defaults: { runs: 1, warm: 0 }\n"
        "setup: [ { command: [sh, -c, 'if [ \"$COLDGATE_SCALE\" = 4 ]; then touch scale4.started; "
        "exec sleep 60; fi'] } ]\n"
        "stages: [ { name: q, query: 'select 1' } ]\n");
  write("quick.yaml", "stages: [ { name: q, query: 'select 1' } ]\n");
  Running r = start({"run", "-c", "scale.yaml"});
  Delivered d = deliver_at(
      r,
      [&] { return fs::exists(f.dir / "scale4.started") && children_recorded(r.process->pid(), f.tmp); },
      SIGKILL, "SIGKILL during scale 4's setup");
  ASSERT_TRUE(d.reached) << d.err;
  EXPECT_EQ(d.code, 128 + SIGKILL);
  const std::string scale_db = db + "_scale4";
  auto comment = admin().exec_params(
      "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = $1",
      {scale_db});
  ASSERT_EQ(comment.size(), 1u) << "the killed run's scale database";
  EXPECT_TRUE(std::string(comment[0][0].c_str()).starts_with(db::k_owned_comment))
      << comment[0][0].c_str();

  std::string err;
  EXPECT_EQ(run({"run", "-c", "quick.yaml"}, &err), 0) << err;
  const auto said = err.find("coldgate: repaired what a killed coldgate command left on the server: "
                             "dropped database");
  ASSERT_NE(said, std::string::npos) << err;
  EXPECT_NE(err.substr(said, err.find('\n', said) - said).find(scale_db), std::string::npos) << err;
  EXPECT_EQ(list(databases(scale_db)), " none");
  EXPECT_EQ(list(databases(db + "_cg_")), " none");
  f.expect_nothing_left("after the next run (the killed setup command too)");
}

}  // namespace
}  // namespace coldgate
