#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/connection.hpp"
#include "util/statement_text.hpp"

namespace coldgate::db {

/// Size of pg_stat_statements' table on servers coldgate starts: far more statements than one
/// run of a stage issues, so no entry is evicted between the reset before a run and the read after.
inline constexpr int k_profile_max_statements = 10000;

/// Oldest major the server-side profile reads: compute_query_id and pg_stat_statements'
/// `toplevel` column come with PostgreSQL 14 (release notes of 14).
inline constexpr int k_profile_min_major = 14;
/// Oldest major whose pg_stat_statements has the jit_* columns (pg_stat_statements 1.10, 15).
inline constexpr int k_profile_jit_major = 15;

/// `settings` (a server's `-c name=value` list) with what the server-side profile needs
/// (pg_stat_statements docs, "Configuration Parameters"): shared_preload_libraries gains
/// pg_stat_statements after the user's own libraries, which are kept; compute_query_id = on,
/// pg_stat_statements.track_planning = on, pg_stat_statements.max = k_profile_max_statements
/// and track_io_timing = on unless the user set them. `major` is the server's major version
/// (0 = not known: taken as supported); below k_profile_min_major, where the server would
/// refuse compute_query_id at start-up, `settings` comes back unchanged.
/// With `plans`, auto_explain is preloaded too, switched off (log_min_duration -1 unless the
/// user set it) and set up for coldgate's plan runs (auto_explain docs: log_analyze, log_buffers
/// and log_verbose on, log_timing off, log_format json, log_nested_statements on), so that a
/// database-level auto_explain.log_min_duration = 0 captures the actual plans of one run.
std::map<std::string, std::string> with_profile_settings(std::map<std::string, std::string> settings,
                                                         int major = 0, bool plans = false);

/// True when the server binaries in `bindir` have auto_explain (its library beside them:
/// ../lib/auto_explain.so as Debian installs it, or ../lib/postgresql/auto_explain.so).
bool has_auto_explain(const std::filesystem::path& bindir);

/// One statement fingerprint's totals from pg_stat_statements (times in ms, as the view gives
/// them; the jit_* figures are 0 before PostgreSQL 15, whose view has no such columns).
struct StatementStats {
  std::int64_t queryid = 0;
  std::string query;  // normalized text ($1 for constants), as the view shows it
  /// 16 hex digits of the SHA-256 of the whole `query`, kept when `query` is shortened
  /// (measure::shorten_keeping_id); "" while `query` is the whole text.
  std::string text_id;
  /// How the whole `query` uses its parameters, read before it is shortened (by
  /// measure::shorten_keeping_id); nullopt while `query` is the whole text.
  std::optional<util::ParameterUse> parameters;
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

/// What prepare_profile() found: whether the stages can be profiled, and what to tell the user.
struct ProfileReadiness {
  /// Why the stages get no server-side profile, one line with what to do; "" when they do.
  std::string off;
  /// What the profile cannot show on this server although it runs ("JIT figures need
  /// PostgreSQL 15", "no JIT support"), one line; "" when nothing is missing.
  std::string limit;
  bool ready() const { return off.empty(); }
};

/// Makes the connected database ready to be profiled: creates the extension when `create` (a
/// server coldgate started) and checks the server's version, that the view answers, that query
/// ids are computed, that this role may reset the view (the installed extension's own
/// pg_stat_statements_reset signature) and whether the server has JIT (pg_jit_available()).
/// Never fails a run over the profile: any SQL failure on the way becomes `off`. Throws
/// Error(infrastructure) or Error(interrupted) only when the connection is lost or the command
/// is interrupted.
ProfileReadiness prepare_profile(Connection& conn, bool create);

/// Forgets the statistics of the connected database's statements
/// (pg_stat_statements_reset(0, <this database>, 0)). Throws pqxx errors (callers say where).
void reset_profile(pqxx::connection& conn);

/// The connected database's statements since the last reset_profile() (the jit_* columns read
/// only from PostgreSQL 15 on), leaving out coldgate's own bookkeeping (statements that read or
/// reset pg_stat_statements) and any statement whose
/// normalized text is in `exclude` (the probe's BEGIN, COMMIT and settings); by time (plan +
/// execution), biggest first. Throws pqxx errors (callers say where).
std::vector<StatementStats> read_profile(pqxx::connection& conn,
                                         const std::vector<std::string>& exclude = {});

}  // namespace coldgate::db
