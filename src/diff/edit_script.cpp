#include "diff/edit_script.hpp"

#include <algorithm>
#include <dtl/dtl.hpp>
#include <functional>

namespace coldgate::diff::detail {

namespace {

// Up to this many lines (both sides together) a range goes to dtl as a whole. dtl's cost is
// ~(N+M)·P time and ~P² memory (P ≈ deleted lines), so this bounds one call to a few ms.
constexpr std::size_t k_direct_lines = 1200;
// Lines per side of one window when a large range has no anchors left.
constexpr std::size_t k_window_lines = k_direct_lines / 2;
// How often a gap between anchors is searched again for anchors of its own.
constexpr int k_max_anchor_depth = 8;

using Ids = std::vector<std::uint32_t>;

// Maps equal lines to equal small integers (open addressing over the line views).
Ids intern(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b,
           Ids& ids_b, std::size_t& distinct) {
  std::size_t capacity = 16;
  while (capacity < 2 * (a.size() + b.size())) capacity <<= 1;
  std::vector<std::uint32_t> slots(capacity, 0);  // id + 1; 0 = empty
  std::vector<std::string_view> seen;
  std::hash<std::string_view> hasher;
  auto id_of = [&](std::string_view line) {
    std::size_t i = hasher(line) & (capacity - 1);
    while (slots[i] != 0) {
      if (seen[slots[i] - 1] == line) return slots[i] - 1;
      i = (i + 1) & (capacity - 1);
    }
    seen.push_back(line);
    slots[i] = static_cast<std::uint32_t>(seen.size());
    return slots[i] - 1;
  };
  Ids ids_a;
  ids_a.reserve(a.size());
  for (std::string_view line : a) ids_a.push_back(id_of(line));
  ids_b.reserve(b.size());
  for (std::string_view line : b) ids_b.push_back(id_of(line));
  distinct = seen.size();
  return ids_a;
}

class Builder {
 public:
  Builder(const Ids& a, const Ids& b, std::size_t distinct)
      : m_a(a), m_b(b), m_count_a(distinct, 0), m_count_b(distinct, 0), m_pos_b(distinct, 0) {}

  void diff(std::size_t a_lo, std::size_t a_hi, std::size_t b_lo, std::size_t b_hi, int depth) {
    while (a_lo < a_hi && b_lo < b_hi && m_a[a_lo] == m_b[b_lo]) ++a_lo, ++b_lo;
    while (a_lo < a_hi && b_lo < b_hi && m_a[a_hi - 1] == m_b[b_hi - 1]) --a_hi, --b_hi;
    std::size_t n = a_hi - a_lo;
    std::size_t m = b_hi - b_lo;
    if (n == 0 && m == 0) return;
    if (n == 0 || m == 0) {
      add(Change{a_lo, n, b_lo, m});
      return;
    }
    if (n + m <= k_direct_lines) {
      exact(a_lo, a_hi, b_lo, b_hi);
      return;
    }
    if (depth < k_max_anchor_depth && split_at_anchors(a_lo, a_hi, b_lo, b_hi, depth)) return;
    // No anchors: pair windows of proportional size, each compared exactly.
    std::size_t windows = (std::max(n, m) + k_window_lines - 1) / k_window_lines;
    for (std::size_t w = 0; w < windows; ++w) {
      diff(a_lo + n * w / windows, a_lo + n * (w + 1) / windows, b_lo + m * w / windows,
           b_lo + m * (w + 1) / windows, k_max_anchor_depth);
    }
  }

  std::vector<Change> take() { return std::move(m_changes); }

 private:
  void add(Change c) {
    if (!m_changes.empty()) {
      Change& last = m_changes.back();
      if (last.a_pos + last.a_len == c.a_pos && last.b_pos + last.b_len == c.b_pos) {
        last.a_len += c.a_len;
        last.b_len += c.b_len;
        return;
      }
    }
    m_changes.push_back(c);
  }

  // dtl (Wu, Manber, Myers: "An O(NP) Sequence Comparison Algorithm") on one small range.
  void exact(std::size_t a_lo, std::size_t a_hi, std::size_t b_lo, std::size_t b_hi) {
    Ids sa(m_a.begin() + static_cast<std::ptrdiff_t>(a_lo),
           m_a.begin() + static_cast<std::ptrdiff_t>(a_hi));
    Ids sb(m_b.begin() + static_cast<std::ptrdiff_t>(b_lo),
           m_b.begin() + static_cast<std::ptrdiff_t>(b_hi));
    dtl::Diff<std::uint32_t, Ids> d(sa, sb);
    d.compose();
    std::size_t ia = a_lo;
    std::size_t ib = b_lo;
    Change pending{ia, 0, ib, 0};
    for (const auto& elem : d.getSes().getSequence()) {
      switch (elem.second.type) {
        case dtl::SES_COMMON:
          if (pending.a_len + pending.b_len > 0) add(pending);
          ++ia, ++ib;
          pending = Change{ia, 0, ib, 0};
          break;
        case dtl::SES_DELETE:
          ++pending.a_len, ++ia;
          break;
        case dtl::SES_ADD:
          ++pending.b_len, ++ib;
          break;
      }
    }
    if (pending.a_len + pending.b_len > 0) add(pending);
  }

  // Lines that occur exactly once in each range, in the longest run of increasing positions
  // on both sides (patience diff); diffs the gaps between them. False when there are none.
  bool split_at_anchors(std::size_t a_lo, std::size_t a_hi, std::size_t b_lo, std::size_t b_hi,
                        int depth) {
    for (std::size_t i = a_lo; i < a_hi; ++i) ++m_count_a[m_a[i]];
    for (std::size_t j = b_lo; j < b_hi; ++j) {
      ++m_count_b[m_b[j]];
      m_pos_b[m_b[j]] = j;
    }
    struct Pair {
      std::size_t a;
      std::size_t b;
    };
    std::vector<Pair> pairs;
    for (std::size_t i = a_lo; i < a_hi; ++i) {
      std::uint32_t id = m_a[i];
      if (m_count_a[id] == 1 && m_count_b[id] == 1) pairs.push_back(Pair{i, m_pos_b[id]});
    }
    for (std::size_t i = a_lo; i < a_hi; ++i) m_count_a[m_a[i]] = 0;
    for (std::size_t j = b_lo; j < b_hi; ++j) m_count_b[m_b[j]] = 0;
    if (pairs.empty()) return false;

    // Longest increasing subsequence of the b positions (pairs are in a order).
    std::vector<std::size_t> tails;  // index into pairs of the smallest tail of each length
    std::vector<std::size_t> prev(pairs.size(), SIZE_MAX);
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      auto it = std::lower_bound(tails.begin(), tails.end(), pairs[k].b,
                                 [&](std::size_t t, std::size_t b) { return pairs[t].b < b; });
      if (it != tails.begin()) prev[k] = *(it - 1);
      if (it == tails.end())
        tails.push_back(k);
      else
        *it = k;
    }
    std::vector<Pair> anchors;
    for (std::size_t k = tails.back(); k != SIZE_MAX; k = prev[k]) anchors.push_back(pairs[k]);
    std::reverse(anchors.begin(), anchors.end());
    pairs = {};
    prev = {};

    std::size_t a = a_lo;
    std::size_t b = b_lo;
    for (const Pair& anchor : anchors) {
      diff(a, anchor.a, b, anchor.b, depth + 1);
      a = anchor.a + 1;
      b = anchor.b + 1;
    }
    diff(a, a_hi, b, b_hi, depth + 1);
    return true;
  }

  const Ids& m_a;
  const Ids& m_b;
  std::vector<Change> m_changes;
  // Scratch for split_at_anchors, indexed by line id; all zero between calls.
  std::vector<std::uint32_t> m_count_a;
  std::vector<std::uint32_t> m_count_b;
  std::vector<std::size_t> m_pos_b;
};

}  // namespace

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    std::size_t end = eol == std::string_view::npos ? text.size() : eol + 1;
    lines.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return lines;
}

std::vector<Change> edit_script(const std::vector<std::string_view>& a,
                                const std::vector<std::string_view>& b) {
  Ids ids_b;
  std::size_t distinct = 0;
  Ids ids_a = intern(a, b, ids_b, distinct);
  Builder builder(ids_a, ids_b, distinct);
  builder.diff(0, ids_a.size(), 0, ids_b.size(), 0);
  return builder.take();
}

}  // namespace coldgate::diff::detail
