#include "report/sections.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "report/report.hpp"

namespace coldgate::report {

using namespace coldgate::results;

namespace {

// "1 path differs: …", "12 paths differ: …": the diff's count line, which the snapshot's message
// (in the table of changes) already gives. "0 paths differ" says more than the message: kept.
bool is_count_line(std::string_view line) {
  std::size_t digits = line.find_first_not_of("0123456789,");
  if (digits == 0 || digits == std::string_view::npos || line.starts_with("0 ")) return false;
  std::string_view rest = line.substr(digits);
  return rest.starts_with(" path differs: ") || rest.starts_with(" paths differ: ");
}

// A diff header label ("snapshots/x.json", "snapshots/x.json (updated)") through repo_path.
std::string relabel(std::string_view label, const std::vector<std::string>& anchors) {
  std::string_view note;
  if (std::size_t open = label.rfind(" (");
      open != std::string_view::npos && label.ends_with(')')) {
    note = label.substr(open);
    label = label.substr(0, open);
  }
  return repo_path(label, anchors) + std::string(note);
}

// A JSON string longer than this in a diff line shows its start and end with its length: a
// page's article bodies would fill the report, and what changed in them is in the whole diff.
constexpr std::size_t k_max_value_bytes = 200;
constexpr std::size_t k_value_start_bytes = 80;
constexpr std::size_t k_value_end_bytes = 40;
// A diff line longer than this (after its strings are shortened) is cut.
constexpr std::size_t k_max_diff_line_bytes = 400;
// A stage's diff in the report, in bytes: the rest is in the whole diff's file.
constexpr std::size_t k_max_stage_diff_bytes = 5'000;

std::size_t code_points(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The last `max` bytes or fewer of `text`, from a UTF-8 character's start.
std::string_view utf8_suffix(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t at = text.size() - max;
  while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  return text.substr(at);
}

// A diff line with each long JSON string as its start, " … ", its end and its length in
// characters ("text …"… "end." (4,210 characters)), then cut if still longer than
// k_max_diff_line_bytes.
std::string shortened_line(std::string_view line) {
  std::string out;
  if (line.size() > k_max_value_bytes) {
    std::size_t pos = 0;
    while (pos < line.size()) {
      std::size_t open = line.find('"', pos);
      if (open == std::string_view::npos) break;
      std::size_t close = open + 1;
      while (close < line.size() && line[close] != '"') close += line[close] == '\\' ? 2 : 1;
      if (close >= line.size()) break;
      std::string_view value = line.substr(open + 1, close - open - 1);
      out += line.substr(pos, open + 1 - pos);
      if (value.size() > k_max_value_bytes) {
        std::string_view start = utf8_prefix(value, k_value_start_bytes);
        while (start.ends_with('\\')) start.remove_suffix(1);  // not half an escape
        out += std::string(start) + " … " + std::string(utf8_suffix(value, k_value_end_bytes)) +
               "\"" +
               fmt::format(" ({} characters)", format_value(static_cast<double>(code_points(value)), "count"));
      } else {
        out += std::string(value) + "\"";
      }
      pos = close + 1;
    }
    out += line.substr(std::min(pos, line.size()));
  } else {
    out = line;
  }
  if (out.size() > k_max_diff_line_bytes) out = std::string(utf8_prefix(out, k_max_diff_line_bytes)) + " …";
  return out;
}

// `diff` within k_max_stage_diff_bytes, cut at a line with a last line saying how many lines
// are left out and which file has them all (`whole`, or none when "").
std::string capped_diff(std::string diff, const std::string& whole) {
  if (diff.size() <= k_max_stage_diff_bytes) return diff;
  std::size_t cut = diff.rfind('\n', k_max_stage_diff_bytes);
  cut = cut == std::string::npos ? 0 : cut + 1;
  const auto left = static_cast<std::size_t>(std::count(diff.begin() + static_cast<std::ptrdiff_t>(cut), diff.end(), '\n'));
  diff.resize(cut);
  diff += fmt::format("… {} more line{} here{}\n", format_value(static_cast<double>(left), "count"),
                      left == 1 ? "" : "s", whole.empty() ? "" : "; the whole diff: " + whole);
  return diff;
}

// The snapshot's diff as the report shows it: without the count line, the header's paths and
// the cap note's full-diff path repository-relative, long values shortened
// (shortened_line) and at most k_max_stage_diff_bytes (capped_diff).
std::string report_diff(const SnapshotResult& sn) {
  // The snapshot and its candidate as the results name them: a label ending in one of them.
  std::vector<std::string> anchors = {repo_path(sn.path), repo_path(sn.pending)};
  std::string out;
  bool in_header = true;  // before the first hunk: `--- ` and `+++ ` lines are labels there
  std::string_view diff = sn.diff;
  for (std::size_t pos = 0, n = 0; pos < diff.size(); ++n) {
    std::size_t end = std::min(diff.find('\n', pos), diff.size());
    std::string_view line = diff.substr(pos, end - pos);
    pos = end + 1;
    if (n == 0 && is_count_line(line)) continue;
    if (out.empty() && line.empty()) continue;
    if (line.starts_with("@@")) in_header = false;
    std::size_t full = line.find("; full diff: ");
    if (in_header && (line.starts_with("--- ") || line.starts_with("+++ "))) {
      out += std::string(line.substr(0, 4)) + relabel(line.substr(4), anchors);
    } else if (line.starts_with("… diff cut at") && full != std::string_view::npos) {
      out += std::string(line.substr(0, full + 13)) + repo_path(line.substr(full + 13), anchors);
    } else {
      out += shortened_line(line);
    }
    out += '\n';
  }
  // The whole diff's file: written beside the candidate for a changed or malformed snapshot.
  const bool whole = !sn.pending.empty() &&
                     (sn.status == SnapshotStatus::changed || sn.status == SnapshotStatus::malformed);
  return capped_diff(std::move(out), whole ? repo_path(sn.pending, anchors) + ".diff" : "");
}

}  // namespace

// Each snapshot diff once, closed: the table of changes says what changed and why.
Section diffs_section(const Results& r) {
  Section s{"", {}, "", "snapshot diff", "snapshot diffs"};
  for (const auto& st : r.stages) {
    if (!st.snapshot || st.snapshot->status == SnapshotStatus::match || st.snapshot->diff.empty()) continue;
    const SnapshotResult& sn = *st.snapshot;
    std::string what =
        sn.status == SnapshotStatus::nondeterministic ? "diff of two cold runs" : "diff of " + repo_path(sn.path);
    s.items.push_back({fmt::format("\n<details><summary>{}: {}</summary>\n\n",
                                   summary_text(capped(st.name, 200)), summary_text(what)),
                       sn.status == SnapshotStatus::updated ? 3 : 1, report_diff(sn), "diff", "\n</details>\n"});
  }
  return s;
}

}  // namespace coldgate::report
