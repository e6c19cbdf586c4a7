#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "results/results.hpp"

namespace coldgate::db {
class Connection;
}  // namespace coldgate::db

namespace coldgate::measure {

struct RunContext;

/// One statement's plan as a plan run captured it: its queryid, its text and the costliest
/// call's plan.
struct CapturedPlan {
  /// pg_stat_statements.queryid as decimal text; "" in parse_plan_log()'s entries that had no
  /// "Query Identifier" (before PostgreSQL 16), which capture_plans() resolves by text
  std::string queryid;
  /// parse_plan_log(): "Query Text", the statement as the client sent it (constants inline);
  /// capture_plans(): pg_stat_statements' normalized text
  std::string query;
  results::StatementPlan plan;
};

/// The plans auto_explain wrote (auto_explain.log_format = json, log_verbose on) into a server
/// log's text (stderr format, any log_line_prefix; continuation lines tab-indented): per
/// "Query Identifier" (PostgreSQL 16+ writes it), else per text with its constants left out,
/// the entry with the longest "duration: N ms", its "Plan" object and shape; costliest first.
/// Entries whose JSON does not parse (a log cut mid-entry) are skipped.
std::vector<CapturedPlan> parse_plan_log(const std::string& log);

/// True when `raw` (a statement as a client sent it) is an instance of `normalized`
/// (pg_stat_statements' text, whose constants are $1, $2 …; also a shortened one ending in
/// " …", matched as a prefix): the same text, whitespace aside, with a literal — a number, a
/// quoted string, true/false or a $n parameter — wherever `normalized` has $n.
bool statement_instance(std::string_view normalized, std::string_view raw);

/// Checks that the stages' database can capture plans: the provider started the server
/// (local, container) with auto_explain preloaded (db::with_profile_settings) and the role may
/// set auto_explain.log_min_duration for a database. Sets ctx.plans; returns "" when it can (or
/// `database.profile` or `database.plans` is false), else the one-line note results.plans_note shows. Throws
/// Error(infrastructure) when the server is lost.
std::string enable_plans(RunContext& ctx, const config::Database& database);

/// True when `stage` is a SQL stage whose plan-only EXPLAIN (VERBOSE), run on `conn` with its
/// settings and params and rolled back, scans no relation outside pg_catalog and
/// information_schema (`select 1`, a catalog query): its plan run would show no table scan, so
/// capture_plans() skips it. False for a command stage or an EXPLAIN that fails. Throws
/// Error(infrastructure) when the connection is lost.
bool reads_no_user_relation(const config::Stage& stage, db::Connection& conn);

/// One cold run of `stage` that is not measured (no warm repetitions, no snapshot check), with
/// auto_explain on for the stages' database (ALTER DATABASE … SET auto_explain.log_min_duration
/// = 0, reset on every exit path; pg_stat_statements reset before it and read after it, on a
/// connection opened before): the actual plans of the statements it ran, each with its queryid
/// and normalized text, costliest first; none, without a run, when reads_no_user_relation().
/// A run that fails gives the plans logged before it failed. Throws Error(infrastructure) when
/// the server is lost, Error(interrupted) on SIGINT/SIGTERM. When it makes no run, it hands its
/// connection to the stages' database to `*idle` (when given), for the plan-only EXPLAIN next.
std::vector<CapturedPlan> capture_plans(const config::Stage& stage, const RunContext& ctx,
                                        std::unique_ptr<db::Connection>* idle = nullptr);

/// Attaches to each of `queries` the plan of the same queryid from `plans` (QueryStats::plan).
void attach_plans(std::vector<results::QueryStats>& queries, const std::vector<CapturedPlan>& plans);

}  // namespace coldgate::measure
