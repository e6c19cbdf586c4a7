// The readable report: path summary block, blank line, capped unified hunks.
#include <fmt/core.h>

#include <unordered_set>

#include "diff/diff.hpp"
#include "diff/flatten.hpp"
#include "diff/text.hpp"
#include "util/error.hpp"

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

// `name` as a YAML flow scalar, plain where YAML and the config's `${…}` expansion read it as
// written, else double-quoted (JSON escapes are YAML's too); `${` becomes `$${` either way.
std::string yaml_scalar(std::string_view name) {
  bool plain = !name.empty() && name.find("${") == std::string_view::npos;
  for (std::size_t i = 0; i < name.size() && plain; ++i) {
    const char c = name[i];
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
                      (i > 0 && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
    plain = word;
  }
  if (plain) return std::string(name);
  std::string quoted;
  canon::append_json_string(name, quoted);
  for (std::size_t at = quoted.find("${"); at != std::string::npos; at = quoted.find("${", at + 3))
    quoted.insert(at, "$");
  return quoted;
}

// "`$id` or `id`", "`a`, `b` or `c`".
std::string members_text(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += fmt::format("`{}`", names[i]);
  }
  return out;
}

// Why one changed value moved many elements of a text-sorted array, and what would pair them.
std::string sorted_by_text_note(const canon::TextSortedArray& array, std::size_t paths,
                                const std::vector<std::string>& identity) {
  std::string what = identity.empty()
                         ? "an array of objects, sorted by their text (`identity:` is empty)"
                         : fmt::format("an array of objects without {}, sorted by their text",
                                       members_text(identity));
  std::string all = array.objects == array.elements
                        ? fmt::format("all {} elements", detail::with_commas(array.elements))
                        : fmt::format("all {} objects of its {} elements",
                                      detail::with_commas(array.objects),
                                      detail::with_commas(array.elements));
  std::string pairing;
  if (array.member.empty()) {
    pairing = fmt::format("No member is present and unique in {}, so none would work as "
                          "`identity:`.",
                          all);
  } else {
    std::string list;
    for (const std::string& name : identity) list += yaml_scalar(name) + ", ";
    list += yaml_scalar(array.member);
    pairing = fmt::format("`identity: [{}]` with member `{}` would pair them (present and unique "
                          "in {}).",
                          list, array.member, all);
  }
  return fmt::format("{}: {}, so a changed value can move elements: {} {}. {}\n",
                     path_text(array.pointer), what, detail::with_commas(paths),
                     paths == 1 ? "path differs" : "paths differ", pairing);
}

// The text-sorted arrays of both documents (same place, so both sides sort them by text),
// keyed for the summary's counts; empty when either text is not canonical JSON.
std::vector<canon::TextSortedArray> shared_sorted_arrays(std::string_view a, std::string_view b,
                                                         const canon::Options& arrangement) {
  std::vector<canon::TextSortedArray> in_a;
  std::vector<canon::TextSortedArray> in_b;
  try {
    in_a = canon::text_sorted_arrays(a, arrangement);
    in_b = canon::text_sorted_arrays(b, arrangement);
  } catch (const Error&) {
    return {};
  }
  std::unordered_set<std::string> pointers_a;
  for (const auto& array : in_a) pointers_a.insert(array.pointer);
  std::vector<canon::TextSortedArray> shared;
  for (auto& array : in_b) {
    if (pointers_a.count(array.pointer) != 0) shared.push_back(std::move(array));
  }
  return shared;
}

constexpr std::size_t k_max_notes = 3;

}  // namespace

std::string paired_text(const PairedElements& paired) {
  std::string counts;
  auto add = [&](std::size_t n, std::string_view what) {
    if (n == 0) return;
    if (counts.empty()) {
      counts = fmt::format("{} {} {}", detail::with_commas(n), n == 1 ? "element" : "elements", what);
    } else {
      counts += fmt::format(", {} {}", detail::with_commas(n), what);
    }
  };
  add(paired.added, "added");
  add(paired.changed, "changed");
  add(paired.removed, "removed");
  if (counts.empty()) counts = "no element differs";
  return fmt::format("{}: {} (paired by `{}`)", path_text(paired.pointer), counts, paired.member);
}

std::string render(std::string_view canonical_a, std::string_view canonical_b,
                   const Options& options) {
  if (canonical_a == canonical_b) return {};
  std::vector<canon::TextSortedArray> sorted;
  detail::CountsUnder under;
  if (options.arrangement) {
    sorted = shared_sorted_arrays(canonical_a, canonical_b, *options.arrangement);
    for (const auto& array : sorted) under.emplace(array.pointer, 0);
  }
  detail::SummaryExtent extent;
  PathSummary summary = detail::summarize_checked(
      canonical_a, canonical_b, options.max_paths, extent, sorted.empty() ? nullptr : &under,
      options.arrangement ? &*options.arrangement : nullptr);
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
    for (std::size_t i = 0; i < summary.paired.size() && i < k_max_notes; ++i)
      out += paired_text(summary.paired[i]) + "\n";
    if (summary.paired.size() > k_max_notes) {
      const std::size_t more = summary.paired.size() - k_max_notes;
      out += fmt::format("… and {} more {} paired by identity with elements that differ\n",
                         detail::with_commas(more), more == 1 ? "array" : "arrays");
    }
    std::size_t notes = 0;
    std::size_t more = 0;
    for (const auto& array : sorted) {
      const std::size_t paths = under[array.pointer];
      if (paths == 0) continue;
      if (notes++ < k_max_notes) {
        out += sorted_by_text_note(array, paths, options.arrangement->identity);
      } else {
        ++more;
      }
    }
    if (more > 0) {
      out += fmt::format("… and {} more {} sorted by their text with paths that differ\n",
                         detail::with_commas(more), more == 1 ? "array" : "arrays");
    }
  }
  out.push_back('\n');
  out += unified(canonical_a, canonical_b, options);
  return out;
}

}  // namespace coldgate::diff
