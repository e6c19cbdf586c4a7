#include "results/format.hpp"

#include <fmt/core.h>

#include <cmath>

namespace coldgate::results {
namespace {

std::string with_separators(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

}  // namespace

std::string format_value(double v, const std::string& unit) {
  if (unit == "ms") {
    if (std::fabs(v) >= 1000) return fmt::format("{:.2f} s", v / 1000);
    if (std::fabs(v) >= 10) return fmt::format("{:.1f} ms", v);
    return fmt::format("{:.2f} ms", v);
  }
  if (unit == "bytes") {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    double x = v;
    while (std::fabs(x) >= 1024 && i < 4) {
      x /= 1024;
      ++i;
    }
    return i == 0 ? fmt::format("{:.0f} B", x) : fmt::format("{:.1f} {}", x, units[i]);
  }
  std::string number = v == std::floor(v) && std::fabs(v) < 1e15
                           ? with_separators(static_cast<long long>(v))
                           : fmt::format("{:.2f}", v);
  if (unit.empty() || unit == "count") return number;
  return number + " " + unit;
}

std::string format_ratio(double ratio) {
  if (ratio >= 100) return fmt::format("{:.0f}×", ratio);
  if (ratio >= 10) return fmt::format("{:.1f}×", ratio);
  return fmt::format("{:.2f}×", ratio);
}

}  // namespace coldgate::results
