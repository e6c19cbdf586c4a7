#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "db/profile.hpp"

namespace coldgate::measure {

/// What one measured process of a SQL stage does; the runner writes it as JSON to a private
/// file and starts `coldgate probe FILE`.
struct ProbeRequest {
  std::string stage;
  std::string conninfo;      // libpq key=value string (may hold a password: file is mode 0600)
  std::string query;         // one statement
  std::string query_source;  // SQL file as shown in messages; "" for an inline `query:`
  std::vector<std::optional<std::string>> params;              // $1…; nullopt = SQL NULL
  std::vector<std::pair<std::string, std::string>> settings;   // SET LOCAL name = value
  bool decode_json = false;  // parse column 1 of row 1 as JSON, timed as decode_ms
  std::uint64_t max_result_bytes = std::uint64_t{256} << 20;  // larger results fail the stage
  int warm = 0;              // warm repetitions after the cold one, on the same connection
  /// Read the server-side profile after each repetition and reset it before the next (the
  /// runner resets it before the probe starts).
  bool profile = false;
  /// PREPARE the query once on the connection and EXECUTE it for every repetition.
  bool prepared = false;
  std::string candidate_path;  // where the cold repetition's result goes; "" = not wanted
  std::string result_path;     // where the ProbeResult goes
};

/// One repetition inside the probe (the first is the cold one).
struct ProbeSample {
  double wall_ms = 0;       // whole repetition: BEGIN, settings, query, decode, COMMIT
  double cpu_ms = 0;        // user+sys CPU of the probe process during the repetition
  double query_ms = 0;      // query sent → whole result read
  double decode_ms = 0;     // JSON parse of the result (decode: json), else 0
  double result_bytes = 0;  // bytes of all result values as text
  double rows = 0;          // result rows
};

/// What the probe measured.
struct ProbeResult {
  /// steady_clock (CLOCK_MONOTONIC, shared by all processes) when the cold repetition ended, in
  /// ns since the clock's epoch: the runner's spawn time to this is the cold run's wall_ms, so
  /// warm repetitions and process exit are not in it.
  std::int64_t cold_end_ns = 0;
  double cold_cpu_ms = 0;            // user+sys CPU of the probe from its start to cold_end_ns
  double cold_peak_rss_bytes = 0;    // peak RSS of the probe at cold_end_ns (getrusage)
  double connect_ms = 0;             // connection set-up (libpqxx connect, authentication)
  std::vector<ProbeSample> samples;  // [0] cold, then the warm repetitions
  /// With ProbeRequest::profile: each repetition's statements, the probe's own left out
  /// (texts cut to k_statement_text_chars), one list per sample.
  std::vector<std::vector<db::StatementStats>> profiles;
};

/// The request as JSON text.
std::string to_json(const ProbeRequest& request);
/// The result as JSON text.
std::string to_json(const ProbeResult& result);
/// Writes `contents` to `path` (created mode 0600, else truncated) without fsync: the request
/// and result files live only between a probe's start and its parent reading them, in the run's
/// work folder, so a crash loses nothing worth keeping. Throws Error(infrastructure).
void write_scratch_file(const std::filesystem::path& path, std::string_view contents);
/// Reads a ProbeResult file; throws Error(infrastructure) naming the file when it is not one.
ProbeResult read_probe_result(const std::filesystem::path& file);

/// The child side (`coldgate probe FILE`): connects, runs the query 1 + warm times, each in its
/// own transaction with `settings` applied by set_config(name, value, is_local => true) — the
/// function form of SET LOCAL (PostgreSQL docs, "Configuration Settings Functions") — writes
/// the candidate and the result files; returns 0. Throws Error: gate_failed for SQL errors
/// (where = "<source>:<line>:<col>" when the server gives a position) and an undecodable
/// result, infrastructure when the server cannot be reached.
int run_probe(const std::filesystem::path& request_file);

}  // namespace coldgate::measure
