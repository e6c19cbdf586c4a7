// Redaction and sorting of a parsed Document, bottom-up with an explicit stack.
//
// Order of array elements (docs/architecture.md "Canonical JSON"): across kinds null < false < true < number <
// string < array < object; numbers by exact value; strings by bytes (= code points); arrays by
// the byte order of their compact canonical text (no whitespace, e.g. `[1,"a"]`); objects by
// their identity value (the first `identity` member present, compared with this same order),
// objects with an identity before those without, then by compact canonical text. The compact
// text is compared lazily, piece by piece, from the already-sorted children, so no subtree is
// ever serialized for a comparison and a comparison stops at the first differing byte.
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "canon/document.hpp"
#include "canon/number.hpp"
#include "canon/pattern.hpp"
#include "canon/writer.hpp"
#include "util/error.hpp"

namespace coldgate::canon {
namespace {

constexpr std::uint32_t k_none = std::numeric_limits<std::uint32_t>::max();

int compare_bytes(std::string_view a, std::string_view b) {
  const int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
  if (c != 0) return c < 0 ? -1 : 1;
  return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
}

// Produces the compact canonical text of a subtree as a sequence of byte pieces.
class TextCursor {
 public:
  explicit TextCursor(const Document& doc) : m_doc(doc) {}

  void reset(std::uint32_t node) {
    m_stack.clear();
    m_count = 0;
    m_next = 0;
    emit_value(m_doc.nodes[node], node);
  }

  // The next non-empty piece, or an empty view at the end.
  std::string_view next() {
    while (true) {
      if (m_next < m_count) {
        const std::string_view piece = m_pieces[m_next++];
        if (!piece.empty()) return piece;
        continue;
      }
      if (m_stack.empty()) return {};
      m_count = 0;
      m_next = 0;
      m_key.clear();
      m_value.clear();
      Frame& top = m_stack.back();
      const Node& parent = m_doc.nodes[top.node];
      if (top.next == parent.b) {
        add(parent.kind() == Kind::array ? "]" : "}");
        m_stack.pop_back();
        continue;
      }
      if (top.next > 0) add(",");
      const std::uint32_t child = parent.a + top.next++;
      const Node& node = m_doc.nodes[child];
      if (parent.kind() == Kind::object) {
        add_string(m_doc.key(node), node.has(Node::k_key_escape), m_key);
        add(":");
      }
      emit_value(node, child);
    }
  }

 private:
  struct Frame {
    std::uint32_t node;
    std::uint32_t next;
  };

  void add(std::string_view piece) { m_pieces[m_count++] = piece; }

  void add_string(std::string_view s, bool escape, std::string& buffer) {
    if (!escape) {
      add("\"");
      add(s);
      add("\"");
    } else {
      append_json_string(s, buffer);
      add(buffer);
    }
  }

  void emit_value(const Node& node, std::uint32_t index) {
    switch (node.kind()) {
      case Kind::null: add("null"); break;
      case Kind::false_: add("false"); break;
      case Kind::true_: add("true"); break;
      case Kind::number: add(m_doc.value(node)); break;
      case Kind::string: add_string(m_doc.value(node), node.has(Node::k_value_escape), m_value); break;
      case Kind::array:
      case Kind::object:
        add(node.kind() == Kind::array ? "[" : "{");
        m_stack.push_back({index, 0});
        break;
    }
  }

  const Document& m_doc;
  std::vector<Frame> m_stack;
  std::string_view m_pieces[8];
  std::size_t m_count = 0;
  std::size_t m_next = 0;
  std::string m_key;    // escaped member name of the current pieces
  std::string m_value;  // escaped string value of the current pieces
};

// One element of an array being sorted, with what its comparisons need precomputed.
struct Item {
  std::uint32_t node;
  std::uint32_t identity;  // object: node of its identity value, or k_none
  std::int64_t order;      // number (or numeric identity): number_order_key
};

class Arranger {
 public:
  Arranger(Document& doc, const Options& options)
      : m_doc(doc),
        m_options(options),
        m_ordered(options.ordered),
        m_redact(options.redact),
        m_a(doc),
        m_b(doc) {}

  // Returns false when an object holds a duplicate key.
  bool run();

 private:
  struct Frame {
    std::uint32_t node;
    std::uint32_t next;          // next child to visit
    std::uint32_t states_begin;  // this node's pattern states in m_states
    std::uint32_t states_end;
    std::uint32_t name;          // nearest member name on the path: text offset
    std::uint32_t name_size;     // its length, or k_none at the root of arrays
  };

  bool finish(const Frame& frame);
  bool sort_object(const Node& node);
  void sort_array(const Node& node);
  int compare_values(std::uint32_t x, std::int64_t order_x, std::uint32_t y, std::int64_t order_y);
  int compare_items(const Item& x, const Item& y);
  int compare_text(std::uint32_t x, std::uint32_t y);
  std::uint32_t identity_of(const Node& object) const;
  void redact(std::uint32_t node, std::string_view name);
  void rank_classes();
  void resort_arrays();
  int compare_ranks(std::uint32_t x, std::uint32_t y);
  std::uint32_t class_of(const Node& placeholder) const;
  void number_placeholders();

  Document& m_doc;
  const Options& m_options;
  PatternSet m_ordered;
  PatternSet m_redact;
  TextCursor m_a;
  TextCursor m_b;
  std::vector<Frame> m_stack;
  std::vector<PatternSet::State> m_ordered_states;
  std::vector<PatternSet::State> m_redact_states;
  std::vector<Item> m_items;
  std::vector<Node> m_scratch;
  std::uint32_t m_redacted_text = k_none;  // offset of "[redacted]" in the text
  // redact_ids: equal values (per name) share a class; classes get numbers at the end.
  struct Class {
    std::string name;
    std::uint64_t number = 0;  // 0 until numbered; fixed when the input already held it
    Kind kind = Kind::null;    // the original value: its kind and
    std::string value;         // string: its bytes; number: canonical text; else compact text
    std::uint32_t rank = 0;    // position among the classes of `name` in value order
  };
  std::vector<Class> m_classes;
  bool m_rank_ties = false;  // break ties between equal-looking placeholders by class rank
  std::map<std::string, std::uint32_t> m_class_of;  // name '\0' compact text -> class
};

bool Arranger::run() {
  // Pattern states live in two flat vectors used as stacks: a frame's ordered states are
  // m_ordered_states[states_begin, states_end); its redact states the parallel range below.
  struct Ranges {
    std::uint32_t redact_begin;
    std::uint32_t redact_end;
  };
  std::vector<Ranges> redact_ranges;
  const bool patterns = !m_ordered.empty() || !m_redact.empty();
  m_stack.push_back({m_doc.root, 0, 0, 0, 0, k_none});
  if (patterns) {
    m_ordered.start(m_ordered_states);
    m_stack.back().states_end = static_cast<std::uint32_t>(m_ordered_states.size());
    m_redact.start(m_redact_states);
    redact_ranges.push_back({0, static_cast<std::uint32_t>(m_redact_states.size())});
  }
  // Pre-visit work for the node on top of the stack: mark ordered arrays and redacted values.
  // A redacted value's subtree is still sorted (equal values must compare equal) but not
  // matched further.
  std::vector<bool> redacted_stack;
  auto pre_visit = [&]() {
    Frame& frame = m_stack.back();
    Node& node = m_doc.nodes[frame.node];
    bool redacted = false;
    if (patterns) {
      const Ranges& r = redact_ranges.back();
      redacted = m_redact.matches(m_redact_states.data() + r.redact_begin, r.redact_end - r.redact_begin);
      if (node.kind() == Kind::array &&
          m_ordered.matches(m_ordered_states.data() + frame.states_begin,
                            frame.states_end - frame.states_begin)) {
        node.bits |= Node::k_ordered;
      }
    }
    redacted_stack.push_back(redacted);
  };
  pre_visit();
  while (!m_stack.empty()) {
    Frame& top = m_stack.back();
    const Node parent = m_doc.nodes[top.node];
    if (parent.is_container() && top.next < parent.b) {
      const std::uint32_t index = top.next++;
      const std::uint32_t child = parent.a + index;
      const Node& node = m_doc.nodes[child];
      Frame frame{child, 0, 0, 0, top.name, top.name_size};
      if (parent.kind() == Kind::object) {
        frame.name = node.key;
        frame.name_size = node.key_size();
      }
      if (patterns) {
        const std::string_view key = parent.kind() == Kind::object ? m_doc.key(node) : std::string_view{};
        const std::int64_t step_index = parent.kind() == Kind::object ? std::int64_t{-1} : std::int64_t{index};
        frame.states_begin = static_cast<std::uint32_t>(m_ordered_states.size());
        m_ordered.step(m_ordered_states, top.states_begin, top.states_end, key, step_index);
        frame.states_end = static_cast<std::uint32_t>(m_ordered_states.size());
        const Ranges r = redact_ranges.back();
        Ranges next{static_cast<std::uint32_t>(m_redact_states.size()), 0};
        if (!redacted_stack.back()) {
          m_redact.step(m_redact_states, r.redact_begin, r.redact_end, key, step_index);
        }
        next.redact_end = static_cast<std::uint32_t>(m_redact_states.size());
        redact_ranges.push_back(next);
      }
      m_stack.push_back(frame);
      pre_visit();
      continue;
    }
    // Post-visit: children are arranged; arrange this node.
    const Frame done = top;
    m_stack.pop_back();
    const bool redacted = redacted_stack.back();
    redacted_stack.pop_back();
    if (!finish(done)) return false;
    if (redacted) {
      redact(done.node, done.name_size == k_none ? std::string_view("redacted")
                                                 : std::string_view(m_doc.at(done.name),
                                                                    done.name_size));
    }
    if (patterns) {
      m_ordered_states.resize(done.states_begin);
      m_redact_states.resize(redact_ranges.back().redact_begin);
      redact_ranges.pop_back();
    }
  }
  if (m_options.redact_ids && !m_classes.empty()) {
    // Above, placeholders all looked alike ("[name-"), so elements differing only in redacted
    // values kept an arbitrary order. Order those by the values they had (class rank), number
    // classes by first appearance in that order, then sort again by the final placeholders.
    rank_classes();
    m_rank_ties = true;
    resort_arrays();
    m_rank_ties = false;
    number_placeholders();
    resort_arrays();
  }
  return true;
}

bool Arranger::finish(const Frame& frame) {
  const Node& node = m_doc.nodes[frame.node];
  if (node.kind() == Kind::object) return sort_object(node);
  if (node.kind() == Kind::array && !node.has(Node::k_ordered)) sort_array(node);
  return true;
}

bool Arranger::sort_object(const Node& node) {
  if (node.b < 2) return true;
  Node* begin = m_doc.nodes.data() + node.a;
  Node* end = begin + node.b;
  const Document& doc = m_doc;
  auto less = [&doc](const Node& x, const Node& y) { return compare_bytes(doc.key(x), doc.key(y)) < 0; };
  if (!std::is_sorted(begin, end, less)) std::sort(begin, end, less);
  for (Node* p = begin + 1; p < end; ++p) {
    if (doc.key(p[-1]) == doc.key(*p)) return false;
  }
  return true;
}

std::uint32_t Arranger::identity_of(const Node& object) const {
  // Members are sorted already: binary search each identity name in order.
  const Node* begin = m_doc.nodes.data() + object.a;
  const Node* end = begin + object.b;
  for (const std::string& name : m_options.identity) {
    const Node* found = std::lower_bound(begin, end, name, [this](const Node& member, const std::string& key) {
      return compare_bytes(m_doc.key(member), key) < 0;
    });
    if (found != end && m_doc.key(*found) == name) return static_cast<std::uint32_t>(found - m_doc.nodes.data());
  }
  return k_none;
}

int Arranger::compare_text(std::uint32_t x, std::uint32_t y) {
  m_a.reset(x);
  m_b.reset(y);
  std::string_view a = m_a.next();
  std::string_view b = m_b.next();
  while (true) {
    if (a.empty() || b.empty()) return a.empty() == b.empty() ? 0 : (a.empty() ? -1 : 1);
    const std::size_t n = std::min(a.size(), b.size());
    const int c = std::memcmp(a.data(), b.data(), n);
    if (c != 0) return c < 0 ? -1 : 1;
    a.remove_prefix(n);
    b.remove_prefix(n);
    if (a.empty()) a = m_a.next();
    if (b.empty()) b = m_b.next();
  }
}

int Arranger::compare_values(std::uint32_t x, std::int64_t order_x, std::uint32_t y,
                             std::int64_t order_y) {
  const Node& nx = m_doc.nodes[x];
  const Node& ny = m_doc.nodes[y];
  if (nx.kind() != ny.kind()) return nx.kind() < ny.kind() ? -1 : 1;
  switch (nx.kind()) {
    case Kind::number:
      if (order_x != order_y) return order_x < order_y ? -1 : 1;
      return compare_numbers(m_doc.value(nx), m_doc.value(ny));
    case Kind::string:
      return compare_bytes(m_doc.value(nx), m_doc.value(ny));
    case Kind::array:
    case Kind::object:
      return compare_text(x, y);
    default:
      return 0;
  }
}

int Arranger::compare_items(const Item& x, const Item& y) {
  const Node& nx = m_doc.nodes[x.node];
  const Node& ny = m_doc.nodes[y.node];
  if (nx.kind() != ny.kind()) return nx.kind() < ny.kind() ? -1 : 1;
  if (nx.kind() != Kind::object) return compare_values(x.node, x.order, y.node, y.order);
  if (x.identity != y.identity && (x.identity == k_none || y.identity == k_none)) {
    return x.identity == k_none ? 1 : -1;
  }
  if (x.identity != k_none) {
    const int c = compare_values(x.identity, x.order, y.identity, y.order);
    if (c != 0) return c;
  }
  return compare_text(x.node, y.node);
}

std::uint32_t Arranger::class_of(const Node& placeholder) const {
  std::uint32_t cls;
  std::memcpy(&cls, m_doc.at(placeholder.a) + placeholder.b, sizeof cls);
  return cls;
}

// For two subtrees whose compact texts are equal while placeholders read "[name-" (hence of
// the same shape): compares the ranks of their placeholders in document order.
int Arranger::compare_ranks(std::uint32_t x, std::uint32_t y) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack{{x, y}};
  while (!stack.empty()) {
    const auto [i, j] = stack.back();
    stack.pop_back();
    const Node& a = m_doc.nodes[i];
    const Node& b = m_doc.nodes[j];
    const bool pa = a.has(Node::k_placeholder);
    const bool pb = b.has(Node::k_placeholder);
    if (pa != pb) return pa ? 1 : -1;  // a real string that reads "[name-" comes first
    if (pa) {
      const std::uint32_t ra = m_classes[class_of(a)].rank;
      const std::uint32_t rb = m_classes[class_of(b)].rank;
      if (ra != rb) return ra < rb ? -1 : 1;
    } else if (a.is_container()) {
      for (std::uint32_t k = a.b; k-- > 0;) stack.push_back({a.a + k, b.a + k});
    }
  }
  return 0;
}

void Arranger::sort_array(const Node& node) {
  if (node.b < 2) return;
  m_items.clear();
  m_items.reserve(node.b);
  for (std::uint32_t i = 0; i < node.b; ++i) {
    const std::uint32_t index = node.a + i;
    const Node& element = m_doc.nodes[index];
    Item item{index, k_none, 0};
    if (element.kind() == Kind::number) {
      item.order = number_order_key(m_doc.value(element));
    } else if (element.kind() == Kind::object) {
      item.identity = identity_of(element);
      if (item.identity != k_none && m_doc.nodes[item.identity].kind() == Kind::number) {
        item.order = number_order_key(m_doc.value(m_doc.nodes[item.identity]));
      }
    }
    m_items.push_back(item);
  }
  auto less = [this](const Item& x, const Item& y) {
    const int c = compare_items(x, y);
    if (c != 0 || !m_rank_ties) return c < 0;
    return compare_ranks(x.node, y.node) < 0;
  };
  if (std::is_sorted(m_items.begin(), m_items.end(), less)) return;
  // Elements equal in this order print identically (redact_ids placeholders, which all read
  // "[name-" in the first pass, are sorted again once numbered), so the sort need not be stable.
  std::sort(m_items.begin(), m_items.end(), less);
  m_scratch.clear();
  for (const Item& item : m_items) m_scratch.push_back(m_doc.nodes[item.node]);
  std::copy(m_scratch.begin(), m_scratch.end(), m_doc.nodes.begin() + node.a);
}

// Replaces the value at `node` by "[redacted]", or with redact_ids by a placeholder of its
// equality class: a string "[name-" (the neutral text all placeholders of `name` sort by)
// followed in the text buffer by the 4-byte class index; number_placeholders finishes it.
void Arranger::redact(std::uint32_t node_index, std::string_view name_in_text) {
  const std::string name(name_in_text);  // the text buffer grows below
  Node& node = m_doc.nodes[node_index];
  const std::uint32_t key_bits = node.bits & (Node::k_max_key_bytes | Node::k_key_escape);
  if (!m_options.redact_ids) {
    if (m_redacted_text == k_none) {
      m_redacted_text = m_doc.end_offset();
      m_doc.text.append("[redacted]");
    }
    node.bits = key_bits;
    node.set_kind(Kind::string);
    node.a = m_redacted_text;
    node.b = 10;
    return;
  }
  std::uint64_t kept = 0;  // the value is already this class's placeholder "[name-N]"
  if (node.kind() == Kind::string) {
    const std::string_view value = m_doc.value(node);
    if (value.size() > name.size() + 3 && value.front() == '[' && value.back() == ']' &&
        value.substr(1, name.size()) == name && value[name.size() + 1] == '-') {
      const std::string_view digits = value.substr(name.size() + 2, value.size() - name.size() - 3);
      if (!digits.empty() && digits.size() <= 9 && digits[0] != '0' &&
          digits.find_first_not_of("0123456789") == std::string_view::npos) {
        kept = std::stoull(std::string(digits));
      }
    }
  }
  std::string key(name);
  key.push_back('\0');
  if (kept != 0) {
    key.append("#").append(std::to_string(kept));  // kept placeholders are their own class
  } else {
    key.push_back('=');
    write_compact(m_doc, node_index, key);
  }
  auto [it, inserted] = m_class_of.try_emplace(key, static_cast<std::uint32_t>(m_classes.size()));
  if (inserted) {
    Class c{std::string(name), kept, node.kind(), {}, 0};
    if (node.kind() == Kind::string || node.kind() == Kind::number) {
      c.value = m_doc.value(node);
    } else if (node.is_container()) {
      c.value = key.substr(name.size() + 2);  // the compact text
    }
    m_classes.push_back(std::move(c));
  }
  const std::uint32_t cls = it->second;
  const std::uint32_t offset = m_doc.end_offset();
  m_doc.text.append("[").append(name).append("-");
  m_doc.text.append(reinterpret_cast<const char*>(&cls), sizeof cls);
  node.bits = key_bits | Node::k_placeholder;
  node.set_kind(Kind::string);
  node.a = offset;
  node.b = static_cast<std::uint32_t>(name.size() + 2);
  if (needs_escape(name)) node.bits |= Node::k_value_escape;
}

// Ranks the classes of each name by their original values: kinds in the canonical order
// (null < false < true < number < string < array < object), numbers numerically, strings by
// code point, arrays and objects by compact canonical text. Independent of input order.
void Arranger::rank_classes() {
  std::vector<std::uint32_t> order(m_classes.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [this](std::uint32_t i, std::uint32_t j) {
    const Class& x = m_classes[i];
    const Class& y = m_classes[j];
    if (const int c = compare_bytes(x.name, y.name); c != 0) return c < 0;
    if (x.kind != y.kind) return x.kind < y.kind;
    if (x.kind == Kind::number) return compare_numbers(x.value, y.value) < 0;
    return compare_bytes(x.value, y.value) < 0;
  });
  std::uint32_t rank = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k > 0 && m_classes[order[k]].name != m_classes[order[k - 1]].name) rank = 0;
    m_classes[order[k]].rank = rank++;
  }
}

// Sorts every unordered array again, children before parents (objects keep their order: their
// member names did not change).
void Arranger::resort_arrays() {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack;  // node, next child
  stack.push_back({m_doc.root, 0});
  while (!stack.empty()) {
    const auto [index, next_child] = stack.back();
    const Node node = m_doc.nodes[index];
    if (node.is_container() && next_child < node.b) {
      ++stack.back().second;
      stack.push_back({node.a + next_child, 0});
      continue;
    }
    if (node.kind() == Kind::array && !node.has(Node::k_ordered)) sort_array(node);
    stack.pop_back();
  }
}

// Numbers redact_ids classes in order of first appearance in the arranged document (kept
// numbers stay, new classes take the smallest numbers not already used for their name), then
// gives every placeholder its final text "[name-N]".
void Arranger::number_placeholders() {
  std::map<std::string, std::vector<std::uint64_t>> used;  // kept numbers per name
  for (const Class& c : m_classes) {
    if (c.number != 0) used[c.name].push_back(c.number);
  }
  for (auto& [name, numbers] : used) std::sort(numbers.begin(), numbers.end());
  std::map<std::string, std::pair<std::uint64_t, std::size_t>> next;  // name -> candidate, used index
  std::vector<std::uint32_t> text_of(m_classes.size(), k_none);
  std::vector<std::uint32_t> size_of(m_classes.size(), 0);
  auto assign = [&](Node& node) {
    const std::uint32_t cls = class_of(node);
    Class& c = m_classes[cls];
    if (c.number == 0) {
      auto& [candidate, at] = next.try_emplace(c.name, 1, 0).first->second;
      const std::vector<std::uint64_t>& taken = used[c.name];
      while (at < taken.size() && taken[at] <= candidate) {
        if (taken[at] == candidate) ++candidate;
        ++at;
      }
      c.number = candidate++;
    }
    if (text_of[cls] == k_none) {
      text_of[cls] = m_doc.end_offset();
      m_doc.text.append("[").append(c.name).append("-").append(std::to_string(c.number)).append("]");
      size_of[cls] = m_doc.end_offset() - text_of[cls];
    }
    node.a = text_of[cls];
    node.b = size_of[cls];
  };
  // Pre-order walk in output order.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack;  // node, next child
  Node& root = m_doc.nodes[m_doc.root];
  if (root.has(Node::k_placeholder)) assign(root);
  if (root.is_container()) stack.push_back({m_doc.root, 0});
  while (!stack.empty()) {
    auto& [index, next_child] = stack.back();
    const Node parent = m_doc.nodes[index];
    if (next_child == parent.b) {
      stack.pop_back();
      continue;
    }
    const std::uint32_t child = parent.a + next_child++;
    Node& node = m_doc.nodes[child];
    if (node.has(Node::k_placeholder)) assign(node);
    if (node.is_container()) stack.push_back({child, 0});
  }
}

}  // namespace

void arrange_document(Document& document, const Options& options, std::string_view json,
                      std::string_view source) {
  Arranger arranger(document, options);
  if (!arranger.run()) report_duplicate_key(json, options, source);
}

}  // namespace coldgate::canon
