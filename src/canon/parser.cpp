// Builds a Document from nlohmann's SAX events. nlohmann parses iteratively and validates UTF-8
// and surrogates; we add exact numbers, duplicate-key and depth checks, and byte offsets. This
// is the reference path: parse_document tries fast_parser.cpp first and comes here only when
// that refuses the input, so every error message (and its byte offset) is produced here.
#include <cctype>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "canon/document.hpp"
#include "canon/number.hpp"
#include "util/memory.hpp"
#include "util/error.hpp"

namespace coldgate::canon {
namespace {

// Shared read position of the input, advanced by nlohmann's lexer through InputIterator, so
// SAX callbacks know how many bytes have been consumed.
struct Cursor {
  const char* begin;
  const char* pos;
  const char* end;
  std::size_t offset() const { return static_cast<std::size_t>(pos - begin); }
};

// Input iterator over a Cursor: every copy shares the position (nlohmann copies iterators).
class InputIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  explicit InputIterator(Cursor* cursor) : m_cursor(cursor) {}
  reference operator*() const { return *m_cursor->pos; }
  InputIterator& operator++() {
    ++m_cursor->pos;
    return *this;
  }
  InputIterator operator++(int) {
    InputIterator copy = *this;
    ++m_cursor->pos;
    return copy;
  }
  // Iterators are only ever compared against the end iterator: equal once the input is used up.
  bool operator==(const InputIterator& other) const {
    return m_cursor->pos == m_cursor->end && other.m_cursor->pos == other.m_cursor->end;
  }

 private:
  Cursor* m_cursor;
};

[[noreturn]] void fail(std::string_view source, std::size_t offset, const std::string& what) {
  throw usage_error(std::string(source) + ": byte " + std::to_string(offset), what);
}

// A number too large for a double, which nlohmann refuses (error 406); see parse_document.
struct Substitution {
  std::size_t start;    // byte offset of the number in the input
  std::string_view text;  // the original number text
};

// Offset of the opening quote of the string whose closing quote is at `close`.
std::size_t string_start(std::string_view json, std::size_t close) {
  std::size_t i = close;
  while (i > 0) {
    --i;
    if (json[i] != '"') continue;
    std::size_t backslashes = 0;
    while (i > backslashes && json[i - 1 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return i;
  }
  return 0;
}

// Thrown on the fast pass when an error needs a byte offset: parse again with offsets.
struct RetryWithOffsets {};

class Builder {
 public:
  Builder(Document& document, const Options& options, std::string_view json,
          std::string_view source, Cursor* cursor, const std::vector<Substitution>& substitutions,
          bool check_duplicates)
      : m_doc(document),
        m_options(options),
        m_json(json),
        m_source(source),
        m_cursor(cursor),
        m_substitutions(substitutions),
        m_check_duplicates(check_duplicates) {}

  // nlohmann SAX interface.
  bool null() { return push_scalar(Kind::null); }
  bool boolean(bool value) { return push_scalar(value ? Kind::true_ : Kind::false_); }
  bool number_integer(std::int64_t value) {
    if (substituted()) return true;
    const std::size_t offset = m_doc.text.size();
    append_integer(value, m_doc.text);
    return push_text(Kind::number, offset, false);
  }
  bool number_unsigned(std::uint64_t value) {
    if (substituted()) return true;
    const std::size_t offset = m_doc.text.size();
    append_unsigned(value, m_doc.text);
    return push_text(Kind::number, offset, false);
  }
  bool number_float(double, const std::string& text) { return push_number(text); }
  bool string(std::string& value) {
    const std::size_t offset = m_doc.text.size();
    m_doc.text.append(value);
    return push_text(Kind::string, offset, needs_escape(value));
  }
  bool binary(nlohmann::json::binary_t&) { return false; }  // not produced by the JSON lexer
  bool start_object(std::size_t) { return open(Kind::object); }
  bool start_array(std::size_t) { return open(Kind::array); }
  bool key(std::string& name) {
    if (name.size() > Node::k_max_key_bytes) {
      fail_here(string_start(m_json, offset() - 1), "member name longer than 32 MiB");
    }
    if (m_check_duplicates && !m_keys.back().insert(name).second) {
      std::string quoted;
      append_json_string(name, quoted);
      fail_here(string_start(m_json, offset() - 1),
                "duplicate key " + quoted + "; each member name may appear once per object");
    }
    m_key_offset = static_cast<std::uint32_t>(m_doc.text.size());
    m_doc.text.append(name);
    m_key_bits = static_cast<std::uint32_t>(name.size()) | (needs_escape(name) ? Node::k_key_escape : 0);
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& error) {
    m_error_position = position;
    m_error_id = error.id;
    m_error_token = last_token;
    m_error_what = error.what();
    return false;
  }

  // After a successful parse: moves the root into the node vector.
  void finish() {
    m_doc.root = static_cast<std::uint32_t>(m_doc.nodes.size());
    m_doc.nodes.push_back(m_pending.at(0));
    std::vector<Node>().swap(m_pending);
    if (m_doc.text.size() > std::numeric_limits<std::uint32_t>::max()) {
      fail_here(m_json.size(), "document holds more than 4 GiB of text; split it");
    }
  }

  int error_id() const { return m_error_id; }
  std::size_t root_end() const { return m_root_end; }
  std::size_t error_position() const { return m_error_position; }
  const std::string& error_token() const { return m_error_token; }
  const std::string& error_what() const { return m_error_what; }

 private:
  [[noreturn]] void fail_here(std::size_t offset, const std::string& what) const {
    fail(m_source, offset, what);
  }

  // Bytes consumed by the lexer so far. The fast pass has no cursor: every error path that
  // needs an offset abandons it, and the parse is redone with the byte-counting iterator.
  std::size_t offset() const {
    if (m_cursor == nullptr) throw RetryWithOffsets{};
    return m_cursor->offset();
  }

  // True when the number just read is the stand-in "0" for an overflowing number; pushes the
  // original text instead.
  bool substituted() {
    if (m_next_substitution < m_substitutions.size() &&
        m_substitutions[m_next_substitution].start < offset()) {
      const Substitution& substitution = m_substitutions[m_next_substitution++];
      push_number(substitution.text);
      if (m_open.empty()) m_root_end = substitution.start + substitution.text.size();
      return true;
    }
    return false;
  }

  bool push_number(std::string_view text) {
    const std::size_t start = m_doc.text.size();
    switch (normalize_number_to(text, m_doc.text)) {
      case NumberStatus::ok:
        return push_text(Kind::number, start, false);
      case NumberStatus::exponent_out_of_range:
        fail_here(offset() - 1, "number exponent beyond ±10^15 in " + std::string(text));
      case NumberStatus::invalid:
        break;
    }
    fail_here(offset() - 1, "invalid number " + std::string(text));
  }

  Node make(Kind kind) {
    Node node;
    node.set_kind(kind);
    if (!m_open.empty() && m_pending[m_open.back()].kind() == Kind::object) {
      node.key = m_key_offset;
      node.bits |= m_key_bits;
    }
    return node;
  }

  bool push_scalar(Kind kind) {
    m_pending.push_back(make(kind));
    note_root_end(0);
    return true;
  }

  // Remembers where the top-level value ended (`lookahead`: bytes the lexer read past it).
  void note_root_end(std::size_t lookahead) {
    if (m_cursor != nullptr && m_open.empty()) m_root_end = std::min(offset() - lookahead, m_json.size());
  }

  bool push_text(Kind kind, std::size_t offset, bool escape) {
    Node node = make(kind);
    node.a = static_cast<std::uint32_t>(offset);
    node.b = static_cast<std::uint32_t>(m_doc.text.size() - offset);
    if (escape) node.bits |= Node::k_value_escape;
    m_pending.push_back(node);
    // A number ends when the lexer reads the byte after it (unless the input ended).
    note_root_end(kind == Kind::number && m_cursor != nullptr &&
                          m_cursor->pos != m_cursor->begin + m_json.size()
                      ? 1
                      : 0);
    return true;
  }

  bool open(Kind kind) {
    if (m_open.size() >= m_options.max_depth) {
      const std::string where = std::string(m_source) + ": byte " + std::to_string(offset() - 1);
      throw DepthError(ExitCode::usage, where,
                       "nesting deeper than " + std::to_string(m_options.max_depth) +
                           " levels (limit max_depth)");
    }
    const Node node = make(kind);
    m_open.push_back(static_cast<std::uint32_t>(m_pending.size()));
    m_pending.push_back(node);
    if (m_check_duplicates) m_keys.emplace_back();
    return true;
  }

  bool close() {
    const std::uint32_t begin = m_open.back();
    m_open.pop_back();
    if (m_check_duplicates) m_keys.pop_back();
    Node& container = m_pending[begin];
    container.a = static_cast<std::uint32_t>(m_doc.nodes.size());
    container.b = static_cast<std::uint32_t>(m_pending.size() - begin - 1);
    m_doc.nodes.insert(m_doc.nodes.end(), m_pending.begin() + begin + 1, m_pending.end());
    m_pending.resize(begin + 1);
    note_root_end(0);
    return true;
  }

  Document& m_doc;
  const Options& m_options;
  std::string_view m_json;
  std::string_view m_source;
  Cursor* m_cursor;  // null on the fast pass, which knows no byte offsets
  const std::vector<Substitution>& m_substitutions;
  std::size_t m_next_substitution = 0;
  bool m_check_duplicates;
  std::vector<Node> m_pending;       // values of open containers, each container before its children
  std::vector<std::uint32_t> m_open;  // index in m_pending of every open container
  std::vector<std::set<std::string>> m_keys;  // member names per open container (diagnosis only)
  std::uint32_t m_key_offset = 0;  // member name for the next value
  std::uint32_t m_key_bits = 0;
  std::size_t m_root_end = 0;  // offset just past the top-level value, once it is complete
  std::size_t m_error_position = 0;
  int m_error_id = 0;
  std::string m_error_token;
  std::string m_error_what;
};

// The lone surrogate escape (`\udXXX`) nearest before `offset`, as text and offset.
bool find_lone_surrogate(std::string_view json, std::size_t offset, std::size_t& at,
                         std::string& escape) {
  for (std::size_t i = std::min(offset, json.size()); i-- > 0;) {
    if (json[i] == '\\' && i + 6 <= json.size() && (json[i + 1] == 'u') &&
        (json[i + 2] == 'd' || json[i + 2] == 'D')) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(json[i + 3])));
      if ((c >= '8' && c <= '9') || (c >= 'a' && c <= 'f')) {
        at = i;
        escape = std::string(json.substr(i, 6));
        return true;
      }
    }
  }
  return false;
}

// Turns nlohmann's parse error into one human line with a 0-based byte offset.
[[noreturn]] void translate_error(const Builder& builder, std::string_view json,
                                  std::string_view source) {
  // nlohmann's position counts the bytes read, including the offending one.
  const std::size_t read = builder.error_position();
  std::size_t offset = read > 0 ? read - 1 : 0;
  const std::string& what = builder.error_what();
  // The error's kind comes from nlohmann's own words only: its message also quotes the input
  // it read last ("; last read: '<token>'"), and an input holding the words of another error
  // ("control character" in a string cut short) would take that error's branch.
  std::string own_words = what;
  const std::string echo = "; last read: '" + builder.error_token() + "'";
  if (auto at = own_words.find(echo); at != std::string::npos) own_words.erase(at, echo.size());
  auto has = [&](std::string_view s) { return own_words.find(s) != std::string::npos; };
  // Decided from the input, not from nlohmann's wording, which differs between its versions.
  if (json.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    fail(source, json.size(), "empty input; expected a JSON value");
  }
  if (read >= json.size() && (has("unexpected end of input") || has("missing closing quote"))) {
    fail(source, json.size(), "unexpected end of input; the JSON text is truncated");
  }
  if (has("ill-formed UTF-8")) {
    // A sequence cut short fails on the byte after it: point at its lead byte instead.
    auto byte = [&](std::size_t i) { return static_cast<unsigned char>(json[i]); };
    if (offset < json.size() && !(byte(offset) >= 0x80 && byte(offset) <= 0xBF)) {
      std::size_t i = offset;
      while (i > 0 && byte(i - 1) >= 0x80 && byte(i - 1) <= 0xBF && offset - i < 3) --i;
      if (i > 0 && byte(i - 1) >= 0xC2) offset = i - 1;
    }
    fail(source, offset, "invalid UTF-8 in string");
  }
  if (has("surrogate U+")) {
    std::size_t at = offset;
    std::string escape;
    if (find_lone_surrogate(json, read, at, escape)) fail(source, at, "lone surrogate " + escape);
    fail(source, offset, "lone surrogate escape");
  }
  if (has("control character") && offset < json.size()) {
    char code[8];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned char>(json[offset]));
    fail(source, offset,
         std::string("unescaped control character ") + code + " in string; escape it");
  }
  if (has("expected end of input")) {
    // Point at the first byte after the top-level value and its trailing whitespace.
    offset = builder.root_end();
    while (offset < json.size() && (json[offset] == ' ' || json[offset] == '\t' ||
                                    json[offset] == '\n' || json[offset] == '\r')) {
      ++offset;
    }
    fail(source, offset, "unexpected data after the JSON value");
  }
  // Anything else: keep nlohmann's description, minus its prefix and line/column.
  std::string message = what;
  if (auto dash = message.find(" - "); dash != std::string::npos) message = message.substr(dash + 3);
  if (auto last = message.find("; last read:"); last != std::string::npos) message.resize(last);
  if (message == "invalid literal") {
    // The lexer stops at the first byte that does not fit; point at the word's start.
    while (offset > 0 && offset <= json.size() && std::isalpha(static_cast<unsigned char>(json[offset - 1]))) {
      --offset;
    }
    message += "; expected a value (null, true, false, number, string, array or object)";
  }
  // nlohmann's position is just past the offending token; point at the token's first byte.
  if (offset < json.size() && json[offset] == '"') {
    offset = string_start(json, offset);
  } else {
    auto in_token = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
    };
    while (offset > 0 && offset < json.size() && in_token(json[offset]) && in_token(json[offset - 1])) {
      --offset;
    }
  }
  fail(source, offset, message);
}

// Finds every number that nlohmann would refuse because it overflows a double, and overwrites
// it in `copy` with "0" padded by spaces (same length, so byte offsets stay the same).
std::vector<Substitution> substitute_huge_numbers(std::string_view json, std::string& copy) {
  std::vector<Substitution> found;
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c != '-' && !is_digit(c)) continue;
    // Longest prefix matching the number grammar, as nlohmann's lexer reads it.
    std::size_t j = i;
    if (json[j] == '-') ++j;
    bool valid = j < json.size() && is_digit(json[j]);
    if (valid && json[j] == '0') {
      ++j;
    } else {
      while (j < json.size() && is_digit(json[j])) ++j;
    }
    if (valid && j + 1 < json.size() && json[j] == '.' && is_digit(json[j + 1])) {
      j += 1;
      while (j < json.size() && is_digit(json[j])) ++j;
    } else if (valid && j < json.size() && json[j] == '.') {
      valid = false;
    }
    if (valid && j < json.size() && (json[j] == 'e' || json[j] == 'E')) {
      std::size_t k = j + 1;
      if (k < json.size() && (json[k] == '+' || json[k] == '-')) ++k;
      if (k < json.size() && is_digit(json[k])) {
        while (k < json.size() && is_digit(json[k])) ++k;
        j = k;
      } else {
        valid = false;
      }
    }
    if (valid) {
      const std::string text(json.substr(i, j - i));
      if (!std::isfinite(std::strtod(text.c_str(), nullptr))) {
        found.push_back({i, json.substr(i, j - i)});
        copy[i] = '0';
        for (std::size_t k = i + 1; k < j; ++k) copy[k] = ' ';
      }
    }
    i = j > i ? j - 1 : i;
  }
  return found;
}

// One SAX pass over `input` (which has the same length as `json`), counting bytes so that
// errors carry their offset.
bool run(Document& document, const Options& options, std::string_view json, std::string_view input,
         std::string_view source, const std::vector<Substitution>& substitutions,
         bool check_duplicates, int* error_id) {
  Cursor cursor{input.data(), input.data(), input.data() + input.size()};
  Builder builder(document, options, json, source, &cursor, substitutions, check_duplicates);
  if (nlohmann::json::sax_parse(InputIterator(&cursor), InputIterator(&cursor), &builder)) {
    builder.finish();
    return true;
  }
  if (builder.error_id() == 406 && substitutions.empty()) {
    *error_id = 406;
    return false;
  }
  translate_error(builder, json, source);
}

// The fast pass: nlohmann reads the contiguous input through its pointer adapter and nothing
// counts bytes. False when anything went wrong (the caller then parses again with offsets).
bool run_fast(Document& document, const Options& options, std::string_view json,
              std::string_view source) {
  static const std::vector<Substitution> k_none;
  Builder builder(document, options, json, source, nullptr, k_none, false);
  try {
    if (!nlohmann::json::sax_parse(json.data(), json.data() + json.size(), &builder)) return false;
  } catch (const RetryWithOffsets&) {
    return false;
  }
  builder.finish();
  return true;
}

}  // namespace

Document parse_document(std::string_view json, const Options& options, std::string_view source) {
  Document document;
  if (parse_document_fast(json, options, document)) return document;
  // The fast parser says no more than "not accepted": the reference path decides, and words
  // the error. Should it accept what the fast parser refused, its Document is the answer
  // (tests/canon/fast_parser_test.cpp checks that the two agree).
  document = Document();
  return parse_document_reference(json, options, source);
}

Document parse_document_reference(std::string_view json, const Options& options,
                                  std::string_view source) {
  if (json.size() > options.max_input_bytes) {
    fail(source, options.max_input_bytes,
         "input is " + std::to_string(json.size()) + " bytes, more than the limit of " +
             std::to_string(options.max_input_bytes) + " (max_input_bytes)");
  }
  if (json.size() >= 3 && json.substr(0, 3) == "\xEF\xBB\xBF") {
    fail(source, 0, "UTF-8 byte order mark at the start; remove the BOM (canonical JSON has none)");
  }
  // nlohmann's lexer takes a NUL byte between tokens for the end of the input (C strings), so
  // `[1]\0junk` would pass. JSON text holds no raw NUL anywhere (RFC 8259: control characters
  // in strings must be escaped): refuse it before parsing.
  if (const void* nul = std::memchr(json.data(), 0, json.size())) {
    fail(source, static_cast<std::size_t>(static_cast<const char*>(nul) - json.data()),
         "NUL byte; JSON text cannot contain one (escape it as \\u0000 inside a string)");
  }
  Document document;
  // Generous reservations cost address space only; untouched pages are never resident, and
  // growing by copying would double the peak instead.
  document.nodes.reserve(json.size() / 6 + 16);
  document.text.reserve(json.size() + json.size() / 4 + 64);
  util::advise_huge_pages(document.nodes.data(), document.nodes.capacity() * sizeof(Node));
  util::advise_huge_pages(document.text.data(), document.text.capacity());
  if (run_fast(document, options, json, source)) return document;
  // Invalid input or a number nlohmann refuses: parse again counting bytes for the message.
  document.nodes.clear();
  document.text.clear();
  int error_id = 0;
  if (run(document, options, json, json, source, {}, false, &error_id)) return document;
  // nlohmann turns numbers beyond the double range into an error (406). Such numbers are valid
  // JSON and we keep them exactly: parse again with each replaced by a same-length stand-in.
  std::string copy(json);
  const std::vector<Substitution> substitutions = substitute_huge_numbers(json, copy);
  document = Document();
  run(document, options, json, copy, source, substitutions, false, &error_id);
  return document;
}

// Re-reads `json` with a member-name set per object to report the first duplicate key.
[[noreturn]] void report_duplicate_key(std::string_view json, const Options& options,
                                       std::string_view source) {
  std::string copy(json);
  const std::vector<Substitution> substitutions = substitute_huge_numbers(json, copy);
  Document scratch;
  int error_id = 0;
  run(scratch, options, json, copy, source, substitutions, true, &error_id);
  fail(source, 0, "duplicate key");  // not reached: the pass above throws
}

}  // namespace coldgate::canon
