#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/results.hpp"

namespace coldgate::history {

/// Schema name of every history file (docs/architecture.md "History"); a file of another
/// schema is skipped with a warning naming it.
inline constexpr std::string_view k_history_schema = "coldgate-history/1";

/// One stage of a recorded run, reduced to what the history needs.
struct StagePoint {
  std::string name;
  results::StageKind kind = results::StageKind::sql;
  results::ColdMode cold_mode = results::ColdMode::process;
  int runs = 0;
  int warm = 0;
  std::map<std::string, std::string> settings;
  bool failed = false;   // the stage failed in the recorded run: its samples are not a baseline
  std::string snapshot;  // the snapshot status name ("match", "changed", …), "" without one
  /// Every metric with its raw cold and warm samples, in results order.
  std::vector<std::pair<std::string, results::Metric>> metrics;
  /// The metrics the recorded run's own gate called a regression (the page marks them).
  std::vector<std::string> regressions;
  /// The stage's statement table as results.json's `stages[].queries` holds it (per statement
  /// the medians per cold run; text_id, query, queryid, calls, rows, plan_ms, exec_ms, jit_ms,
  /// jit_functions, blocks, blocks_per_call; total_cost is left out). nullopt: the record has no
  /// table (the stage was not profiled, or an older coldgate recorded it) — not the same as an
  /// empty table, a profiled stage that ran no statement.
  std::optional<std::vector<results::QueryStats>> queries;
  /// The metric called `name`, or nullptr.
  const results::Metric* find(std::string_view name) const;
};

/// One commit's recorded results: one small JSON file in a history store (`<commit>.json`).
struct Record {
  std::string commit;       // full SHA (40 or 64 hex digits)
  std::string parent;       // its first parent's SHA, "" for a root commit
  std::string branch;       // the branch it was recorded on ("main")
  std::string subject;      // the commit message's first line
  std::string date;         // the commit's committer date (UTC, RFC 3339)
  std::string recorded_at;  // when `history record` ran (UTC, RFC 3339)
  std::string tool_version;
  std::string fingerprint;  // ab::fingerprint of the environment and config: comparable runs
  std::string ci_run_url;   // the CI job that measured it, "" outside CI
  results::Environment environment;
  std::vector<StagePoint> stages;  // in the recorded run's stage order
  /// The stage called `name`, or nullptr.
  const StagePoint* find(std::string_view name) const;
};

/// What `history record` learns of the commit from git, beside the results.
struct CommitFacts {
  std::string parent;
  std::string subject;
  std::string date;
};

/// The record of `results` (a finished run: its commit, environment and stages with every
/// sample, the statement table of each profiled stage, the metrics its own gate called a
/// regression; plans, planner costs, snapshot diffs and remedies are left out). Throws Error(usage) at `source` (the results file as given) when
/// the results name no commit or the run stopped before measuring every stage.
Record reduce(const results::Results& results, const CommitFacts& facts, std::string branch,
              std::string fingerprint, std::string recorded_at, const std::string& source);

/// The file name of `record` in a store: `<commit>.json`.
std::string file_name(const Record& record);

/// `record` as a history file: JSON, two-space indent, members in a fixed order, one final
/// newline; numbers as results.json writes them. Byte-stable: equal records, equal bytes.
std::string to_json(const Record& record);

/// The record in `text`, validated: schema `coldgate-history/1`, every required member of the
/// right type, SHAs as hex, finite non-negative samples for ms/bytes, statement figures finite
/// and non-negative, a text_id of 16 hex digits, a queryid of decimal digits. Members it does
/// not know are skipped (a newer coldgate's additions). Throws Error(usage) whose
/// `where` is `name` and whose text names the member ("stages[2].metrics.wall_ms.cold[0]: …")
/// or the schema found ("written by a newer coldgate: coldgate-history/2").
Record from_json(std::string_view text, const std::string& name);

}  // namespace coldgate::history
