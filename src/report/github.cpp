#include "report/github.hpp"

#include <fmt/core.h>

#include <random>

#include "report/escape.hpp"
#include "report/table.hpp"

namespace coldgate::report {
namespace {

using namespace coldgate::results;

std::string command(std::string_view level, std::string_view file, std::string_view title,
                    std::string_view message) {
  std::string props = file.empty() ? "" : "file=" + escape_command_property(file) + ",";
  props += "title=" + escape_command_property(title);
  return fmt::format("::{} {}::{}\n", level, props, escape_command_data(valid_utf8(message)));
}

}  // namespace

std::string escape_command_data(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string escape_command_property(std::string_view text) {
  std::string out;
  for (char c : escape_command_data(text)) {
    switch (c) {
      case ':':
        out += "%3A";
        break;
      case ',':
        out += "%2C";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string annotations(const Results& r) {
  std::string out;
  for (const auto& s : r.stages) {
    if (s.failed()) out += command("error", "", "coldgate: stage failed", s.name + ": " + s.error);
  }
  if (r.gate) {
    for (const auto& v : r.gate->metrics) {
      if (v.verdict != Verdict::regression && v.verdict != Verdict::slower) continue;
      std::string message =
          fmt::format("{} {}: {}{} ({} → {})", v.stage, v.metric, to_string(v.verdict),
                      v.ratio ? fmt::format(" {}", format_ratio(*v.ratio)) : "",
                      value_or_dash(v.base_median, v.unit), value_or_dash(v.head_median, v.unit));
      if (!v.reason.empty()) message += ": " + v.reason;
      out += command(v.verdict == Verdict::regression ? "error" : "warning", "",
                     "coldgate: " + std::string(to_string(v.verdict)), message);
    }
    for (const auto& v : r.gate->statements) {
      if (v.verdict != Verdict::regression) continue;
      out += command("error", "", "coldgate: statement regression",
                     fmt::format("{} statement `{}`: {}", v.stage, v.query, v.reason));
    }
    if (!r.gate->environment_differences.empty()) {
      std::string diffs;
      for (const auto& d : r.gate->environment_differences)
        diffs += (diffs.empty() ? "" : "; ") + d;
      out += command("warning", "", "coldgate: environment differs from the baseline", diffs);
    }
  }
  for (const auto& s : r.stages) {
    if (!s.snapshot || passes(s.snapshot->status)) continue;
    const SnapshotResult& sn = *s.snapshot;
    std::string message =
        s.name + ": " +
        (sn.message.empty() ? "snapshot " + std::string(to_string(sn.status)) : sn.message);
    if (!sn.pending.empty()) message += " (candidate: " + sn.pending + ")";
    out += command("error", sn.path, "coldgate: snapshot " + std::string(to_string(sn.status)),
                   message);
  }
  return out;
}

std::string stop_commands_token() {
  std::random_device device;
  return fmt::format("coldgate-{:08x}{:08x}{:08x}", device(), device(), device());
}

}  // namespace coldgate::report
