#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "results/plan.hpp"
#include "results/results.hpp"

namespace coldgate::gate {

/// Thresholds for one comparison: the config's top-level `gate:` and each stage's override.
struct Thresholds {
  config::Gate defaults;                       // top-level gate (or built-in defaults)
  std::map<std::string, config::Gate> stages;  // stage name → gate with its overrides applied
  /// The gate for `stage`: its override, else the defaults.
  const config::Gate& for_stage(const std::string& stage) const;
  /// From a loaded config (top level + stages[].gate).
  static Thresholds from(const config::Config& config);
};

/// True when `gate` reads `metric`: it is listed in gate.metrics, or that list is empty and
/// the name ends in `_ms` or is `peak_rss_bytes` or `db_queries` (gated as a count: judge_count).
bool is_gated(const config::Gate& gate, const std::string& metric);

/// Throws Error(usage) naming `source`, stage and metric when a sample is NaN or infinite, or
/// negative in a time (`ms`) or size (`bytes`) metric.
void check_samples(const results::Results& results, const std::string& source);

/// The environment fields that differ between `base` and `head`, as "field: base → head":
/// first those that make timings incomparable (PostgreSQL major version, provider, CPU model),
/// then, suffixed " (info)", CPU count, kernel and PostgreSQL minor version. Returns how many
/// of the first kind there are through `significant` when given.
std::vector<std::string> environment_differences(const results::Environment& base,
                                                 const results::Environment& head,
                                                 std::size_t* significant = nullptr);

/// Head results against a baseline (docs/architecture.md "The gate"): stages matched by name,
/// metrics by name. Per gated metric the medians of the COLD samples are compared (warm ones
/// only for a metric that has no cold samples: warm repetitions skip process start and
/// connect, so pooling them would mix two distributions): `regression` when ratio ≥ max_ratio,
/// head − base ≥ min_delta (min_delta_bytes for bytes) and head's fastest run > base's slowest;
/// `slower` ≥ warn_ratio; `faster` ≤ 1/warn_ratio; else `same` — and `same` whenever |head −
/// base| < min_delta (the noise floor holds for every verdict); `new` / `removed` where one
/// side lacks the stage or metric (or the baseline's stage failed). A base median of 0 has no
/// ratio (nullopt): head 0 is `same`, head > 0 counts as infinitely slower (still below
/// min_delta never a regression). Stages that failed in head get no metric verdicts: the
/// failure fails the gate. `baseline_name` is the baseline file as given. Throws Error(usage)
/// for bad samples (see check_samples, head named "head results") and
/// Error(infrastructure) (exit 3) when require_same_environment is set and the PostgreSQL major
/// version, provider or CPU model differ.
results::GateResult compare(const results::Results& head, const results::Results& base,
                            const std::string& baseline_name, const Thresholds& thresholds);

/// The statements of one stage on both sides, paired by their whole normalized text (its
/// hash, `text_id`; the shortened text when a side's results lack it), not by queryid, which
/// hashes relation OIDs that differ between two databases. Per pair: `regression` when the
/// calls per run are ≥ max_query_ratio × base's and ≥ min_query_delta more (a new statement
/// with ≥ min_query_delta calls too: a new N+1, when the stage's calls per run rose by
/// ≥ min_query_delta; else it took the place of others: `added`, naming the two that fell
/// most), or the shared blocks per call are ≥ max_blocks_ratio × base's and ≥ min_blocks_delta
/// more (a lost index); `faster` the other way round; `added`/`removed` below those floors;
/// else `same`. Rows and times per call are shown, never judged; so is a plan change
/// (`plan_change`, from each side's captured plan of its id with the most calls, when both have
/// one and their shape ids differ; an unreadable plan gives "shape X → Y (a plan is not
/// readable: …)" rather than an error). Regressions first. Empty when `g.statements` is off or
/// a side has no profile.
std::vector<results::StatementVerdict> compare_statements(const results::StageResult& head,
                                                          const results::StageResult& base,
                                                          const config::Gate& g);

/// How many nodes plan_change() names on each side of the arrow before "… N more".
inline constexpr std::size_t k_plan_change_nodes = 3;

/// A statement's plan change in one line (results.json `gate.statements[].plan_change`):
/// base's nodes head lost → head's nodes that are new, matched by type, join type, index and
/// relation (not alias), scans first, at most k_plan_change_nodes a side; a new node says the
/// rows it removed by filter / join filter over all its loops: "Index Scan using
/// comments_article_id on public.Comments → Seq Scan on public.Comments (149,997 rows removed
/// by filter)". "added …" / "dropped …" when one side has no node of its own, "join order a, b
/// → b, a" when only the order differs; "" when the shapes (results::plan_shape) are equal.
std::string plan_change(const std::vector<results::PlanNode>& base,
                        const std::vector<results::PlanNode>& head);

/// Marks head's diagnoses against base's (results.json `diagnoses[].change`): "new" (this pull
/// request added it), "worse" (base had it too, but its `calls` grew as the stage's gate calls
/// a count regression: ≥ max_query_ratio × and ≥ min_query_delta more), "also_in_base", and
/// appends base's that head lost in a stage it measured as "gone" (fixed). Matched by stage,
/// kind and the statement's text; `missing_index` and `misestimate` by stage, kind, table and
/// columns (facts), whichever statements carry them. Idempotent; base's own "gone" entries are
/// ignored (a stack's base was marked against its own base).
void mark_diagnoses(results::Results& head, const results::Results& base,
                    const Thresholds& thresholds = {});

/// True when the run passes: no failed stage, every snapshot `match` (or `updated`), and no
/// `regression` in results.gate (metrics and statements).
bool passed(const results::Results& results);

/// The one-line verdict: "passed: 5 stages, 5 snapshots match" or "failed: 1 regression
/// (config-load wall_ms 10.4×), 1 snapshot changed (config-load)"; for a run that stopped,
/// stopped_verdict().
std::string verdict(const results::Results& results);

/// Why a run stopped, in one line, by its exit code: "failed: setup step sql schema.sql at
/// schema.sql:3:24: SQLSTATE 42703: …; 2 stages not run" (1), "config error at
/// coldgate.yaml:3:10: setup[0].sql: file not found: …" (2), "infrastructure error at
/// database: …" (3), "interrupted by SIGINT during setup step psql dump.sql" (130). The error
/// is shortened by results::failure_summary.
std::string stopped_verdict(const results::Stopped& stopped);

}  // namespace coldgate::gate
