#include "diff/pairing.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "canon/number.hpp"
#include "canon/pattern.hpp"
#include "util/error.hpp"

namespace coldgate::diff::detail {

namespace {

constexpr std::size_t k_no_identity = std::numeric_limits<std::size_t>::max();

// What the first pass notes of one array element.
struct RawElement {
  bool object = false;
  std::size_t rank = k_no_identity;  // the identity member's place in `identity:`
  std::uint8_t kind = 0;
  std::string value;
};

struct RawArray {
  std::vector<Segment> path;
  std::vector<RawElement> elements;
};

// A leaf's kind in canon's order (ElementKey::kind).
std::uint8_t leaf_kind(std::string_view value) {
  if (value == "null") return 0;
  if (value == "false") return 1;
  if (value == "true") return 2;
  if (value == "[]") return 5;
  if (value == "{}") return 6;
  if (!value.empty() && value.front() == '"') return 4;
  return 3;
}

bool same(const Segment& a, const Segment& b) {
  return a.is_index == b.is_index && (a.is_index ? a.index == b.index : a.key == b.key);
}

// True when an `ordered:` pattern names the array at `path`: canon keeps its order.
bool is_ordered(const canon::PatternSet& ordered, const std::vector<Segment>& path) {
  if (ordered.empty()) return false;
  std::vector<canon::PatternSet::State> states;
  ordered.start(states);
  std::size_t begin = 0;
  for (const Segment& s : path) {
    const std::size_t end = states.size();
    ordered.step(states, begin, end, s.is_index ? std::string_view() : std::string_view(s.key),
                 s.is_index ? static_cast<std::int64_t>(s.index) : std::int64_t{-1});
    begin = end;
  }
  return ordered.matches(states.data() + begin, states.size() - begin);
}

// The keys of one array's elements, or nothing when it is not paired by identity.
bool keys_of(const RawArray& raw, const std::vector<std::string>& identity, KeyedArray& out) {
  std::size_t group0 = 0;
  std::size_t group2 = 0;
  std::map<std::pair<std::uint8_t, std::string>, std::size_t> seen;
  for (const RawElement& e : raw.elements) {
    ElementKey key;
    if (!e.object) {
      key.n = group0++;
    } else if (e.rank == k_no_identity) {
      key.group = 2;
      key.n = group2++;
    } else {
      key.group = 1;
      key.kind = e.kind;
      key.value = e.value;
      key.n = seen[{e.kind, e.value}]++;
      if (out.member.empty()) out.member = identity[e.rank];
    }
    if (!out.keys.empty() && compare_keys(out.keys.back(), key) >= 0) return false;
    out.keys.push_back(std::move(key));
  }
  return !out.member.empty();
}

}  // namespace

int compare_keys(const ElementKey& a, const ElementKey& b) {
  if (a.group != b.group) return a.group < b.group ? -1 : 1;
  if (a.kind != b.kind) return a.kind < b.kind ? -1 : 1;
  int c = 0;
  if (a.kind == 3) {
    c = canon::compare_numbers(a.value, b.value);
  } else if (a.kind == 4) {
    c = a.value.compare(b.value);  // bytes, as canon sorts strings
  }
  if (c != 0) return c < 0 ? -1 : 1;
  if (a.n != b.n) return a.n < b.n ? -1 : 1;
  return 0;
}

KeyedArrays keyed_arrays(std::string_view canonical, const canon::Options& arrangement) {
  if (arrangement.identity.empty()) return {};
  canon::PatternSet ordered;
  try {
    ordered = canon::PatternSet(arrangement.ordered);
  } catch (const Error&) {
    return {};
  }
  std::unordered_map<std::string, RawArray> raw;
  // The array the last element or member was in: consecutive elements share it.
  RawArray* cached = nullptr;
  std::vector<Segment> cached_path;
  auto array_at = [&](const std::vector<Segment>& path, std::size_t depth) -> RawArray& {
    if (cached != nullptr && cached_path.size() == depth &&
        std::equal(cached_path.begin(), cached_path.end(), path.begin(), same)) {
      return *cached;
    }
    cached_path.assign(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(depth));
    auto [it, fresh] = raw.try_emplace(pointer(cached_path));
    if (fresh) it->second.path = cached_path;
    cached = &it->second;
    return *cached;
  };
  Flattener doc(canonical);
  while (doc.next()) {
    const std::vector<Segment>& path = doc.path();
    const std::size_t n = path.size();
    if (n >= 1 && path[n - 1].is_index) {
      RawArray& array = array_at(path, n - 1);
      if (path[n - 1].index == array.elements.size()) {
        RawElement e;
        e.object = doc.kind() == NodeKind::object ||
                   (doc.kind() == NodeKind::leaf && doc.value() == "{}");
        array.elements.push_back(std::move(e));
      }
    } else if (n >= 2 && path[n - 2].is_index) {
      const auto& names = arrangement.identity;
      const auto found = std::find(names.begin(), names.end(), path[n - 1].key);
      if (found == names.end()) continue;
      const auto rank = static_cast<std::size_t>(found - names.begin());
      RawArray& array = array_at(path, n - 2);
      if (path[n - 2].index >= array.elements.size()) continue;
      RawElement& e = array.elements[path[n - 2].index];
      if (rank >= e.rank) continue;
      e.rank = rank;
      e.kind = doc.kind() == NodeKind::object  ? 6
               : doc.kind() == NodeKind::array ? 5
                                               : leaf_kind(doc.value());
      e.value = e.kind == 3   ? std::string(doc.value())
                : e.kind == 4 ? decoded_string(doc.value())
                              : std::string();
    }
  }
  if (!doc.ok()) return {};
  KeyedArrays out;
  for (const auto& [where, array] : raw) {
    if (is_ordered(ordered, array.path)) continue;
    KeyedArray keyed;
    if (keys_of(array, arrangement.identity, keyed)) out.emplace(where, std::move(keyed));
  }
  return out;
}

void PairPath::update(const std::vector<Segment>& path) {
  std::size_t d = 0;
  while (d < m_path.size() && d < path.size() && same(m_path[d], path[d])) ++d;
  m_path.resize(d);
  m_prefix.resize(d + 1);
  m_segments.resize(d);
  for (std::size_t i = d; i < path.size(); ++i) {
    const Segment& s = path[i];
    PairSegment step;
    step.is_index = s.is_index;
    if (!s.is_index) {
      step.key = s.key;
    } else if (auto it = m_arrays.find(m_prefix[i]);
               it != m_arrays.end() && s.index < it->second.keys.size()) {
      step.element = it->second.keys[s.index];
      step.array = &it->second;
    } else {
      step.element.n = s.index;
    }
    m_segments.push_back(std::move(step));
    std::string next = m_prefix[i];
    append_segment(s, next);
    m_prefix.push_back(std::move(next));
    m_path.push_back(s);
  }
}

int compare(const std::vector<PairSegment>& a, const std::vector<PairSegment>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const PairSegment& x = a[i];
    const PairSegment& y = b[i];
    if (x.is_index != y.is_index) return x.is_index ? -1 : 1;  // only on a type change
    const int c = x.is_index ? compare_keys(x.element, y.element) : x.key.compare(y.key);
    if (c != 0) return c < 0 ? -1 : 1;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

void append_pair_segment(const PairSegment& segment, std::string& out) {
  if (!segment.is_index) {
    Segment s;
    s.key = segment.key;
    append_segment(s, out);
    return;
  }
  const ElementKey& k = segment.element;
  // The value's length first: its bytes may hold any character.
  out += "/#" + std::to_string(k.group) + '.' + std::to_string(k.kind) + '.' +
         std::to_string(k.n) + '.' + std::to_string(k.value.size()) + ':' + k.value;
}

}  // namespace coldgate::diff::detail
