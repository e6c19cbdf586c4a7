#include "measure/trial.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <random>

#include <unistd.h>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "db/database_template.hpp"
#include "db/provider.hpp"
#include "measure/runner.hpp"
#include "diff/diff.hpp"
#include "results/format.hpp"
#include "util/error.hpp"
#include "util/process.hpp"
#include "util/secrets.hpp"
#include "util/text.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

// The metrics a remedy is judged by, as the trial keeps them.
const std::vector<std::string>& trial_metrics() {
  static const std::vector<std::string> k_names = {"wall_ms",    "db_queries", "db_plan_ms",
                                                   "db_exec_ms", "db_jit_ms",  "db_jit_functions"};
  return k_names;
}

// Drops the copies that trials left on this server when their run could not (the server was
// lost under it, or coldgate was SIGKILLed): those whose comment names an owner of this machine
// that no longer runs. Copies of running trials and of other machines are left alone; a copy
// that cannot be dropped (another run drops it, no privilege) is left for the next trial.
void drop_stale_copies(db::Connection& admin) {
  auto rows = admin.exec_params(
      "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database WHERE "
      "starts_with(shobj_description(oid, 'pg_database'), $1)",
      {std::string(k_trial_copy_comment)}, "remedy trial: database copy");
  for (const auto& row : rows) {
    std::string comment = row[1].c_str();
    if (!db::owner_tag_gone(comment.substr(k_trial_copy_comment.size()))) continue;
    try {
      admin.exec("DROP DATABASE IF EXISTS " + admin.raw().quote_name(row[0].c_str()) +
                     " WITH (FORCE)",
                 "remedy trial: database copy");
    } catch (const Error& e) {
      if (e.code() == ExitCode::infrastructure || e.code() == ExitCode::interrupted) throw;
    }
  }
}

// This trial's own copy name, "<source>_try_<tag>_<pid>_<random>", within PostgreSQL's 63 bytes
// (NAMEDATALEN − 1; a longer name is cut, so two runs' names could meet): the source name is
// cut at a character boundary instead, and the random part keeps apart runs of one PID on
// other machines that use the same server. CREATE DATABASE fails rather than reuse a name.
std::string copy_name(const std::string& source, const std::string& tag) {
  std::random_device device;
  const std::string suffix = fmt::format("_try_{}_{}_{:06x}", tag, ::getpid(), device() & 0xFFFFFFu);
  const std::size_t room = 63 - suffix.size();
  std::size_t cut = 0;
  while (cut < source.size()) {
    std::size_t len = std::max<std::size_t>(1, util::utf8_sequence_length(source, cut));
    if (cut + len > room) break;
    cut += len;
  }
  return source.substr(0, cut) + suffix;
}

// A copy of the stages' database for a variant that changes it (CREATE DATABASE … TEMPLATE: the
// data and its statistics, or their absence, as they are), with the variant's statements run
// and its tables ANALYZEd there; dropped on every exit path that has a server to drop it on,
// else by the next trial on that server (drop_stale_copies). `tag` names it ("analyze",
// "index", "stats"), `what` its errors' context.
class DatabaseCopy {
 public:
  DatabaseCopy(const db::ConnectionInfo& source, const std::string& tag, const std::string& what,
               const std::vector<std::string>& statements, const std::vector<std::string>& tables)
      : m_copy((drop_stale(source), source), copy_name(source.dbname, tag),
               std::string(k_trial_copy_comment) + db::owner_tag(), what,
               [&](const db::ConnectionInfo& info) {
                 db::Connection copy(db::with_client_defaults(info));
                 for (const auto& sql : statements) copy.exec(sql, what);
                 for (const auto& t : tables) {
                   std::string quoted;
                   for (std::size_t start = 0;;) {  // schema.name, each part quoted
                     std::size_t dot = t.find('.', start);
                     quoted += (quoted.empty() ? "" : ".") +
                               copy.raw().quote_name(
                                   t.substr(start, dot == std::string::npos ? dot : dot - start));
                     if (dot == std::string::npos) break;
                     start = dot + 1;
                   }
                   copy.exec("ANALYZE " + quoted, what);
                 }
               }) {}
  const db::ConnectionInfo& info() const { return m_copy.info(); }

 private:
  // Copies that trials of gone runs left on this server, dropped before a new one is made.
  static void drop_stale(const db::ConnectionInfo& source) {
    db::ConnectionInfo admin = source;
    admin.dbname = "postgres";
    db::Connection conn(db::with_client_defaults(admin));
    drop_stale_copies(conn);
  }
  db::DatabaseCopy m_copy;
};

std::optional<double> plan_cost(const config::Stage& stage, const db::ConnectionInfo& database) {
  if (stage.is_command()) return std::nullopt;
  try {
    return explain_stage(stage, database, /*analyze=*/false).explain.total_cost;
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted || e.code() == ExitCode::infrastructure) throw;
    return std::nullopt;
  }
}

std::string seconds(double ms) {
  return format_value(ms, "ms");
}

// Adds to `m` the figures of statement `key` (text_id, else queryid) in each cold run that
// called it: calls, shared blocks (hit + read) per call, plan + execution ms per call, summed
// over the queryids that `queries` (the variant's statement table) gives that text.
void add_statement_runs(Remedy& m, const std::string& key, const std::vector<QueryStats>& queries,
                        const std::vector<std::vector<db::StatementStats>>& runs) {
  std::vector<std::string> ids;
  for (const auto& q : queries) {
    if (q.text_id == key || q.queryid == key) ids.push_back(q.queryid);
  }
  if (ids.empty()) return;
  Metric calls{"count", {}, {}}, blocks{"count", {}, {}}, server{"ms", {}, {}};
  for (const auto& run : runs) {
    double c = 0, b = 0, ms = 0;
    for (const auto& st : run) {
      if (std::find(ids.begin(), ids.end(), std::to_string(st.queryid)) == ids.end()) continue;
      c += st.calls;
      b += st.shared_hit_blocks + st.shared_read_blocks;
      ms += st.plan_ms + st.exec_ms;
    }
    if (c <= 0) continue;
    calls.cold.push_back(c);
    blocks.cold.push_back(b / c);
    server.cold.push_back(ms / c);
  }
  m.metrics.emplace_back(statement_metric(StatementFigure::calls, key), std::move(calls));
  m.metrics.emplace_back(statement_metric(StatementFigure::blocks_per_call, key),
                         std::move(blocks));
  m.metrics.emplace_back(statement_metric(StatementFigure::server_ms_per_call, key),
                         std::move(server));
}

}  // namespace

std::vector<TrialVariant> remedies_for(const config::Stage& stage,
                                       const std::vector<Diagnosis>& diagnoses,
                                       const std::vector<std::string>& never_analyzed) {
  std::vector<TrialVariant> out;
  auto has = [&](DiagnosisKind kind) {
    return std::any_of(diagnoses.begin(), diagnoses.end(), [&](const Diagnosis& d) {
      return d.stage == stage.name && d.kind == kind;
    });
  };
  auto facts = [&](DiagnosisKind kind, const char* fact) {
    std::vector<std::pair<std::string, std::string>> list;  // (fact, table), each fact once
    for (const auto& d : diagnoses) {
      if (d.stage != stage.name || d.kind != kind) continue;
      auto f = d.facts.find(fact);
      if (f == d.facts.end() || f->second.empty()) continue;
      auto t = d.facts.find("table");
      std::pair<std::string, std::string> item{f->second, t == d.facts.end() ? "" : t->second};
      if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
    }
    return list;
  };
  // The statements (queryids) whose `kind` diagnoses give `fact` the value `value` ("" any).
  auto aimed = [&](DiagnosisKind kind, const char* fact, const std::string& value) {
    std::vector<std::string> ids;
    for (const auto& d : diagnoses) {
      if (d.stage != stage.name || d.kind != kind || d.queryid.empty()) continue;
      auto f = d.facts.find(fact);
      if (!value.empty() && (f == d.facts.end() || f->second != value)) continue;
      if (std::find(ids.begin(), ids.end(), d.queryid) == ids.end()) ids.push_back(d.queryid);
    }
    return ids;
  };
  if (has(DiagnosisKind::jit_dominates)) {
    out.push_back({"jit = off", {{"jit", "off"}}, false, {}, {}});
    out.push_back({"JIT without inlining and optimization",
                   {{"jit_inline_above_cost", "-1"}, {"jit_optimize_above_cost", "-1"}},
                   false,
                   {},
                   {}});
    if (!stage.is_command()) out.push_back({"prepared statement", {}, true, {}, {}, {}, RemedyKind::prepared});
  }
  std::vector<std::string> analyze;
  if (has(DiagnosisKind::never_analyzed)) analyze = never_analyzed;
  for (const auto& [table, unused] : facts(DiagnosisKind::misestimate, "table")) {
    if (std::find(analyze.begin(), analyze.end(), table) == analyze.end()) analyze.push_back(table);
  }
  if (!analyze.empty()) {
    // Fresh statistics of never-analyzed tables may change any statement: stage-wide then.
    const bool stage_wide = has(DiagnosisKind::never_analyzed) && !never_analyzed.empty();
    out.push_back({"ANALYZE", {}, false, analyze, {},
                   stage_wide ? std::vector<std::string>{} : aimed(DiagnosisKind::misestimate, "table", ""),
                   RemedyKind::analyze});
  }
  for (const auto& [index, table] : facts(DiagnosisKind::missing_index, "index")) {
    out.push_back({index, {}, false, {}, {index}, aimed(DiagnosisKind::missing_index, "index", index),
                   RemedyKind::index});
  }
  for (const auto& [statistics, table] : facts(DiagnosisKind::misestimate, "statistics")) {
    std::vector<std::string> tables;
    if (!table.empty()) tables.push_back(table);
    out.push_back({statistics, {}, false, tables, {statistics},
                   aimed(DiagnosisKind::misestimate, "statistics", statistics), RemedyKind::statistics});
  }
  for (const auto& r : stage.remedies) out.push_back({r.name, r.settings, false, {}, {}});
  return out;
}

std::vector<Remedy> try_remedies(const config::Stage& stage, const StageResult& measured,
                                 const std::vector<Diagnosis>& diagnoses, const RunContext& ctx,
                                 int stage_index) {
  auto variants = remedies_for(
      stage, diagnoses,
      measured.explain ? measured.explain->never_analyzed : std::vector<std::string>{});
  if (variants.empty()) return {};
  // The statements the plan diagnoses name, by the text that pairs them across databases.
  auto key_of = [&](const std::string& queryid) {
    for (const auto& q : measured.queries) {
      if (q.queryid == queryid && !q.text_id.empty()) return q.text_id;
    }
    return queryid;
  };
  std::vector<std::string> statements;
  for (const auto& d : diagnoses) {
    if (d.stage != stage.name || d.queryid.empty() ||
        (d.kind != DiagnosisKind::missing_index && d.kind != DiagnosisKind::misestimate)) {
      continue;
    }
    std::string key = key_of(d.queryid);
    if (std::find(statements.begin(), statements.end(), key) == statements.end()) {
      statements.push_back(key);
    }
  }
  for (auto& v : variants) {
    std::vector<std::string> keys;
    for (const auto& id : v.statements) {
      std::string key = key_of(id);
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
    v.statements = std::move(keys);
  }
  if (stage_index > 0) ctx.progress->stage_start(stage_index, stage.name);
  ctx.progress->line(fmt::format("{}: trying {} remed{} ({} cold runs each, interleaved with as "
                                 "is)",
                                 stage.name, variants.size(), variants.size() == 1 ? "y" : "ies",
                                 stage.try_runs));
  std::vector<Remedy> trial;
  try {
    trial = run_trial(stage, variants, ctx, statements);
  } catch (const pqxx::failure& e) {
    // A connection whose server died fails on its next call with whatever libpqxx says
    // ("Could not obtain client encoding"): say what happened instead.
    util::throw_if_interrupted();
    throw Error(ExitCode::infrastructure, "stage " + stage.name + " (--try)",
                server_gone(ctx)
                    ? fmt::format("the PostgreSQL server stopped answering while trying remedies; "
                                  "the run stops ({})",
                                  util::trim(e.what()))
                    : fmt::format("lost connection to the server while trying remedies: {}",
                                  util::trim(e.what())));
  }
  for (auto& r : trial) r.error = util::mask_secrets(r.error);
  return trial;
}

std::vector<std::size_t> trial_order(std::size_t variants, int runs) {
  std::vector<std::size_t> out;
  for (int round = 0; round < runs; ++round) {
    for (std::size_t v = 0; v < variants; ++v) out.push_back(v);
  }
  return out;
}

std::vector<Remedy> run_trial(const config::Stage& stage, const std::vector<TrialVariant>& variants,
                              const RunContext& ctx, const std::vector<std::string>& statements) {
  auto t0 = std::chrono::steady_clock::now();
  const db::ConnectionInfo& database = stages_database(ctx);

  // Each variant: its stage (settings merged, cold runs only, try_runs of them) and context.
  struct Arm {
    TrialVariant variant;
    config::Stage stage;
    RunContext ctx;
    std::unique_ptr<StageMeasurer> measurer;
    std::string note;
    std::string error;  // the variant could not be set up (its runs are not made)
  };
  std::vector<Arm> arms;
  arms.push_back({{"as is", {}, false, {}, {}, {}, RemedyKind::as_is}, stage, ctx, nullptr, "", ""});
  for (const auto& v : variants) arms.push_back({v, stage, ctx, nullptr, "", ""});

  // An infrastructure error (the server lost) stops the run; its message names the variant whose
  // step it interrupted, so that the run's one error line says where the trial was.
  auto in_arm = [&](const Arm& arm, const auto& step) {
    try {
      step();
    } catch (const Error& e) {
      if (e.code() != ExitCode::infrastructure) throw;
      const std::string where = "stage " + stage.name;
      std::string what = e.where() == where ? e.what() : e.message();
      throw Error(e.code(), where,
                  fmt::format("{}: {}",
                              &arm == &arms.front() ? std::string("remedy trial, the stage as is")
                                                    : fmt::format("remedy `{}`", arm.variant.name),
                              what));
    }
  };

  std::vector<std::unique_ptr<DatabaseCopy>> copies;  // one per variant that changes the database
  // Under `isolation: run` or `stage` a remedy's copy is made from the database as setup left
  // it, not as the stage's last run did; its runs then share the copy, as a stage's do.
  if (fresh_copy_before(stage, ctx, 1) &&
      std::any_of(variants.begin(), variants.end(), [](const TrialVariant& v) {
        return !v.analyze.empty() || !v.copy_sql.empty();
      })) {
    in_arm(arms.front(), [&] { ctx.isolation->restore(); });
  }
  const bool prepared = std::any_of(variants.begin(), variants.end(),
                                    [](const TrialVariant& v) { return v.prepared; });
  for (std::size_t i = 0; i < arms.size(); ++i) {
    Arm& arm = arms[i];
    arm.stage.runs = stage.try_runs;
    // A prepared statement's second execution, and as is's for comparison.
    arm.stage.warm = arm.variant.prepared || (i == 0 && prepared) ? 1 : 0;
    for (const auto& [k, v] : arm.variant.settings) arm.stage.settings[k] = v;
    arm.ctx.check_snapshots = false;
    arm.ctx.plans = false;  // the measured runs' profile is what the trial compares
    arm.ctx.prepared = arm.variant.prepared;
    arm.ctx.label = fmt::format("{}try {}: ", ctx.label, arm.variant.name);
    if (!arm.variant.analyze.empty() || !arm.variant.copy_sql.empty()) {
      const bool analyze_only = arm.variant.copy_sql.empty();
      const std::string tag = analyze_only ? "analyze"
                              : arm.variant.copy_sql.front().rfind("CREATE INDEX", 0) == 0
                                  ? "index"
                                  : "stats";
      const std::string what =
          analyze_only ? "remedy trial: ANALYZE" : fmt::format("remedy trial: {}", arm.variant.name);
      in_arm(arm, [&] {
        std::optional<double> before = plan_cost(stage, database);
        try {
          copies.push_back(std::make_unique<DatabaseCopy>(database, tag, what,
                                                          arm.variant.copy_sql,
                                                          arm.variant.analyze));
        } catch (const Error& e) {
          if (e.code() == ExitCode::interrupted || e.code() == ExitCode::infrastructure) throw;
          // Another session on the database (an external server's), no CREATEDB right, a
          // statement the copy refuses…: this variant is not measured, the others are.
          std::string message = e.message();
          arm.error = fmt::format("could not copy the database to {} in it: {}",
                                  analyze_only ? "ANALYZE" : "run `" + arm.variant.name + "`",
                                  message.substr(0, message.find('\n')));
          return;
        }
        arm.ctx.database = copies.back()->info();
        std::optional<double> after = plan_cost(stage, copies.back()->info());
        if (before && after) {
          arm.note = fmt::format("cost estimate {} → {}", format_value(std::round(*before), "count"),
                                 format_value(std::round(*after), "count"));
        }
      });
    }
  }
  // Both sides start equally cold. A remedy's copy is new to the server (no page of it in the
  // buffers, its catalog caches and relcache init file still to be built) and the work that made
  // it (CREATE INDEX's scan, ANALYZE's sample) may have read its tables into the buffers, while
  // the stages' database is as the stage's own runs left it. So "as is" gets a copy made the
  // same way (nothing run in it), and one restart after all copies empties the server's buffers
  // for every variant alike; each variant's later runs then find what its own earlier runs left,
  // as a stage's do. With `cold: restart` every run restarts the server anyway.
  std::string equal_start;
  if (!copies.empty()) {
    in_arm(arms.front(), [&] {
      try {
        copies.push_back(std::make_unique<DatabaseCopy>(
            database, "asis", "remedy trial: the stage as is", std::vector<std::string>{},
            std::vector<std::string>{}));
        arms.front().ctx.database = copies.back()->info();
        equal_start = "as is ran in a copy made like the remedies'";
      } catch (const Error& e) {
        if (e.code() == ExitCode::interrupted || e.code() == ExitCode::infrastructure) throw;
        equal_start = "as is ran in the stages' database (no copy: " +
                      e.message().substr(0, e.message().find('\n')) + ")";
      }
      if (stage.cold == config::ColdMode::restart) return;
      if (ctx.provider->name() == "external") {
        // Not coldgate's server: restarted only where the config asks for it (`cold: restart`).
        equal_start += ", without a server restart (an external server's buffers may hold more "
                       "of one copy than of another)";
        return;
      }
      ctx.progress->step(ctx.label + "restarting the server so that every variant starts cold");
      if (ctx.isolation) ctx.isolation->disconnect();  // the restart ends its backend
      ctx.provider->restart();
      equal_start += ", after one server restart";
    });
  }
  for (auto& arm : arms) arm.measurer = std::make_unique<StageMeasurer>(arm.stage, arm.ctx);

  int runs = 0;
  for (std::size_t i : trial_order(arms.size(), stage.try_runs)) {
    if (!arms[i].error.empty() || arms[i].measurer->done()) continue;
    in_arm(arms[i], [&] { arms[i].measurer->run_once(); });
    ++runs;
  }

  std::vector<Remedy> out;
  const std::string& as_is_candidate = arms.front().measurer->first_candidate();
  for (std::size_t i = 0; i < arms.size(); ++i) {
    Arm& arm = arms[i];
    StageResult r;
    if (arm.error.empty()) {
      in_arm(arm, [&] { r = arm.measurer->finish(); });
    } else {
      r.error = arm.error;
    }
    Remedy m;
    m.stage = stage.name;
    m.remedy = arm.variant.name;
    m.kind = arm.variant.kind;
    m.settings = arm.variant.settings;
    m.second_execution = arm.variant.prepared;
    m.error = r.error;
    m.note = arm.note;
    for (const auto& key : statements) {
      for (const auto& q : r.queries) {
        if ((q.text_id == key || q.queryid == key) && q.blocks_per_call) {
          m.statement_blocks_per_call[key] = *q.blocks_per_call;
          break;
        }
      }
    }
    for (const auto& name : trial_metrics()) {
      if (const Metric* metric = r.find(name)) m.metrics.emplace_back(name, *metric);
    }
    // The statement's own figures in each cold run: as is's for every diagnosed statement, a
    // remedy's for those it is aimed at, which its verdict rests on.
    for (const auto& key : i == 0 ? statements : arm.variant.statements) {
      add_statement_runs(m, key, r.queries, arm.measurer->cold_statements());
    }
    const std::string& candidate = arm.measurer->first_candidate();
    if (stage.snapshot && r.error.empty() && !as_is_candidate.empty()) {
      m.snapshot_identical = candidate == as_is_candidate;
      if (!*m.snapshot_identical) {
        m.first_difference = diff::summarize(as_is_candidate, candidate, 1).first_path();
      }
    }
    out.push_back(std::move(m));
  }
  // The second execution in the same session, prepared against as is: what a statement cache
  // saves once the first execution has paid for the plan (and for JIT, which is not cached).
  for (auto& m : out) {
    if (!m.second_execution) continue;
    auto second = [](const Remedy& r) -> std::optional<double> {
      const Metric* w = r.find("wall_ms");
      if (!w || w->warm.empty()) return std::nullopt;
      return median(w->warm);
    };
    if (auto p = second(m), a = second(out.front()); p && a) {
      m.note = fmt::format("second execution in the same session: {} (as is: {})", seconds(*p),
                           seconds(*a));
    }
  }
  double elapsed =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::string trial = fmt::format("the trial: {} cold runs of {} variants in {}", runs,
                                  arms.size(), seconds(elapsed));
  if (!equal_start.empty()) trial += "; " + equal_start;
  out.front().note = out.front().note.empty() ? trial : out.front().note + "; " + trial;
  return out;
}

}  // namespace coldgate::measure
