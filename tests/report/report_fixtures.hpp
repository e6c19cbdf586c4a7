// Results the report tests render: the golden cases (tests/report/golden/<case>.json are
// written from these) and the large runs of the cut tests. Header-only: the test glob compiles
// *_test.cpp files only.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "results/results.hpp"

namespace coldgate::report::fixtures {

using namespace coldgate::results;

inline void common(Results& r, const std::string& title) {
  r.tool_version = "0.1.0";
  r.started_at = "2024-05-01T10:00:00Z";
  r.finished_at = "2024-05-01T10:01:05Z";
  r.config = "coldgate.yaml";
  r.title = title;
  r.git = {"5d6e7f8a9b0c1d2e3f405162738495a6b7c8d9e0", "feature/faster-load", "", {}};
  r.environment.host = "ci-runner-1";
  r.environment.cpus = 2;
  r.environment.cpu_model = "AMD EPYC 7B13";
  r.environment.kernel = "Linux 6.1.0-18-amd64";
  r.environment.os = "Debian GNU/Linux 12 (bookworm)";
  r.environment.provider = "local";
  r.environment.postgres_version = "16.4";
  r.environment.postgres_version_num = 160004;
}

inline StageResult jit_stage(double scale) {
  StageResult s;
  s.name = "config-load-jit";
  s.kind = StageKind::sql;
  s.cold_mode = ColdMode::process;
  s.runs = 3;
  s.warm = 1;
  s.explain = Explain{};
  s.explain->jit = true;
  s.explain->execution_ms = 1911 * scale;
  s.metric("wall_ms", "ms") = {"ms", {2400 * scale, 2380 * scale, 2520 * scale}, {2100 * scale}};
  s.metric("db_queries", "count") = {"count", {1, 1, 1}, {1}};
  s.metric("db_plan_ms", "ms") = {"ms", {12.1, 11.8, 12.6}, {3.1}};
  s.metric("db_exec_ms", "ms") = {"ms", {1911 * scale, 1900 * scale, 1950 * scale}, {1890 * scale}};
  s.metric("db_jit_ms", "ms") = {"ms", {703, 700, 710}, {698}};
  s.metric("db_jit_functions", "count") = {"count", {1404, 1404, 1404}, {1404}};
  s.metric("db_rows", "count") = {"count", {1, 1, 1}, {1}};
  QueryStats q;
  q.queryid = "-4156573695661262973";
  q.query = "select json_build_object($1, (select coalesce(json_agg(json_build_object($2, r.id, "
            "$3, r.name)), $4) from realms r), $5, …";
  q.calls = 1;
  q.rows = 1;
  q.plan_ms = 12.1;
  q.exec_ms = 1911 * scale;
  q.jit_ms = 703;
  q.jit_functions = 1404;
  q.total_cost = 688504.19;
  s.queries.push_back(q);
  s.snapshot = SnapshotResult{SnapshotStatus::match, "snapshots/config-load-jit.json", "", "ab12", "", ""};
  return s;
}

// The snapshot check's message and diff as snapshot::check writes them in CI; `old_path` and
// `new_path` are the diff's header labels as the run saw them.
inline SnapshotResult changed_snapshot(const std::string& old_path, const std::string& new_path) {
  return {SnapshotStatus::changed,
          "snapshots/config-load.json",
          "coldgate-out/snapshots/config-load.json.new",
          "cd34",
          "snapshot changed: 1 path differs (1 changed, 0 added, 0 removed); the candidate is "
          "coldgate-out/snapshots/config-load.json.new in the job's artifacts: review it and "
          "commit it as snapshots/config-load.json",
          "1 path differs: 1 changed, 0 added, 0 removed\n"
          "  /realms/0/name: \"north\" → \"nord\"\n\n"
          "--- " +
              old_path +
              "\n"
              "+++ " +
              new_path +
              "\n"
              "@@ -2,3 +2,3 @@\n"
              "   \"realms\": [\n"
              "-    {\"name\": \"north\"}\n"
              "+    {\"name\": \"nord\"}\n"
              "   ]\n"};
}

inline StageResult load_stage(double scale, SnapshotStatus status) {
  StageResult s;
  s.name = "config-load";
  s.kind = StageKind::sql;
  s.cold_mode = ColdMode::process;
  s.runs = 3;
  s.warm = 0;
  s.explain = Explain{};
  s.metric("wall_ms", "ms") = {"ms", {240 * scale, 231 * scale, 252 * scale}, {}};
  s.metric("cpu_ms", "ms") = {"ms", {100 * scale / 4, 98 * scale / 4, 104 * scale / 4}, {}};
  s.metric("peak_rss_bytes", "bytes") = {
      "bytes", {14.1 * 1024 * 1024, 14.2 * 1024 * 1024, 14.0 * 1024 * 1024}, {}};
  s.metric("jit_total_ms", "ms") = {"ms", {0, 0, 0}, {}};
  if (status == SnapshotStatus::match) {
    s.snapshot = SnapshotResult{SnapshotStatus::match, "snapshots/config-load.json", "", "cd34", "", ""};
  } else {
    s.snapshot = changed_snapshot("snapshots/config-load.json",
                                  "coldgate-out/snapshots/config-load.json.new");
  }
  return s;
}

inline StageResult command_stage(const std::string& name, double wall) {
  StageResult s;
  s.name = name;
  s.kind = StageKind::command;
  s.cold_mode = ColdMode::process;
  s.runs = 2;
  s.warm = 0;
  s.metric("wall_ms", "ms") = {"ms", {wall, wall * 1.1}, {}};
  s.metric("allocated_bytes", "bytes") = {"bytes", {4096, 4096}, {}};
  return s;
}

inline MetricVerdict verdict(const std::string& stage, const std::string& metric,
                             const std::string& unit, Verdict v,
                             std::optional<double> base, std::optional<double> head,
                             const std::string& reason = "") {
  std::optional<double> ratio;
  if (base && head && *base > 0) ratio = *head / *base;
  return {stage, metric, unit, v, base, head, ratio, reason};
}

// `same` verdicts for every metric of `s` the default gate reads (`_ms`, peak_rss_bytes), from
// the base stage `b`'s and head's cold medians.
inline void same_verdicts(GateResult& g, const StageResult& b, const StageResult& s) {
  for (const auto& [name, m] : s.metrics) {
    if (!name.ends_with("_ms") && name != "peak_rss_bytes") continue;
    const Metric* bm = b.find(name);
    g.metrics.push_back(verdict(s.name, name, m.unit, Verdict::same, median(bm->cold), median(m.cold)));
  }
}

// `coldgate ab` on a pull request whose base commit lacks the config: head measured alone.
inline Results no_baseline() {
  Results r;
  common(r, "Start-up");
  r.no_baseline = "base origin/main (1a2b3c4) has no coldgate.yaml: the pull request adds it";
  r.stages.push_back(jit_stage(1));
  r.stages.push_back(load_stage(1, SnapshotStatus::changed));
  StageResult crash = command_stage("shop-client", 0);
  crash.metrics.clear();
  crash.error = "cold run 1/2: killed by SIGSEGV; stderr ends:\nabout to crash";
  r.stages.push_back(crash);
  r.obsolete_snapshots = {"snapshots/old.json"};
  r.diagnoses.push_back({"config-load-jit",
                         results::DiagnosisKind::jit_dominates,
                         "JIT compiled 1,404 functions in 703 ms of 1.91 s execution (cost "
                         "estimate 455,863 > jit_above_cost 100,000) — consider "
                         "`SET LOCAL jit = off` for this query (`settings: {jit: \"off\"}`)",
                         {{"jit_total_ms", 703}, {"execution_ms", 1911}}});
  return r;
}

inline Results baseline_base() {
  Results r;
  common(r, "Start-up");
  r.git = {"1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", "main", "", {}};
  r.environment.postgres_version = "15.8";
  r.environment.postgres_version_num = 150008;
  r.stages.push_back(jit_stage(1));
  r.stages.push_back(load_stage(1, SnapshotStatus::match));
  r.stages.push_back(command_stage("old-stage", 50));
  return r;
}

// `coldgate run --baseline baseline/results.json`: the user's file, named in the footer.
inline Results baseline() {
  Results r;
  common(r, "Start-up");
  r.git.base = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d";
  r.stages.push_back(jit_stage(0.3));
  r.stages.push_back(load_stage(10.4, SnapshotStatus::changed));
  r.stages.push_back(command_stage("new-stage", 80));
  GateResult g;
  g.baseline = "baseline/results.json";
  g.base_git = {"1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", "main", "", {}};
  g.environment_differences = {"postgres_version: 15.8 → 16.4"};
  g.metrics = {
      verdict("config-load-jit", "wall_ms", "ms", Verdict::faster, 2400, 720),
      verdict("config-load-jit", "execution_ms", "ms", Verdict::faster, 1911, 573.3),
      verdict("config-load-jit", "jit_total_ms", "ms", Verdict::same, 703, 703),
      verdict("config-load", "wall_ms", "ms", Verdict::regression, 240, 2496,
              "10.4× ≥ max_ratio 10, +2.26 s ≥ min_delta 20 ms, ranges apart"),
      verdict("config-load", "cpu_ms", "ms", Verdict::slower, 25, 260, "10.4× but +235 ms, ranges apart"),
      verdict("config-load", "peak_rss_bytes", "bytes", Verdict::same, 14.1 * 1024 * 1024,
              14.1 * 1024 * 1024),
      verdict("config-load", "jit_total_ms", "ms", Verdict::same, 0, 0),
      verdict("new-stage", "wall_ms", "ms", Verdict::added, std::nullopt, 80),
      verdict("old-stage", "wall_ms", "ms", Verdict::removed, 50, std::nullopt),
  };
  g.stages_new = {"new-stage"};
  g.stages_removed = {"old-stage"};
  g.base_source = BaseSource::file;
  r.gate = g;
  return r;
}

inline StageResult rows_stage(const std::string& name, double wall, double rows) {
  StageResult s;
  s.name = name;
  s.kind = StageKind::sql;
  s.cold_mode = ColdMode::process;
  s.runs = 3;
  s.metric("wall_ms", "ms") = {"ms", {wall, wall * 0.97, wall * 1.04}, {}};
  s.metric("cpu_ms", "ms") = {"ms", {wall / 3, wall / 3.1, wall / 2.9}, {}};
  s.metric("peak_rss_bytes", "bytes") = {
      "bytes", {9.5 * 1024 * 1024, 9.6 * 1024 * 1024, 9.5 * 1024 * 1024}, {}};
  s.metric("rows", "count") = {"count", {rows, rows, rows}, {}};
  return s;
}

// An A/A run under `coldgate ab` (base interleaved with head): every verdict `same`, on a dirty
// checkout in CI.
inline Results passing_base() {
  Results r;
  common(r, "Start-up");
  r.git = {"1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", "main", "", {}};
  r.stages.push_back(load_stage(1, SnapshotStatus::match));
  r.stages.push_back(rows_stage("orders-report", 84, 1200));
  r.stages.push_back(rows_stage("customer-search", 12.5, 40));
  r.stages.push_back(command_stage("shop-client", 310));
  return r;
}

// Head results of CI run `run` over `base`: passing_base's four stages, `load` first and
// orders-report returning `orders_rows`.
inline Results shop_head(const Results& base, const std::string& run, StageResult load,
                         double orders_rows) {
  Results r;
  common(r, "Start-up");
  r.git.base = base.git.commit;
  r.ci_run_url = "https://github.com/acme/shop/actions/runs/" + run;
  r.stages.push_back(std::move(load));
  r.stages.push_back(rows_stage("orders-report", 85, orders_rows));
  r.stages.push_back(rows_stage("customer-search", 12.4, 40));
  r.stages.push_back(command_stage("shop-client", 305));
  return r;
}

inline Results passing() {
  Results base = passing_base();
  Results r = shop_head(base, "9876543210", load_stage(1.01, SnapshotStatus::match), 1200);
  r.git.dirty = {"M sql/orders_report.sql", "?? sql/new_index.sql"};
  r.diagnoses.push_back({"orders-report",
                         results::DiagnosisKind::never_analyzed,
                         "table `public.orders` was never analyzed — run `ANALYZE public.orders` "
                         "in a setup step",
                         {}});
  GateResult g;
  g.base_git = base.git;
  g.base_source = BaseSource::interleaved;
  g.base_host = "ci-runner-1";
  for (std::size_t i = 0; i < r.stages.size(); ++i) same_verdicts(g, base.stages[i], r.stages[i]);
  r.gate = g;
  return r;
}

// `coldgate ab` on a pull request whose base branch has recorded results: passing()'s
// interleaved A/A with the trend of main's last three records in the history store, the base
// commit's own the newest; customer-search has no median in the oldest (it failed there).
inline Results ab_trend() {
  Results r = passing();
  HistoryTrend h;
  h.store = "git:coldgate-history";
  h.asked = 5;
  h.commits = {
      {"7f6e5d4c3b2a190817263544536271809a8b7c6d", "orders: paginate the report",
       "2026-11-28T10:02:00Z"},
      {"8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b", "search: trigram index", "2026-11-29T16:45:00Z"},
      {passing_base().git.commit, "load: read realms once", "2026-11-30T08:20:00Z"}};
  const std::vector<std::vector<std::optional<double>>> recorded = {
      {243, 238.5, 240}, {88.2, 86.1, 84}, {std::nullopt, 12.9, 12.5}, {322, 315, 310}};
  for (std::size_t i = 0; i < r.stages.size(); ++i) {
    const StageResult& s = r.stages[i];
    h.series.push_back({s.name, "wall_ms", "ms", recorded[i], median(s.find("wall_ms")->cold)});
  }
  r.history = h;
  return r;
}

// A failing run against ab's cache (measured days ago on another runner): a regression, slower
// and faster metrics, a failed stage, a changed snapshot whose diff names throwaway paths, a
// new and a removed stage, and stages that did not change.
inline Results failing_base() {
  Results r = passing_base();
  r.finished_at = "2026-11-30T04:12:09Z";
  r.environment.host = "ci-runner-7";
  r.stages.push_back(jit_stage(1));
  r.stages.push_back(command_stage("report-export", 120));
  r.stages.push_back(command_stage("old-stage", 50));
  return r;
}

inline Results failing() {
  Results base = failing_base();
  StageResult load = load_stage(3.1, SnapshotStatus::changed);
  load.snapshot = changed_snapshot(
      "/home/runner/work/shop/shop/coldgate-out/ab/head/snapshots/config-load.json",
      "/tmp/coldgate-ab-3f2a/coldgate-out/snapshots/config-load.json.new");
  Results r = shop_head(base, "9876543211", std::move(load), 1250);
  r.stages.push_back(jit_stage(0.3));
  StageResult export_stage = command_stage("report-export", 0);
  export_stage.metrics.clear();
  export_stage.error =
      "cold run 1/2: exit status 2; stderr ends:\nexport: relation \"report_rows\" does not "
      "exist\nLINE 1: select * from report_rows\n";
  r.stages.push_back(export_stage);
  r.stages.push_back(command_stage("new-stage", 80));
  r.diagnoses.push_back({"config-load",
                         results::DiagnosisKind::planning_exceeds_execution,
                         "planning took 41 ms of 52 ms — consider a prepared statement",
                         {}});
  r.diagnoses.push_back({"orders-report",
                         results::DiagnosisKind::never_analyzed,
                         "table `public.orders` was never analyzed — run `ANALYZE public.orders`",
                         {}});
  r.diagnoses.push_back({"config-load", results::DiagnosisKind::repeated_query,
                         "statement 77 `select count(*) from tag where article_id = $1` ran 40 "
                         "times per cold run — an N+1",
                         {{"calls", 40}}, "77", "select count(*) from tag where article_id = $1",
                         DiagnosisChange::added});
  r.diagnoses.push_back({"config-load", results::DiagnosisKind::jit_dominates, "JIT compiled 12 functions — jit = off",
                         {}, "5", "select * from config", DiagnosisChange::gone});
  r.diagnoses[0].change = DiagnosisChange::added;
  r.diagnoses[1].change = DiagnosisChange::also_in_base;
  GateResult g;
  g.statements = {
      {"config-load", "select count(*) from tag where article_id = $1", std::nullopt,
       StatementSide{"77", 40, 1, 3, 0.01, 0.02}, Verdict::regression,
       "new statement: runs 40 times per run (≥ min_query_delta 10)"},
      {"config-load", "select * from \"Comments\" where \"articleId\" = $1 | x",
       StatementSide{"-377094331132490252", 1, 3, 4, 0.05, 0.04, "5e0c1a3f7d2b9e41"},
       StatementSide{"-5210114618935114403", 1, 3, 1937, 0.05, 23.1, "a94d3b07c1e2f658"},
       Verdict::regression,
       "reads 1,937 blocks per call instead of 4 (484×, +1,933 ≥ min_blocks_delta 100): an index "
       "it used is not used any more, or each call reads more rows",
       "Index Scan using comments_article_id on public.Comments → Seq Scan on public.Comments "
       "(149,997 rows removed by filter)"},
      // The same counts, another plan: listed for its plan change alone, which is not gated.
      {"config-load", "select * from config", StatementSide{"5", 1, 1, 12, 0.1, 9.5, "0b1c2d3e4f506172"},
       StatementSide{"6", 1, 1, 12, 0.1, 2.5, "8899aabbccddeeff"}, Verdict::same,
       "1 call per run, 12 blocks per call, on both sides",
       "Seq Scan on public.config → Index Scan using config_pkey on public.config"},
      {"config-load", "select * from setting", StatementSide{"7", 1, 1, 3, 0.1, 0.2, "1111222233334444"},
       StatementSide{"8", 1, 1, 3, 0.1, 0.2, "1111222233334444"}, Verdict::same,
       "1 call per run, 3 blocks per call, on both sides"},
  };
  g.base_git = base.git;
  g.base_source = BaseSource::cache;
  g.base_measured_at = base.finished_at;
  g.base_host = base.environment.host;
  g.baseline = "coldgate-out/ab/cache/1a2b3c4d.json";
  g.metrics = {
      verdict("config-load", "wall_ms", "ms", Verdict::regression, 240, 744,
              "3.10× ≥ max_ratio 1.5, +504 ms ≥ min_delta 20 ms, ranges apart"),
      verdict("config-load", "cpu_ms", "ms", Verdict::slower, 25, 77.5,
              "3.10× ≥ warn_ratio 1.2 but +52 ms < min_delta 60 ms"),
      verdict("config-load", "peak_rss_bytes", "bytes", Verdict::same, 14.1 * 1024 * 1024,
              14.1 * 1024 * 1024),
      verdict("config-load", "jit_total_ms", "ms", Verdict::same, 0, 0),
  };
  for (std::size_t i = 1; i < 4; ++i) same_verdicts(g, base.stages[i], r.stages[i]);
  g.metrics.push_back(verdict("config-load-jit", "wall_ms", "ms", Verdict::faster, 2400, 720,
                              "0.30× ≤ 1/warn_ratio 1.2, ranges apart"));
  g.metrics.push_back(verdict("config-load-jit", "execution_ms", "ms", Verdict::faster, 1911, 573.3,
                              "0.30× ≤ 1/warn_ratio 1.2, ranges apart"));
  g.metrics.push_back(verdict("config-load-jit", "jit_total_ms", "ms", Verdict::same, 703, 703));
  g.metrics.push_back(verdict("new-stage", "wall_ms", "ms", Verdict::added, std::nullopt, 80));
  g.metrics.push_back(verdict("old-stage", "wall_ms", "ms", Verdict::removed, 50, std::nullopt));
  g.stages_new = {"new-stage"};
  g.stages_removed = {"old-stage"};
  r.gate = g;
  return r;
}

// 40 stages, `regressed` of them (1-based, in config order) regressed in wall_ms.
inline const std::vector<int>& forty_regressed() {
  static const std::vector<int> stages = {14, 22, 27};
  return stages;
}

inline std::string forty_name(int i) {
  return fmt::format("stage-{:02}", i);
}

inline Results forty_base() {
  Results r;
  common(r, "Forty");
  r.git = {"1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", "main", "", {}};
  for (int i = 1; i <= 40; ++i) r.stages.push_back(rows_stage(forty_name(i), 20 + i, 100 * i));
  return r;
}

inline Results forty() {
  Results base = forty_base();
  Results r;
  common(r, "Forty");
  r.git.base = base.git.commit;
  GateResult g;
  g.base_git = base.git;
  g.base_source = BaseSource::interleaved;
  for (int i = 1; i <= 40; ++i) {
    const auto& regressed = forty_regressed();
    bool slow = std::find(regressed.begin(), regressed.end(), i) != regressed.end();
    StageResult s = rows_stage(forty_name(i), slow ? 4 * (20 + i) : 20 + i, 100 * i);
    const StageResult& b = base.stages[static_cast<std::size_t>(i - 1)];
    if (slow) {
      double before = median(b.find("wall_ms")->cold);
      double after = median(s.find("wall_ms")->cold);
      g.metrics.push_back(verdict(s.name, "wall_ms", "ms", Verdict::regression, before, after,
                                  "4.00× ≥ max_ratio 1.5, ranges apart"));
      for (const char* m : {"cpu_ms", "peak_rss_bytes"}) {
        g.metrics.push_back(verdict(s.name, m, s.find(m)->unit, Verdict::same, median(b.find(m)->cold),
                                    median(b.find(m)->cold)));
      }
    } else {
      same_verdicts(g, b, s);
    }
    r.stages.push_back(std::move(s));
  }
  r.gate = g;
  return r;
}

// The commit subject of the history fixture that tries to break out of the list and mention.
inline const std::string& hostile_subject() {
  static const std::string subject =
      "fix: `</details>` <img src=x onerror=alert(1)> @team [link](http://e) *bold*";
  return subject;
}

// The stage of the history fixture whose name tries to break out of a Mermaid string.
inline const std::string& hostile_trend_stage() {
  static const std::string name = "search \"fast\" <b>#1</b> `x`";
  return name;
}

// A history baseline as history::baseline_results makes it: per stage the newest record's
// facts, cold samples {min of all, median of the medians, max of all}.
inline Results history_base() {
  Results r;
  common(r, "Start-up");
  r.git = {"e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d", "main", "", {}};
  r.stages.push_back(load_stage(1, SnapshotStatus::match));
  r.stages.back().metric("wall_ms", "ms").cold = {229, 239, 262};
  r.stages.push_back(rows_stage("orders-report", 84, 1200));
  r.stages.back().metric("wall_ms", "ms").cold = {80.1, 84, 89};
  r.stages.push_back(rows_stage(hostile_trend_stage(), 12.3, 40));
  r.stages.back().metric("wall_ms", "ms").cold = {11.8, 12.3, 12.9};
  r.stages.push_back(command_stage("report-export", 2410));
  r.stages.back().metric("wall_ms", "ms").cold = {2310, 2410, 2620};
  return r;
}

// `coldgate run --baseline history:5` on a pull request: 4 of the 5 records asked were found in
// the store (the newest without a subject, one with a hostile one); config-load regressed
// against their median; orders-report has no median in one record (it failed there); a stage
// with a hostile name; a new stage with no recorded point (no chart).
inline Results history() {
  Results base = history_base();
  Results r;
  common(r, "Start-up");
  r.git.base = base.git.commit;
  r.ci_run_url = "https://github.com/acme/shop/actions/runs/9876543212";
  r.stages.push_back(load_stage(3.1, SnapshotStatus::match));
  r.stages.push_back(rows_stage("orders-report", 85, 1200));
  r.stages.push_back(rows_stage(hostile_trend_stage(), 12.4, 40));
  r.stages.push_back(command_stage("report-export", 2398.6));
  r.stages.push_back(command_stage("new-stage", 80));
  GateResult g;
  g.baseline = "history:5";
  g.base_git = base.git;
  g.base_source = BaseSource::history;
  g.metrics = {verdict("config-load", "wall_ms", "ms", Verdict::regression, 239, 744,
                       "3.11× ≥ max_ratio 1.5, +505 ms ≥ min_delta 20 ms, ranges apart")};
  g.metrics.push_back(verdict("config-load", "cpu_ms", "ms", Verdict::slower, 25, 77.5,
                              "3.10× ≥ warn_ratio 1.2 but +52 ms < min_delta 60 ms"));
  for (const char* m : {"peak_rss_bytes", "jit_total_ms"}) {
    const Metric* b = base.stages[0].find(m);
    const Metric* h = r.stages[0].find(m);
    g.metrics.push_back(
        verdict("config-load", m, h->unit, Verdict::same, median(b->cold), median(h->cold)));
  }
  for (std::size_t i = 1; i < 4; ++i) same_verdicts(g, base.stages[i], r.stages[i]);
  g.metrics.push_back(verdict("new-stage", "wall_ms", "ms", Verdict::added, std::nullopt, 80));
  g.stages_new = {"new-stage"};
  r.gate = g;
  HistoryTrend h;
  h.store = "git:coldgate-history";
  h.asked = 5;
  h.commits = {
      {"a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "load: cache realms in one query",
       "2026-11-26T09:12:00Z"},
      {"b2c3d4e5f60718293a4b5c6d7e8f901234567890", hostile_subject(), "2026-11-27T14:03:00Z"},
      {"c3d4e5f60718293a4b5c6d7e8f90123456789012", "orders: index on customer_id",
       "2026-11-28T08:40:00Z"},
      {"e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d", "", "2026-11-30T17:55:00Z"}};
  h.series = {
      {"config-load", "wall_ms", "ms", {240.4, 236.25, 251, 238}, 744},
      {"orders-report", "wall_ms", "ms", {84, std::nullopt, 83.2, 86.5}, 85},
      {hostile_trend_stage(), "wall_ms", "ms", {12.1, 12.5, 12.3, 12.26}, 12.4},
      {"report-export", "wall_ms", "ms", {2412.7, 2389, 2430, 2401}, 2518.53},
      {"new-stage", "wall_ms", "ms", {std::nullopt, std::nullopt, std::nullopt, std::nullopt}, 80}};
  r.history = h;
  return r;
}

inline std::string history_many_name(int i) {
  return fmt::format("stage-{:03}", i);
}

// The base of history_many: `stages` stages as a history baseline has them.
inline Results history_many_base(int stages) {
  Results r;
  common(r, "History");
  r.git = {"e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d", "main", "", {}};
  for (int i = 1; i <= stages; ++i)
    r.stages.push_back(rows_stage(history_many_name(i), 20 + i, 10));
  return r;
}

// A history baseline of `commits` records over `stages` stages, `regressed` of them (1-based)
// four times slower in head: the trend is by far the longest part of the report.
inline Results history_many(int stages, int commits, const std::vector<int>& regressed) {
  Results base = history_many_base(stages);
  Results r;
  common(r, "History");
  r.git.base = base.git.commit;
  GateResult g;
  g.baseline = fmt::format("history:{}", commits);
  g.base_git = base.git;
  g.base_source = BaseSource::history;
  HistoryTrend h;
  h.store = "git:coldgate-history";
  h.asked = commits;
  for (int k = 0; k < commits; ++k) {
    h.commits.push_back({fmt::format("{:07x}{:033}", 0x1000000 + k, k),
                         fmt::format("change {}: tune {}", k, history_many_name(k % stages + 1)),
                         fmt::format("2026-{:02}-{:02}T12:00:00Z", 1 + k / 28 % 12, 1 + k % 28)});
  }
  for (int i = 1; i <= stages; ++i) {
    bool slow = std::find(regressed.begin(), regressed.end(), i) != regressed.end();
    StageResult s = rows_stage(history_many_name(i), slow ? 4 * (20 + i) : 20 + i, 10);
    const StageResult& b = base.stages[static_cast<std::size_t>(i - 1)];
    if (slow) {
      g.metrics.push_back(verdict(s.name, "wall_ms", "ms", Verdict::regression, 20 + i,
                                  4 * (20 + i), "4.00× ≥ max_ratio 1.5, ranges apart"));
    } else {
      same_verdicts(g, b, s);
    }
    HistorySeries series{s.name, "wall_ms", "ms", {}, median(s.find("wall_ms")->cold)};
    for (int k = 0; k < commits; ++k) series.medians.push_back(20 + i + 0.37 * (k % 7));
    h.series.push_back(std::move(series));
    r.stages.push_back(std::move(s));
  }
  r.gate = g;
  r.history = h;
  return r;
}

inline Results hostile() {
  Results r;
  common(r, "Evil --> <b>title</b> @team");
  r.git.branch = "x`y|z";
  r.git.dirty = {"?? ```\n</details> @admin <b>x</b>.sql", "M ok.sql"};
  r.ci_run_url = "https://ci.example/run?a=<b>&c=)](javascript:alert(1)) @admin\n# x";
  std::string evil = "a|b <img src=x onerror=alert(1)> @octocat `tick` *bold* [link](http://e)";
  StageResult s = command_stage(evil, 12);
  s.error = "cold run 1/2: ERROR: syntax error\n```\n</details>\n@admin please <b>fix</b>\n";
  s.snapshot = SnapshotResult{SnapshotStatus::changed,
                              "snapshots/we|ird`name.json",
                              "out/we|ird`name.json.new",
                              "",
                              "snapshot changed @here <br> | x",
                              "1 path differs: </summary><script>x</script>\n"
                              "  /a: \"```\" → \"</details>\"\n\n-```\n+</details>\n"};
  r.stages.push_back(s);
  QueryStats q;
  q.queryid = "42";
  q.query = "select '</details>' | `x` <img src=x onerror=alert(1)> @admin ``` from t";
  q.calls = 50;
  q.exec_ms = 3;
  r.stages.back().queries.push_back(q);
  r.stages.back().metric("db_queries", "count") = {"count", {50, 50}, {}};
  StageResult quote = command_stage("quote\"#x", 3);
  r.stages.push_back(quote);
  r.diagnoses.push_back({evil,
                         results::DiagnosisKind::never_analyzed,
                         "table `public.x` <i>never</i> analyzed — ask @dba | run `ANALYZE`",
                         {}});
  GateResult g;
  g.baseline = "base|line.json";
  g.base_git = {"<script>", "@main", "", {}};
  g.environment_differences = {"cpu_model: <b>A</b> → @B | C"};
  g.base_source = BaseSource::cache;
  g.base_measured_at = "<b>2026</b>-01-01T00:00:00Z";
  g.base_host = "@evil";
  g.metrics = {verdict(evil, "wall_ms", "ms", Verdict::regression, 1, 12, "@someone said <so>"),
               verdict(evil, "weird|metric", "ms", Verdict::slower, 1, 3),
               verdict("quote\"#x", "wall_ms", "ms", Verdict::faster, 6, 3.15)};
  r.gate = g;
  return r;
}

inline Results huge(int stages, std::size_t diff_bytes) {
  Results r;
  common(r, "Huge");
  for (int i = 0; i < stages; ++i) {
    StageResult s;
    s.name = fmt::format("stage-{:04}", i);
    s.kind = StageKind::sql;
    s.explain = Explain{};
    GateResult& g = r.gate ? *r.gate : r.gate.emplace();
    for (const char* m : {"wall_ms", "cpu_ms", "connect_ms", "query_ms", "decode_ms", "planning_ms",
                          "execution_ms", "peak_rss_bytes"}) {
      std::string unit = std::string(m) == "peak_rss_bytes" ? "bytes" : "ms";
      bool regressed = i % 97 == 96 && std::string(m) == "wall_ms";
      s.metric(m, unit) = {
          unit,
          regressed ? std::vector<double>{2000, 2100, 2200} : std::vector<double>{20, 21, 22},
          {}};
      g.metrics.push_back(
          verdict(s.name, m, unit, regressed ? Verdict::regression : Verdict::same, 20, regressed ? 2000 : 21));
    }
    if (i == stages - 1) s.error = "cold run 1/5: timed out after 10 min";
    if (i == stages / 2) {
      std::string diff = "1 path differs: 1 changed, 0 added, 0 removed\n\n";
      while (diff.size() < diff_bytes) diff += "-    \"line\": \"old value that is long enough\"\n";
      s.snapshot = SnapshotResult{SnapshotStatus::changed,
                                  "snapshots/big.json",
                                  "snapshots/big.json.new",
                                  "",
                                  "snapshot changed: 1 path differs",
                                  diff};
    }
    r.stages.push_back(std::move(s));
  }
  return r;
}

}  // namespace coldgate::report::fixtures
