#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "diff/diff.hpp"

// Streaming reader of canonical JSON text (internal to the diff module): walks the document
// line by line in document order without building it, holding only the open containers.
namespace coldgate::diff::detail {

/// One step of a JSON Pointer: an array index or a (decoded) member name.
struct Segment {
  bool is_index = false;
  std::size_t index = 0;  // valid when is_index
  std::string key;        // valid when !is_index: the member name as UTF-8 bytes, unescaped
};

/// What a node of the document is: a leaf (scalar, `{}` or `[]`) or the opening of a non-empty
/// object or array whose members follow.
enum class NodeKind { leaf, object, array };

/// Leaves and direct children of a skipped subtree.
struct SubtreeSize {
  std::size_t leaves = 0;
  std::size_t children = 0;
};

/// Reads canonical text (docs/architecture.md "Canonical JSON") node by node in document order.
/// Stops at the first line that does not have the canonical shape; ok() then says so.
class Flattener {
 public:
  explicit Flattener(std::string_view text) : m_text(text) {}

  /// Moves to the next node; false at the end of the document or at a non-canonical line.
  bool next();
  /// Kind of the current node.
  NodeKind kind() const { return m_kind; }
  /// Canonical text of the current leaf (no trailing comma); empty for an opening node.
  std::string_view value() const { return m_value; }
  /// Path of the current node from the root (empty for the root itself).
  const std::vector<Segment>& path() const { return m_path; }
  /// Skips the members of the container the current opening node starts, up to and including
  /// its closing line; counts what was skipped. The path is undefined until the next next().
  SubtreeSize skip_subtree();
  /// False once a line did not have the canonical shape.
  bool ok() const { return m_error_line == 0; }
  /// 1-based number of the first non-canonical line; 0 when none.
  std::size_t error_line() const { return m_error_line; }

 private:
  enum class Event { node, close, end };
  Event read_line();
  Event fail();

  struct Frame {
    bool is_array = false;
    std::size_t count = 0;  // members seen so far
  };

  std::string_view m_text;
  std::size_t m_pos = 0;         // offset of the next unread line
  std::size_t m_line = 0;        // number of the last line read (1-based)
  std::size_t m_error_line = 0;  // 0 while every line was canonical
  bool m_root_seen = false;
  std::vector<Frame> m_frames;  // open containers, innermost last
  std::vector<Segment>
      m_path;  // path of the current node; size() == m_frames.size() after a member
  NodeKind m_kind = NodeKind::leaf;
  std::string_view m_value;
};

/// The bytes of the JSON string literal `literal` (quotes included), escapes decoded; `literal`
/// itself when it is not one.
std::string decoded_string(std::string_view literal);

/// `path` as an RFC 6901 JSON Pointer (`~` → `~0`, `/` → `~1`); "" for the root.
std::string pointer(const std::vector<Segment>& path);

/// Appends one step of a pointer: `/` and the index or the escaped member name.
void append_segment(const Segment& segment, std::string& out);

/// Document order of two paths: segment by segment, indices numerically, member names by
/// bytes (the canonical sort), a prefix first. Negative, zero or positive like strcmp.
int compare(const std::vector<Segment>& a, const std::vector<Segment>& b);

/// What summarize_checked() found besides the summary.
struct SummaryExtent {
  std::size_t bad_line_a = 0;  // first line of a that is not canonical; 0 when none
  std::size_t bad_line_b = 0;  // same for b; the summary covers only what came before them
  std::size_t unlisted = 0;    // counted paths not covered by an entry of PathSummary::first
};

/// Differing paths counted per subtree: pointer (RFC 6901, "" the root) → paths under it.
using CountsUnder = std::unordered_map<std::string, std::size_t>;

/// summarize(), also reporting where the texts stop being canonical and what was not listed;
/// with `under`, each of its entries gets the number of counted paths at or below its pointer.
/// With `arrangement`, pairs the elements of arrays sorted by identity as summarize() says.
PathSummary summarize_checked(std::string_view canonical_a, std::string_view canonical_b,
                              std::size_t max_paths, SummaryExtent& extent,
                              CountsUnder* under = nullptr,
                              const canon::Options* arrangement = nullptr);

}  // namespace coldgate::diff::detail
