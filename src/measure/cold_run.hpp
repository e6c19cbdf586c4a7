#pragma once

// One cold run of a stage and the stage's plan-only EXPLAIN: what runner.cpp does for each run,
// and what StageMeasurer (stage_measurer.cpp) calls in order. Internal to the measure module.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canon/canon.hpp"
#include "config/config.hpp"
#include "db/connection.hpp"
#include "db/profile.hpp"
#include "measure/runner.hpp"
#include "results/results.hpp"
#include "snapshot/snapshot.hpp"

namespace coldgate::measure {

/// What one cold run left behind besides its metrics.
struct RunOutcome {
  std::string error;     // "" when the run succeeded
  std::string document;  // the raw snapshot document (when the stage has a snapshot)
};

/// One cold run of a SQL stage: the probe child runs `query`; its metrics, and with `profile`
/// (coldgate's own connection, made on first use) the run's statements into `cold_statements`.
/// A failed run is an outcome with its error; throws Error(infrastructure, interrupted).
RunOutcome sql_run(const config::Stage& stage, const RunContext& ctx, int run,
                   const std::string& query, results::StageResult& result,
                   std::unique_ptr<db::Connection>* profile,
                   std::vector<db::StatementStats>& cold_statements);

/// One cold run of a command stage, as sql_run; whole statement texts by queryid into
/// `full_text` (for the plan-only EXPLAIN).
RunOutcome command_run(const config::Stage& stage, const RunContext& ctx, int run,
                       results::StageResult& result, std::unique_ptr<db::Connection>* profile,
                       std::vector<db::StatementStats>& cold_statements,
                       std::map<std::int64_t, std::string>& full_text);

/// The plan-only EXPLAIN of a SQL stage's query into `result.explain` (and explain/<stage>.json
/// under ctx.out_dir), on `conn` when given (capture_plans' idle one). Throws Error.
void plan_sql_stage(const config::Stage& stage, const RunContext& ctx, results::StageResult& result,
                    db::Connection* conn = nullptr);

/// The plan-only EXPLAIN of a command stage's costliest statements (`full_text`). Throws Error.
void plan_command_stage(const std::map<std::int64_t, std::string>& full_text,
                        const RunContext& ctx, results::StageResult& result);

/// The built-in metrics in report order, a command's own after them.
void order_metrics(results::StageResult& r);

/// The snapshot module's verdict as results record it (obsolete files are listed apart).
results::SnapshotStatus recorded(snapshot::Status status);

/// `line` for a message: at most 80 characters ("…" when cut), a byte that is not UTF-8 as U+FFFD.
std::string quoted_line(std::string_view line);

/// The 1-based number and text of the line of `out` that comes before a JSON document that
/// parses under `options` (a log line on a stage's stdout); nullopt when there is none.
std::optional<std::pair<std::size_t, std::string_view>> line_before_document(
    std::string_view out, const canon::Options& options);

}  // namespace coldgate::measure
