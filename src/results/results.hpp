#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/growth_class.hpp"
#include "results/migration.hpp"
#include "util/statement_text.hpp"

namespace coldgate::results {

/// Schema name written into results.json (docs/architecture.md "Results JSON").
inline constexpr std::string_view k_results_schema = "coldgate-results/1";

/// A stage's snapshot after the run: byte-identical to the committed file (match); differing
/// (changed); no committed file (missing); a committed file that is canonical JSON under no
/// arrangement (malformed); two cold runs that loaded different documents (nondeterministic);
/// written over the committed file by --update-snapshots (updated); or the committed content
/// arranged under other rules, identical once arranged under the current ones (rearranged: it
/// fails, as the file is not byte-identical). docs/architecture.md "Snapshot statuses".
enum class SnapshotStatus { match, changed, missing, malformed, nondeterministic, updated, rearranged };

/// A gated metric's verdict, head against base (docs/architecture.md "The gate"); `added` is
/// written "new" (a C++ keyword): only head has the stage or metric.
enum class Verdict { regression, slower, faster, same, added, removed };

/// What a stage runs: a SQL query in coldgate's probe, or the user's command.
enum class StageKind { sql, command };

/// How each cold run is made cold: a fresh process, or a server restart before it as well.
enum class ColdMode { process, restart };

/// A diagnosis against the baseline (gate::mark_diagnoses): none without a baseline; added
/// (this pull request added it: "new"), worse (base had it with far fewer calls; data
/// "base_calls"), gone (base had it, head does not: fixed), also_in_base.
enum class DiagnosisChange { none, added, worse, gone, also_in_base };

/// What a diagnosis found (measure::diagnose): JIT compile time dominating the server time; one
/// statement repeated per row or per loop; tables never analyzed; planning longer than
/// execution; a filter an index would serve and a row estimate far off (the last two from the
/// statements' actual plans); blocks per call growing with the data scales while rows per call
/// stay flat. results.json writes them "jit_dominates", "repeated_query", …
enum class DiagnosisKind {
  jit_dominates,
  repeated_query,
  never_analyzed,
  planning_exceeds_execution,
  missing_index,
  misestimate,
  scan_grows
};

/// The names results.json and the reports use: "match", "regression", "new", "sql", "restart".
std::string_view to_string(SnapshotStatus status);
std::string_view to_string(Verdict verdict);
std::string_view to_string(StageKind kind);
std::string_view to_string(ColdMode mode);
/// "new", "worse", "gone", "also_in_base"; "" for none (results.json writes null).
std::string_view to_string(DiagnosisChange change);
/// "jit_dominates", "repeated_query", "never_analyzed", "planning_exceeds_execution",
/// "missing_index", "misestimate", "scan_grows".
std::string_view to_string(DiagnosisKind kind);

/// The value named `text` (as to_string writes it); nullopt for any other text.
std::optional<SnapshotStatus> snapshot_status_from(std::string_view text);
std::optional<Verdict> verdict_from(std::string_view text);
std::optional<StageKind> stage_kind_from(std::string_view text);
std::optional<ColdMode> cold_mode_from(std::string_view text);
std::optional<DiagnosisChange> diagnosis_change_from(std::string_view text);
std::optional<DiagnosisKind> diagnosis_kind_from(std::string_view text);

/// True for the snapshot statuses that pass the gate: match, and updated (written locally).
bool passes(SnapshotStatus status);

/// One metric's raw samples: cold runs (one per fresh process) and warm repetitions apart.
struct Metric {
  std::string unit;          // "ms", "bytes", "count", or a command's own unit
  std::vector<double> cold;  // one sample per cold run, in run order
  std::vector<double> warm;  // warm repetitions, in order (run 1's, then run 2's, …)
  /// The samples the gate reads (docs/architecture.md "The gate"): the cold ones; the warm
  /// ones only when there are no cold samples.
  const std::vector<double>& gated() const { return cold.empty() ? warm : cold; }
};

/// The server-side split of one EXPLAIN (ANALYZE, BUFFERS, TIMING, FORMAT JSON) run
/// (PostgreSQL docs, "EXPLAIN"; the JIT block: "JIT" → "Functions", "Timing").
struct Explain {
  double planning_ms = 0;
  double execution_ms = 0;
  double total_cost = 0;  // the top plan node's "Total Cost" (the planner's estimate)
  bool jit = false;       // a JIT block was present (JIT fired)
  double jit_functions = 0;
  double jit_generation_ms = 0;
  double jit_inlining_ms = 0;
  double jit_optimization_ms = 0;
  double jit_emission_ms = 0;
  double jit_total_ms = 0;
  std::string plan_file;      // where the whole plan was written (coldgate-out/explain/…)
  double jit_above_cost = 0;  // current_setting('jit_above_cost') in the EXPLAIN transaction
  /// Tables (schema.name) the plan reads that were never analyzed (pg_stat_user_tables with
  /// last_analyze and last_autoanalyze null): their plans run on default statistics.
  std::vector<std::string> never_analyzed;
};

/// The actual plan of a statement's costliest call in a stage's plan run (auto_explain: ANALYZE,
/// BUFFERS and VERBOSE without per-node timing, JSON; results.json `queries[].plan`).
struct StatementPlan {
  double duration_ms = 0;  // that call's time as auto_explain measured it
  std::string shape_id;    // results::plan_shape_id(): node types, relations, indexes, join order
  std::string json;        // the "Plan" object as compact JSON text
};

/// One statement fingerprint a stage ran, from the server-side profiles of its cold runs
/// (pg_stat_statements; results.json `stages[].queries`). Figures are medians per cold run.
struct QueryStats {
  /// pg_stat_statements.queryid as decimal text: a bigint, exact even for JSON readers that
  /// parse numbers as doubles.
  std::string queryid;
  std::string query;  // the normalized text, cut to about 200 characters
  double calls = 0;   // executions per cold run
  double rows = 0;    // rows per cold run
  double plan_ms = 0;
  double exec_ms = 0;  // JIT included
  double jit_ms = 0;   // generation + inlining + optimization + emission
  double jit_functions = 0;
  std::optional<double> total_cost;  // the planner's estimate from a plan-only EXPLAIN, if had
  /// Shared blocks (hit + read) per cold run; nullopt in results of versions that did not
  /// record them, so that no gate reads their absence as 0.
  std::optional<double> blocks;
  /// Median over the cold runs that called it of (shared hit + read blocks) / calls: what one
  /// call reads, planning's catalog reads included (track_planning), which fall on the first
  /// statement of a backend to plan over a table; the same on every machine for the same data,
  /// plan and statement order.
  std::optional<double> blocks_per_call;
  /// The first 16 hex digits of the SHA-256 of the whole normalized text: pairs a statement
  /// across two databases, whose queryids differ (they hash relation OIDs); "" in results of
  /// versions that did not record it (the shortened text pairs them then).
  std::string text_id;
  /// How the whole normalized text uses its parameters (`= $1`: a lookup by key), read before
  /// the text was cut; what repeated_query's shape is decided by. results.json
  /// `stages[].queries[].parameters` ("none", "lookup", "other"; absent when unset): nullopt in
  /// results of versions that did not record it, where the shortened text stands in.
  std::optional<util::ParameterUse> parameters;
  /// Its actual plan (the costliest call's); nullopt when no plan was captured (no auto_explain,
  /// an external server, results of versions before it).
  std::optional<StatementPlan> plan;
  /// The figures in the order the report sorts by: plan + execution.
  double time_ms() const { return plan_ms + exec_ms; }
};

/// What one statement text adds up to in one stage's results: the ids that share a text (two
/// roles, two schemas on a search_path) are one statement to a reader of the code. The gate
/// pairs these between base and head, the growth between the scales.
struct StatementSum {
  std::string queryid;  // the id with the most calls
  std::string query;    // its shortened text
  std::string text_id;  // its text_id
  double top_calls = -1;
  double calls = 0, rows = 0, plan_ms = 0, exec_ms = 0;
  double blocks = 0;        // shared blocks per run, summed over the ids
  bool has_blocks = true;   // every id recorded blocks per call
  /// The plan of the id with the most calls that has one: ids sharing a text run the same
  /// statement, and their plans only differ when their search paths do.
  const StatementPlan* plan = nullptr;
  double plan_calls = -1;
  /// Adds one id's figures.
  void add(const QueryStats& q);
};

/// How a count grows with the data (config `scales:`): count ≈ offset + coefficient ·
/// scale^exponent, fitted at the scales where the count is above 0 (results::fit_growth;
/// results.json `stages[].growth`).
struct GrowthFit {
  /// The count at each scale of StageGrowth::scales, in order; nullopt where it was not measured
  /// (the statement did not run at that scale, the scale's runs failed, no blocks recorded).
  std::vector<std::optional<double>> values;
  /// The exponent k; nullopt when fewer than two scales have a count above 0 (unless every
  /// count is 0: k = 0).
  std::optional<double> exponent;
  double coefficient = 0;  // a in offset + a · scale^exponent
  /// The part that does not grow: a fresh backend's catalog reads when planning, a statement
  /// run once per page. Fitted with three scales or more; 0 with two.
  double offset = 0;
  /// results::growth_class(k); none without an exponent.
  GrowthClass growth = GrowthClass::none;
  /// The fit at StageGrowth::production_scale; nullopt without one or without an exponent.
  /// For times, from the counts instead (results::stage_growth).
  std::optional<double> projected;
};

/// One statement's growth over the scales, paired across them by its text (queryids differ
/// between the scales' databases: they hash relation OIDs).
struct StatementGrowth {
  std::string query;          // the shortened normalized text
  std::string text_id;        // QueryStats::text_id; "" when a side did not record it
  GrowthFit calls;            // executions per cold run
  GrowthFit rows_per_call;    // rows returned or affected per execution
  /// Shared blocks (hit + read) per execution: its captured plan's, what the executor read,
  /// when every scale has one; else pg_stat_statements', which add the planner's catalog reads.
  GrowthFit blocks_per_call;
  GrowthFit time_ms;          // plan + execution per cold run: shown and projected, never gated
};

/// A stage measured at several data scales (config `scales:`): the stage's counts and each
/// statement's, fitted against the scale (results.json `stages[].growth`).
struct StageGrowth {
  /// Ascending. The stage's other figures (metrics, queries, snapshot) are those of scales[0].
  std::vector<double> scales;
  /// Production's data over scale 1's (config `production_scale`); nullopt: no projection.
  std::optional<double> production_scale;
  GrowthFit queries;  // db_queries per cold run (median)
  GrowthFit rows;     // db_rows per cold run
  GrowthFit blocks;   // shared blocks (hit + read) per cold run, all statements
  GrowthFit time_ms;  // db_time_ms (plan + execution) per cold run
  GrowthFit wall_ms;  // wall_ms per cold run
  /// Every statement run at some scale, costliest (time) at the largest scale first.
  std::vector<StatementGrowth> statements;
  /// Why a scale has no figures ("scale 4: setup step `command gen.py` failed: …"); "" when
  /// every scale was measured.
  std::string error;
};

/// A stage's snapshot after the run (see snapshot::Status).
struct SnapshotResult {
  SnapshotStatus status = SnapshotStatus::match;
  std::string path;     // committed snapshot, relative to the current folder
  std::string pending;  // where the candidate was written; "" for match
  std::string sha256;   // hex SHA-256 of the (first) candidate
  std::string message;  // one line: why it is not a match
  std::string diff;     // readable diff (changed, malformed, nondeterministic)
};

/// One stage's outcome: metrics with all raw samples, its snapshot, or the error that failed it.
struct StageResult {
  std::string name;
  StageKind kind = StageKind::sql;
  ColdMode cold_mode = ColdMode::process;
  int runs = 0;                                 // cold runs asked for
  int warm = 0;                                 // warm repetitions per cold run asked for
  /// Which state of the database its cold runs found (`isolation:`): "run", "stage", or "none"
  /// (also when the server allowed no copies); "" in results of earlier versions.
  std::string isolation;
  /// The stage's `settings:`: SET LOCAL in a SQL stage's transaction; a command stage's client
  /// sessions through PGOPTIONS or a role setting (`settings_via`).
  std::map<std::string, std::string> settings;
  std::string error;                            // "" when every run succeeded
  std::optional<SnapshotResult> snapshot;
  std::optional<Explain> explain;
  /// The statements of the server-side profile, by time (plan + execution), biggest first;
  /// empty when the stage was not profiled.
  std::vector<QueryStats> queries;
  /// Metrics in report order (built-in ones first, then a command's own in first-seen order).
  std::vector<std::pair<std::string, Metric>> metrics;
  /// The stage at every data scale of config `scales:`; nullopt when it has only one.
  std::optional<StageGrowth> growth;

  /// The metric called `name`, created with `unit` when absent.
  Metric& metric(const std::string& name, const std::string& unit);
  /// The metric called `name`, or nullptr.
  const Metric* find(std::string_view name) const;
  bool failed() const { return !error.empty(); }
};

/// A setup step as run (for results.json).
struct SetupResult {
  std::string kind;
  std::string label;
  double wall_ms = 0;
};

/// Where a run was when it stopped (results.json `stopped.phase`): usage (an unknown --stage),
/// config (what setup names, before the server), server (starting it), build (ab: a side's
/// build), setup, migrate (ab, stack: the migration's trial), stages, scales (the stages at the
/// other data scales), remedies (--try), teardown (stopping the server).
enum class StopPhase { usage, config, server, build, setup, migrate, stages, scales, remedies, teardown };

/// "usage", "config", "server", "build", "setup", "migrate", "stages", "scales", "remedies",
/// "teardown": results.json's stopped.phase and the JUnit testcase of a run that stopped there.
std::string_view to_string(StopPhase phase);

/// The StopPhase named `text`; nullopt for any other text.
std::optional<StopPhase> stop_phase_from(std::string_view text);

/// Why a run ended before it measured every selected stage (results.json `stopped`): a setup
/// step that failed, a config that names what is not there, a server that did not start or was
/// lost, an interrupt. The reports say it as their verdict.
struct Stopped {
  /// What the run exits with (docs/architecture.md "Exit codes"): 1 what is under test failed
  /// (a setup step, head's build), 2 config or usage error, 3 infrastructure, 130 interrupted.
  int exit_code = 1;
  StopPhase phase = StopPhase::usage;  // where the run was
  std::string step;   // the setup step's label ("sql schema.sql"), or ""
  std::string where;  // "schema.sql:12:3", "coldgate.yaml:4:11", "stage items", or ""
  std::string error;  // the error as printed after `where`; several lines for a stderr tail
  std::vector<std::string> not_run;  // the selected stages that were not measured, in order
};

/// Where and on what the run happened: compared across results, flagged when it differs.
struct Environment {
  std::string host;
  int cpus = 0;
  std::string cpu_model;
  std::string kernel;    // `uname -sr`
  std::string os;        // PRETTY_NAME of /etc/os-release
  std::string provider;  // local | container | external
  std::string postgres_version;
  int postgres_version_num = 0;
  std::map<std::string, std::string> postgres_settings;  // non-default server settings
};

/// The commit measured.
struct GitInfo {
  std::string commit;  // "" when not in a git checkout, or in one without commits (`unborn`)
  std::string branch;
  std::string base;  // baseline commit when known
  /// Uncommitted changes of the checkout when the measured commit is its HEAD, as `git status
  /// --porcelain` lines ("M sql/load.sql", "?? new.sql"); empty: clean, or not measured there.
  std::vector<std::string> dirty;
  /// `run` measures the working tree, changes included (true); `ab` measures the commit and
  /// leaves them out (false).
  bool dirty_measured = true;
  /// A git repository without commits yet: its HEAD names a branch that has none (git's
  /// "unborn branch"); `commit` is then "".
  bool unborn = false;
};

/// A finding from the server-side profile, the plans and the catalog, with a concrete
/// suggestion (results.json `diagnoses: [{stage, kind, message, data}]`; `queryid` and `query`
/// are written into data when the finding is about one statement).
struct Diagnosis {
  std::string stage;
  DiagnosisKind kind = DiagnosisKind::jit_dominates;  // results.json writes its name
  std::string message;  // one line for humans, with the suggestion
  std::map<std::string, double> data;  // the figures behind it (db_jit_ms, db_exec_ms, …)
  std::string queryid;  // the statement's pg_stat_statements.queryid; "" for a whole stage
  std::string query;    // its normalized text (shortened), or ""
  /// Against the baseline (gate::mark_diagnoses); none without a baseline.
  DiagnosisChange change = DiagnosisChange::none;
  /// Named facts that are text (missing_index: "table", "columns", "index" — the CREATE INDEX
  /// to try; misestimate: "table", "columns", "statistics" — the CREATE STATISTICS to try);
  /// written into results.json's data beside the figures.
  std::map<std::string, std::string> facts;
};

/// What a remedy trial's variant changes (measure::remedies_for): nothing (as is); settings (jit
/// = off, JIT without inlining and optimization, a `remedies:` entry of the config); a prepared
/// statement; an ANALYZE; an index or extended statistics created in a copy of the database.
enum class RemedyKind { as_is, settings, prepared, analyze, index, statistics };

/// The kind of the remedy that results.json names `name` with these `settings` (results.json
/// keeps no kind: the names of coldgate's own variants, never a `remedies:` entry's, and the
/// CREATE INDEX or CREATE STATISTICS statement say it); settings for a name none of them has.
RemedyKind remedy_kind_of(std::string_view name, const std::map<std::string, std::string>& settings,
                          bool second_execution);

/// One variant of a remedy trial (`--try`): the stage as it is ("as is") or under one remedy of
/// its diagnoses, measured cold in the trial's interleaved runs (results.json `remedies`).
struct Remedy {
  std::string stage;
  std::string remedy;  // "as is", "jit = off", "prepared statement", "ANALYZE", …
  RemedyKind kind = RemedyKind::settings;  // what it changes, which says how to apply it
  std::map<std::string, std::string> settings;  // what the variant sets on top of the stage's
  /// wall_ms, db_exec_ms, db_jit_ms, … with the trial's samples (cold; a prepared statement's
  /// second execution as warm); and per diagnosed statement its figures in each cold run that
  /// called it (statement_metric(): calls, blocks per call, server ms per call) — as is's for
  /// every diagnosed statement, a remedy's only for the statements it is aimed at (aimed_at())
  std::vector<std::pair<std::string, Metric>> metrics;
  std::optional<bool> snapshot_identical;  // its candidate against as is; nullopt: no snapshot
  std::string first_difference;            // the first differing path when not identical
  std::string note;   // what else was measured ("cost estimate 1.3e9 → 2.9e6")
  std::string error;  // the variant failed (its runs stopped); "" otherwise
  /// A prepared statement: its warm samples are each session's second execution (as is's too,
  /// in its trial), reported beside the cold figures every variant is judged by.
  bool second_execution = false;
  /// Per diagnosed statement (text_id, else queryid): the median over this variant's cold runs
  /// of its shared blocks (hit + read) per call; empty when the trial read no statements.
  std::map<std::string, double> statement_blocks_per_call;
  /// The metric called `name`, or nullptr.
  const Metric* find(std::string_view name) const;
  /// The median of `name`'s cold samples, which the trial compares; nullopt without samples.
  std::optional<double> median_of(std::string_view name) const;
  /// The statements (text_id, else queryid) whose statement_metric()s this remedy has, in name
  /// order: those it is aimed at (an index, statistics; as is: every diagnosed statement);
  /// empty for a stage-wide remedy (settings), and in results of earlier versions.
  std::vector<std::string> aimed_at() const;
};

/// A remedy trial's per-statement figures, one sample per cold run that called the statement.
enum class StatementFigure { calls, blocks_per_call, server_ms_per_call };
/// The Remedy::metrics name of `figure` for statement `key` (text_id, else queryid):
/// "statement_calls:<key>", "statement_blocks_per_call:<key>", "statement_server_ms_per_call:<key>"
/// (server time = plan + execution).
std::string statement_metric(StatementFigure figure, std::string_view key);

/// One gated metric of one stage, head against the baseline (docs/architecture.md "The gate").
struct MetricVerdict {
  std::string stage;
  std::string metric;
  std::string unit;
  /// new (`added`): no baseline sample; removed: no head sample
  Verdict verdict = Verdict::same;
  std::optional<double> base_median;  // median of the baseline's cold samples (warm when no cold)
  std::optional<double> head_median;
  std::optional<double> ratio;  // head / base; nullopt when a side is missing or base is 0
  std::string reason;  // why, e.g. "10.4× ≥ max_ratio 10, +812 ms ≥ min_delta 20 ms, ranges apart"
  /// More cold runs of each side than the stage's `runs` that `ab`/`stack` made because this
  /// time verdict lay near its threshold (gate::undecided, gate.max_extra_runs); 0: none.
  int extra_runs = 0;
};

/// Where the gate's base results came from: a results file given with --baseline; measured in
/// this run interleaved with head (`ab`); ab's result cache, measured by an earlier run and
/// so not interleaved with head (maybe on another runner, on another day); or the history
/// store (`--baseline history[:N]`): the median of the last N recorded medians of the base
/// branch, with a range covering all their samples.
enum class BaseSource { file, interleaved, cache, history };

/// "file" | "interleaved" | "cache" | "history": results.json's gate.base_source.
std::string_view to_string(BaseSource source);

/// The BaseSource named `text`; nullopt for any other text.
std::optional<BaseSource> base_source_from(std::string_view text);

/// The thresholds of one gate (config `gate:`, shared or a stage's own), as results.json's
/// gate.thresholds records them so that a verdict can be checked against what was used.
struct GateThresholds {
  double max_ratio = 10;
  double warn_ratio = 2;
  double min_delta_ms = 20;
  double min_delta_bytes = 16 << 20;
  double max_query_ratio = 2;  // db_queries: regression at or above this ratio …
  double min_query_delta = 10;  // … and at least this many statements more
  double max_blocks_ratio = 10;  // a statement's blocks per call: regression at this ratio …
  double min_blocks_delta = 100;  // … and at least this many blocks per call more
  bool statements = true;  // statement verdicts (gate.statements) on
  double max_extra_runs = 10;  // ab/stack: more cold runs per side of a verdict near its threshold
  std::string growth = "fail";  // gate.growth: fail | warn | off
  std::vector<std::string> metrics;  // gated metrics; empty = every _ms and peak_rss_bytes
  bool require_same_environment = false;
  bool operator==(const GateThresholds&) const = default;
};

/// One side's figures of a statement (results.json gate.statements[].base / .head): medians
/// per cold run of calls, and per call of rows, shared blocks (hit + read), plan and execution.
struct StatementSide {
  std::string queryid;  // this side's pg_stat_statements.queryid (they differ between databases)
  double calls = 0;
  double rows_per_call = 0;
  std::optional<double> blocks_per_call;  // nullopt: that side's results did not record blocks
  double plan_ms_per_call = 0;
  double exec_ms_per_call = 0;
  std::string plan_shape_id;  // its captured plan's shape (results::plan_shape_id); "" without one
  /// Shared blocks (hit + read) of its captured plan's execution (results::execution_blocks),
  /// what the gate judges when both sides have it; nullopt without a plan with buffers.
  /// results.json `gate.statements[].base|head.execution_blocks_per_call`, absent when unset.
  std::optional<double> execution_blocks_per_call;
  /// Its growth classes over the scales (StatementGrowth): "calls", "rows_per_call",
  /// "blocks_per_call" → its class (results.json writes the classes' names); empty without scales.
  std::map<std::string, GrowthClass> growth;
};

/// One statement of one stage, head against base, paired by normalized text (gate::compare):
/// calls per run and blocks per call are judged (deterministic counts); rows and times shown.
struct StatementVerdict {
  std::string stage;
  std::string query;  // the shortened normalized text
  std::optional<StatementSide> base;  // nullopt: new in head
  std::optional<StatementSide> head;  // nullopt: gone from head
  Verdict verdict = Verdict::same;
  std::string reason;  // "reads 1,937 blocks per call instead of 4 (484×)"
  /// Both sides have a captured plan and their shapes differ: base's nodes that head lost →
  /// head's that are new ("Index Scan using comments_article_id on Comments → Seq Scan on
  /// Comments (149,997 rows removed by filter)"); "" otherwise. Shown, never gated.
  std::string plan_change;
  /// The growth classes that differ between the sides, "calls: constant → linear; blocks per
  /// call: constant → linear"; "" when none does or a side has no scales.
  std::string growth_change;
  /// Not `same`, on one side only, calls per run that differ, a plan or growth change (what the report
  /// lists); false for a statement whose counts and plan shape are the same.
  bool changed() const;
};

/// How one stage was measured differently on the two sides ("cold": "process" → "restart",
/// also runs, warm, settings.<name>): its timings are then not comparable as they stand.
struct MeasurementDifference {
  std::string stage;
  std::string field;  // cold | runs | warm | kind | settings.<name>
  std::string base;   // "" when the side does not set it
  std::string head;
};

/// The gate's outcome for one run against a baseline.
struct GateResult {
  std::string baseline;  // the baseline results file as given
  GitInfo base_git;      // commit of the baseline
  /// Environment fields that differ ("postgres_version: 15.8 → 16.1", "cpu_model: …").
  std::vector<std::string> environment_differences;
  std::vector<MetricVerdict> metrics;
  std::vector<std::string> stages_new;      // in head only
  std::vector<std::string> stages_removed;  // in the baseline only
  BaseSource base_source = BaseSource::file;
  std::string base_measured_at;  // the base results' finished_at (UTC, RFC 3339)
  std::string base_host;         // environment.host of the base results
  /// Head's results came from the cache (`stack`: commit k measured by an earlier run), not
  /// measured in this run: results.json's gate.head_source "cache" (else "measured").
  bool head_cached = false;
  GateThresholds thresholds;     // the shared gate
  std::map<std::string, GateThresholds> stage_thresholds;      // stages whose own gate differs
  std::vector<MeasurementDifference> measurement_differences;  // stages measured unlike
  /// Every statement of every stage measured on both sides, paired by text, in stage order,
  /// regressions first within a stage (empty when neither side was profiled).
  std::vector<StatementVerdict> statements;
};

/// One recorded commit of the history that a baseline or a trend used (results.json
/// `history.commits`).
struct HistoryCommit {
  std::string commit;   // full SHA
  std::string subject;  // the commit message's first line, as recorded
  std::string date;     // the commit's committer date (UTC, RFC 3339)
};

/// One stage's trend for the report: per used commit its recorded cold median of `metric`
/// (nullopt where that record lacks it), and this run's.
struct HistorySeries {
  std::string stage;
  std::string metric;  // wall_ms, or the stage's first gated metric when it has none
  std::string unit;
  std::vector<std::optional<double>> medians;  // one per HistoryCommit, oldest first
  std::optional<double> head;                  // this run's cold median; nullopt: not measured
};

/// The history behind a `--baseline history[:N]` gate, or beside `ab`'s base (results.json
/// `history`): which store, how many records were asked for, the commits used (oldest first)
/// and the trend per stage.
struct HistoryTrend {
  std::string store;  // "git:coldgate-history", or the folder as given
  int asked = 0;      // N of history:N; ab's trend asks for 5
  std::vector<HistoryCommit> commits;
  std::vector<HistorySeries> series;  // in head's stage order
};

/// Everything `coldgate run` measured: written as results.json (schema coldgate-results/1).
struct Results {
  std::string tool_version;
  std::string started_at;  // UTC, RFC 3339
  std::string finished_at;
  std::string config;  // config file, relative to the current folder
  std::string title;   // report.title
  GitInfo git;
  Environment environment;
  std::vector<SetupResult> setup;
  std::vector<StageResult> stages;
  std::vector<std::string> obsolete_snapshots;  // snapshot files no stage claims
  std::vector<Diagnosis> diagnoses;             // findings with suggestions (measure/diagnose)
  /// Remedy trials (`--try`), per stage in stage order: "as is" first, then each remedy.
  std::vector<Remedy> remedies;
  /// Why the stages have no server-side profile ("pg_stat_statements is not installed …"), said
  /// once in the report; "" when they were profiled or the config turned it off.
  std::string profile_note;
  /// What the profile cannot show on this server although the stages were profiled ("the
  /// server cannot JIT-compile …"), said once in the report; "" when nothing is missing.
  std::string profile_limit;
  /// Why the statements have no actual plans although they were profiled ("an external server:
  /// auto_explain cannot be loaded there …"), said once in the report; "" when plans were taken.
  std::string plans_note;
  std::optional<GateResult> gate;               // verdicts against a baseline, when one was given
  /// Why the run ended early; nullopt when every selected stage was measured.
  std::optional<Stopped> stopped;
  /// One line each about what may make the figures meaningless, said on stderr and in the
  /// report (a setup script that loaded another database than the stages read).
  std::vector<std::string> warnings;
  /// Why nothing was compared although a comparison was asked for (`ab` without a usable base:
  /// "base origin/main not found: …"); "" when a baseline was compared or none was asked for.
  std::string no_baseline;
  /// The CI job that made these results ($GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/
  /// $GITHUB_RUN_ID on GitHub Actions, $CI_JOB_URL on GitLab); "" outside CI.
  std::string ci_run_url;
  /// The recorded history the gate's base came from (`--baseline history[:N]`), or `ab`'s
  /// recorded points of its base branch, for the report's trend; nullopt otherwise.
  std::optional<HistoryTrend> history;
  /// Head's migration measured on a copy of base's data (`ab`, `stack` with `migrate:`);
  /// nullopt when none ran or it changed nothing.
  std::optional<Migration> migration;
};

/// Median of `samples` (mean of the middle two for an even count); 0 for none.
double median(std::vector<double> samples);

/// The metrics of a stage in report order: known names first in this order, then the rest.
const std::vector<std::string_view>& known_metric_order();

}  // namespace coldgate::results
