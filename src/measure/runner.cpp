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
#include "db/provider.hpp"
#include "diff/diff.hpp"
#include "measure/backends.hpp"
#include "measure/command_metrics.hpp"
#include "measure/command_settings.hpp"
#include "measure/explain.hpp"
#include "measure/probe.hpp"
#include "db/catalog.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace fs = std::filesystem;
namespace {

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
    case snapshot::Status::missing:
    case snapshot::Status::obsolete:
      break;
  }
  return SnapshotStatus::missing;
}


// What one cold run left behind besides its metrics.
struct RunOutcome {
  std::string error;      // "" when the run succeeded
  std::string document;   // the raw snapshot document (when the stage has a snapshot)
};

std::string shown(const fs::path& p) { return util::display_path(p); }

// The database the stages use: the context's override (coldgate ab's base side), else the
// provider's.
const db::ConnectionInfo& database(const RunContext& ctx) {
  return ctx.database ? *ctx.database : ctx.provider->connection_info();
}


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

// Why a child failed: the probe's own error line, or the exit status with a stderr tail.
std::string failure_text(const util::ExitStatus& status, const std::string& err, bool probe) {
  if (status.timed_out) {
    return fmt::format("timed out after {:.0f} ms; its process group was killed", status.timeout_ms);
  }
  std::string tail = util::tail_lines(err, 8);
  const std::string marker = "coldgate: error: ";
  if (probe && status.signal == 0) {
    auto pos = tail.rfind(marker);
    if (pos != std::string::npos) return tail.substr(pos + marker.size());
  }
  std::string text = status.describe();
  if (!tail.empty()) text += "; stderr ends:\n" + tail;
  return text;
}

std::vector<std::optional<std::string>> stage_params(const config::Stage& stage) {
  std::vector<std::optional<std::string>> out;
  for (std::size_t i = 0; i < stage.params.size(); ++i) {
    bool null = i < stage.params_null.size() && stage.params_null[i];
    out.push_back(null ? std::nullopt : std::optional<std::string>(stage.params[i]));
  }
  return out;
}

std::string stage_query(const config::Stage& stage) {
  return stage.sql.empty() ? stage.query : util::read_file(stage.sql);
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

RunOutcome sql_run(const config::Stage& stage, const RunContext& ctx, int run,
                   const std::string& query, StageResult& result) {
  const std::string tag = fmt::format("{}-run{}", file_stem(stage.name), run);
  RunSessions sessions(database(ctx), stage.name, run);  // ended on the server if it fails
  ProbeRequest req;
  req.stage = stage.name;
  req.conninfo = db::with_client_defaults(sessions.named(database(ctx))).conninfo();
  req.query = query;
  req.query_source = stage.sql.empty() ? "" : shown(stage.sql);
  req.params = stage_params(stage);
  for (const auto& [k, v] : stage.settings) req.settings.emplace_back(k, v);
  req.decode_json = stage.decode == config::Decode::json;
  req.warm = stage.warm;
  req.max_result_bytes = stage.max_result_bytes;
  if (stage.snapshot) req.candidate_path = (ctx.work_dir / (tag + ".candidate")).string();
  req.result_path = (ctx.work_dir / (tag + ".result.json")).string();
  fs::path request_file = ctx.work_dir / (tag + ".request.json");
  util::write_file_atomic(request_file, to_json(req));

  util::SpawnOptions opts;
  opts.argv = {ctx.self_exe.string(), "probe", request_file.string()};
  opts.cwd = ctx.base_dir;
  opts.env_unset = db::ConnectionInfo::env_names();
  opts.max_capture_bytes = 1u << 20;
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
  RunOutcome outcome;
  if (!req.candidate_path.empty()) {
    outcome.document = util::read_file(req.candidate_path);
    fs::remove(req.candidate_path);
  }
  fs::remove(req.result_path);
  return outcome;
}

RunOutcome command_run(const config::Stage& stage, const RunContext& ctx, int run,
                       StageResult& result) {
  const std::string tag = fmt::format("{}-run{}", file_stem(stage.name), run);
  fs::path metrics_file = ctx.work_dir / (tag + ".metrics.jsonl");
  bool from_stdout = stage.snapshot && stage.snapshot->from == "stdout";
  fs::path from_file = stage.snapshot && !from_stdout ? fs::path(stage.snapshot->from) : fs::path();
  std::error_code ec;
  if (!from_file.empty()) fs::remove(from_file, ec);  // a stale document must not pass for new

  RunSessions sessions(database(ctx), stage.name, run);  // ended on the server if it fails
  util::SpawnOptions opts;
  opts.argv = stage.command.empty() ? std::vector<std::string>{"/bin/sh", "-c", stage.shell}
                                    : stage.command;
  opts.cwd = ctx.base_dir;
  opts.env = database(ctx).env();
  opts.env_unset = db::ConnectionInfo::env_names();
  opts.env.push_back("COLDGATE_METRICS=" + metrics_file.string());
  opts.env.push_back("COLDGATE_STAGE=" + stage.name);
  opts.env.push_back(fmt::format("COLDGATE_RUN={}", run));
  opts.env.push_back(fmt::format("COLDGATE_RUNS={}", stage.runs));
  opts.env.push_back(fmt::format("COLDGATE_WARM={}", stage.warm));
  opts.env.push_back(sessions.env());
  if (auto bindir = ctx.provider->client_bindir()) {
    const char* path = std::getenv("PATH");
    opts.env.push_back(fmt::format("PATH={}:{}", bindir->string(), path ? path : "/usr/bin:/bin"));
  }
  // One byte more than the limit: a document of exactly max_result_bytes is still accepted.
  opts.max_capture_bytes =
      from_stdout ? static_cast<std::size_t>(stage.max_result_bytes) + 1 : std::size_t{16} << 20;
  opts.kill_escaped = true;  // a daemon it starts (setsid, double fork) dies with the run
  util::RunOutput out;
  try {
    CommandSettings settings(stage, database(ctx), opts.env);  // PGOPTIONS, or the role's for now
    out = util::run(opts, stage.timeout);
    settings.restore();
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

// One extra run under EXPLAIN (ANALYZE …) on a fresh connection: the server-side split.
void run_explain(const config::Stage& stage, const RunContext& ctx, StageResult& result) {
  StagePlan plan = explain_stage(stage, database(ctx));
  Explain e = plan.explain;
  fs::path file = ctx.out_dir / "explain" / (file_stem(stage.name) + ".json");
  util::write_file_atomic(file, plan.json + "\n");
  e.plan_file = shown(file);
  add_cold(result, "planning_ms", "ms", e.planning_ms);
  add_cold(result, "execution_ms", "ms", e.execution_ms);
  add_cold(result, "jit_functions", "count", e.jit_functions);
  add_cold(result, "jit_generation_ms", "ms", e.jit_generation_ms);
  add_cold(result, "jit_inlining_ms", "ms", e.jit_inlining_ms);
  add_cold(result, "jit_optimization_ms", "ms", e.jit_optimization_ms);
  add_cold(result, "jit_emission_ms", "ms", e.jit_emission_ms);
  add_cold(result, "jit_total_ms", "ms", e.jit_total_ms);
  result.explain = e;
}

// True when the server no longer answers at all (PQping: no response). While it says it is
// shutting down or recovering (PQPING_REJECT), asks again for up to 5 s: `pg_ctl stop -m
// immediate` ends the backends a moment before the postmaster.
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

}  // namespace

fs::path self_executable() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    throw Error(ExitCode::infrastructure, "/proc/self/exe",
                "cannot find the coldgate binary to run probes: " + ec.message());
  }
  return p;
}

StagePlan explain_stage(const config::Stage& stage, const db::ConnectionInfo& database) {
  const std::string where = fmt::format("stage {}: EXPLAIN", stage.name);
  db::Connection conn(database);
  auto params = stage_params(stage);
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  StagePlan plan;
  double jit_above_cost = 0;
  try {
    pqxx::work tx(conn.raw());
    for (const auto& [k, v] : stage.settings) tx.exec_params("SELECT set_config($1, $2, true)", k, v);
    auto r = tx.exec_params(std::string(k_explain_prefix) + stage_query(stage),
                            pqxx::prepare::make_dynamic_params(values.begin(), values.end()));
    if (r.empty() || r.columns() == 0) throw Error(ExitCode::infrastructure, where, "no output");
    plan.json = r[0][0].c_str();
    jit_above_cost = tx.exec("SELECT current_setting('jit_above_cost')::float8")[0][0].as<double>();
    tx.abort();  // EXPLAIN ANALYZE executes the statement: leave no trace of it
  } catch (const pqxx::sql_error& e) {
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

StageMeasurer::StageMeasurer(const config::Stage& stage, const RunContext& context)
    : m_stage(stage), m_ctx(context) {
  m_result.name = stage.name;
  m_result.kind = stage.is_command() ? StageKind::command : StageKind::sql;
  m_result.cold_mode = stage.cold == config::ColdMode::restart ? ColdMode::restart : ColdMode::process;
  m_result.runs = stage.runs;
  m_result.warm = stage.warm;
  m_result.settings = stage.settings;
  if (!stage.is_command()) m_query = stage_query(stage);
}

void StageMeasurer::run_once() {
  if (done()) return;
  const config::Stage& stage = m_stage;
  const RunContext& ctx = m_ctx;
  StageResult& result = m_result;
  const int run = ++m_run;
  util::throw_if_interrupted();
  if (stage.cold == config::ColdMode::restart) {
    ctx.progress->step(
        fmt::format("{}restarting the server for cold run {}/{}", ctx.label, run, stage.runs));
    ctx.provider->restart();
  }
  ctx.progress->step(fmt::format("{}cold run {}/{}", ctx.label, run, stage.runs));
  RunOutcome outcome = stage.is_command() ? command_run(stage, ctx, run, result)
                                          : sql_run(stage, ctx, run, m_query, result);
  if (!outcome.error.empty()) {
    result.error = fmt::format("cold run {}/{}: {}", run, stage.runs, outcome.error);
    // A lost server fails every later stage too: stop the run as an infrastructure error.
    if (server_gone(ctx)) {
      throw Error(ExitCode::infrastructure, "stage " + stage.name,
                  fmt::format("the PostgreSQL server stopped answering; the run stops ({})",
                              result.error.substr(0, result.error.find('\n'))));
    }
    return;
  }
  if (const Metric* wall = result.find("wall_ms"); wall && !wall->cold.empty()) {
    ctx.progress->run_done(run, stage.runs, wall->cold.back(), ctx.label);
  }
  if (!stage.snapshot) return;
  std::string canonical;
  try {
    canonical = canon::canonicalize(outcome.document, stage.snapshot->canon,
                                    fmt::format("cold run {} document", run));
  } catch (const Error& e) {
    result.error = fmt::format("cold run {}/{}: the snapshot document is not valid: {}", run,
                               stage.runs, e.message());
    return;
  }
  if (run == 1) {
    m_first_candidate = std::move(canonical);
  } else if (m_differing_run == 0 && canonical != m_first_candidate) {
    m_differing_run = run;
    m_differing = std::move(canonical);
  }
}

StageResult StageMeasurer::finish() {
  const config::Stage& stage = m_stage;
  const RunContext& ctx = m_ctx;
  StageResult result = std::move(m_result);
  if (!result.failed() && !stage.is_command()) {
    util::throw_if_interrupted();
    if (stage.cold == config::ColdMode::restart) ctx.provider->restart();
    ctx.progress->step(ctx.label + "EXPLAIN (ANALYZE, BUFFERS)");
    try {
      run_explain(stage, ctx, result);
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted || e.code() == ExitCode::infrastructure) throw;
      result.error = e.message();
    }
  }
  order_metrics(result);
  if (result.failed() || !stage.snapshot || !ctx.check_snapshots) return result;

  SnapshotResult snap;
  snap.path = shown(stage.snapshot->path);
  snap.sha256 = util::sha256_hex(m_first_candidate);
  if (m_differing_run != 0) {
    auto summary = diff::summarize(m_first_candidate, m_differing, 1);
    std::string where = summary.first.empty() ? "/" : summary.first.front().path;
    std::size_t paths = summary.changed + summary.added + summary.removed;
    snap.status = SnapshotStatus::nondeterministic;
    snap.message = fmt::format("cold runs 1 and {} loaded different documents: first difference at "
                               "{} ({} {})",
                               m_differing_run, where.empty() ? "/" : where, paths,
                               paths == 1 ? "path differs" : "paths differ");
    diff::Options o;
    o.label_a = "cold run 1";
    o.label_b = fmt::format("cold run {}", m_differing_run);
    snap.diff = diff::render(m_first_candidate, m_differing, o);
  } else {
    snapshot::Verdict v = snapshot::check({stage.name, stage.snapshot->path, stage.snapshot->canon},
                                          m_first_candidate, ctx.snapshots);
    snap.status = recorded(v.status);
    // --update-snapshots wrote the candidate over the snapshot: nothing is left to review.
    if (ctx.snapshots.update && v.status != snapshot::Status::match && v.pending.empty()) {
      snap.status = SnapshotStatus::updated;
    }
    snap.pending = v.pending.empty() ? "" : shown(v.pending);
    snap.message = v.message;
    snap.diff = v.diff;
  }
  result.snapshot = std::move(snap);
  return result;
}

StageResult run_stage(const config::Stage& stage, const RunContext& ctx) {
  StageMeasurer measurer(stage, ctx);
  while (!measurer.done()) measurer.run_once();
  return measurer.finish();
}

}  // namespace coldgate::measure
