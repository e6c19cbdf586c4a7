// The measured process of a SQL stage. Everything here is on the clock of a cold run: the
// process start, library loading, connecting, the query and decoding, as an application meets
// them when it starts.
#include "measure/probe.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "canon/canon.hpp"
#include "db/connection.hpp"
#include "db/connection_info.hpp"
#include "db/pqxx_compat.hpp"
#include "measure/profile.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::measure {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// The statement name of ProbeRequest::prepared.
constexpr const char* k_prepared_name = "coldgate_stage";

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// This process's user+sys CPU so far and its peak RSS, from one getrusage(RUSAGE_SELF).
struct Usage {
  double cpu_ms = 0;
  double peak_rss_bytes = 0;
};

Usage usage_now() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto ms = [](const timeval& tv) { return tv.tv_sec * 1000.0 + tv.tv_usec / 1000.0; };
  return {ms(ru.ru_utime) + ms(ru.ru_stime), static_cast<double>(ru.ru_maxrss) * 1024};  // KiB
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// How a column's values become JSON in a snapshot's rows: PostgreSQL's own to_json mapping
// (PostgreSQL docs, "JSON Functions": numeric types as numbers except the non-finite values,
// boolean, json and jsonb as themselves; src/backend/utils/adt/json.c json_categorize_type).
// Domains arrive as their base type (the row description names it). Everything else is its
// text, as a string.
enum class JsonKind { string, number, boolean, document };

// Type OIDs from PostgreSQL's catalog (src/include/catalog/pg_type.dat).
JsonKind json_kind(pqxx::oid type) {
  switch (type) {
    case 20:    // int8
    case 21:    // int2
    case 23:    // int4
    case 700:   // float4
    case 701:   // float8
    case 1700:  // numeric
      return JsonKind::number;
    case 16:  // bool
      return JsonKind::boolean;
    case 114:   // json
    case 3802:  // jsonb
      return JsonKind::document;
    default:
      return JsonKind::string;
  }
}

// A result with no decode: rows as objects of column name → value, typed by json_kind (NULL as
// null); numbers keep the server's text, so they stay exact. Throws Error(gate_failed) when two
// columns share a name: one object cannot hold both.
std::string rows_as_json(const pqxx::result& r, const std::string& stage) {
  const auto columns = static_cast<std::size_t>(r.columns());
  std::vector<JsonKind> kinds;
  std::vector<std::string> keys;  // each column's name as a JSON string, then ':'
  for (std::size_t c = 0; c < columns; ++c) {
    const auto col = static_cast<pqxx::row::size_type>(c);
    std::string name = r.column_name(col);
    for (std::size_t d = 0; d < c; ++d) {
      if (name == r.column_name(static_cast<pqxx::row::size_type>(d))) {
        throw Error(ExitCode::gate_failed, fmt::format("stage {}", stage),
                    fmt::format("columns {} and {} are both named '{}', and each row of the "
                                "snapshot is one object keyed by column name; name them apart "
                                "(AS …)",
                                d + 1, c + 1, name));
      }
    }
    kinds.push_back(json_kind(r.column_type(col)));
    std::string key;
    canon::append_json_string(name, key);
    key.push_back(':');
    keys.push_back(std::move(key));
  }
  std::string out = "[";
  for (const auto& row : r) {
    if (out.size() > 1) out.push_back(',');
    out.push_back('{');
    for (std::size_t c = 0; c < columns; ++c) {
      const auto field = row[static_cast<pqxx::row::size_type>(c)];
      if (c > 0) out.push_back(',');
      out += keys[c];
      const std::string_view text(field.c_str(), field.size());
      if (field.is_null()) {
        out += "null";
      } else if (kinds[c] == JsonKind::boolean) {
        out += text == "t" ? "true" : "false";
      } else if (kinds[c] == JsonKind::document ||
                 (kinds[c] == JsonKind::number && canon::is_json_number(text))) {
        out += text;
      } else {
        canon::append_json_string(text, out);  // also NaN and ±Infinity, as to_json does
      }
    }
    out.push_back('}');
  }
  out.push_back(']');
  return out;
}

// The error of a failed statement, located in the query text when the server can say where.
Error sql_failure(const ProbeRequest& req, const pqxx::sql_error& e) {
  std::string source = req.query_source.empty() ? fmt::format("stage {} query", req.stage)
                                                : req.query_source;
  Error err = db::translate(e, source);
  std::string what = err.what();
  auto cut = what.find(" (query line ");
  if (cut != std::string::npos) what.resize(cut);
  auto info = db::ConnectionInfo::parse(req.conninfo, "probe");
  if (auto pos = db::locate_error(info, req.query, static_cast<int>(req.params.size()))) {
    source += fmt::format(":{}:{}", pos->first, pos->second);
  }
  return Error(ExitCode::gate_failed, source, what);
}

ProbeSample run_once(pqxx::connection& conn, const ProbeRequest& req,
                     const db::Params& params, std::string* candidate) {
  ProbeSample s;
  auto t0 = Clock::now();
  double cpu0 = usage_now().cpu_ms;
  pqxx::work tx(conn);
  for (const auto& [name, value] : req.settings) {
    db::exec_params(tx, "SELECT set_config($1, $2, true)", {name, value});
  }
  auto tq = Clock::now();
  pqxx::result r =
      req.prepared
          ? db::exec_prepared(tx, k_prepared_name, params)
          : db::exec_params(tx, req.query, params);
  s.query_ms = ms_since(tq);
  s.rows = static_cast<double>(r.size());
  std::uint64_t bytes = 0;
  for (const auto& row : r) {
    for (const auto& field : row) bytes += field.size();
  }
  s.result_bytes = static_cast<double>(bytes);
  // libpq has the whole result in memory now (one copy, freed with `r`); the decode, the
  // candidate and the parent's canonicalization would each need several more.
  if (bytes > req.max_result_bytes) {
    throw Error(ExitCode::gate_failed, fmt::format("stage {}", req.stage),
                fmt::format("the result is {} bytes ({} rows), more than max_result_bytes ({}); "
                            "return less, or raise max_result_bytes for this stage",
                            bytes, r.size(), req.max_result_bytes));
  }
  if (req.decode_json) {
    if (r.empty() || r.columns() == 0 || r[0][0].is_null()) {
      throw Error(ExitCode::gate_failed, fmt::format("stage {}", req.stage),
                  fmt::format("decode: json needs a JSON value in column 1 of row 1; the query "
                              "returned {} rows{}",
                              r.size(), r.empty() ? "" : " and NULL"));
    }
    auto td = Clock::now();
    const char* text = r[0][0].c_str();
    json doc = json::parse(text, text + r[0][0].size(), nullptr, false);
    s.decode_ms = ms_since(td);
    if (doc.is_discarded()) {
      throw Error(ExitCode::gate_failed, fmt::format("stage {}", req.stage),
                  "decode: json: column 1 of row 1 is not valid JSON");
    }
    if (candidate) candidate->assign(text, r[0][0].size());
  } else if (candidate) {
    *candidate = rows_as_json(r, req.stage);
  }
  tx.commit();
  s.wall_ms = ms_since(t0);
  s.cpu_ms = usage_now().cpu_ms - cpu0;
  return s;
}

json statements_json(const std::vector<db::StatementStats>& list) {
  json out = json::array();
  for (const auto& s : list) {
    out.push_back({std::to_string(s.queryid), s.query, s.calls, s.rows, s.plan_ms, s.exec_ms,
                   s.jit_functions, s.jit_generation_ms, s.jit_inlining_ms,
                   s.jit_optimization_ms, s.jit_emission_ms, s.shared_hit_blocks,
                   s.shared_read_blocks, s.text_id,
                   s.parameters ? static_cast<int>(*s.parameters) : -1});
  }
  return out;
}

std::vector<db::StatementStats> statements_from(const json& list) {
  std::vector<db::StatementStats> out;
  for (const auto& r : list) {
    db::StatementStats s;
    s.queryid = std::stoll(r.at(0).get<std::string>());
    s.query = r.at(1).get<std::string>();
    double* fields[] = {&s.calls,
                        &s.rows,
                        &s.plan_ms,
                        &s.exec_ms,
                        &s.jit_functions,
                        &s.jit_generation_ms,
                        &s.jit_inlining_ms,
                        &s.jit_optimization_ms,
                        &s.jit_emission_ms,
                        &s.shared_hit_blocks,
                        &s.shared_read_blocks};
    for (std::size_t i = 0; i < std::size(fields); ++i) *fields[i] = r.at(i + 2).get<double>();
    s.text_id = r.at(std::size(fields) + 2).get<std::string>();
    // The whole text's parameters: the probe sends the text shortened.
    if (const int use = r.at(std::size(fields) + 3).get<int>(); use >= 0)
      s.parameters = static_cast<util::ParameterUse>(use);
    out.push_back(std::move(s));
  }
  return out;
}

// The repetition's statements, read on the probe's own connection once its clock has stopped,
// then reset for the next one.
std::vector<db::StatementStats> take_profile(pqxx::connection& conn, const ProbeRequest& req,
                                             bool reset) {
  try {
    auto list = db::read_profile(conn, probe_statements());
    for (auto& s : list) shorten_keeping_id(s);
    if (reset) db::reset_profile(conn);
    return list;
  } catch (const pqxx::sql_error& e) {
    throw Error(ExitCode::infrastructure, fmt::format("stage {}: server-side profile", req.stage),
                trim(e.what()));
  }
}

}  // namespace

std::string to_json(const ProbeRequest& r) {
  json params = json::array();
  for (const auto& p : r.params) params.push_back(p ? json(*p) : json(nullptr));
  json settings = json::array();
  for (const auto& [k, v] : r.settings) settings.push_back({k, v});
  return json{{"stage", r.stage},           {"conninfo", r.conninfo},
              {"query", r.query},           {"query_source", r.query_source},
              {"params", params},           {"settings", settings},
              {"decode_json", r.decode_json}, {"warm", r.warm}, {"profile", r.profile}, {"prepared", r.prepared},
              {"max_result_bytes", r.max_result_bytes},
              {"candidate_path", r.candidate_path}, {"result_path", r.result_path}}
      .dump();
}

std::string to_json(const ProbeResult& r) {
  json samples = json::array();
  for (const auto& s : r.samples) {
    samples.push_back({{"wall_ms", s.wall_ms},
                       {"cpu_ms", s.cpu_ms},
                       {"query_ms", s.query_ms},
                       {"decode_ms", s.decode_ms},
                       {"result_bytes", s.result_bytes},
                       {"rows", s.rows}});
  }
  json profiles = json::array();
  for (const auto& p : r.profiles) profiles.push_back(statements_json(p));
  return json{{"cold_end_ns", r.cold_end_ns},
              {"profiles", profiles},
              {"cold_cpu_ms", r.cold_cpu_ms},
              {"cold_peak_rss_bytes", r.cold_peak_rss_bytes},
              {"connect_ms", r.connect_ms},
              {"samples", samples}}
      // Statement texts are the server's (a SQL_ASCII database passes any bytes): shown, not run.
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

ProbeResult read_probe_result(const std::filesystem::path& file) {
  std::string text = util::read_file(file);
  try {
    json j = json::parse(text);
    ProbeResult r;
    r.cold_end_ns = j.at("cold_end_ns").get<std::int64_t>();
    r.cold_cpu_ms = j.at("cold_cpu_ms").get<double>();
    r.cold_peak_rss_bytes = j.at("cold_peak_rss_bytes").get<double>();
    r.connect_ms = j.at("connect_ms").get<double>();
    for (const auto& s : j.at("samples")) {
      r.samples.push_back({s.at("wall_ms").get<double>(), s.at("cpu_ms").get<double>(),
                           s.at("query_ms").get<double>(), s.at("decode_ms").get<double>(),
                           s.at("result_bytes").get<double>(), s.at("rows").get<double>()});
    }
    if (r.samples.empty()) throw std::runtime_error("no samples");
    for (const auto& p : j.at("profiles")) r.profiles.push_back(statements_from(p));
    return r;
  } catch (const std::exception& e) {
    throw Error(ExitCode::infrastructure, file.string(),
                std::string("not a probe result: ") + e.what());
  }
}

void write_scratch_file(const std::filesystem::path& path, std::string_view contents) {
  // A durable write (util::write_file_atomic) costs two fsyncs, ~10-20 ms a cold run on a busy
  // disk, for files that never outlive the run.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  for (std::size_t done = 0; ok && done < contents.size();) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  const int err = errno;
  if (fd >= 0 && ::close(fd) != 0) ok = false;
  if (!ok) {
    throw Error(ExitCode::infrastructure, path.string(),
                fmt::format("cannot write: {}", std::strerror(err)));
  }
}

int run_probe(const std::filesystem::path& request_file) {
  ProbeRequest req;
  try {
    json j = json::parse(util::read_file(request_file));
    req.stage = j.at("stage");
    req.conninfo = j.at("conninfo");
    req.query = j.at("query");
    req.query_source = j.at("query_source");
    for (const auto& p : j.at("params")) {
      req.params.push_back(p.is_null() ? std::nullopt : std::optional<std::string>(p.get<std::string>()));
    }
    for (const auto& kv : j.at("settings")) req.settings.emplace_back(kv.at(0), kv.at(1));
    req.decode_json = j.at("decode_json");
    req.warm = j.at("warm");
    req.profile = j.at("profile");
    req.prepared = j.at("prepared");
    req.max_result_bytes = j.at("max_result_bytes");
    req.candidate_path = j.at("candidate_path");
    req.result_path = j.at("result_path");
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(request_file.string(),
                      std::string("not a probe request (probe is internal to coldgate run): ") +
                          e.what());
  }

  ProbeResult result;
  std::string candidate;
  std::string where = fmt::format("stage {}", req.stage);
  try {
    auto t0 = Clock::now();
    pqxx::connection conn(req.conninfo);
    result.connect_ms = ms_since(t0);
    if (req.prepared) conn.prepare(k_prepared_name, req.query);
    for (int i = 0; i <= req.warm; ++i) {
      bool want = i == 0 && !req.candidate_path.empty();
      result.samples.push_back(run_once(conn, req, req.params, want ? &candidate : nullptr));
      if (i == 0) {
        result.cold_end_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 Clock::now().time_since_epoch())
                                 .count();
        Usage usage = usage_now();
        result.cold_cpu_ms = usage.cpu_ms;
        result.cold_peak_rss_bytes = usage.peak_rss_bytes;
      }
      if (req.profile) result.profiles.push_back(take_profile(conn, req, i < req.warm));
    }
  } catch (const pqxx::sql_error& e) {
    throw sql_failure(req, e);
  } catch (const pqxx::broken_connection& e) {
    throw Error(ExitCode::infrastructure, where, "lost connection to the server: " + trim(e.what()));
  } catch (const pqxx::failure& e) {
    throw Error(ExitCode::infrastructure, where, trim(e.what()));
  }
  if (!req.candidate_path.empty()) write_scratch_file(req.candidate_path, candidate);
  write_scratch_file(req.result_path, to_json(result));
  return 0;
}

}  // namespace coldgate::measure
