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

/// The elements of one array sorted by `identity:`, paired by their identity value: how many
/// only one document has and how many differ.
struct PairedElements {
  std::string pointer;  // the array (RFC 6901), as the second document has it when it does
  std::string member;   // the identity member that paired them ("id")
  std::size_t added = 0;
  std::size_t removed = 0;
  std::size_t changed = 0;
};

/// Counts of differing paths between two canonical documents plus the first few of them.
struct PathSummary {
  std::size_t changed = 0;
  std::size_t added = 0;
  std::size_t removed = 0;
  std::vector<PathChange> first;  // at most Options::max_paths entries, in document order
  /// With an arrangement: the arrays paired by identity that an element was added to or
  /// removed from, in the order their first difference was met.
  std::vector<PairedElements> paired;
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
  /// The rules both documents were canonicalized under, when known: render() then pairs the
  /// elements of arrays sorted by `identity:` by their identity value (summarize), says how many
  /// elements of each were added, removed and changed, and adds a note for each array sorted by
  /// its elements' text (canon::TextSortedArray) that has differing paths, saying why and which
  /// member would work as `identity:`.
  std::optional<canon::Options> arrangement;
};

/// Path-level differences of two documents in canonical form (as produced by canon); streams
/// both texts once: O(size) time and O(depth) extra memory. With `arrangement` (the rules both
/// were canonicalized under), the elements of an array sorted by `identity:` are paired by
/// their identity value, not their index, so an element inserted before others is one added
/// element, not a change of every one after it: then also a key per element of such arrays in
/// memory.
PathSummary summarize(std::string_view canonical_a, std::string_view canonical_b,
                      std::size_t max_paths = 20, const canon::Options* arrangement = nullptr);

/// "/items: 280 elements added, 3 changed (paired by `id`)": one paired array's element counts,
/// those that are 0 left out; "(root)" for the document root.
std::string paired_text(const PairedElements& paired);

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
