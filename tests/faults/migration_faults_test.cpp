// Faults while `coldgate ab` measures a pull request's migration on a copy of base's data
// (local provider): SIGINT while the migration runs ends ab with 130 and leaves nothing — no
// process, no cluster, no temp folder; a migration stuck behind a lock is ended at
// defaults.timeout and reported with the lock it waited for.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/faults.hpp"
#include "support/support.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

struct MigrationFaults : ::testing::Test {
  void SetUp() override {
    make_server_tmpdir(dir, tmp);
    fs::create_directories(repo);
    dir.write("repo/schema.sql",
              "CREATE TABLE orders (id bigserial PRIMARY KEY, amount int NOT NULL);\n"
              "INSERT INTO orders (amount) SELECT g % 97 FROM generate_series(1, 20000) g;\n");
    dir.write("repo/.gitignore", "coldgate-out/\nstdout-*.txt\nstderr-*.txt\n");
  }
  // Base: schema.sql as setup; head: `migrate_yaml` added, its migration what ab measures.
  void commits(const std::string& migrate_yaml) {
    const std::string config =
        "version: 1\n"
        "database: { provider: local }\n"
        "setup: [ { sql: schema.sql } ]\n"
        "defaults: { runs: 1, warm: 0, timeout: 3s }\n"
        "gate: { migration: { lock_timeout: off } }\n"
        "stages:\n"
        "  - name: orders\n"
        "    query: SELECT count(*) AS n FROM orders\n";
    dir.write("repo/coldgate.yaml", config);
    run_git(repo, {"init", "-q"});
    run_git(repo, {"add", "-A"});
    run_git(repo, {"commit", "-qm", "base"});
    run_git(repo, {"checkout", "-qb", "head"});
    dir.write("repo/coldgate.yaml", config + migrate_yaml);
    run_git(repo, {"add", "-A"});
    run_git(repo, {"commit", "-qm", "head: a migration"});
  }
  Running start() {
    return start_coldgate(repo, tmp, {"ab", "--base", "base"},
                          {"XDG_CACHE_HOME=" + (dir / "cache").string(), "GITHUB_BASE_REF=",
                           "GITHUB_HEAD_REF="});
  }
  // A process of this test whose command line names `needle`.
  bool runs(const std::string& needle) {
    for (pid_t pid : all_pids()) {
      const std::string line = joined(argv_of(pid));
      if (line.find(needle) != std::string::npos && line.find("gtest") == std::string::npos) return true;
    }
    return false;
  }
  TempDir dir;
  fs::path tmp = dir / "tmp";
  fs::path repo = dir / "repo";
};

TEST_F(MigrationFaults, SigintWhileTheMigrationRunsEndsAbWith130AndLeavesNothing) {
  dir.write("repo/db/002_sleep.sql", "SELECT pg_sleep(60);\n");
  commits("migrate: { sql_dir: db }\n");
  Running r = start();
  // psql applies the migration's file on the copy: the migration is running.
  ASSERT_TRUE(wait_for([&] { return runs("002_sleep.sql"); }, 120s)) << read_all(r.err);
  ::kill(r.process->pid(), SIGINT);
  std::string err;
  EXPECT_EQ(r.finish(&err), 130) << err;
  EXPECT_NE(err.find("interrupted by SIGINT during migrate"), std::string::npos) << err;
  wait_for([&] { return processes_under(dir.path()).empty(); }, 15s);
  expect_nothing_left(dir.path(), tmp, "SIGINT during the migration");
}

// The migration's own second session waits for the ACCESS EXCLUSIVE lock its first holds: it
// can never finish. At defaults.timeout (3 s) ab ends its sessions and says what it waited for.
TEST_F(MigrationFaults, AMigrationStuckBehindALockIsEndedAtTheTimeoutNamingTheLock) {
  dir.write("repo/migrate.sh",
            "#!/bin/sh\n"
            "psql -X -q -c 'BEGIN; LOCK TABLE orders; SELECT pg_sleep(600)' &\n"
            "until psql -X -tA -c \"SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = "
            "l.relation WHERE c.relname = 'orders' AND l.mode = 'AccessExclusiveLock' AND "
            "l.granted\" | grep -q 1; do sleep 0.1; done\n"
            "psql -X -q -c 'ALTER TABLE orders ADD COLUMN note text'\n");
  fs::permissions(repo / "migrate.sh", fs::perms::owner_all | fs::perms::group_read |
                                           fs::perms::group_exec | fs::perms::others_read |
                                           fs::perms::others_exec);
  commits("migrate: { command: [./migrate.sh] }\n");
  Running r = start();
  std::string err;
  EXPECT_EQ(r.finish(&err), 1) << err;
  EXPECT_NE(err.find("the migration ran past the timeout (3.00 s) and was ended: `ALTER TABLE "
                     "orders ADD COLUMN note text` waited for AccessExclusiveLock on orders, held "
                     "by pid"),
            std::string::npos)
      << err;
  wait_for([&] { return processes_under(dir.path()).empty(); }, 15s);
  expect_nothing_left(dir.path(), tmp, "a migration past its timeout");
}

}  // namespace
}  // namespace coldgate
