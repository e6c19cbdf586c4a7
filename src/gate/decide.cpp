#include "gate/decide.hpp"

#include <algorithm>

#include "gate/gate.hpp"
#include "util/error.hpp"

namespace coldgate::gate {

bool undecided(const results::MetricVerdict& v, const results::Metric& head,
               const results::Metric& base, const config::Gate& g) {
  const std::string& name = v.metric;
  if (name.size() < 3 || name.compare(name.size() - 3, 3, "_ms") != 0) return false;
  if (v.verdict == results::Verdict::added || v.verdict == results::Verdict::removed) return false;
  if (!v.ratio || !v.base_median || !v.head_median || *v.base_median <= 0) return false;
  if (head.cold.empty() || base.cold.empty()) return false;  // extra runs add cold samples only
  const double floor = static_cast<double>(g.min_delta.count());
  if (*v.head_median - *v.base_median < floor / 2) return false;
  const double ratio = *v.ratio;
  if (ratio >= g.max_ratio / 2 && ratio <= 2 * g.max_ratio) return true;
  const double head_min = *std::min_element(head.cold.begin(), head.cold.end());
  const double base_max = *std::max_element(base.cold.begin(), base.cold.end());
  return ratio >= g.warn_ratio && head_min <= base_max;
}

std::vector<std::string> undecided_metrics(const results::StageResult& head,
                                           const results::StageResult& base,
                                           const config::Gate& g) {
  if (head.failed() || base.failed()) return {};
  // The gate's own verdicts of this one stage pair: compare() on results holding only it, with
  // no environment to differ.
  results::Results h;
  results::Results b;
  h.stages.push_back(head);
  b.stages.push_back(base);
  Thresholds t;
  t.defaults = g;
  t.defaults.require_same_environment = false;
  results::GateResult gate;
  try {
    gate = compare(h, b, "base", t);
  } catch (const Error&) {
    return {};  // a bad sample: the gate of the whole run says so
  }
  std::vector<std::string> out;
  for (const auto& v : gate.metrics) {
    const results::Metric* hm = head.find(v.metric);
    const results::Metric* bm = base.find(v.metric);
    if (hm && bm && undecided(v, *hm, *bm, g)) out.push_back(v.metric);
  }
  return out;
}

}  // namespace coldgate::gate
