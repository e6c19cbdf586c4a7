// libFuzzer target: measure::parse_metric_lines, the reader of $COLDGATE_METRICS — the file a
// command stage (any program of the user's) writes. Any bytes give the metrics or a
// coldgate::Error(gate_failed) whose place is "<where> line N"; metrics it accepts have a
// [a-z][a-z0-9_]* name and a finite value, and written back as lines they read back the same.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/command_metrics.hpp"
#include "util/error.hpp"

namespace {

bool metric_name(const std::string& s) {
  if (s.empty() || s[0] < 'a' || s[0] > 'z') return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  namespace measure = coldgate::measure;
  std::vector<measure::CommandMetric> metrics;
  try {
    metrics = measure::parse_metric_lines(text, "metrics.jsonl");
  } catch (const coldgate::Error& e) {
    if (e.code() != coldgate::ExitCode::gate_failed) std::abort();
    if (e.where().rfind("metrics.jsonl line ", 0) != 0) std::abort();
    return 0;
  }
  std::string lines;
  for (const auto& m : metrics) {
    if (!metric_name(m.name) || !std::isfinite(m.value)) std::abort();
    nlohmann::json j = {{"metric", m.name}, {"value", m.value}};
    if (!m.unit.empty()) j["unit"] = m.unit;
    if (m.warm) j["phase"] = "warm";
    lines += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict) + "\n";
  }
  std::vector<measure::CommandMetric> again;
  try {
    again = measure::parse_metric_lines(lines, "again.jsonl");
  } catch (const coldgate::Error&) {
    std::abort();
  }
  if (again.size() != metrics.size()) std::abort();
  for (std::size_t i = 0; i < again.size(); ++i) {
    if (again[i].name != metrics[i].name || again[i].value != metrics[i].value ||
        again[i].unit != metrics[i].unit || again[i].warm != metrics[i].warm)
      std::abort();
  }
  return 0;
}
