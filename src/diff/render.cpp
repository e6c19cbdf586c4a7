// The readable report: path summary block, blank line, capped unified hunks.
#include <fmt/core.h>

#include "diff/diff.hpp"
#include "diff/flatten.hpp"
#include "diff/text.hpp"

namespace coldgate::diff {

namespace {

std::string path_text(const std::string& path) {
  return path.empty() ? "(root)" : path;
}

std::string change_line(const PathChange& change) {
  switch (change.kind) {
    case PathChange::Kind::changed:
      return fmt::format("  {}: {} → {}\n", path_text(change.path), change.before, change.after);
    case PathChange::Kind::added:
      return fmt::format("  {}: added {}\n", path_text(change.path), change.after);
    case PathChange::Kind::removed:
      return fmt::format("  {}: removed {}\n", path_text(change.path), change.before);
  }
  return {};
}

}  // namespace

std::string render(std::string_view canonical_a, std::string_view canonical_b,
                   const Options& options) {
  if (canonical_a == canonical_b) return {};
  detail::SummaryExtent extent;
  PathSummary summary =
      detail::summarize_checked(canonical_a, canonical_b, options.max_paths, extent);
  std::size_t bad_a = extent.bad_line_a;
  std::size_t bad_b = extent.bad_line_b;
  std::string out;
  if (bad_a != 0 || bad_b != 0) {
    // The path summary of a text that is not canonical JSON would be misleading.
    const std::string& label = bad_a != 0 ? options.label_a : options.label_b;
    out = fmt::format("path summary unavailable: {} is not canonical JSON (line {})\n", label,
                      detail::with_commas(bad_a != 0 ? bad_a : bad_b));
  } else {
    std::size_t total = summary.changed + summary.added + summary.removed;
    if (total == 0) {
      out = "0 paths differ: the texts differ in formatting only\n";
    } else {
      out = fmt::format("{} {}: {} changed, {} added, {} removed\n", detail::with_commas(total),
                        total == 1 ? "path differs" : "paths differ",
                        detail::with_commas(summary.changed), detail::with_commas(summary.added),
                        detail::with_commas(summary.removed));
    }
    for (const PathChange& change : summary.first) out += change_line(change);
    // An entry for a whole subtree stands for all its leaves, so "more" counts paths.
    if (extent.unlisted > 0) {
      out += fmt::format("  … and {} more\n", detail::with_commas(extent.unlisted));
    }
  }
  out.push_back('\n');
  out += unified(canonical_a, canonical_b, options);
  return out;
}

}  // namespace coldgate::diff
