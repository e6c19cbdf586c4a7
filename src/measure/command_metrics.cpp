#include "measure/command_metrics.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "results/results.hpp"
#include "util/error.hpp"

namespace coldgate::measure {
using namespace coldgate::results;
namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string shorten(std::string_view line) {
  if (line.size() <= 80) return std::string(line);
  return std::string(line.substr(0, 77)) + "...";
}

}  // namespace

std::vector<CommandMetric> parse_metric_lines(std::string_view text, const std::string& where) {
  std::vector<CommandMetric> out;
  std::map<std::string, std::string> units;
  std::set<std::string> cold_seen;
  const auto& reserved = known_metric_order();
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;

    auto fail = [&](const std::string& what) -> void {
      throw Error(ExitCode::gate_failed, fmt::format("{} line {}", where, line_no),
                  fmt::format("{}: {} (expected {{\"metric\": NAME, \"value\": NUMBER, \"unit\": "
                              "UNIT}}, one object per line)",
                              what, shorten(line)));
    };
    auto doc = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
    if (doc.is_discarded()) fail("not JSON");
    if (!doc.is_object()) fail("not a JSON object");
    CommandMetric m;
    bool has_name = false, has_value = false;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      const std::string& key = it.key();
      if (key == "metric") {
        if (!it->is_string()) fail("\"metric\" is not a string");
        m.name = it->get<std::string>();
        has_name = true;
      } else if (key == "value") {
        if (!it->is_number()) fail("\"value\" is not a number");
        m.value = it->get<double>();
        if (!std::isfinite(m.value)) fail("\"value\" is out of range");
        has_value = true;
      } else if (key == "unit") {
        if (!it->is_string()) fail("\"unit\" is not a string");
        m.unit = it->get<std::string>();
      } else if (key == "phase") {
        if (!it->is_string() || (*it != "cold" && *it != "warm")) {
          fail("\"phase\" must be \"cold\" or \"warm\"");
        }
        m.warm = *it == "warm";
      } else {
        fail(fmt::format("unknown member \"{}\"", key));
      }
    }
    if (!has_name) fail("no \"metric\"");
    if (!has_value) fail("no \"value\"");
    if (!valid_name(m.name)) fail(fmt::format("metric name \"{}\" is not [a-z][a-z0-9_]*", m.name));
    if (std::find(reserved.begin(), reserved.end(), m.name) != reserved.end()) {
      fail(fmt::format("\"{}\" is one of coldgate's own metrics; choose another name", m.name));
    }
    auto [unit, fresh] = units.emplace(m.name, m.unit);
    if (!fresh && unit->second != m.unit) {
      fail(fmt::format("unit \"{}\" differs from \"{}\" given earlier", m.unit, unit->second));
    }
    if (!m.warm && !cold_seen.insert(m.name).second) {
      fail(fmt::format("\"{}\" given twice for one cold run (mark repetitions \"phase\": \"warm\")",
                       m.name));
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace coldgate::measure
