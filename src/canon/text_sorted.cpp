// Which arrays the arrangement sorts by their elements' text, and what member could pair their
// elements instead: for the diff's note on why one changed value moved many elements.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "canon/canon.hpp"
#include "canon/document.hpp"

namespace coldgate::canon {
namespace {

// Appends one RFC 6901 reference token: `~` as `~0`, `/` as `~1`.
void append_token(std::string_view token, std::string& out) {
  out.push_back('/');
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
}

bool has_identity(const Document& doc, const Node& object, const std::vector<std::string>& identity) {
  for (std::uint32_t i = 0; i < object.b; ++i) {
    const std::string_view key = doc.key(doc.nodes[object.a + i]);
    if (std::find(identity.begin(), identity.end(), key) != identity.end()) return true;
  }
  return false;
}

// The value of member `name` of an arranged (key-sorted) object, or nullptr.
const Node* member(const Document& doc, const Node& object, std::string_view name) {
  const Node* begin = doc.nodes.data() + object.a;
  const Node* end = begin + object.b;
  const Node* found = std::lower_bound(
      begin, end, name, [&doc](const Node& m, std::string_view key) { return doc.key(m) < key; });
  return found != end && doc.key(*found) == name ? found : nullptr;
}

// A member of every object in `objects` whose values are numbers or strings, all different:
// sorting by it would pair the elements of two versions of the array. Of several, the one whose
// values are of one kind and shortest (an identifier rather than a description), then by name.
std::string identity_candidate(const Document& doc, const std::vector<const Node*>& objects) {
  std::vector<std::string_view> names;
  for (std::uint32_t i = 0; i < objects[0]->b; ++i) names.push_back(doc.key(doc.nodes[objects[0]->a + i]));
  std::string best;
  bool best_one_kind = false;
  std::size_t best_longest = 0;
  for (std::string_view name : names) {
    std::unordered_set<std::string> seen;
    bool ok = true;
    bool one_kind = true;
    std::size_t longest = 0;
    Kind first = Kind::null;
    for (std::size_t k = 0; k < objects.size() && ok; ++k) {
      const Node* value = member(doc, *objects[k], name);
      if (value == nullptr || (value->kind() != Kind::number && value->kind() != Kind::string)) {
        ok = false;
        break;
      }
      if (k == 0) first = value->kind();
      one_kind = one_kind && value->kind() == first;
      const std::string_view text = doc.value(*value);
      longest = std::max(longest, text.size());
      std::string key(1, value->kind() == Kind::number ? 'n' : 's');
      key.append(text);
      ok = seen.insert(std::move(key)).second;
    }
    if (!ok) continue;
    const bool better = best.empty() || (one_kind && !best_one_kind) ||
                        (one_kind == best_one_kind && longest < best_longest);
    if (better) {
      best = std::string(name);
      best_one_kind = one_kind;
      best_longest = longest;
    }
  }
  return best;
}

}  // namespace

std::vector<TextSortedArray> text_sorted_arrays(std::string_view json, const Options& options) {
  Document doc = parse_document(json, options, "document");
  arrange_document(doc, options, json, "document");
  std::vector<TextSortedArray> out;
  struct Frame {
    std::uint32_t node;
    std::uint32_t next;
    std::size_t path_size;  // the length of `path` at this node
  };
  std::string path;
  std::vector<Frame> stack{{doc.root, 0, 0}};
  auto visit = [&](std::uint32_t index) {
    const Node& node = doc.nodes[index];
    if (node.kind() != Kind::array || node.has(Node::k_ordered) || node.b < 2) return;
    std::vector<const Node*> objects;
    for (std::uint32_t i = 0; i < node.b; ++i) {
      const Node& element = doc.nodes[node.a + i];
      if (element.kind() == Kind::object && !has_identity(doc, element, options.identity)) {
        objects.push_back(&element);
      }
    }
    if (objects.size() < 2) return;
    out.push_back({path, node.b, objects.size(), identity_candidate(doc, objects)});
  };
  visit(doc.root);
  while (!stack.empty()) {
    Frame& top = stack.back();
    const Node parent = doc.nodes[top.node];
    if (!parent.is_container() || top.next == parent.b) {
      stack.pop_back();
      continue;
    }
    const std::uint32_t index = top.next++;
    const std::uint32_t child = parent.a + index;
    path.resize(top.path_size);
    if (parent.kind() == Kind::object) {
      append_token(doc.key(doc.nodes[child]), path);
    } else {
      path += '/';
      path += std::to_string(index);
    }
    visit(child);
    stack.push_back({child, 0, path.size()});
  }
  return out;
}

}  // namespace coldgate::canon
