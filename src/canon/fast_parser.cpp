// The happy-path parser: validates RFC 8259 JSON (RFC 3629 UTF-8) in one pass over the input
// and builds the same Document as the nlohmann SAX path in parser.cpp. It produces no messages:
// on anything it does not accept it returns false and parse_document falls back to the nlohmann
// path, which is the reference for both the grammar and the error text.
//
// Why it is fast: one pointer walks the contiguous input (no iterator or virtual call per byte);
// strings are scanned eight bytes at a time; strings without escapes and numbers whose canonical
// text is their spelling (most of both) are not copied: the Document points into the input
// (Document::input), and only decoded strings and rewritten numbers go to Document::text; no
// per-value allocation. Less fresh memory matters as much as fewer instructions: the first
// touch of a page is expensive, on virtualized hosts especially.
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "canon/document.hpp"
#include "canon/number.hpp"
#include "util/memory.hpp"

namespace coldgate::canon {
namespace {

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big);

constexpr std::uint64_t k_ones = 0x0101010101010101u;
constexpr std::uint64_t k_high = 0x8080808080808080u;

// High bit set in each byte of `word` that ends a plain run in a string: '"', '\\', a control
// character (< 0x20) or a non-ASCII byte (>= 0x80). Exact per byte: with the high bits cleared
// no addition carries into the next byte.
inline std::uint64_t special_bytes(std::uint64_t word) {
  const std::uint64_t low7 = word & ~k_high;
  const std::uint64_t control = ~(low7 + k_ones * 0x60);
  const std::uint64_t quote = ~((low7 ^ (k_ones * '"')) + k_ones * 0x7F);
  const std::uint64_t backslash = ~((low7 ^ (k_ones * '\\')) + k_ones * 0x7F);
  return (control | quote | backslash | word) & k_high;
}

inline bool is_special(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte >= 0x80 || byte == '"' || byte == '\\';
}

// The first special byte (see special_bytes) in [p, end), or end.
inline const char* find_special(const char* p, const char* end) {
  while (end - p >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    if (const std::uint64_t mask = special_bytes(word); mask != 0) {
      if constexpr (std::endian::native == std::endian::little) {
        return p + std::countr_zero(mask) / 8;
      } else {
        return p + std::countl_zero(mask) / 8;
      }
    }
    p += 8;
  }
  while (p < end && !is_special(*p)) ++p;
  return p;
}

inline bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline unsigned byte_at(const char* p) { return static_cast<unsigned char>(*p); }

inline bool is_continuation(const char* p) { return (byte_at(p) & 0xC0) == 0x80; }

// Length of the well-formed UTF-8 sequence at `p` (first byte >= 0x80) that ends by `end`, or 0.
// RFC 3629 §4: no overlong forms, no encoded surrogates (U+D800..U+DFFF), nothing above
// U+10FFFF.
inline std::size_t utf8_length(const char* p, const char* end) {
  const unsigned c0 = byte_at(p);
  const std::ptrdiff_t room = end - p;
  if (c0 < 0xC2) return 0;
  if (c0 < 0xE0) return room >= 2 && is_continuation(p + 1) ? 2 : 0;
  if (c0 < 0xF0) {
    if (room < 3) return 0;
    const unsigned c1 = byte_at(p + 1);
    const unsigned low = c0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned high = c0 == 0xED ? 0x9F : 0xBF;
    return c1 >= low && c1 <= high && is_continuation(p + 2) ? 3 : 0;
  }
  if (c0 < 0xF5) {
    if (room < 4) return 0;
    const unsigned c1 = byte_at(p + 1);
    const unsigned low = c0 == 0xF0 ? 0x90 : 0x80;
    const unsigned high = c0 == 0xF4 ? 0x8F : 0xBF;
    return c1 >= low && c1 <= high && is_continuation(p + 2) && is_continuation(p + 3) ? 4 : 0;
  }
  return 0;
}

// Value of four hex digits at `p`, or -1.
inline int hex4(const char* p) {
  int value = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = p[i];
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return -1;
    }
    value = value * 16 + digit;
  }
  return value;
}

// Writes code point `cp` as UTF-8 at `w`; returns the byte after it.
inline char* put_utf8(char* w, std::uint32_t cp) {
  if (cp < 0x80) {
    *w++ = static_cast<char>(cp);
  } else if (cp < 0x800) {
    *w++ = static_cast<char>(0xC0 | (cp >> 6));
    *w++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *w++ = static_cast<char>(0xE0 | (cp >> 12));
    *w++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *w++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *w++ = static_cast<char>(0xF0 | (cp >> 18));
    *w++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *w++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *w++ = static_cast<char>(0x80 | (cp & 0x3F));
  }
  return w;
}

// Thrown inside the parser for anything it does not accept; caught in parse_document_fast.
struct Reject {};

class FastParser {
 public:
  FastParser(Document& doc, const Options& options, std::string_view json)
      : m_doc(doc), m_options(options), m_p(json.data()), m_end(json.data() + json.size()) {
    m_pending.reserve(1024);
    m_open.reserve(64);
  }

  void parse();

 private:
  struct Text {
    std::uint32_t offset;
    std::uint32_t size;
    bool escape;  // holds a byte the writer escapes
  };

  // The byte at the read position, or NUL at the end (NUL is invalid wherever the end is).
  char current() const { return m_p < m_end ? *m_p : '\0'; }
  void skip_space() {
    while (m_p < m_end && is_space(*m_p)) ++m_p;
  }
  void expect(char c) {
    if (current() != c) throw Reject{};
    ++m_p;
  }
  std::uint32_t offset_of(const char* p) const {
    return static_cast<std::uint32_t>(p - m_doc.input.data());
  }

  Text read_string();
  Text read_escaped(const char* start, const char* p);
  void read_number();
  void read_literal(const char* word, std::size_t size, Kind kind);
  void read_key();
  void open(Kind kind);
  void close();
  void finish();

  void push(Node node) {
    node.key = m_key;
    node.bits |= m_key_bits;
    m_pending.push_back(node);
  }
  static Node node_of(Kind kind) {
    Node node;
    node.set_kind(kind);
    return node;
  }

  Document& m_doc;
  const Options& m_options;
  const char* m_p;    // read position in the input
  const char* m_end;  // end of the input
  std::string m_number;  // canonical text of the number being read
  std::vector<Node> m_pending;        // values of open containers, each container before its children
  std::vector<std::uint32_t> m_open;  // index in m_pending of every open container
  std::uint32_t m_key = 0;            // member name of the next value (0 outside objects)
  std::uint32_t m_key_bits = 0;
};

// Reads the string whose opening quote is at m_p; leaves m_p after the closing quote.
FastParser::Text FastParser::read_string() {
  const char* start = ++m_p;
  const char* p = start;
  while (true) {
    p = find_special(p, m_end);
    if (p == m_end) throw Reject{};
    const unsigned c = byte_at(p);
    if (c == '"') break;
    if (c >= 0x80) {
      const std::size_t length = utf8_length(p, m_end);
      if (length == 0) throw Reject{};
      p += length;
      continue;
    }
    if (c == '\\') return read_escaped(start, p);
    throw Reject{};  // a control character
  }
  m_p = p + 1;
  return {offset_of(start), static_cast<std::uint32_t>(p - start), false};
}

// The rest of a string from its first backslash at `p`, decoded into Document::text.
FastParser::Text FastParser::read_escaped(const char* start, const char* p) {
  std::string& text = m_doc.text;
  const std::size_t at = text.size();
  text.append(start, p);
  bool escape = false;
  while (true) {
    if (p == m_end) throw Reject{};
    const unsigned c = byte_at(p);
    if (c == '"') break;
    if (c == '\\') {
      if (m_end - p < 2) throw Reject{};
      std::uint32_t cp;
      switch (p[1]) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u': {
          if (m_end - p < 6) throw Reject{};
          const int unit = hex4(p + 2);
          if (unit < 0) throw Reject{};
          cp = static_cast<std::uint32_t>(unit);
          if (cp >= 0xDC00 && cp <= 0xDFFF) throw Reject{};  // low surrogate first
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            // RFC 8259 §7: a high surrogate must be followed by an escaped low one.
            if (m_end - p < 12 || p[6] != '\\' || p[7] != 'u') throw Reject{};
            const int low = hex4(p + 8);
            if (low < 0xDC00 || low > 0xDFFF) throw Reject{};
            cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<std::uint32_t>(low) - 0xDC00);
            p += 6;
          }
          p += 4;
          break;
        }
        default:
          throw Reject{};
      }
      p += 2;
      if (cp < 0x20 || cp == '"' || cp == '\\') escape = true;
      char buffer[4];
      text.append(buffer, put_utf8(buffer, cp));
      continue;
    }
    if (c >= 0x80) {
      const std::size_t length = utf8_length(p, m_end);
      if (length == 0) throw Reject{};
      text.append(p, length);
      p += length;
      continue;
    }
    if (c < 0x20) throw Reject{};  // a control character
    // A plain run: copy up to the next special byte.
    const char* run = find_special(p + 1, m_end);
    text.append(p, run);
    p = run;
  }
  m_p = p + 1;
  const std::size_t offset = m_doc.input.size() + at;
  if (offset + (text.size() - at) > std::numeric_limits<std::uint32_t>::max()) throw Reject{};
  return {static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(text.size() - at), escape};
}

// Reads the number at m_p (RFC 8259 §6 grammar; what follows is checked by the caller).
void FastParser::read_number() {
  const char* start = m_p;
  const char* p = m_p;
  const char* end = m_end;
  auto at = [end](const char* q) { return q < end ? *q : '\0'; };
  if (at(p) == '-') ++p;
  const char* int_begin = p;
  if (at(p) == '0') {
    ++p;
  } else if (is_digit(at(p))) {
    while (is_digit(at(p))) ++p;
  } else {
    throw Reject{};
  }
  const std::size_t int_digits = static_cast<std::size_t>(p - int_begin);
  const char* frac_begin = nullptr;
  bool exponent = false;
  if (at(p) == '.') {
    frac_begin = ++p;
    if (!is_digit(at(p))) throw Reject{};
    while (is_digit(at(p))) ++p;
  }
  if (at(p) == 'e' || at(p) == 'E') {
    ++p;
    if (at(p) == '+' || at(p) == '-') ++p;
    if (!is_digit(at(p))) throw Reject{};
    while (is_digit(at(p))) ++p;
    exponent = true;
  }
  m_p = p;
  const std::string_view text(start, static_cast<std::size_t>(p - start));
  Node node = node_of(Kind::number);
  // Spellings that are already canonical (number.cpp: plain notation for 0.D × 10^n with
  // -6 < n <= 21, no trailing fractional zeros, no "-0"): reference them in place.
  bool canonical = false;
  if (!exponent && int_digits <= 21) {
    if (frac_begin == nullptr) {
      canonical = !(start[0] == '-' && int_begin[0] == '0');
    } else if (p[-1] != '0') {
      if (int_begin[0] != '0') {
        canonical = true;
      } else {
        const char* q = frac_begin;
        while (*q == '0') ++q;  // stops at the last digit at the latest: it is not '0'
        canonical = q - frac_begin <= 5;  // 0.00000d is 1e-6 and up: plain
      }
    }
  }
  node.a = offset_of(start);
  node.b = static_cast<std::uint32_t>(text.size());
  if (!canonical) {
    m_number.clear();
    if (normalize_number_to(text, m_number) != NumberStatus::ok) throw Reject{};
    if (m_number != text) {
      if (m_doc.end_offset() + std::size_t{m_number.size()} > std::numeric_limits<std::uint32_t>::max()) {
        throw Reject{};
      }
      node.a = m_doc.end_offset();
      node.b = static_cast<std::uint32_t>(m_number.size());
      m_doc.text.append(m_number);
    }
  }
  push(node);
}

void FastParser::read_literal(const char* word, std::size_t size, Kind kind) {
  if (static_cast<std::size_t>(m_end - m_p) < size || std::memcmp(m_p, word, size) != 0) {
    throw Reject{};
  }
  m_p += size;
  push(node_of(kind));
}

// Reads `"name"` `:` and the whitespace around; sets the member name of the next value.
void FastParser::read_key() {
  if (current() != '"') throw Reject{};
  const Text name = read_string();
  if (name.size > Node::k_max_key_bytes) throw Reject{};
  skip_space();
  expect(':');
  skip_space();
  m_key = name.offset;
  m_key_bits = name.size | (name.escape ? Node::k_key_escape : 0);
}

void FastParser::open(Kind kind) {
  if (m_open.size() >= m_options.max_depth) throw Reject{};
  push(node_of(kind));
  m_open.push_back(static_cast<std::uint32_t>(m_pending.size() - 1));
  ++m_p;
}

// Moves the children of the innermost open container to the document, as one block.
void FastParser::close() {
  const std::uint32_t begin = m_open.back();
  m_open.pop_back();
  Node& container = m_pending[begin];
  container.a = static_cast<std::uint32_t>(m_doc.nodes.size());
  container.b = static_cast<std::uint32_t>(m_pending.size() - begin - 1);
  m_doc.nodes.insert(m_doc.nodes.end(), m_pending.begin() + begin + 1, m_pending.end());
  m_pending.resize(begin + 1);
  ++m_p;
}

// After the top-level value: moves the root into the node vector.
void FastParser::finish() {
  m_doc.root = static_cast<std::uint32_t>(m_doc.nodes.size());
  m_doc.nodes.push_back(m_pending.at(0));
}

void FastParser::parse() {
  skip_space();
  while (true) {
    // Here a value starts at m_p; m_key / m_key_bits name it when its parent is an object.
    switch (current()) {
      case '{':
        open(Kind::object);
        skip_space();
        if (current() == '}') {
          close();
          break;
        }
        read_key();
        continue;
      case '[':
        open(Kind::array);
        m_key = 0;
        m_key_bits = 0;
        skip_space();
        if (current() == ']') {
          close();
          break;
        }
        continue;
      case '"': {
        const Text text = read_string();
        Node node = node_of(Kind::string);
        node.a = text.offset;
        node.b = text.size;
        if (text.escape) node.bits |= Node::k_value_escape;
        push(node);
        break;
      }
      case 't': read_literal("true", 4, Kind::true_); break;
      case 'f': read_literal("false", 5, Kind::false_); break;
      case 'n': read_literal("null", 4, Kind::null); break;
      default:
        read_number();
        break;
    }
    // A value ended: close containers, or move on to the next element.
    while (true) {
      skip_space();
      if (m_open.empty()) {
        // Only the end of the input may follow the top-level value (a NUL byte too is refused:
        // the reference path words the error).
        if (m_p != m_end) throw Reject{};
        finish();
        return;
      }
      const bool object = m_pending[m_open.back()].kind() == Kind::object;
      const char c = current();
      if (c == ',') {
        ++m_p;
        skip_space();
        if (object) {
          read_key();
        } else {
          m_key = 0;
          m_key_bits = 0;
        }
        break;
      }
      if (c != (object ? '}' : ']')) throw Reject{};
      close();
      // The container's own member name (if any) was pushed with it; none for what follows.
    }
  }
}

}  // namespace

bool parse_document_fast(std::string_view json, const Options& options, Document& document) {
  if (json.size() > options.max_input_bytes ||
      json.size() >= std::numeric_limits<std::uint32_t>::max()) {
    return false;
  }
  document = Document();
  document.input = json;
  // Generous reservations cost address space only; untouched pages are never resident, and
  // growing by copying would double the peak instead. `text` holds only decoded strings and
  // rewritten numbers.
  document.nodes.reserve(json.size() / 6 + 16);
  document.text.reserve(json.size() / 4 + 64);
  util::advise_huge_pages(document.nodes.data(), document.nodes.capacity() * sizeof(Node));
  util::advise_huge_pages(document.text.data(), document.text.capacity());
  FastParser parser(document, options, json);
  try {
    parser.parse();
  } catch (const Reject&) {
    return false;
  }
  return true;
}

}  // namespace coldgate::canon
