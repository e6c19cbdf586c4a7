#include "results/format.hpp"
#include "results/results.hpp"
#include "util/text.hpp"

#include <fmt/core.h>

#include <cmath>
#include <string_view>

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

namespace {

// A line around a cause rather than the cause: PostgreSQL's LINE, DETAIL, HINT, CONTEXT,
// STATEMENT and QUERY lines (at the start, or after a server log's prefix), indented ones (a
// caret, a traceback frame), and a program's pointer to its usage ("Type 'manage.py help' for
// usage.", "Try 'psql --help' for more information.").
bool context_line(std::string_view line) {
  if (line.empty() || line.front() == ' ' || line.front() == '\t' || line.starts_with("LINE "))
    return true;
  for (std::string_view label : {"DETAIL:", "HINT:", "CONTEXT:", "STATEMENT:", "QUERY:"}) {
    if (line.starts_with(label)) return true;
    // After a log line's prefix the server writes the label and two spaces.
    if (line.find(" " + std::string(label) + "  ") != std::string_view::npos) return true;
  }
  for (std::string_view pointer : {"Type ", "Try ", "See ", "Run "}) {
    if (line.starts_with(pointer) && line.find("help") != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

std::string failure_summary(const std::string& error) {
  std::size_t nl = error.find('\n');
  std::string first = error.substr(0, nl);
  if (nl == std::string::npos) return first;
  // The tail's last line with an error severity or an exception's heading states the cause, as
  // does the line util::stderr_excerpt kept before its "[… N lines …]"; without one, the tail's
  // last line that is not context.
  std::string_view tail = std::string_view(error).substr(nl + 1);
  std::string_view cause, severe;
  bool kept = false;  // the line above is the one stderr_excerpt kept
  while (!tail.empty() && severe.empty()) {
    std::size_t cut = tail.find_last_of('\n', tail.size() - 1);
    std::string_view line = cut == std::string_view::npos ? tail : tail.substr(cut + 1);
    tail = cut == std::string_view::npos ? std::string_view{} : tail.substr(0, cut);
    if (kept || util::cause_line(line)) severe = line;
    else if (util::omission_line(line)) kept = true;
    else if (cause.empty() && !context_line(line)) cause = line;
  }
  if (!severe.empty()) cause = severe;
  if (cause.empty()) return first;
  return first + (first.ends_with(':') ? " " : " — ") + std::string(cause);
}

std::string not_run_reason(const Stopped& x) {
  switch (x.exit_code) {
    case 1: return x.phase == StopPhase::build ? "not run: the build failed" : "not run: setup failed";
    case 2: return "not run: config error";
    case 130: return "not run: interrupted";
    default:
      return x.phase == StopPhase::server ? "not run: the server did not start"
                                 : "not run: infrastructure error";
  }
}

std::string format_ratio(double ratio) {
  if (ratio >= 100) return fmt::format("{:.0f}×", ratio);
  if (ratio >= 10) return fmt::format("{:.1f}×", ratio);
  return fmt::format("{:.2f}×", ratio);
}

}  // namespace coldgate::results
