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

// The snapshot's diff as the report shows it: without the count line, the header's paths and
// the cap note's full-diff path repository-relative.
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
      out += line;
    }
    out += '\n';
  }
  return out;
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
