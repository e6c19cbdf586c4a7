#include "gate/gate.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace coldgate::gate {
namespace {

using namespace coldgate::measure;

std::size_t count_status(const Results& r, std::string_view status) {
  return static_cast<std::size_t>(std::count_if(r.stages.begin(), r.stages.end(), [&](const auto& s) {
    return s.snapshot && s.snapshot->status == status;
  }));
}

}  // namespace

const config::Gate& Thresholds::for_stage(const std::string& stage) const {
  auto it = stages.find(stage);
  return it == stages.end() ? defaults : it->second;
}

Thresholds Thresholds::from(const config::Config& config) {
  Thresholds t;
  t.defaults = config.gate;
  for (const auto& s : config.stages) t.stages[s.name] = s.gate;
  return t;
}

bool passed(const Results& r) {
  return std::none_of(r.stages.begin(), r.stages.end(), [](const StageResult& s) {
    return s.failed() ||
           (s.snapshot && s.snapshot->status != "match" && s.snapshot->status != "updated");
  });
}

std::string verdict(const Results& r) {
  std::vector<std::string> failed_names;
  for (const auto& s : r.stages) {
    if (s.failed()) failed_names.push_back(s.name);
  }
  std::vector<std::string> parts;
  if (!failed_names.empty()) {
    std::string names;
    for (const auto& n : failed_names) names += (names.empty() ? "" : ", ") + n;
    parts.push_back(fmt::format("{} stage{} failed ({})", failed_names.size(),
                                failed_names.size() == 1 ? "" : "s", names));
  }
  for (std::string_view status : {"changed", "missing", "malformed", "nondeterministic"}) {
    std::string names;
    for (const auto& s : r.stages) {
      if (s.snapshot && s.snapshot->status == status) names += (names.empty() ? "" : ", ") + s.name;
    }
    if (names.empty()) continue;
    std::size_t n = count_status(r, status);
    parts.push_back(fmt::format("{} snapshot{} {} ({})", n, n == 1 ? "" : "s", status, names));
  }
  if (parts.empty()) {
    std::size_t snaps = count_status(r, "match");
    std::size_t updated = count_status(r, "updated");
    return fmt::format("passed: {} stage{}, {} snapshot{} match{}", r.stages.size(),
                       r.stages.size() == 1 ? "" : "s", snaps, snaps == 1 ? "" : "s",
                       updated ? fmt::format(", {} updated", updated) : "");
  }
  std::string text = "failed: ";
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : "") + parts[i];
  return text;
}

}  // namespace coldgate::gate
