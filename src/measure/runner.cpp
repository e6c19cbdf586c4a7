#include "measure/runner.hpp"

#include <fmt/core.h>
#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <pqxx/pqxx>
#include <thread>

#include "canon/canon.hpp"
#include "db/connection.hpp"
#include "db/database_template.hpp"
#include "db/own_connections.hpp"
#include "db/pqxx_compat.hpp"
#include "db/provider.hpp"
#include "diff/diff.hpp"
#include "measure/backends.hpp"
#include "measure/command_metrics.hpp"
#include "measure/cold_run.hpp"
#include "measure/command_settings.hpp"
#include "measure/explain.hpp"
#include "measure/plans.hpp"
#include "measure/probe.hpp"
#include "measure/profile.hpp"
#include "measure/server_journal.hpp"
#include "db/catalog.hpp"
#include "db/cluster_registry.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/secrets.hpp"
#include "util/text.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace fs = std::filesystem;
namespace {




std::string shown(const fs::path& p) { return util::display_path(p); }



// A file-name-safe form of a stage name.
std::string file_stem(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    out += ok ? c : '_';
  }
  return out.empty() || out[0] == '.' ? "_" + out : out;
}

// Why a child failed: the probe's own error line, or the exit status with stderr's last lines and
// the cause before them (util::stderr_excerpt).
std::string failure_text(const util::ExitStatus& status, const std::string& err, bool probe) {
  if (status.timed_out) {
    return fmt::format("timed out after {:.0f} ms; its process group was killed", status.timeout_ms);
  }
  const std::string marker = "coldgate: error: ";
  if (probe && status.signal == 0) {
    std::string tail = util::tail_lines(err, 8);
    auto pos = tail.rfind(marker);
    if (pos != std::string::npos) return tail.substr(pos + marker.size());
  }
  std::string text = status.describe();
  std::string excerpt = util::stderr_excerpt(err, 8);
  if (!excerpt.empty()) text += "; stderr ends:\n" + excerpt;
  return text;
}


// A value of JSON can start with this line (trimmed): a document, not a log line.
bool starts_json(std::string_view line) {
  if (line.empty()) return false;
  char c = line.front();
  if (c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9')) return true;
  for (std::string_view word : {"true", "false", "null"})
    if (line == word) return true;
  return false;
}


std::vector<std::optional<std::string>> stage_params(const config::Stage& stage) {
  std::vector<std::optional<std::string>> out;
  for (std::size_t i = 0; i < stage.params.size(); ++i) {
    bool null = i < stage.params_null.size() && stage.params_null[i];
    out.push_back(null ? std::nullopt : std::optional<std::string>(stage.params[i]));
  }
  return out;
}


void add_cold(StageResult& r, const std::string& name, const std::string& unit, double v) {
  r.metric(name, unit).cold.push_back(v);
}
void add_warm(StageResult& r, const std::string& name, const std::string& unit, double v) {
  r.metric(name, unit).warm.push_back(v);
}

void add_process_metrics(StageResult& r, const util::ExitStatus& status) {
  add_cold(r, "wall_ms", "ms", status.wall_ms);
  add_cold(r, "cpu_ms", "ms", status.user_ms + status.sys_ms);
  add_cold(r, "peak_rss_bytes", "bytes", static_cast<double>(status.peak_rss_bytes));
}

// A profile step on coldgate's own connection, `admin`, opened on first use and kept across a
// stage's runs: a reset or a read then costs no connection set-up, and no backend exits beside
// the next run's process. A lost server or a view that stops answering ends the run as
// infrastructure.
template <typename F>
auto on_admin_connection(const RunContext& ctx, std::unique_ptr<db::Connection>& admin,
                         const std::string& stage, F&& f) {
  const std::string where = fmt::format("stage {}: server-side profile", stage);
  try {
    if (!admin) admin = std::make_unique<db::Connection>(db::with_client_defaults(stages_database(ctx)));
    return f(admin->raw());
  } catch (const pqxx::failure& e) {
    admin.reset();
    std::string what = e.what();
    while (!what.empty() && what.back() == '\n') what.pop_back();
    throw Error(ExitCode::infrastructure, where, what);
  }
}

void reset_before_run(const RunContext& ctx, std::unique_ptr<db::Connection>& admin,
                      const std::string& stage) {
  on_admin_connection(ctx, admin, stage, [](pqxx::connection& c) {
    db::reset_profile(c);
    return 0;
  });
}


// Two runs of one config in one checkout at once (each with its --out) share a command stage's
// `snapshot.from` file. Each cold run holds an flock named after that file — in the cache
// folder, not beside it — from removing the old document to reading the new one, so that no run
// removes or reads another's; the other waits (outside what is measured, interruptibly) and says
// so once. Without a usable cache folder it goes unlocked, as before.
std::optional<util::FileLock> lock_document(const fs::path& from_file, const RunContext& ctx,
                                            const std::string& stage) {
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(from_file), ec);
  if (ec) abs = fs::absolute(from_file);
  const fs::path file = db::default_cache_dir() / "locks" /
                        ("from-" + util::sha256_hex(abs.string()).substr(0, 16) + ".lock");
  bool said = false;
  for (;;) {
    try {
      if (auto lock = util::FileLock::try_lock(file)) return lock;
    } catch (const Error&) {
      return std::nullopt;
    }
    util::throw_if_interrupted();
    if (!said && ctx.progress) {
      ctx.progress->line(
          fmt::format("{}{}: waiting for another coldgate to finish a run that "
                      "writes {} (snapshot.from)",
                      ctx.label, stage, shown(from_file)));
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}



// The highest $n in a normalized statement: how many parameters its generic plan has.
int parameter_count(const std::string& text) {
  int most = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '$' || !std::isdigit(static_cast<unsigned char>(text[i + 1]))) continue;
    int n = 0;
    std::size_t j = i + 1;
    for (; j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) && n < 100000; ++j)
      n = n * 10 + (text[j] - '0');
    most = std::max(most, n);
    i = j - 1;
  }
  return most;
}

// Statements of a command stage the plan-only EXPLAIN looks at: the costliest ones.
constexpr std::size_t k_planned_statements = 10;


}  // namespace

// The snapshot module's verdict as results record it (obsolete files are listed apart).
SnapshotStatus recorded(snapshot::Status status) {
  switch (status) {
    case snapshot::Status::match:
      return SnapshotStatus::match;
    case snapshot::Status::changed:
      return SnapshotStatus::changed;
    case snapshot::Status::malformed:
      return SnapshotStatus::malformed;
    case snapshot::Status::nondeterministic:
      return SnapshotStatus::nondeterministic;
    case snapshot::Status::rearranged:
      return SnapshotStatus::rearranged;
    case snapshot::Status::missing:
    case snapshot::Status::obsolete:
      break;
  }
  return SnapshotStatus::missing;
}


// `line` for a message: at most 80 characters ("…" when cut), a byte that is not UTF-8 as U+FFFD.
std::string quoted_line(std::string_view line) {
  constexpr std::size_t k_chars = 80;
  std::string out;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < line.size(); ++chars) {
    if (chars == k_chars) return out + "…";
    std::size_t n = util::utf8_sequence_length(line, i);
    out += n == 0 ? std::string("\xEF\xBF\xBD") : std::string(line.substr(i, n));
    i += n == 0 ? 1 : n;
  }
  return out;
}

// For a command's stdout that is no JSON document: the first line (1-based number, text) when
// lines stand before the document — an ORM that logs its SQL to stdout first — i.e. the first
// non-blank line cannot start JSON, or the output parses from a later line on. nullopt when the
// output is not of that shape (the document itself is broken).
std::optional<std::pair<std::size_t, std::string_view>> line_before_document(
    std::string_view out, const canon::Options& options) {
  std::optional<std::pair<std::size_t, std::string_view>> first;
  int tries = 0;  // parses from a later line; a long log is not parsed again for every line
  std::size_t number = 0;
  for (std::size_t pos = 0; pos < out.size();) {
    std::size_t end = std::min(out.find('\n', pos), out.size());
    std::string_view line = out.substr(pos, end - pos);
    ++number;
    std::string_view text = util::trim(line);
    if (!text.empty()) {
      if (!first) {
        first.emplace(number, text);
        if (!starts_json(text)) return first;
      } else if ((text.front() == '{' || text.front() == '[') && tries++ < 20) {
        try {
          canon::canonicalize(out.substr(pos), options, "stdout");
          return first;
        } catch (const Error&) {
        }
      }
    }
    pos = end + 1;
  }
  return std::nullopt;
}

RunOutcome sql_run(const config::Stage& stage, const RunContext& ctx, int run,
                   const std::string& query, StageResult& result,
                   std::unique_ptr<db::Connection>* profile,
                   std::vector<db::StatementStats>& cold_statements) {
  const std::string tag = fmt::format("{}-run{}", file_stem(stage.name), run);
  RunSessions sessions(stages_database(ctx), stage.name, run);  // ended on the server if it fails
  ProbeRequest req;
  req.stage = stage.name;
  req.conninfo = db::with_client_defaults(sessions.named(stages_database(ctx))).conninfo();
  req.query = query;
  req.query_source = stage.sql.empty() ? "" : shown(stage.sql);
  req.params = stage_params(stage);
  for (const auto& [k, v] : stage.settings) req.settings.emplace_back(k, v);
  req.decode_json = stage.decode == config::Decode::json;
  req.warm = stage.warm;
  req.profile = profile != nullptr;
  req.prepared = ctx.prepared;
  req.max_result_bytes = stage.max_result_bytes;
  if (stage.snapshot) req.candidate_path = (ctx.work_dir / (tag + ".candidate")).string();
  req.result_path = (ctx.work_dir / (tag + ".result.json")).string();
  fs::path request_file = ctx.work_dir / (tag + ".request.json");
  write_scratch_file(request_file, to_json(req));

  util::SpawnOptions opts;
  opts.argv = {ctx.self_exe.string(), "probe", request_file.string()};
  opts.cwd = ctx.base_dir;
  opts.env_unset = db::ConnectionInfo::env_names();
  opts.max_capture_bytes = 1u << 20;
  opts.own_peak_rss = true;  // its getrusage() is the stage's peak_rss_bytes, not ours
  if (profile) reset_before_run(ctx, *profile, stage.name);
  auto spawned = std::chrono::steady_clock::now();
  auto out = util::run(opts, stage.timeout);
  fs::remove(request_file);
  if (!out.status.ok()) return {sessions.end(failure_text(out.status, out.err, true)), ""};

  ProbeResult probe = read_probe_result(req.result_path);
  // The cold run ends with its first repetition: spawn → result read and decoded, on the
  // monotonic clock both processes share; CPU and peak RSS as the probe saw them then (what
  // wait4 would report had it exited there). Warm repetitions and exit stay out of it.
  double cold_wall_ms =
      (static_cast<double>(probe.cold_end_ns) -
       static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                               spawned.time_since_epoch())
                               .count())) /
      1e6;
  if (cold_wall_ms <= 0 || cold_wall_ms > out.status.wall_ms) cold_wall_ms = out.status.wall_ms;
  add_cold(result, "wall_ms", "ms", cold_wall_ms);
  add_cold(result, "cpu_ms", "ms", probe.cold_cpu_ms);
  add_cold(result, "peak_rss_bytes", "bytes", probe.cold_peak_rss_bytes);
  add_cold(result, "connect_ms", "ms", probe.connect_ms);
  for (std::size_t i = 0; i < probe.samples.size(); ++i) {
    const ProbeSample& s = probe.samples[i];
    auto add = i == 0 ? add_cold : add_warm;
    if (i > 0) {
      add(result, "wall_ms", "ms", s.wall_ms);
      add(result, "cpu_ms", "ms", s.cpu_ms);
    }
    add(result, "query_ms", "ms", s.query_ms);
    if (req.decode_json) add(result, "decode_ms", "ms", s.decode_ms);
    add(result, "result_bytes", "bytes", s.result_bytes);
    add(result, "rows", "count", s.rows);
  }
  for (std::size_t i = 0; i < probe.profiles.size(); ++i) {
    add_profile_metrics(result, probe.profiles[i], i > 0);
  }
  if (!probe.profiles.empty()) cold_statements = std::move(probe.profiles.front());
  RunOutcome outcome;
  if (!req.candidate_path.empty()) {
    outcome.document = util::read_file(req.candidate_path);
    fs::remove(req.candidate_path);
  }
  fs::remove(req.result_path);
  return outcome;
}

RunOutcome command_run(const config::Stage& stage, const RunContext& ctx, int run,
                       StageResult& result, std::unique_ptr<db::Connection>* profile,
                       std::vector<db::StatementStats>& cold_statements,
                       std::map<std::int64_t, std::string>& full_text) {
  const std::string tag = fmt::format("{}-run{}", file_stem(stage.name), run);
  fs::path metrics_file = ctx.work_dir / (tag + ".metrics.jsonl");
  bool from_stdout = stage.snapshot && stage.snapshot->from_stdout;
  fs::path from_file = stage.snapshot && !from_stdout ? fs::path(stage.snapshot->from) : fs::path();
  std::error_code ec;
  std::optional<util::FileLock> document_lock =
      from_file.empty() ? std::nullopt : lock_document(from_file, ctx, stage.name);
  if (!from_file.empty()) fs::remove(from_file, ec);  // a stale document must not pass for new

  RunSessions sessions(stages_database(ctx), stage.name, run);  // ended on the server if it fails
  util::SpawnOptions opts;
  opts.argv = stage.command.empty() ? std::vector<std::string>{"/bin/sh", "-c", stage.shell}
                                    : stage.command;
  // A program named by a path runs from the config's folder, as config::check_stages finds it
  // (and as a shell string's does: the shell starts in it).
  if (!stage.command.empty() && opts.argv[0].find('/') != std::string::npos &&
      fs::path(opts.argv[0]).is_relative()) {
    opts.argv[0] = (ctx.base_dir / opts.argv[0]).lexically_normal().string();
  }
  opts.cwd = ctx.base_dir;
  opts.env = stages_database(ctx).env();
  opts.env_unset = db::ConnectionInfo::env_names();
  opts.env.push_back("COLDGATE_METRICS=" + metrics_file.string());
  opts.env.push_back("COLDGATE_STAGE=" + stage.name);
  opts.env.push_back(fmt::format("COLDGATE_RUN={}", run));
  opts.env.push_back(fmt::format("COLDGATE_RUNS={}", stage.runs));
  opts.env.push_back(fmt::format("COLDGATE_WARM={}", stage.warm));
  opts.env.push_back(fmt::format("COLDGATE_SCALE={:g}", ctx.scale));
  opts.env.push_back(sessions.env());
  if (auto bindir = ctx.provider->client_bindir()) {
    const char* path = std::getenv("PATH");
    opts.env.push_back(fmt::format("PATH={}:{}", bindir->string(), path ? path : "/usr/bin:/bin"));
  }
  // The stage's `env:` last: a name it maps, coldgate's own PG* ones too, is the command's.
  for (auto& entry : config::expand_env_values(stage.env, stages_database(ctx).facts()))
    opts.env.push_back(std::move(entry));
  // One byte more than the limit: a document of exactly max_result_bytes is still accepted.
  opts.max_capture_bytes =
      from_stdout ? static_cast<std::size_t>(stage.max_result_bytes) + 1 : std::size_t{16} << 20;
  opts.kill_escaped = true;  // a daemon it starts (setsid, double fork) dies with the run
  opts.own_peak_rss = true;  // its peak_rss_bytes is its tree's, not ours
  util::RunOutput out;
  // PGOPTIONS, or the role's settings until after the profile is read: its statements stay out.
  std::optional<CommandSettings> settings;
  try {
    settings.emplace(stage, stages_database(ctx), opts.env, journal_dir(*ctx.provider));
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    return {e.message(), ""};
  }
  if (profile) reset_before_run(ctx, *profile, stage.name);
  try {
    out = util::run(opts, stage.timeout);
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    return {e.message(), ""};
  }
  if (!out.status.ok()) return {sessions.end(failure_text(out.status, out.err, false)), ""};
  if (from_stdout && out.out.size() > stage.max_result_bytes) {
    return {fmt::format("its standard output (the snapshot document) exceeds max_result_bytes "
                        "({}); print less, or raise max_result_bytes for this stage",
                        stage.max_result_bytes),
            ""};
  }

  add_process_metrics(result, out.status);
  if (profile) {
    cold_statements = on_admin_connection(ctx, *profile, stage.name, [](pqxx::connection& c) {
      return db::read_profile(c);
    });
    for (auto& s : cold_statements) {
      full_text.try_emplace(s.queryid, s.query);
      shorten_keeping_id(s);
    }
    add_profile_metrics(result, cold_statements, false);
  }
  try {
    settings->restore();
  } catch (const Error& e) {
    return {e.message(), ""};
  }
  if (fs::exists(metrics_file)) {
    std::vector<CommandMetric> lines;
    try {
      lines = parse_metric_lines(util::read_file(metrics_file), "$COLDGATE_METRICS");
    } catch (const Error& e) {
      return {e.message(), ""};
    }
    for (const auto& m : lines) {
      Metric& metric = result.metric(m.name, m.unit);
      (m.warm ? metric.warm : metric.cold).push_back(m.value);
    }
    fs::remove(metrics_file);
  }
  RunOutcome outcome;
  if (from_stdout) {
    outcome.document = std::move(out.out);
  } else if (!from_file.empty()) {
    if (!fs::exists(from_file)) {
      return {fmt::format("the command did not write its snapshot document {} (snapshot.from)",
                          shown(from_file)),
              ""};
    }
    if (auto size = fs::file_size(from_file, ec); !ec && size > stage.max_result_bytes) {
      return {fmt::format("its snapshot document {} is {} bytes, more than max_result_bytes ({}); "
                          "write less, or raise max_result_bytes for this stage",
                          shown(from_file), size, stage.max_result_bytes),
              ""};
    }
    outcome.document = util::read_file(from_file);
  }
  return outcome;
}

// A SQL stage's plan-only EXPLAIN (it plans, it does not execute): the cost estimate, the plan
// file and the tables never analyzed; the split (planning, execution, JIT) from the medians of
// the measured runs' profiles.
void plan_sql_stage(const config::Stage& stage, const RunContext& ctx, StageResult& result,
                    db::Connection* conn) {
  StagePlan plan = explain_stage(stage, stages_database(ctx), /*analyze=*/false, conn);
  Explain e = plan.explain;
  fs::path file = ctx.out_dir / "explain" / (file_stem(stage.name) + ".json");
  util::write_file_atomic(file, plan.json + "\n");
  e.plan_file = shown(file);
  auto med = [&](const char* name) {
    const Metric* m = result.find(name);
    return m && !m->cold.empty() ? median(m->cold) : 0.0;
  };
  e.planning_ms = med("db_plan_ms");
  e.execution_ms = med("db_exec_ms");
  e.jit_functions = med("db_jit_functions");
  e.jit_total_ms = med("db_jit_ms");
  e.jit = e.jit_functions > 0;
  if (result.queries.size() == 1) result.queries.front().total_cost = e.total_cost;
  result.explain = e;
}

// A command stage's statements, each planned but not executed: the generic plan of its
// normalized text (PREPARE with untyped parameters, then EXPLAIN EXECUTE with NULLs under
// plan_cache_mode = force_generic_plan — PostgreSQL 15 has no EXPLAIN (GENERIC_PLAN)), in a
// transaction that is rolled back. Gives each statement's cost estimate and the tables they
// read that were never analyzed. A statement that does not prepare (a parameter whose type
// cannot be inferred) has no estimate; that is not an error.
void plan_command_stage(const std::map<std::int64_t, std::string>& full_text,
                        const RunContext& ctx, StageResult& result) {
  db::Connection conn(db::with_client_defaults(stages_database(ctx)));
  std::vector<std::string> relations;
  std::size_t planned = 0;
  for (auto& q : result.queries) {
    if (planned >= k_planned_statements) break;
    auto it = full_text.find(std::stoll(q.queryid));
    if (it == full_text.end() || !reads_or_writes_data(it->second)) continue;
    ++planned;
    const std::string& text = it->second;
    const int n = parameter_count(text);
    // Untyped parameters first; when one's type cannot be inferred (json_build_object($1, …)),
    // every parameter as text.
    for (bool as_text : {false, true}) {
      if (as_text && n == 0) break;
      const std::string name = fmt::format("coldgate_plan_{}_{}", planned, as_text ? 1 : 0);
      std::string types, args;
      for (int i = 0; i < n; ++i) {
        types += i ? ", text" : "(text";
        args += i ? ", NULL" : "(NULL";
      }
      if (n) {
        types += ")";
        args += ")";
      }
      try {
        pqxx::work tx(conn.raw());
        tx.exec("SET LOCAL plan_cache_mode = force_generic_plan");
        tx.exec(fmt::format("PREPARE {}{} AS {}", name, as_text ? types : "", text));
        auto r = tx.exec(fmt::format("EXPLAIN (FORMAT JSON) EXECUTE {}{}", name, args));
        std::string json = r[0][0].c_str();
        tx.exec("DEALLOCATE " + name);  // PREPARE is not undone by the rollback
        tx.abort();
        q.total_cost = parse_explain(json, "plan").total_cost;
        for (auto& rel : plan_relations(json)) relations.push_back(std::move(rel));
        break;
      } catch (const pqxx::sql_error&) {
        continue;  // the statement did not prepare: rolled back, nothing left
      } catch (const Error& e) {
        if (e.code() == ExitCode::interrupted) throw;
      }
    }
  }
  std::sort(relations.begin(), relations.end());
  relations.erase(std::unique(relations.begin(), relations.end()), relations.end());
  Explain e;
  e.jit_above_cost =
      conn.exec("SELECT current_setting('jit_above_cost')::float8", "plan")[0][0].as<double>();
  if (!relations.empty()) e.never_analyzed = db::never_analyzed_tables(conn, relations);
  result.explain = e;
}

// Puts the built-in metrics in report order, a command's own after them.
void order_metrics(StageResult& r) {
  const auto& order = known_metric_order();
  auto rank = [&](const std::string& name) {
    auto it = std::find(order.begin(), order.end(), name);
    return static_cast<std::size_t>(it - order.begin());
  };
  std::stable_sort(r.metrics.begin(), r.metrics.end(),
                   [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
}

// While the server says it is shutting down or recovering (PQPING_REJECT), asks again for up
// to 5 s: `pg_ctl stop -m immediate` ends the backends a moment before the postmaster.
bool server_gone(const RunContext& ctx) {
  db::ConnectionInfo info = db::with_client_defaults(ctx.provider->connection_info());
  info.options["connect_timeout"] = "2";
  std::string conninfo = info.conninfo();
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    PGPing ping = PQping(conninfo.c_str());
    if (ping == PQPING_OK) return false;
    if (ping == PQPING_NO_RESPONSE) return true;
    if (ping != PQPING_REJECT || std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

const db::ConnectionInfo& stages_database(const RunContext& ctx) {
  return ctx.database ? *ctx.database : ctx.provider->connection_info();
}

std::string stage_query(const config::Stage& stage) {
  return stage.sql.empty() ? stage.query : util::read_file(stage.sql);
}

fs::path self_executable() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    throw Error(ExitCode::infrastructure, "/proc/self/exe",
                "cannot find the coldgate binary to run probes: " + ec.message());
  }
  return p;
}

std::string enable_profile(RunContext& ctx, const config::Database& database) {
  ctx.profile = false;
  ctx.profile_limit.clear();
  if (!database.profile) return "";
  std::unique_ptr<db::Connection> fresh;
  db::Connection& conn = db::kept_or_new(ctx.own.get(), stages_database(ctx), fresh);
  db::ProfileReadiness readiness = db::prepare_profile(conn, ctx.provider->name() != "external");
  ctx.profile = readiness.ready();
  ctx.profile_limit = readiness.limit;
  ctx.plans_note = enable_plans(ctx, database);
  return readiness.off;
}

void check_stage_settings(const RunContext& ctx, const std::vector<config::Stage>& stages) {
  std::unique_ptr<db::Connection> conn;
  for (const auto& stage : stages) {
    for (const auto& [name, value] : stage.settings) {
      db::Connection& on = ctx.own ? ctx.own->to(stages_database(ctx))
                           : conn ? *conn
                                  : *(conn = std::make_unique<db::Connection>(
                                          db::with_client_defaults(stages_database(ctx))));
      try {
        // is_local outside a transaction block: gone when the statement ends, so the kept
        // connection that the first stage takes next carries no setting.
        on.exec_params("SELECT set_config($1, $2, true)", {name, value});
      } catch (const Error& e) {
        if (e.code() != ExitCode::gate_failed) throw;  // the server lost, an interrupt
        auto at = stage.settings_where.find(name);
        throw Error(ExitCode::usage,
                    at == stage.settings_where.end() ? stage.where.str() : at->second.str(),
                    fmt::format("stage {}: settings.{}: the server refused it: {} — {} or remove "
                                "the setting",
                                stage.name, name, e.what(), db::refusal_hint(e.what())));
      }
    }
  }
}

std::string enable_isolation(RunContext& ctx, const std::vector<config::Stage>& stages) {
  ctx.isolation.reset();
  if (std::all_of(stages.begin(), stages.end(), [](const config::Stage& s) {
        return s.isolation == config::Isolation::none;
      })) {
    return "";
  }
  const db::ConnectionInfo& database = stages_database(ctx);
  std::string why;
  std::optional<bool> sequences;
  {
    // Both questions on one connection, closed before the copy: CREATE DATABASE … TEMPLATE
    // refuses a database another session is connected to.
    std::unique_ptr<db::Connection> fresh;
    db::Connection& conn = db::kept_or_new(ctx.own.get(), database, fresh);
    why = db::DatabaseTemplate::why_not(conn);
    if (why.empty()) sequences = db::DatabaseTemplate::has_sequences(conn);
  }
  if (why.empty()) {
    if (ctx.own) ctx.own->close(database);
    try {
      // The maintenance database's connection of setup's check, when there is one: the
      // template's from now on.
      ctx.isolation = std::make_shared<db::DatabaseTemplate>(
          database, sequences,
          ctx.own ? ctx.own->take(db::maintenance_database(database)) : nullptr);
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted) throw;
      util::throw_if_interrupted();
      why = e.message() + "; the stages share one database in their order (isolation: none)";
    }
  }
  return why.empty() ? "" : "isolation: " + why;
}

bool fresh_copy_before(const config::Stage& stage, const RunContext& ctx, int run) {
  if (!ctx.isolation || stages_database(ctx).dbname != ctx.isolation->database()) return false;
  return stage.isolation == config::Isolation::run ||
         (stage.isolation == config::Isolation::stage && run == 1);
}

StagePlan explain_stage(const config::Stage& stage, const db::ConnectionInfo& database,
                        bool analyze, db::Connection* given) {
  const std::string where = fmt::format("stage {}: EXPLAIN", stage.name);
  std::unique_ptr<db::Connection> fresh;
  if (!given) fresh = std::make_unique<db::Connection>(database);
  db::Connection& conn = given ? *given : *fresh;
  auto params = stage_params(stage);
  StagePlan plan;
  double jit_above_cost = 0;
  try {
    pqxx::work tx(conn.raw());
    for (const auto& [k, v] : stage.settings) db::exec_params(tx, "SELECT set_config($1, $2, true)", {k, v});
    std::string prefix = analyze ? std::string(k_explain_prefix) : "EXPLAIN (FORMAT JSON)\n";
    pqxx::result r;
    {
      db::CancelOnInterrupt cancel(conn);  // EXPLAIN ANALYZE runs the query: as long as it takes
      r = db::exec_params(tx, prefix + stage_query(stage), params);
    }
    if (r.empty() || r.columns() == 0) throw Error(ExitCode::infrastructure, where, "no output");
    plan.json = r[0][0].c_str();
    jit_above_cost = tx.exec("SELECT current_setting('jit_above_cost')::float8")[0][0].as<double>();
    // pg_jit_available() came with PostgreSQL 11. It loads the JIT provider (LLVM) into the
    // backend, ~100-200 ms: only `coldgate explain` (ANALYZE) says whether JIT can fire, so a
    // plan-only EXPLAIN leaves it unread (true).
    plan.jit_available = !analyze || conn.raw().server_version() < 110000 ||
                         tx.exec("SELECT pg_jit_available()")[0][0].as<bool>();
    tx.abort();  // EXPLAIN ANALYZE executes the statement: leave no trace of it
  } catch (const pqxx::sql_error& e) {
    util::throw_if_interrupted();  // cancelled by CancelOnInterrupt
    throw db::translate(e, where);
  } catch (const pqxx::broken_connection& e) {
    throw Error(ExitCode::infrastructure, where,
                std::string("lost connection to the server: ") + e.what());
  }
  plan.explain = parse_explain(plan.json, where);
  plan.explain.jit_above_cost = jit_above_cost;
  std::vector<std::string> relations = plan_relations(plan.json);
  if (!relations.empty()) plan.explain.never_analyzed = db::never_analyzed_tables(conn, relations);
  return plan;
}

}  // namespace coldgate::measure
