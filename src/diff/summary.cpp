// Path summary: a merge-join of the two documents' node streams in document order.
//
// Both canonical texts are read once, side by side, by detail::Flattener; since canonical
// objects are sorted by key and arrays are indexed, document order is path order, so a node
// only one side has is found by comparing the two current paths — O(size) time, O(depth) memory.
//
// Counting rules:
// - a leaf (scalar, `{}` or `[]`) present on both sides with different text: 1 changed;
// - a leaf on one side only: 1 added / removed;
// - a non-empty container on one side only (or replacing an empty one of the same kind): all
//   its leaves count as added / removed, and `first` lists its root once, rendered
//   `{N keys}` / `[N items]`;
// - a value whose type changes (scalar ↔ container, object ↔ array): 1 changed, the container
//   side rendered as above.
//
// With an arrangement, the steps into an array sorted by `identity:` compare by the element's
// identity value (detail::PairPath), not its index: canon sorted those elements by that value,
// so document order is still path order, and an element meets the one of the same identity.
#include <fmt/core.h>
#include <unordered_map>
#include <utility>

#include "diff/diff.hpp"
#include "diff/flatten.hpp"
#include "diff/pairing.hpp"
#include "diff/text.hpp"

namespace coldgate::diff {

namespace detail {

namespace {

constexpr std::size_t k_value_chars = 80;

std::string container_text(NodeKind kind, std::size_t children) {
  if (kind == NodeKind::object) return fmt::format("{{{} key{}}}", children, children == 1 ? "" : "s");
  return fmt::format("[{} item{}]", children, children == 1 ? "" : "s");
}

// The kind an empty-container leaf would have as a non-empty node; leaf for scalars.
NodeKind empty_kind(std::string_view value) {
  if (value == "{}") return NodeKind::object;
  if (value == "[]") return NodeKind::array;
  return NodeKind::leaf;
}

class Summarizer {
 public:
  Summarizer(std::string_view a, std::string_view b, std::size_t max_paths, CountsUnder* under,
             const canon::Options* arrangement)
      : m_a(a), m_b(b), m_max_paths(max_paths), m_under(under) {
    if (arrangement != nullptr) {
      m_keyed_a = keyed_arrays(a, *arrangement);
      m_keyed_b = keyed_arrays(b, *arrangement);
      m_pairing = !m_keyed_a.empty() || !m_keyed_b.empty();
    }
  }

  PathSummary run() {
    bool has_a = advance(m_a, m_pa);
    bool has_b = advance(m_b, m_pb);
    while (has_a || has_b) {
      int order = !has_a      ? 1
                  : !has_b    ? -1
                  : m_pairing ? compare(m_pa.segments(), m_pb.segments())
                              : compare(m_a.path(), m_b.path());
      if (order < 0) {
        one_side(m_a, PathChange::Kind::removed);
        has_a = advance(m_a, m_pa);
      } else if (order > 0) {
        one_side(m_b, PathChange::Kind::added);
        has_b = advance(m_b, m_pb);
      } else {
        both_sides();
        has_a = advance(m_a, m_pa);
        has_b = advance(m_b, m_pb);
      }
    }
    // Elements that only changed are the paths listed already; pairing is news when elements
    // were added or removed, which pairing by index would have read as changes.
    std::erase_if(m_summary.paired,
                  [](const PairedElements& p) { return p.added == 0 && p.removed == 0; });
    return std::move(m_summary);
  }

  SummaryExtent extent() const { return {m_a.error_line(), m_b.error_line(), m_unlisted}; }

 private:
  bool listing() const { return m_summary.first.size() < m_max_paths; }

  bool advance(Flattener& side, PairPath& pairs) {
    const bool more = side.next();
    if (more && m_pairing) pairs.update(side.path());
    return more;
  }

  // Counts the difference at the current node of one side (`from_b`: the second document's)
  // for each paired array it is in: an element only that side has when the node is the element
  // (`whole`), else a changed element, once per element.
  void note_elements(PathChange::Kind kind, bool from_b, bool whole) {
    if (!m_pairing) return;
    const PairPath& pairs = from_b ? m_pb : m_pa;
    const std::vector<PairSegment>& steps = pairs.segments();
    std::string key;
    for (std::size_t d = 0; d < steps.size(); ++d) {
      const PairSegment& step = steps[d];
      if (step.is_index && step.array != nullptr) {
        auto [it, fresh] = m_paired.try_emplace(key, m_summary.paired.size());
        if (fresh) {
          m_summary.paired.push_back({pairs.pointer_to(d), step.array->member, 0, 0, 0});
          m_last_changed.emplace_back();
          m_pointer_from_b.push_back(from_b);
        } else if (from_b && !m_pointer_from_b[it->second]) {
          m_summary.paired[it->second].pointer = pairs.pointer_to(d);
          m_pointer_from_b[it->second] = true;
        }
        PairedElements& counts = m_summary.paired[it->second];
        std::string element = key;
        append_pair_segment(step, element);
        if (whole && d + 1 == steps.size() && kind != PathChange::Kind::changed) {
          ++(kind == PathChange::Kind::added ? counts.added : counts.removed);
        } else if (m_last_changed[it->second] != element) {
          ++counts.changed;
          m_last_changed[it->second] = std::move(element);
        }
      }
      append_pair_segment(step, key);
    }
  }

  // With m_under: notes the counters at or above `path`, which the next count() adds to.
  void find_under(const std::vector<Segment>& path) {
    m_hits.clear();
    if (m_under == nullptr) return;
    std::string prefix;
    if (auto it = m_under->find(prefix); it != m_under->end()) m_hits.push_back(&it->second);
    for (const Segment& segment : path) {
      append_segment(segment, prefix);
      if (auto it = m_under->find(prefix); it != m_under->end()) m_hits.push_back(&it->second);
    }
  }

  // Call after find_under() and before list() for the same node.
  void count(PathChange::Kind kind, std::size_t n) {
    for (std::size_t* counter : m_hits) *counter += n;
    m_hits.clear();
    if (!listing()) m_unlisted += n;
    switch (kind) {
      case PathChange::Kind::changed:
        m_summary.changed += n;
        break;
      case PathChange::Kind::added:
        m_summary.added += n;
        break;
      case PathChange::Kind::removed:
        m_summary.removed += n;
        break;
    }
  }

  void list(PathChange::Kind kind, std::string path, std::string before, std::string after) {
    if (!listing()) return;
    m_summary.first.push_back(PathChange{kind, std::move(path), shorten(before, k_value_chars),
                                         shorten(after, k_value_chars)});
  }

  // Records the current node of `side` (and its whole subtree) as present on that side only.
  void one_side(Flattener& side, PathChange::Kind kind) {
    note_elements(kind, kind == PathChange::Kind::added, true);
    find_under(side.path());
    std::string path = listing() ? pointer(side.path()) : std::string();
    std::string value;
    if (side.kind() == NodeKind::leaf) {
      count(kind, 1);
      value = side.value();
    } else {
      NodeKind node_kind = side.kind();
      SubtreeSize size = side.skip_subtree();
      count(kind, size.leaves);
      value = container_text(node_kind, size.children);
    }
    if (kind == PathChange::Kind::removed)
      list(kind, std::move(path), std::move(value), "");
    else
      list(kind, std::move(path), "", std::move(value));
  }

  // Both sides have a node at the same path.
  void both_sides() {
    NodeKind ka = m_a.kind();
    NodeKind kb = m_b.kind();
    if (ka == NodeKind::leaf && kb == NodeKind::leaf) {
      if (m_a.value() != m_b.value()) {
        note_elements(PathChange::Kind::changed, true, false);
        find_under(m_b.path());
        count(PathChange::Kind::changed, 1);
        if (listing()) {
          list(PathChange::Kind::changed, pointer(m_b.path()), std::string(m_a.value()),
               std::string(m_b.value()));
        }
      }
      return;
    }
    if (ka == kb) return;  // the same kind of container: their members follow
    // An empty container grown into a non-empty one of the same kind, or the reverse.
    if (ka == NodeKind::leaf && empty_kind(m_a.value()) == kb) {
      one_side(m_b, PathChange::Kind::added);
      return;
    }
    if (kb == NodeKind::leaf && empty_kind(m_b.value()) == ka) {
      one_side(m_a, PathChange::Kind::removed);
      return;
    }
    // A type change: one changed value, whatever the containers hold.
    note_elements(PathChange::Kind::changed, true, false);
    find_under(m_b.path());
    std::string path = listing() ? pointer(m_b.path()) : std::string();
    std::string before = side_text(m_a);
    std::string after = side_text(m_b);
    count(PathChange::Kind::changed, 1);
    list(PathChange::Kind::changed, std::move(path), std::move(before), std::move(after));
  }

  // The current node's text, skipping its subtree when it is a container.
  static std::string side_text(Flattener& side) {
    if (side.kind() == NodeKind::leaf) return std::string(side.value());
    NodeKind kind = side.kind();
    return container_text(kind, side.skip_subtree().children);
  }

  Flattener m_a;
  Flattener m_b;
  std::size_t m_max_paths;
  PathSummary m_summary;
  std::size_t m_unlisted = 0;
  CountsUnder* m_under;
  std::vector<std::size_t*> m_hits;  // m_under's counters the next count() adds to
  bool m_pairing = false;            // an arrangement was given and an array is paired
  KeyedArrays m_keyed_a;
  KeyedArrays m_keyed_b;
  PairPath m_pa{m_keyed_a};
  PairPath m_pb{m_keyed_b};
  // Per paired array (by its pairing path): its entry in m_summary.paired, the element last
  // counted as changed, and whether the entry's pointer is the second document's.
  std::unordered_map<std::string, std::size_t> m_paired;
  std::vector<std::string> m_last_changed;
  std::vector<bool> m_pointer_from_b;
};

}  // namespace

PathSummary summarize_checked(std::string_view canonical_a, std::string_view canonical_b,
                              std::size_t max_paths, SummaryExtent& extent, CountsUnder* under,
                              const canon::Options* arrangement) {
  Summarizer summarizer(canonical_a, canonical_b, max_paths, under, arrangement);
  PathSummary summary = summarizer.run();
  extent = summarizer.extent();
  return summary;
}

}  // namespace detail

PathSummary summarize(std::string_view canonical_a, std::string_view canonical_b,
                      std::size_t max_paths, const canon::Options* arrangement) {
  detail::SummaryExtent extent;
  return detail::summarize_checked(canonical_a, canonical_b, max_paths, extent, nullptr,
                                   arrangement);
}

}  // namespace coldgate::diff
