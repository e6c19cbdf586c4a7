#include "db/profile.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "util/error.hpp"

namespace coldgate::db {
namespace {

constexpr const char* k_extension = "pg_stat_statements";

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t\""));
    item.erase(item.find_last_not_of(" \t\"") + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The query runs as one statement; a failure is returned as its message, never thrown, except a
// lost connection.
std::optional<std::string> failure_of(Connection& conn, const std::string& sql) {
  try {
    conn.exec(sql, "server-side profile");
    return std::nullopt;
  } catch (const Error& e) {
    if (e.code() == ExitCode::infrastructure || e.code() == ExitCode::interrupted) throw;
    return e.message();
  }
}

}  // namespace

bool has_auto_explain(const std::filesystem::path& bindir) {
  std::error_code ec;
  return std::filesystem::exists(bindir / ".." / "lib" / "auto_explain.so", ec) ||
         std::filesystem::exists(bindir / ".." / "lib" / "postgresql" / "auto_explain.so", ec);
}

std::map<std::string, std::string> with_profile_settings(std::map<std::string, std::string> settings,
                                                         int major, bool plans) {
  if (major > 0 && major < k_profile_min_major) return settings;
  std::vector<std::string> libraries = split_list(settings["shared_preload_libraries"]);
  if (std::find(libraries.begin(), libraries.end(), k_extension) == libraries.end())
    libraries.emplace_back(k_extension);
  if (plans) {
    if (std::find(libraries.begin(), libraries.end(), "auto_explain") == libraries.end())
      libraries.emplace_back("auto_explain");
    settings.try_emplace("auto_explain.log_min_duration", "-1");
    settings["auto_explain.log_analyze"] = "on";
    settings["auto_explain.log_buffers"] = "on";
    settings["auto_explain.log_timing"] = "off";
    settings["auto_explain.log_verbose"] = "on";
    settings["auto_explain.log_format"] = "json";
    settings["auto_explain.log_nested_statements"] = "on";
    settings["auto_explain.log_level"] = "log";
  }
  std::string joined;
  for (const auto& l : libraries) joined += (joined.empty() ? "" : ",") + l;
  settings["shared_preload_libraries"] = joined;
  settings.try_emplace("compute_query_id", "on");
  settings.try_emplace("pg_stat_statements.track_planning", "on");
  settings.try_emplace("pg_stat_statements.max", std::to_string(k_profile_max_statements));
  settings.try_emplace("track_io_timing", "on");
  return settings;
}

namespace {

// pg_jit_available() loads the JIT provider (LLVM) into the backend: 100-200 ms of every run's
// start. What it checks before loading — jit on, the provider's library in the server's library
// folder — a superuser can read without it (pg_config and pg_stat_file are a superuser's; a
// query that names them fails for another role even in a branch it does not take).
template <typename One>
bool jit_can_compile(const One& one) {
  if (one("SELECT current_setting('jit')") == "off") return false;
  if (one("SELECT rolsuper FROM pg_roles WHERE rolname = current_user") != "t")
    return one("SELECT pg_jit_available()") == "t";
  return one("SELECT (pg_stat_file((SELECT setting FROM pg_config WHERE name = 'PKGLIBDIR') || "
             "'/' || current_setting('jit_provider') || '.so', true)).size IS NOT NULL") == "t";
}

// The checks of prepare_profile(); SQL failures throw Error(gate_failed), which the caller
// turns into `off`.
ProfileReadiness check_profile(Connection& conn, bool create) {
  const std::string db = conn.info().dbname.empty() ? "the stage database" : conn.info().dbname;
  auto one = [&](const std::string& sql) {
    auto r = conn.exec(sql, "server-side profile");
    return r.empty() || r[0][0].is_null() ? std::string() : std::string(r[0][0].c_str());
  };
  ProfileReadiness out;
  const int version = std::stoi(one("SELECT current_setting('server_version_num')"));
  const int major = version / 10000;
  if (major < k_profile_min_major) {
    out.off = fmt::format("the server is PostgreSQL {}; the profile needs PostgreSQL {} or newer "
                          "(query ids, pg_stat_statements' toplevel column): the stages run "
                          "without it",
                          major, k_profile_min_major);
    return out;
  }
  if (create) failure_of(conn, fmt::format("CREATE EXTENSION IF NOT EXISTS {}", k_extension));
  if (one(fmt::format("SELECT count(*) FROM pg_extension WHERE extname = '{}'", k_extension)) ==
      "0") {
    // The library's own settings are listed once it is loaded (pg_settings leaves out the
    // placeholders of a library that is not): then only the extension is missing.
    if (one("SELECT count(*) FROM pg_settings WHERE name = 'pg_stat_statements.max'") != "0") {
      out.off = fmt::format("pg_stat_statements is loaded but not created in database {}: run "
                            "CREATE EXTENSION pg_stat_statements there as a role that may (a "
                            "superuser), or set database.profile: false",
                            db);
      return out;
    }
    out.off = fmt::format("pg_stat_statements is not installed in database {}: add it to the "
                          "server's shared_preload_libraries and run CREATE EXTENSION "
                          "pg_stat_statements there (or set database.profile: false)",
                          db);
    return out;
  }
  if (auto err = failure_of(conn, "SELECT count(*) FROM pg_stat_statements")) {
    out.off = fmt::format("pg_stat_statements does not answer in database {} ({}): add it to "
                          "the server's shared_preload_libraries and restart it",
                          db, err->substr(0, err->find('\n')));
    return out;
  }
  if (one("SELECT current_setting('compute_query_id')") == "off") {
    out.off = "the server computes no query ids (compute_query_id = off): set it to auto or on";
    return out;
  }
  // The reset coldgate calls, pg_stat_statements_reset(userid, dbid, queryid), has a fourth
  // argument with a default from extension version 1.11 (PostgreSQL 17): ask about the
  // signature the installed version has, and name that one in the advice.
  auto reset = conn.exec(
      fmt::format("SELECT p.oid::regprocedure::text, has_function_privilege(p.oid, 'EXECUTE') "
                  "FROM pg_proc p JOIN pg_extension e ON e.extname = '{}' AND p.pronamespace = "
                  "e.extnamespace WHERE p.proname = 'pg_stat_statements_reset' AND p.pronargs "
                  ">= 3 ORDER BY p.pronargs DESC LIMIT 1",
                  k_extension),
      "server-side profile");
  if (reset.empty()) {
    out.off = fmt::format("the pg_stat_statements extension in database {} has no "
                          "pg_stat_statements_reset(userid, dbid, queryid …): update it with "
                          "ALTER EXTENSION pg_stat_statements UPDATE",
                          db);
    return out;
  }
  if (std::string(reset[0][1].c_str()) != "t") {
    out.off = fmt::format("role {0} may not reset pg_stat_statements: GRANT EXECUTE ON FUNCTION "
                          "{1} TO {0}, and GRANT pg_read_all_stats TO {0} to see other roles' "
                          "statements",
                          one("SELECT current_user"), reset[0][0].c_str());
    return out;
  }
  std::vector<std::string> limits;
  if (major < k_profile_jit_major) {
    limits.push_back(fmt::format("the server is PostgreSQL {}; pg_stat_statements has JIT "
                                 "columns from PostgreSQL {} on, so the profile shows no JIT "
                                 "time and jit_dominates cannot fire",
                                 major, k_profile_jit_major));
  } else if (!jit_can_compile(one)) {
    limits.push_back(one("SELECT current_setting('jit')") == "off"
                         ? "jit = off on this server, so no statement is JIT-compiled and "
                           "jit_dominates cannot fire"
                         : "the server cannot JIT-compile (pg_jit_available() is false: built "
                           "without LLVM, or its JIT package is not installed), so "
                           "jit_dominates cannot fire here");
  }
  // Off by default: servers coldgate starts turn it on, an external one may not have.
  if (one("SELECT current_setting('pg_stat_statements.track_planning', true)") == "off") {
    limits.push_back("pg_stat_statements.track_planning = off on this server, so planning time "
                     "reads 0 and planning_exceeds_execution cannot fire (a superuser can set "
                     "it on in the server's configuration; a reload is enough)");
  }
  for (const auto& l : limits) out.limit += (out.limit.empty() ? "" : "; ") + l;
  return out;
}

}  // namespace

ProfileReadiness prepare_profile(Connection& conn, bool create) {
  try {
    return check_profile(conn, create);
  } catch (const Error& e) {
    if (e.code() == ExitCode::infrastructure || e.code() == ExitCode::interrupted) throw;
    std::string message = e.message();
    ProfileReadiness out;
    out.off = fmt::format("the profile could not be prepared ({}); the stages run without it "
                          "(database.profile: false skips the check)",
                          message.substr(0, message.find('\n')));
    return out;
  }
}

void reset_profile(pqxx::connection& conn) {
  pqxx::nontransaction tx(conn);
  tx.exec("SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = "
          "current_database()), 0)");
}

std::vector<StatementStats> read_profile(pqxx::connection& conn,
                                         const std::vector<std::string>& exclude) {
  pqxx::nontransaction tx(conn);
  // libpq knows the server's version from the start-up: no round trip.
  const bool jit = conn.server_version() >= k_profile_jit_major * 10000;
  pqxx::result r = tx.exec(
      std::string("SELECT queryid, query, calls, rows, total_plan_time, total_exec_time, ") +
      (jit ? "jit_functions, jit_generation_time, jit_inlining_time, jit_optimization_time, "
             "jit_emission_time, "
           : "NULL, NULL, NULL, NULL, NULL, ") +
      "shared_blks_hit, shared_blks_read FROM pg_stat_statements WHERE toplevel AND dbid = "
      "(SELECT oid FROM pg_database WHERE datname = current_database()) AND queryid IS NOT NULL "
      "AND query NOT LIKE '%pg\\_stat\\_statements%'");
  std::vector<StatementStats> out;
  for (const auto& row : r) {
    StatementStats s;
    s.query = row[1].is_null() ? "" : row[1].c_str();
    if (std::find(exclude.begin(), exclude.end(), s.query) != exclude.end()) continue;
    s.queryid = row[0].as<std::int64_t>();
    auto num = [&](int i) { return row[i].is_null() ? 0.0 : row[i].as<double>(); };
    s.calls = num(2);
    s.rows = num(3);
    s.plan_ms = num(4);
    s.exec_ms = num(5);
    s.jit_functions = num(6);
    s.jit_generation_ms = num(7);
    s.jit_inlining_ms = num(8);
    s.jit_optimization_ms = num(9);
    s.jit_emission_ms = num(10);
    s.shared_hit_blocks = num(11);
    s.shared_read_blocks = num(12);
    if (s.calls > 0) out.push_back(std::move(s));
  }
  // Biggest first, ties by id: the order does not depend on the view's hash table.
  std::sort(out.begin(), out.end(), [](const StatementStats& a, const StatementStats& b) {
    double ta = a.plan_ms + a.exec_ms, tb = b.plan_ms + b.exec_ms;
    return ta != tb ? ta > tb : a.queryid < b.queryid;
  });
  return out;
}

}  // namespace coldgate::db
