#include "results/growth.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "results/format.hpp"
#include "results/plan.hpp"
#include "util/error.hpp"

namespace coldgate::results {
namespace {

struct Point {
  double scale;
  double value;
};

// offset + a · x by least squares on relative errors (each residual over its value, so that the
// largest scale does not outweigh the others), with offset ≥ 0 and a ≥ 0; returns the sum of
// the squared relative errors.
double fit_linear(const std::vector<Point>& p, double k, double& offset, double& a) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& q : p) {
    const double w = 1 / (q.value * q.value);
    const double x = std::pow(q.scale, k);
    sw += w;
    sx += w * x;
    sy += w * q.value;
    sxx += w * x * x;
    sxy += w * x * q.value;
  }
  const double det = sw * sxx - sx * sx;
  offset = 0;
  a = 0;
  if (std::fabs(det) > 1e-12 * sw * sxx) {
    offset = (sxx * sy - sx * sxy) / det;
    a = (sw * sxy - sx * sy) / det;
  }
  if (offset < 0 || std::fabs(det) <= 1e-12 * sw * sxx) {
    offset = 0;
    a = sxx > 0 ? sxy / sxx : 0;
  }
  if (a < 0) {
    a = 0;
    offset = sy / sw;
  }
  double err = 0;
  for (const auto& q : p) {
    const double r = (offset + a * std::pow(q.scale, k) - q.value) / q.value;
    err += r * r;
  }
  return err;
}

// What one execution of the captured plan read (its top node's shared hit + read blocks, the
// executor's only): pg_stat_statements' blocks also count the catalog pages a fresh backend
// reads to plan the statement, some 60 a table, which would hide a scan of a small table
// growing. nullopt without a plan or without its buffers.
std::optional<double> plan_blocks(const StatementPlan* plan) {
  if (!plan || plan->json.find("\"Shared Hit Blocks\"") == std::string::npos) return std::nullopt;
  try {
    auto nodes = plan_nodes(plan->json, "plan");
    if (nodes.empty()) return std::nullopt;
    return nodes.front().shared_blocks;
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<double> median_cold(const StageResult& s, std::string_view metric) {
  const Metric* m = s.find(metric);
  if (!m || m->gated().empty()) return std::nullopt;
  std::vector<double> v = m->gated();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

GrowthClass growth_class(double k) {
  if (k < 0.2) return GrowthClass::constant;
  if (k < 0.7) return GrowthClass::sublinear;
  if (k < 1.5) return GrowthClass::linear;
  if (k < 2.5) return GrowthClass::quadratic;
  return GrowthClass::superquadratic;
}

GrowthFit fit_growth(const std::vector<double>& scales, std::vector<std::optional<double>> values,
                     std::optional<double> production_scale, double slack) {
  GrowthFit fit;
  values.resize(scales.size());
  fit.values = values;
  std::vector<Point> measured, positive;
  for (std::size_t i = 0; i < scales.size(); ++i) {
    if (!values[i]) continue;
    measured.push_back({scales[i], *values[i]});
    if (*values[i] > 0) positive.push_back({scales[i], *values[i]});
  }
  if (measured.size() < 2) return fit;
  auto done = [&](double k, double offset, double a) {
    fit.exponent = k;
    fit.offset = offset;
    fit.coefficient = a;
    fit.growth = growth_class(k);
    if (production_scale) fit.projected = offset + a * std::pow(*production_scale, k);
    if (fit.projected && !std::isfinite(*fit.projected)) fit.projected.reset();
    return fit;
  };
  if (positive.empty()) return done(0, 0, 0);
  if (positive.size() < 2) return fit;
  double lo = positive.front().value, hi = lo, sum = 0;
  for (const auto& p : positive) {
    lo = std::min(lo, p.value);
    hi = std::max(hi, p.value);
    sum += p.value;
  }
  // A count that some scale does not have at all (0 calls) grew from nothing: not constant.
  const bool all_positive = positive.size() == measured.size();
  if (all_positive && (hi - lo <= 0.1 * hi || hi - lo <= slack)) {
    return done(0, sum / static_cast<double>(positive.size()), 0);
  }
  if (positive.size() == 2) {
    const auto& [s1, v1] = positive[0];
    const auto& [s2, v2] = positive[1];
    const double k = std::log(v2 / v1) / std::log(s2 / s1);
    return done(k, 0, v1 / std::pow(s1, k));
  }
  // The exponent whose fit leaves the smallest error, on a grid fine enough to place it in its
  // class; on a tie the smaller one (the least growth the counts prove).
  double best_k = 0, best_err = INFINITY, best_offset = 0, best_a = 0;
  for (int step = 0; step <= 800; ++step) {
    const double k = step * 0.005;
    double offset = 0, a = 0;
    const double err = fit_linear(positive, k, offset, a);
    if (err < best_err * (1 - 1e-9)) {
      best_err = err;
      best_k = k;
      best_offset = offset;
      best_a = a;
    }
  }
  if (best_a <= 0) return done(0, best_offset, 0);
  return done(best_k, best_offset, best_a);
}

namespace {

// A statement's time per run at production_scale from its counts, not from a fit of its
// times: times carry the machine's noise, and a fit of three noisy points extends it by the
// power of the scale (0.31 → 0.30 → 6.55 ms fits k = 4). The time at the largest scale that
// ran it, times the growth of its work there (calls × blocks per call, at least 1 block) to
// the projected work; nullopt without a projection of its calls.
std::optional<double> time_from_counts(const StatementGrowth& st, const std::vector<std::optional<double>>& calls,
                                       const std::vector<std::optional<double>>& blocks,
                                       const std::vector<std::optional<double>>& time) {
  if (!st.calls.projected) return std::nullopt;
  for (std::size_t i = calls.size(); i-- > 0;) {
    if (!calls[i] || *calls[i] <= 0 || i >= time.size() || !time[i]) continue;
    const double blocks_there = i < blocks.size() && blocks[i] ? std::max(*blocks[i], 1.0) : 1.0;
    const double blocks_projected =
        i < blocks.size() && blocks[i] && st.blocks_per_call.projected ? std::max(*st.blocks_per_call.projected, 1.0)
                                                                       : blocks_there;
    return *time[i] * (std::max(*st.calls.projected, 0.0) * blocks_projected) / (*calls[i] * blocks_there);
  }
  return std::nullopt;
}

}  // namespace

StageGrowth stage_growth(const std::vector<double>& scales, const std::vector<const StageResult*>& at,
                         std::optional<double> production_scale) {
  StageGrowth g;
  g.scales = scales;
  g.production_scale = production_scale;
  const std::size_t n = scales.size();
  // Pair by text_id only when every measured scale recorded it for every statement.
  bool by_id = true;
  for (const StageResult* s : at) {
    if (!s) continue;
    for (const auto& q : s->queries) by_id = by_id && !q.text_id.empty();
  }
  std::map<std::string, std::vector<std::optional<StatementSum>>> sums;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < n && i < at.size(); ++i) {
    if (!at[i]) continue;
    for (const auto& q : at[i]->queries) {
      const std::string key = by_id ? "#" + q.text_id : "q:" + q.query;
      auto& per_scale = sums[key];
      if (per_scale.empty()) {
        per_scale.resize(n);
        order.push_back(key);
      }
      if (!per_scale[i]) per_scale[i] = StatementSum{};
      per_scale[i]->add(q);
    }
  }
  auto stage_values = [&](auto figure) {
    std::vector<std::optional<double>> v(n);
    for (std::size_t i = 0; i < n && i < at.size(); ++i) {
      if (at[i]) v[i] = figure(*at[i]);
    }
    return v;
  };
  g.queries = fit_growth(scales, stage_values([](const StageResult& s) { return median_cold(s, "db_queries"); }),
                         production_scale);
  g.rows = fit_growth(scales, stage_values([](const StageResult& s) { return median_cold(s, "db_rows"); }),
                      production_scale);
  g.blocks = fit_growth(scales, stage_values([](const StageResult& s) -> std::optional<double> {
                          auto hit = median_cold(s, "db_shared_hit_blocks");
                          auto read = median_cold(s, "db_shared_read_blocks");
                          if (!hit && !read) return std::nullopt;
                          return hit.value_or(0) + read.value_or(0);
                        }),
                        production_scale, 2);
  // Database time: planning + execution (the profile records the two apart).
  g.time_ms = fit_growth(scales, stage_values([](const StageResult& s) -> std::optional<double> {
                           auto plan = median_cold(s, "db_plan_ms");
                           auto exec = median_cold(s, "db_exec_ms");
                           if (!plan && !exec) return std::nullopt;
                           return plan.value_or(0) + exec.value_or(0);
                         }),
                         production_scale);
  g.wall_ms = fit_growth(scales, stage_values([](const StageResult& s) { return median_cold(s, "wall_ms"); }),
                         production_scale);

  std::vector<std::pair<double, StatementGrowth>> statements;
  for (const auto& key : order) {
    const auto& per_scale = sums[key];
    std::vector<std::optional<double>> calls(n), rows(n), blocks(n), plan(n), time(n);
    bool plans_everywhere = true;  // every scale that ran it has its plan's blocks
    StatementGrowth st;
    double last_time = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool measured = i < at.size() && at[i];
      if (!measured) continue;
      if (!per_scale[i]) {
        calls[i] = 0;
        time[i] = 0;
        continue;
      }
      const StatementSum& s = *per_scale[i];
      if (st.query.empty() || i == n - 1) {
        st.query = s.query;
        st.text_id = s.text_id;
      }
      calls[i] = s.calls;
      time[i] = s.plan_ms + s.exec_ms;
      last_time = s.plan_ms + s.exec_ms;
      if (s.calls > 0) {
        rows[i] = s.rows / s.calls;
        if (s.has_blocks) blocks[i] = s.blocks / s.calls;
        plan[i] = plan_blocks(s.plan);
        plans_everywhere = plans_everywhere && plan[i].has_value();
      }
    }
    st.calls = fit_growth(scales, calls, production_scale);
    st.rows_per_call = fit_growth(scales, rows, production_scale);
    st.blocks_per_call = fit_growth(scales, plans_everywhere ? plan : blocks, production_scale, 2);
    st.time_ms = fit_growth(scales, time, production_scale);
    st.time_ms.projected = time_from_counts(st, calls, plans_everywhere ? plan : blocks, time);
    statements.emplace_back(last_time, std::move(st));
  }
  // The stage's times at production_scale: as at its largest scale, plus what its statements'
  // projections add; the part outside the database is taken as it was there.
  const auto largest = [&](const GrowthFit& f) -> std::optional<double> {
    for (std::size_t i = f.values.size(); i-- > 0;) {
      if (f.values[i]) return f.values[i];
    }
    return std::nullopt;
  };
  double added_ms = 0;
  bool any = false;
  for (const auto& [t, st] : statements) {
    if (!st.time_ms.projected) continue;
    added_ms += *st.time_ms.projected - largest(st.time_ms).value_or(0);
    any = true;
  }
  const auto wall = largest(g.wall_ms), db = largest(g.time_ms);
  g.wall_ms.projected = production_scale && wall ? std::optional<double>(*wall + (any ? added_ms : 0)) : std::nullopt;
  // An N+1 costs round trips more than database time: the wall time per statement (the slope
  // of wall time over statements per run, least squares over the scales) times the statements
  // added, when that says more.
  const auto statements_there = largest(g.queries);
  if (g.wall_ms.projected && g.queries.projected && statements_there) {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < g.queries.values.size() && i < g.wall_ms.values.size(); ++i) {
      if (!g.queries.values[i] || !g.wall_ms.values[i]) continue;
      const double x = *g.queries.values[i], y = *g.wall_ms.values[i];
      n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    const double var = n * sxx - sx * sx;
    const double per_statement = n >= 2 && var > 0 ? std::max(0.0, (n * sxy - sx * sy) / var) : 0;
    g.wall_ms.projected =
        std::max(*g.wall_ms.projected, *wall + per_statement * (*g.queries.projected - *statements_there));
  }
  g.time_ms.projected = production_scale && db ? std::optional<double>(*db + (any ? added_ms : 0)) : std::nullopt;
  std::stable_sort(statements.begin(), statements.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [t, st] : statements) g.statements.push_back(std::move(st));
  return g;
}

std::string growth_adverb(GrowthClass growth) {
  switch (growth) {
    case GrowthClass::none: return "";
    case GrowthClass::constant: return "not at all";
    case GrowthClass::sublinear: return "sublinearly";
    case GrowthClass::linear: return "linearly";
    case GrowthClass::quadratic: return "quadratically";
    case GrowthClass::superquadratic: return "faster than quadratically";
  }
  return "";
}

std::string growth_values(const GrowthFit& fit) {
  std::string out;
  for (const auto& v : fit.values) {
    if (!out.empty()) out += " → ";
    // Whole counts from 10 up (a median of two runs may end in .5); one decimal below.
    out += v ? format_value(*v >= 10 ? std::round(*v) : std::round(*v * 10) / 10, "count") : "–";
  }
  return out;
}

}  // namespace coldgate::results
