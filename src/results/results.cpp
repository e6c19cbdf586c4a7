#include "results/results.hpp"

#include <algorithm>

namespace coldgate::results {

Metric& StageResult::metric(const std::string& name, const std::string& unit) {
  for (auto& [n, m] : metrics) {
    if (n == name) return m;
  }
  metrics.emplace_back(name, Metric{unit, {}, {}});
  return metrics.back().second;
}

const Metric* StageResult::find(std::string_view name) const {
  for (const auto& [n, m] : metrics) {
    if (n == name) return &m;
  }
  return nullptr;
}

std::string_view to_string(BaseSource source) {
  switch (source) {
    case BaseSource::interleaved:
      return "interleaved";
    case BaseSource::cache:
      return "cache";
    case BaseSource::file:
      break;
  }
  return "file";
}

std::optional<BaseSource> base_source_from(std::string_view text) {
  for (BaseSource s : {BaseSource::file, BaseSource::interleaved, BaseSource::cache}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  auto mid = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), mid, samples.end());
  double upper = *mid;
  if (samples.size() % 2 == 1) return upper;
  double lower = *std::max_element(samples.begin(), mid);
  return (lower + upper) / 2;
}

const std::vector<std::string_view>& known_metric_order() {
  static const std::vector<std::string_view> order{
      "wall_ms",       "cpu_ms",          "peak_rss_bytes",    "connect_ms",
      "query_ms",      "decode_ms",       "planning_ms",       "execution_ms",
      "jit_functions", "jit_generation_ms", "jit_inlining_ms", "jit_optimization_ms",
      "jit_emission_ms", "jit_total_ms",  "result_bytes",      "rows"};
  return order;
}

}  // namespace coldgate::results
