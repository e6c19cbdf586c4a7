#include "measure/plans.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstring>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "db/connection.hpp"
#include "db/database_template.hpp"
#include "db/own_connections.hpp"
#include "db/pqxx_compat.hpp"
#include "db/provider.hpp"
#include "measure/explain.hpp"
#include "measure/profile.hpp"
#include "measure/runner.hpp"
#include "results/plan.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::measure {
namespace {

// ordered: the plan keeps the member order auto_explain wrote (EXPLAIN's own order).
using nlohmann::ordered_json;

// auto_explain's message (contrib/auto_explain/auto_explain.c, explain_ExecutorEnd):
// "duration: %.3f ms  plan:\n%s", the plan text a JSON object for log_format = json.
constexpr std::string_view k_entry = "duration: ";
constexpr std::string_view k_plan = " ms  plan:\n";

// The end of the JSON value that starts at `open` ('{'): one past its matching '}', skipping
// strings and their escapes; npos when the text ends first.
std::size_t object_end(const std::string& text, std::size_t open) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = open; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string::npos;
}

std::string identifier_of(const ordered_json& j) {
  auto it = j.find("Query Identifier");
  if (it == j.end()) return "";
  if (it->is_number_integer()) return std::to_string(it->get<std::int64_t>());
  if (it->is_number_unsigned()) return std::to_string(static_cast<std::int64_t>(it->get<std::uint64_t>()));
  return "";
}

// Where the literal starting at raw[j] ends — a number, a quoted string ('…', E'…', B'…',
// X'…', N'…'), true/false or a $n parameter: what pg_stat_statements shows as $n (its
// normalization replaces constants; PostgreSQL docs, "pg_stat_statements") —; npos when none.
std::size_t literal_end(std::string_view raw, std::size_t j) {
  auto digit = [&](std::size_t k) {
    return k < raw.size() && std::isdigit(static_cast<unsigned char>(raw[k]));
  };
  auto string_end = [&](std::size_t k) -> std::size_t {  // k at the opening quote
    for (++k; k < raw.size(); ++k) {
      if (raw[k] == '\\' && k + 1 < raw.size()) {
        ++k;  // E'' strings; in a standard string a backslash is only itself, and never a quote
      } else if (raw[k] == '\'') {
        if (k + 1 < raw.size() && raw[k + 1] == '\'') {
          ++k;
        } else {
          return k + 1;
        }
      }
    }
    return std::string_view::npos;
  };
  if (j >= raw.size()) return std::string_view::npos;
  char c = raw[j];
  if (c == '$' && digit(j + 1)) {
    for (++j; digit(j); ++j) {
    }
    return j;
  }
  if (c == '\'') return string_end(j);
  if (std::strchr("EeBbXxNn", c) && j + 1 < raw.size() && raw[j + 1] == '\'') return string_end(j + 1);
  if (c == '-' || c == '.' || digit(j)) {
    std::size_t k = j + (c == '-' ? 1 : 0);
    if (!digit(k) && !(raw[k] == '.' && digit(k + 1))) return std::string_view::npos;
    while (digit(k) || (k < raw.size() && raw[k] == '.')) ++k;
    if (k < raw.size() && (raw[k] == 'e' || raw[k] == 'E') &&
        (digit(k + 1) || ((raw[k + 1] == '-' || raw[k + 1] == '+') && digit(k + 2)))) {
      k += 2;
      while (digit(k)) ++k;
    }
    return k;
  }
  for (std::string_view word : {"true", "false"}) {
    if (raw.size() - j >= word.size()) {
      bool same = true;
      for (std::size_t k = 0; k < word.size(); ++k)
        same = same && std::tolower(static_cast<unsigned char>(raw[j + k])) == word[k];
      std::size_t after = j + word.size();
      if (same && (after == raw.size() || !(std::isalnum(static_cast<unsigned char>(raw[after])) ||
                                            raw[after] == '_')))
        return after;
    }
  }
  return std::string_view::npos;
}

bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// The text with whitespace runs folded to one space and every literal as "?": one key for the
// calls of a statement that differ only in their constants.
std::string text_key(std::string_view raw) {
  std::string out;
  for (std::size_t j = 0; j < raw.size();) {
    if (space(raw[j])) {
      while (j < raw.size() && space(raw[j])) ++j;
      out += ' ';
      continue;
    }
    const bool word_before = !out.empty() && (std::isalnum(static_cast<unsigned char>(out.back())) ||
                                              out.back() == '_' || out.back() == '"');
    if (std::size_t e = word_before ? std::string_view::npos : literal_end(raw, j);
        e != std::string_view::npos) {
      out += '?';
      j = e;
      continue;
    }
    out += raw[j++];
  }
  return out;
}

}  // namespace

bool statement_instance(std::string_view normalized, std::string_view raw) {
  std::size_t i = 0, j = 0;
  // A shortened text (" …" at its end, whitespace folded) matches as a prefix.
  constexpr std::string_view ellipsis = " \u2026";
  bool prefix = normalized.size() >= ellipsis.size() &&
                normalized.substr(normalized.size() - ellipsis.size()) == ellipsis;
  if (prefix) normalized.remove_suffix(ellipsis.size());
  auto skip_space = [](std::string_view t, std::size_t& k) {
    bool any = false;
    while (k < t.size() && space(t[k])) {
      ++k;
      any = true;
    }
    return any;
  };
  while (i < normalized.size()) {
    skip_space(normalized, i);
    skip_space(raw, j);
    if (i >= normalized.size()) break;
    if (normalized[i] == '$' && i + 1 < normalized.size() &&
        std::isdigit(static_cast<unsigned char>(normalized[i + 1]))) {
      std::size_t e = literal_end(raw, j);
      if (e == std::string_view::npos) return false;
      for (++i; i < normalized.size() && std::isdigit(static_cast<unsigned char>(normalized[i]));) ++i;
      j = e;
      continue;
    }
    if (j >= raw.size() || normalized[i] != raw[j]) return false;
    ++i;
    ++j;
  }
  if (prefix) return true;
  skip_space(raw, j);
  while (j < raw.size() && raw[j] == ';') {
    ++j;
    skip_space(raw, j);
  }
  return j == raw.size();
}

std::vector<CapturedPlan> parse_plan_log(const std::string& log) {
  std::map<std::string, CapturedPlan> by_key;  // "id:" + Query Identifier, else "text:" + key
  std::size_t at = 0;
  while ((at = log.find(k_entry, at)) != std::string::npos) {
    std::size_t number = at + k_entry.size();
    std::size_t plan = log.find(k_plan, number);
    at = number;
    if (plan == std::string::npos || plan - number > 32) continue;
    double ms = 0;
    auto [end, ec] = std::from_chars(log.data() + number, log.data() + plan, ms);
    if (ec != std::errc() || end != log.data() + plan) continue;
    std::size_t open = log.find_first_not_of(" \t\r\n", plan + k_plan.size());
    if (open == std::string::npos || log[open] != '{') continue;
    std::size_t close = object_end(log, open);
    if (close == std::string::npos) break;  // the log ends mid-entry
    at = close;
    ordered_json j = ordered_json::parse(log.begin() + static_cast<std::ptrdiff_t>(open),
                         log.begin() + static_cast<std::ptrdiff_t>(close), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("Plan")) continue;
    CapturedPlan c;
    c.queryid = identifier_of(j);
    if (c.queryid == "0") c.queryid.clear();
    if (auto t = j.find("Query Text"); t != j.end() && t->is_string()) c.query = t->get<std::string>();
    if (c.queryid.empty() && c.query.empty()) continue;
    const std::string key = c.queryid.empty() ? "text:" + text_key(c.query) : "id:" + c.queryid;
    auto found = by_key.find(key);
    if (found != by_key.end() && found->second.plan.duration_ms >= ms) continue;
    c.plan.duration_ms = ms;
    c.plan.json = j["Plan"].dump();
    try {
      c.plan.shape_id = results::plan_shape_id(results::plan_nodes(c.plan.json, "plan"));
    } catch (const Error&) {
      continue;
    }
    by_key[key] = std::move(c);
  }
  std::vector<CapturedPlan> out;
  for (auto& [key, c] : by_key) out.push_back(std::move(c));
  std::stable_sort(out.begin(), out.end(), [](const CapturedPlan& a, const CapturedPlan& b) {
    return a.plan.duration_ms > b.plan.duration_ms;
  });
  return out;
}

std::string enable_plans(RunContext& ctx, const config::Database& database) {
  ctx.plans = false;
  if (!database.profile || !database.plans || !ctx.profile) return "";
  if (!ctx.provider->read_log(0)) {
    return "the statements' actual plans are not captured on an external server: coldgate "
           "cannot load auto_explain there or read its log (use the local or container "
           "provider, or `coldgate explain STAGE` for a SQL stage)";
  }
  std::unique_ptr<db::Connection> fresh;
  db::Connection& conn = db::kept_or_new(ctx.own.get(), stages_database(ctx), fresh);
  auto r = conn.exec(
      "SELECT current_setting('auto_explain.log_format', true), "
      "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)",
      "plan capture");
  const bool loaded = !r.empty() && !r[0][0].is_null() && std::string(r[0][0].c_str()) == "json";
  if (!loaded) {
    return "the statements' actual plans are not captured: the server did not preload "
           "auto_explain (its binaries lack it, or shared_preload_libraries was set without "
           "it); install PostgreSQL's contrib modules";
  }
  if (std::string(r[0][1].c_str()) != "t") {
    return "the statements' actual plans are not captured: the role may not set "
           "auto_explain.log_min_duration (a superuser setting)";
  }
  ctx.plans = true;
  return "";
}

namespace {

// Gives each plan the statement it belongs to: by "Query Identifier" when auto_explain wrote it
// (PostgreSQL 16+), else the profiled statement whose normalized text the logged text is an
// instance of; per queryid the longest call's plan, with pg_stat_statements' text. Plans of no
// profiled statement (nested ones: the profile counts top-level statements) are left out.
std::vector<CapturedPlan> resolve(std::vector<CapturedPlan> plans,
                                  const std::vector<db::StatementStats>& statements) {
  std::map<std::string, std::string> text_of;
  for (const auto& s : statements) text_of[std::to_string(s.queryid)] = s.query;
  std::map<std::string, CapturedPlan> by_id;
  for (auto& p : plans) {
    if (p.queryid.empty()) {
      for (const auto& s : statements) {
        if (statement_instance(s.query, p.query)) {
          p.queryid = std::to_string(s.queryid);
          break;
        }
      }
    }
    auto text = text_of.find(p.queryid);
    if (p.queryid.empty() || text == text_of.end()) continue;
    p.query = text->second;
    auto found = by_id.find(p.queryid);
    if (found == by_id.end() || found->second.plan.duration_ms < p.plan.duration_ms)
      by_id[p.queryid] = std::move(p);
  }
  std::vector<CapturedPlan> out;
  for (auto& [id, p] : by_id) out.push_back(std::move(p));
  std::stable_sort(out.begin(), out.end(), [](const CapturedPlan& a, const CapturedPlan& b) {
    return a.plan.duration_ms > b.plan.duration_ms;
  });
  return out;
}

// auto_explain on for the new sessions of one database, off again on every exit path (the
// server is coldgate's own, so a failure to switch it off is not the user's data at risk; the
// next stage's runs would still be slower, so it is an error when it happens during the run).
class PlanLogging {
 public:
  // Set and reset are coldgate's own writes: no isolation copy reads them as the run's.
  PlanLogging(db::Connection& conn, std::string dbname) : m_conn(conn), m_db(std::move(dbname)) {
    db::own_transactions(m_conn, [&] {
      m_conn.exec(fmt::format("ALTER DATABASE {} SET auto_explain.log_min_duration = 0",
                              m_conn.raw().quote_name(m_db)),
                  "plan capture");
    });
  }
  void off() {
    if (!m_on) return;
    m_on = false;
    db::own_transactions(m_conn, [&] {
      m_conn.exec(fmt::format("ALTER DATABASE {} RESET auto_explain.log_min_duration",
                              m_conn.raw().quote_name(m_db)),
                  "plan capture");
    });
  }
  ~PlanLogging() {
    try {
      off();
    } catch (...) {
    }
  }
  PlanLogging(const PlanLogging&) = delete;
  PlanLogging& operator=(const PlanLogging&) = delete;

 private:
  db::Connection& m_conn;
  std::string m_db;
  bool m_on = true;
};

}  // namespace

bool reads_no_user_relation(const config::Stage& stage, db::Connection& conn) {
  if (stage.is_command()) return false;  // its statements are known only once it ran
  std::string plan;
  try {
    pqxx::work tx(conn.raw());
    for (const auto& [k, v] : stage.settings)
      db::exec_params(tx, "SELECT set_config($1, $2, true)", {k, v});
    db::Params params;
    for (std::size_t i = 0; i < stage.params.size(); ++i) {
      bool null = i < stage.params_null.size() && stage.params_null[i];
      params.push_back(null ? std::nullopt : std::optional<std::string>(stage.params[i]));
    }
    // VERBOSE: each scan names its relation's schema.
    auto r = db::exec_params(tx, "EXPLAIN (VERBOSE, FORMAT JSON)\n" + stage_query(stage), params);
    if (!r.empty() && r.columns() > 0) plan = r[0][0].c_str();
    tx.abort();
  } catch (const pqxx::broken_connection& e) {
    throw Error(ExitCode::infrastructure, fmt::format("stage {}: plan run", stage.name), e.what());
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted || e.code() == ExitCode::infrastructure) throw;
    return false;
  } catch (const std::exception&) {
    return false;  // the plan run says what is wrong, as before
  }
  if (plan.empty() || !ordered_json::accept(plan)) return false;
  for (const auto& [schema, name] : plan_scans(plan)) {
    if (schema != "pg_catalog" && schema != "information_schema") return false;
  }
  return true;
}

std::vector<CapturedPlan> capture_plans(const config::Stage& stage, const RunContext& ctx,
                                        std::unique_ptr<db::Connection>* idle) {
  const std::string where = fmt::format("stage {}: plan run", stage.name);
  static std::atomic<int> counter{0};
  const std::string marker =
      fmt::format("coldgate plan run end {}-{}", ::getpid(), counter.fetch_add(1));
  // `isolation: run`: the plan run starts from the database as setup left it, as each measured
  // run did; before auto_explain is set on it, since a copy carries only setup's settings.
  if (stage.isolation == config::Isolation::run && fresh_copy_before(stage, ctx, 1) &&
      ctx.isolation->restore()) {
    ctx.progress->line(ctx.label + stage.name + ": fresh copy of the database for the plan run");
  }
  auto kept = std::make_unique<db::Connection>(db::with_client_defaults(stages_database(ctx)));
  db::Connection& admin = *kept;  // opened before the plan run: its statements have no plans
  // `select 1`, a catalog query: auto_explain would show a plan without a table scan, which no
  // diagnosis reads, for ~150 ms a stage. Its EXPLAIN is gone with the profile's reset below.
  if (reads_no_user_relation(stage, admin)) {
    if (idle) *idle = std::move(kept);  // its transaction rolled back: nothing of it stays
    return {};
  }
  auto before = ctx.provider->read_log(0);
  if (!before) return {};
  const std::uint64_t from = before->size();
  config::Stage once = stage;
  once.runs = 1;
  once.warm = 0;
  once.cold = config::ColdMode::process;
  RunContext plan_ctx = ctx;
  plan_ctx.profile = false;  // the measured runs' profile is read already; nothing to reset
  plan_ctx.plans = false;
  plan_ctx.isolation.reset();  // a copy now would drop the auto_explain setting made above
  plan_ctx.check_snapshots = false;
  plan_ctx.label = ctx.label + "plan run: ";
  plan_ctx.measured = false;
  std::vector<db::StatementStats> statements;
  try {
    db::reset_profile(admin.raw());
    {
      PlanLogging logging(admin, stages_database(ctx).dbname);
      StageMeasurer m(once, plan_ctx);
      m.run_once();  // a failed run keeps what it logged before it failed
      logging.off();
    }
    statements = db::read_profile(admin.raw(), probe_statements());
  } catch (const pqxx::failure& e) {
    throw Error(ExitCode::infrastructure, where, e.what());
  }
  // The backends wrote their entries before their clients saw the statements end; a container's
  // log reaches `logs` through the engine a moment later: wait for a line written after them.
  admin.exec(fmt::format("DO $$BEGIN RAISE LOG '{}'; END$$", marker), where);
  std::string log;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    util::throw_if_interrupted();
    log = ctx.provider->read_log(from).value_or("");
    std::size_t end = log.find(marker);
    if (end != std::string::npos) {
      log.resize(end);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw Error(ExitCode::infrastructure, where,
                  "the server's log did not show the plan run's end within 30 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return resolve(parse_plan_log(log), statements);
}

void attach_plans(std::vector<results::QueryStats>& queries, const std::vector<CapturedPlan>& plans) {
  std::map<std::string, const CapturedPlan*> by_id;
  for (const auto& p : plans) by_id.emplace(p.queryid, &p);
  for (auto& q : queries) {
    auto it = by_id.find(q.queryid);
    if (it != by_id.end()) q.plan = it->second->plan;
  }
}

}  // namespace coldgate::measure
