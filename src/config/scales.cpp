#include <set>

#include "config/config.hpp"

namespace coldgate::config {

double Config::load_scale() const {
  if (!scales.empty()) return scales.front();
  for (const auto& s : stages) {
    if (!s.scales.empty()) return s.scales.front();
  }
  return 1;
}

std::vector<double> Config::extra_scales(const std::vector<Stage>& selected) const {
  std::set<double> all;
  for (const auto& s : selected) all.insert(s.scales.begin(), s.scales.end());
  all.erase(load_scale());
  return {all.begin(), all.end()};
}

}  // namespace coldgate::config
