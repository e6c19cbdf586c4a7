#pragma once

#include <cstddef>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include "canon/canon.hpp"

namespace coldgate::diff {

/// One changed JSON path: `/a/b/3/c` (RFC 6901), with the old and new values as canonical text
/// (shortened to ~80 chars); `before` is empty when added, `after` empty when removed.
struct PathChange {
  enum class Kind { changed, added, removed };
  Kind kind;
  std::string path;
  std::string before;
  std::string after;
};

/// Counts of differing paths between two canonical documents plus the first few of them.
struct PathSummary {
  std::size_t changed = 0;
  std::size_t added = 0;
  std::size_t removed = 0;
  std::vector<PathChange> first;  // at most Options::max_paths entries, in document order
  /// The first differing path for a message: "/" for the document root (its JSON Pointer is
  /// ""), and "/" too when no path was listed.
  std::string first_path() const {
    return first.empty() || first.front().path.empty() ? "/" : first.front().path;
  }
};

/// What the readable diff shows and how much.
struct Options {
  std::size_t max_paths = 20;      // path summary entries listed
  std::size_t context_lines = 3;   // unified-diff context around each change
  std::size_t max_lines = 200;     // hunk lines shown; 0 = unlimited
  bool color = false;              // ANSI colours (callers decide: TTY and no NO_COLOR)
  std::string full_diff_path;      // where the full diff was written, named in the cap note
  std::string label_a = "a";       // header names of the two sides
  std::string label_b = "b";
  /// The rules both documents were canonicalized under, when known: render() then adds a note
  /// for each array sorted by its elements' text (canon::TextSortedArray) that has differing
  /// paths, saying why and which member would work as `identity:`.
  std::optional<canon::Options> arrangement;
};

/// Path-level differences of two documents in canonical form (as produced by canon); streams
/// both texts once: O(size) time and O(depth) extra memory.
PathSummary summarize(std::string_view canonical_a, std::string_view canonical_b,
                      std::size_t max_paths = 20);

/// Unified diff (`--- a`, `+++ b`, `@@ -l,n +l,n @@` hunks, dtl) of two texts, line-based, with
/// `context_lines` of context; bounded: time and memory stay near-linear even when every line
/// differs (windowed comparison past a size limit). `max_lines` = 0 gives the whole diff.
std::string unified(std::string_view a, std::string_view b, const Options& options = {});

/// The full readable report for two canonical documents: the path summary block (with the
/// notes of `options.arrangement`), then the capped unified hunks, with a note naming
/// `options.full_diff_path` when the cap cut them. Empty string when the documents are identical.
std::string render(std::string_view canonical_a, std::string_view canonical_b,
                   const Options& options = {});

}  // namespace coldgate::diff
