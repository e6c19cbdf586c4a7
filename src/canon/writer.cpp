// Prints an arranged Document. The exact output size is computed first so the text is written
// into one allocation; both passes walk the tree with an explicit stack (no recursion). The
// command line prints through a small reused buffer instead, so that the 35 MB of a large
// document's text are never all resident at once (fresh pages are slow on this VM).
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "canon/document.hpp"
#include "canon/writer.hpp"
#include "util/memory.hpp"

namespace coldgate::canon {
namespace {

constexpr char k_hex[] = "0123456789abcdef";

// Escape sequence of byte `c` (which needs escaping) into `buffer`; returns its length.
std::size_t escape_byte(unsigned char c, char* buffer) {
  buffer[0] = '\\';
  switch (c) {
    case '"': buffer[1] = '"'; return 2;
    case '\\': buffer[1] = '\\'; return 2;
    case '\b': buffer[1] = 'b'; return 2;
    case '\t': buffer[1] = 't'; return 2;
    case '\n': buffer[1] = 'n'; return 2;
    case '\f': buffer[1] = 'f'; return 2;
    case '\r': buffer[1] = 'r'; return 2;
    default:
      std::memcpy(buffer + 1, "u00", 3);
      buffer[4] = k_hex[c >> 4];
      buffer[5] = k_hex[c & 15];
      return 6;
  }
}

bool escaped(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

std::size_t escaped_size(std::string_view s) {
  std::size_t size = 2;
  char buffer[8];
  for (const char c : s) size += escaped(static_cast<unsigned char>(c)) ? escape_byte(static_cast<unsigned char>(c), buffer) : 1;
  return size;
}

char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

char* put_string(char* p, std::string_view s, bool escape) {
  *p++ = '"';
  if (!escape) {
    p = put(p, s);
  } else {
    for (const char c : s) {
      const auto byte = static_cast<unsigned char>(c);
      if (escaped(byte)) {
        p += escape_byte(byte, p);
      } else {
        *p++ = c;
      }
    }
  }
  *p++ = '"';
  return p;
}

std::size_t string_size(std::string_view s, bool escape) { return escape ? escaped_size(s) : s.size() + 2; }

std::string_view scalar_text(const Document& doc, const Node& node) {
  switch (node.kind()) {
    case Kind::null: return "null";
    case Kind::false_: return "false";
    case Kind::true_: return "true";
    default: return doc.value(node);
  }
}

struct Frame {
  std::uint32_t node;
  std::uint32_t next;  // next child to print
  bool last;           // the container is the last element of its parent
};

}  // namespace

bool needs_escape(std::string_view s) {
  // Eight bytes at a time, exactly (SWAR without carries between bytes): with the high bits
  // cleared, adding 0x60 sets a byte's high bit iff it is >= 0x20, adding 0x7F iff it is not 0.
  constexpr std::uint64_t k_ones = 0x0101010101010101u;
  constexpr std::uint64_t k_high = 0x8080808080808080u;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    const std::uint64_t low7 = word & ~k_high;
    const std::uint64_t control = ~(low7 + k_ones * 0x60);
    const std::uint64_t quote = ~((low7 ^ (k_ones * '"')) + k_ones * 0x7F);
    const std::uint64_t backslash = ~((low7 ^ (k_ones * '\\')) + k_ones * 0x7F);
    if ((control | quote | backslash) & ~word & k_high) return true;
  }
  for (; i < s.size(); ++i) {
    if (escaped(static_cast<unsigned char>(s[i]))) return true;
  }
  return false;
}

void append_json_string(std::string_view s, std::string& out) {
  const std::size_t at = out.size();
  const bool escape = needs_escape(s);
  out.resize(at + string_size(s, escape));
  put_string(out.data() + at, s, escape);
}

// Visits the document in canonical (pretty) order without recursion: `value(node, depth,
// is_member, last)` for every value, `close(container, depth, last)` after the children of a
// non-empty container. canonical_size and write_canonical share it, so the size computed
// first and the bytes written next cannot disagree.
template <typename Value, typename Close>
void walk_pretty(const Document& doc, Value&& value, Close&& close) {
  std::vector<Frame> stack;
  const Node& root = doc.nodes[doc.root];
  value(root, std::size_t{0}, false, true);
  if (root.is_container() && root.b > 0) stack.push_back({doc.root, 0, true});
  while (!stack.empty()) {
    Frame& top = stack.back();
    const Node& parent = doc.nodes[top.node];
    if (top.next < parent.b) {
      const std::uint32_t child = parent.a + top.next++;
      const Node& node = doc.nodes[child];
      const bool last = top.next == parent.b;
      value(node, stack.size(), parent.kind() == Kind::object, last);
      if (node.is_container() && node.b > 0) stack.push_back({child, 0, last});
    } else {
      close(parent, stack.size() - 1, top.last);
      stack.pop_back();
    }
  }
}

std::size_t canonical_size(const Document& doc) {
  std::size_t size = 0;
  walk_pretty(
      doc,
      [&](const Node& node, std::size_t depth, bool is_member, bool last) {
        size += 2 * depth;
        if (is_member) size += string_size(doc.key(node), node.has(Node::k_key_escape)) + 2;
        if (node.kind() == Kind::string) {
          size += string_size(doc.value(node), node.has(Node::k_value_escape));
        } else if (node.is_container() && node.b > 0) {
          size += 2;  // "[\n"; the comma goes after the closing bracket
          return;
        } else if (node.is_container()) {
          size += 2;
        } else {
          size += scalar_text(doc, node).size();
        }
        size += last ? 1 : 2;
      },
      [&](const Node&, std::size_t depth, bool last) { size += 2 * depth + 1 + (last ? 1 : 2); });
  return size;
}

void write_canonical(const Document& doc, std::string& out) {
  write_canonical(doc, out, canonical_size(doc));
}

namespace {

// Output of write_pretty into a string already sized by canonical_size (exact): no checks.
struct SizedOut {
  char* p;
  char* room(std::size_t) const { return p; }
  void done(char* end) { p = end; }
};

// Output of write_pretty through a bounded buffer handed to a sink when the next piece might
// not fit; grows only for a single piece larger than the buffer (a huge string, deep indent).
class ChunkedOut {
 public:
  static constexpr std::size_t k_chunk_bytes = std::size_t{256} << 10;

  explicit ChunkedOut(const std::function<void(std::string_view)>& sink)
      : m_sink(sink), m_buffer(k_chunk_bytes, '\0') {}

  char* room(std::size_t bytes) {
    if (m_used + bytes > m_buffer.size()) {
      flush();
      if (bytes > m_buffer.size()) m_buffer.resize(bytes);
    }
    return m_buffer.data() + m_used;
  }
  void done(char* end) { m_used = static_cast<std::size_t>(end - m_buffer.data()); }
  void flush() {
    if (m_used > 0) m_sink(std::string_view(m_buffer.data(), m_used));
    m_used = 0;
  }

 private:
  const std::function<void(std::string_view)>& m_sink;
  std::string m_buffer;
  std::size_t m_used = 0;
};

// Prints the arranged document in canonical (pretty) form into `out` (SizedOut or ChunkedOut),
// asking for room per line with an upper bound (an escape is at most six bytes per byte).
template <typename Out>
void write_pretty(const Document& doc, Out& out) {
  std::string indent;
  auto spaces = [&](std::size_t depth) {
    if (indent.size() < 2 * depth) indent.assign(2 * depth + 64, ' ');
    return std::string_view(indent.data(), 2 * depth);
  };
  walk_pretty(
      doc,
      [&](const Node& node, std::size_t depth, bool is_member, bool last) {
        std::size_t bound = 2 * depth + 16;
        if (is_member) bound += 6 * std::size_t{node.key_size()};
        if (node.kind() == Kind::string || node.kind() == Kind::number) bound += 6 * std::size_t{node.b};
        char* p = out.room(bound);
        p = put(p, spaces(depth));
        if (is_member) {
          p = put_string(p, doc.key(node), node.has(Node::k_key_escape));
          *p++ = ':';
          *p++ = ' ';
        }
        if (node.kind() == Kind::string) {
          p = put_string(p, doc.value(node), node.has(Node::k_value_escape));
        } else if (node.is_container()) {
          *p++ = node.kind() == Kind::array ? '[' : '{';
          if (node.b > 0) {
            *p++ = '\n';
            out.done(p);
            return;
          }
          *p++ = node.kind() == Kind::array ? ']' : '}';
        } else {
          p = put(p, scalar_text(doc, node));
        }
        if (!last) *p++ = ',';
        *p++ = '\n';
        out.done(p);
      },
      [&](const Node& container, std::size_t depth, bool last) {
        char* p = out.room(2 * depth + 3);
        p = put(p, spaces(depth));
        *p++ = container.kind() == Kind::array ? ']' : '}';
        if (!last) *p++ = ',';
        *p++ = '\n';
        out.done(p);
      });
}

}  // namespace

void write_canonical(const Document& doc, std::string& out, std::size_t size) {
  const std::size_t at = out.size();
  out.reserve(at + size);
  util::advise_huge_pages(out.data(), out.capacity());
  out.resize(at + size);
  SizedOut sized{out.data() + at};
  write_pretty(doc, sized);
}

void write_canonical(const Document& doc, const std::function<void(std::string_view)>& sink) {
  ChunkedOut chunked(sink);
  write_pretty(doc, chunked);
  chunked.flush();
}

void write_compact(const Document& doc, std::uint32_t root_index, std::string& out) {
  std::vector<Frame> stack;
  auto emit = [&](const Node& node, bool is_member) {
    if (is_member) {
      append_json_string(doc.key(node), out);
      out.push_back(':');
    }
    if (node.kind() == Kind::string) {
      append_json_string(doc.value(node), out);
    } else if (node.is_container()) {
      out.push_back(node.kind() == Kind::array ? '[' : '{');
    } else {
      out.append(scalar_text(doc, node));
    }
  };
  const Node& root = doc.nodes[root_index];
  emit(root, false);
  if (root.is_container()) stack.push_back({root_index, 0, true});
  while (!stack.empty()) {
    Frame& top = stack.back();
    const Node& parent = doc.nodes[top.node];
    if (top.next < parent.b) {
      if (top.next > 0) out.push_back(',');
      const std::uint32_t child = parent.a + top.next++;
      const Node& node = doc.nodes[child];
      emit(node, parent.kind() == Kind::object);
      if (node.is_container()) stack.push_back({child, 0, true});
    } else {
      out.push_back(parent.kind() == Kind::array ? ']' : '}');
      stack.pop_back();
    }
  }
}

}  // namespace coldgate::canon
