#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "db/connection.hpp"

namespace coldgate::db {

/// Size of pg_stat_statements' table on servers coldgate starts: far more statements than one
/// run of a stage issues, so no entry is evicted between the reset before a run and the read after.
inline constexpr int k_profile_max_statements = 10000;

/// `settings` (a server's `-c name=value` list) with what the server-side profile needs
/// (pg_stat_statements docs, "Configuration Parameters"): shared_preload_libraries gains
/// pg_stat_statements after the user's own libraries, which are kept; compute_query_id = on,
/// pg_stat_statements.track_planning = on, pg_stat_statements.max = k_profile_max_statements
/// and track_io_timing = on unless the user set them.
std::map<std::string, std::string> with_profile_settings(std::map<std::string, std::string> settings);

/// One statement fingerprint's totals from pg_stat_statements (PostgreSQL 15 columns; times in
/// ms, as the view gives them).
struct StatementStats {
  std::int64_t queryid = 0;
  std::string query;  // normalized text ($1 for constants), as the view shows it
  double calls = 0;
  double rows = 0;
  double plan_ms = 0;  // total_plan_time (0 unless pg_stat_statements.track_planning)
  double exec_ms = 0;  // total_exec_time: JIT compilation included
  double jit_functions = 0;
  double jit_generation_ms = 0;
  double jit_inlining_ms = 0;
  double jit_optimization_ms = 0;
  double jit_emission_ms = 0;
  double shared_hit_blocks = 0;
  double shared_read_blocks = 0;
  /// Generation, inlining, optimization and emission together.
  double jit_ms() const {
    return jit_generation_ms + jit_inlining_ms + jit_optimization_ms + jit_emission_ms;
  }
};

/// Makes the connected database ready to be profiled: creates the extension when `create` (a
/// server coldgate started) and checks that the view answers, that query ids are computed and
/// that this role may reset the view. Returns "" when it can be profiled, else one line saying
/// why not and what to do (shared_preload_libraries, CREATE EXTENSION, pg_read_all_stats…).
/// Throws Error(infrastructure) only when the connection is lost.
std::string prepare_profile(Connection& conn, bool create);

/// Forgets the statistics of the connected database's statements
/// (pg_stat_statements_reset(0, <this database>, 0)). Throws pqxx errors (callers say where).
void reset_profile(pqxx::connection& conn);

/// The connected database's statements since the last reset_profile(), leaving out coldgate's
/// own bookkeeping (statements that read or reset pg_stat_statements) and any statement whose
/// normalized text is in `exclude` (the probe's BEGIN, COMMIT and settings); by time (plan +
/// execution), biggest first. Throws pqxx errors (callers say where).
std::vector<StatementStats> read_profile(pqxx::connection& conn,
                                         const std::vector<std::string>& exclude = {});

}  // namespace coldgate::db
