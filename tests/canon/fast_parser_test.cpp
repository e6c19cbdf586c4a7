// Differential test of the fast parser (fast_parser.cpp) against the nlohmann SAX reference
// path (parser.cpp) over generated inputs with fixed seeds: valid documents in random spellings,
// the same documents mutated (byte flips, insertions, deletions, truncations), exhaustive short
// UTF-8 sequences, hand-picked edge cases and deep nesting. For every input both parsers must
// agree on acceptance; when both accept, the Documents must hold the same tree (kinds, member
// names, values, escape flags, in input order); and canonicalize() must give exactly what the
// reference path alone gives (the same canonical text, or the same error message and offset).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canon/canon.hpp"
#include "canon/document.hpp"
#include "util/error.hpp"

namespace coldgate::canon {
namespace {

// Pre-order text of a Document's tree (no recursion): what both parsers must agree on.
std::string dump(const Document& doc) {
  std::string out;
  std::vector<std::pair<std::uint32_t, bool>> stack{{doc.root, false}};  // node, is member
  while (!stack.empty()) {
    const auto [index, member] = stack.back();
    stack.pop_back();
    const Node& node = doc.nodes.at(index);
    if (member) {
      out += node.has(Node::k_key_escape) ? "K!" : "K";
      append_json_string(doc.key(node), out);
      out += ' ';
    }
    switch (node.kind()) {
      case Kind::null: out += "null"; break;
      case Kind::false_: out += "false"; break;
      case Kind::true_: out += "true"; break;
      case Kind::number:
        out += 'N';
        out += doc.value(node);
        break;
      case Kind::string:
        out += node.has(Node::k_value_escape) ? "S!" : "S";
        append_json_string(doc.value(node), out);
        break;
      case Kind::array:
      case Kind::object:
        out += node.kind() == Kind::array ? 'A' : 'O';
        out += std::to_string(node.b);
        for (std::uint32_t k = node.b; k-- > 0;) {
          stack.push_back({node.a + k, node.kind() == Kind::object});
        }
        break;
    }
    out += '\n';
  }
  return out;
}

// Canonical text larger than this is compared by size only (deep nesting prints as gigabytes).
constexpr std::size_t k_max_compared_bytes = std::size_t{1} << 24;

// What arranging and printing `doc` gives: the canonical text, or the error message.
std::string outcome_of(Document& doc, std::string_view json, const Options& options) {
  try {
    arrange_document(doc, options, json, "t");
    const std::size_t size = canonical_size(doc);
    if (size > k_max_compared_bytes) return "size " + std::to_string(size);
    std::string out = "ok\n";
    write_canonical(doc, out, size);
    return out;
  } catch (const Error& e) {
    return "error " + e.message();
  }
}

// Printable form of an input for failure messages.
std::string shown(std::string_view json) {
  std::string out;
  append_json_string(json.substr(0, 400), out);
  return out + (json.size() > 400 ? "..." : "");
}

struct Tally {
  std::size_t accepted = 0;
  std::size_t rejected = 0;
};

// Checks that the fast and reference paths agree on `json`; counts the verdict in `tally`. With
// `whole`, also that canonicalize() (which picks the path) gives the reference's text or message.
void expect_agree(std::string_view json, const Options& options, Tally& tally, bool whole = true) {
  bool reference_ok = false;
  std::string reference_dump;
  std::string reference;
  try {
    Document doc = parse_document_reference(json, options, "t");
    reference_ok = true;
    reference_dump = dump(doc);
    reference = outcome_of(doc, json, options);
  } catch (const Error& e) {
    reference = "error " + e.message();
  }

  Document fast_doc;
  const bool fast_ok = parse_document_fast(json, options, fast_doc);
  ASSERT_EQ(fast_ok, reference_ok) << "input " << shown(json) << "\nreference: " << reference;
  if (fast_ok) {
    ASSERT_EQ(dump(fast_doc), reference_dump) << "input " << shown(json);
    ASSERT_EQ(outcome_of(fast_doc, json, options), reference) << "input " << shown(json);
    ++tally.accepted;
  } else {
    ++tally.rejected;
  }

  // canonicalize() goes through parse_document, which picks the path: same text or message.
  if (!whole || reference.starts_with("size ")) return;
  std::string public_outcome;
  try {
    public_outcome = "ok\n" + canonicalize(json, options, "t");
  } catch (const Error& e) {
    public_outcome = "error " + e.message();
  }
  ASSERT_EQ(public_outcome, reference) << "input " << shown(json);
}

// Random JSON text in varied spellings: whitespace of all four kinds, every escape form,
// surrogate pairs, raw 2-4 byte UTF-8, long ASCII runs, numbers of every shape (including
// beyond double range and beyond the exponent limit), occasional duplicate member names.
class Writer {
 public:
  explicit Writer(unsigned seed) : m_rng(seed) {}

  std::string document() {
    m_out.clear();
    space();
    value(0);
    space();
    return m_out;
  }

  std::mt19937& rng() { return m_rng; }

 private:
  unsigned pick(unsigned n) { return static_cast<unsigned>(m_rng() % n); }

  void space() {
    if (pick(3) != 0) return;
    for (unsigned i = 1 + pick(3); i-- > 0;) m_out += " \t\n\r"[pick(4)];
  }

  void value(int depth) {
    const unsigned kind = depth == 0 ? 7 + pick(2) : pick(depth > 6 ? 7 : 9);
    switch (kind) {
      case 0: m_out += "null"; break;
      case 1: m_out += "true"; break;
      case 2: m_out += "false"; break;
      case 3:
      case 4: number(); break;
      case 5:
      case 6: string(); break;
      default: container(depth, kind == 7); break;
    }
  }

  void digits(unsigned count, bool leading_zero_ok) {
    for (unsigned i = 0; i < count; ++i) {
      m_out += static_cast<char>(i == 0 && !leading_zero_ok ? '1' + pick(9) : '0' + pick(10));
    }
  }

  void number() {
    if (pick(2)) m_out += '-';
    const unsigned shape = pick(10);
    if (shape == 0) {
      m_out += '0';
    } else {
      digits(1 + (shape == 1 ? 20 + pick(20) : pick(8)), false);
    }
    if (pick(3) == 0) {
      m_out += '.';
      if (pick(3) == 0) m_out += "00000";
      digits(1 + pick(shape == 2 ? 30 : 6), true);
      if (pick(4) == 0) m_out += "000";
    }
    if (pick(3) == 0) {
      m_out += pick(2) ? 'e' : 'E';
      if (const unsigned sign = pick(3); sign < 2) m_out += sign ? '+' : '-';
      switch (pick(6)) {
        case 0: m_out += "400"; break;                   // beyond double
        case 1: m_out += "1000000000000000"; break;      // at the limit
        case 2: m_out += "1000000000000001"; break;      // beyond it
        case 3: m_out += "0000" + std::to_string(pick(30)); break;
        default: m_out += std::to_string(pick(40)); break;
      }
    }
  }

  void string() {
    m_out += '"';
    for (unsigned i = pick(6); i-- > 0;) piece();
    m_out += '"';
  }

  void hex4(unsigned unit) {
    const char* digits = pick(2) ? "0123456789abcdef" : "0123456789ABCDEF";
    m_out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) m_out += digits[(unit >> shift) & 15];
  }

  void piece() {
    static const char* const k_raw[] = {"\xC3\xA9", "\xDF\xBF", "\xE0\xA0\x80", "\xE4\xB8\xAD",
                                        "\xED\x9F\xBF", "\xEE\x80\x80", "\xEF\xBF\xBF",
                                        "\xF0\x90\x80\x80", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF",
                                        "\x7F", "/", "'", "~"};
    switch (pick(8)) {
      case 0: {  // an ASCII run, long enough to cross eight-byte words
        static const char k_ascii[] = " azAZ09!#$%&'()*+,-./:;<=>?@[]^_`{|}~";
        for (unsigned n = pick(24); n-- > 0;) m_out += k_ascii[pick(sizeof k_ascii - 1)];
        break;
      }
      case 1: {
        static const char* const k_escapes[] = {"\\\"", "\\\\", "\\/", "\\b",
                                                "\\f", "\\n", "\\r", "\\t"};
        m_out += k_escapes[pick(8)];
        break;
      }
      case 2: hex4(pick(0x20)); break;  // a control character, or more
      case 3: {
        unsigned unit = pick(0x10000);
        if (unit >= 0xD800 && unit <= 0xDFFF) unit = 0x41;
        hex4(unit);
        break;
      }
      case 4:
        hex4(0xD800 + pick(0x400));
        hex4(0xDC00 + pick(0x400));
        break;
      case 5: hex4(pick(2) ? '"' : '\\'); break;
      default: m_out += k_raw[pick(sizeof k_raw / sizeof *k_raw)]; break;
    }
  }

  void container(int depth, bool object) {
    m_out += object ? '{' : '[';
    space();
    const unsigned count = pick(depth < 2 ? 8 : 5);
    for (unsigned i = 0; i < count; ++i) {
      if (i > 0) {
        m_out += ',';
        space();
      }
      if (object) {
        static const char* const k_keys[] = {"\"id\"", "\"$id\"", "\"a\"", "\"b\"", "\"\\u0061\"",
                                             "\"\"", "\"\\n\"", "\"\xC3\xA9\""};
        if (pick(4) == 0) {
          string();
        } else {
          // Names from a small pool repeat now and then: duplicate keys, spelled alike or not.
          m_out += k_keys[pick(sizeof k_keys / sizeof *k_keys)];
        }
        space();
        m_out += ':';
        space();
      }
      value(depth + 1);
      space();
    }
    m_out += object ? '}' : ']';
  }

  std::mt19937 m_rng;
  std::string m_out;
};

// Applies one random damage to `text`.
void mutate(std::string& text, std::mt19937& rng) {
  static const char k_bytes[] = "{}[],:\"\\ \t\n\r0123456789-+.eEtrufalsn/*u'xX\x01\x1F\x7F";
  static const unsigned char k_high[] = {0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                                         0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  auto any_byte = [&]() -> char {
    switch (rng() % 4) {
      case 0: return static_cast<char>(rng() % 256);
      case 1: return static_cast<char>(k_high[rng() % sizeof k_high]);
      default: return k_bytes[rng() % (sizeof k_bytes - 1)];
    }
  };
  const std::size_t at = text.empty() ? 0 : rng() % text.size();
  switch (rng() % 6) {
    case 0:
    case 1:
      if (!text.empty()) text[at] = any_byte();
      break;
    case 2: text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), any_byte()); break;
    case 3:
      if (!text.empty()) text.erase(at, 1 + rng() % 3);
      break;
    case 4: text.resize(at); break;
    default: {  // repeat a slice: duplicated members, doubled commas, nested brackets
      const std::size_t size = std::min<std::size_t>(text.size() - at, 1 + rng() % 12);
      text.insert(at, text.substr(at, size));
      break;
    }
  }
}

TEST(CanonFastParser, AgreesWithReferenceOnGeneratedDocuments) {
  Writer writer(20240611);
  Options options;
  Tally tally;
  for (int i = 0; i < 3000; ++i) {
    const std::string json = writer.document();
    ASSERT_NO_FATAL_FAILURE(expect_agree(json, options, tally));
  }
  // The generator makes valid text (duplicate keys and out-of-range exponents aside).
  EXPECT_GT(tally.accepted, 2500u);
}

TEST(CanonFastParser, AgreesWithReferenceOnMutatedDocuments) {
  Writer writer(7);
  Options options;
  Tally tally;
  for (int i = 0; i < 6000; ++i) {
    std::string json = writer.document();
    for (unsigned n = 1 + writer.rng()() % 3; n-- > 0;) mutate(json, writer.rng());
    ASSERT_NO_FATAL_FAILURE(expect_agree(json, options, tally));
  }
  // Both verdicts occur often, so neither direction of disagreement goes unexercised.
  EXPECT_GT(tally.accepted, 300u);
  EXPECT_GT(tally.rejected, 3000u);
}

TEST(CanonFastParser, AgreesWithReferenceWithTightLimits) {
  Writer writer(99);
  Options options;
  options.max_depth = 3;
  Tally tally;
  for (int i = 0; i < 1000; ++i) {
    const std::string json = writer.document();
    options.max_input_bytes = i % 2 ? json.size() : json.size() - (json.empty() ? 0 : 1);
    ASSERT_NO_FATAL_FAILURE(expect_agree(json, options, tally));
  }
  EXPECT_GT(tally.accepted, 100u);
  EXPECT_GT(tally.rejected, 100u);
}

TEST(CanonFastParser, AgreesWithReferenceOnEdgeCases) {
  const std::vector<std::string> cases = {
      "", " ", "\t\n\r ", "0", "-0", "-0.0", "-0e5", "0e0", "1E+2", "1e-7", "1.50", "100",
      "123456789012345678901", "1234567890123456789012", "-123456789012345678901", "0.000001",
      "0.0000001", "-0.00001", "1.0", "01", "-01", "1.", ".1", "-", "+1", "1e", "1e+", "1E-",
      "1.e5", "0x10", "1e400", "-1e400", "[1e1000000000000000]", "[1e1000000000000001]",
      "[1e-1000000000000001]", "[123456789012345678901234567890]", "NaN", "Infinity",
      "-Infinity", "[1,]", "{\"a\":1,}", "[,1]", "{,}", "{\"a\"}", "{\"a\":}", "{1:2}",
      "{\"a\" 1}", "[1 2]", "[1,,2]", "[}", "{]", "]", "}", "[", "{", "[[]", "[]]", "nul",
      "nulll", "null ", "nUll", "true false", "[true]x", "tru", "fals", "\"", "\"abc",
      "\"\\\"", "\"\\u\"", "\"\\u12\"", "\"\\u123g\"", "\"\\ud800\"", "\"\\ud800\\u\"",
      "\"\\ud800x\"", "\"\\ud800\\n\"", "\"\\ud800\\udbff\"", "\"\\ud800\\ue000\"",
      "\"\\ud800\\udc00\"", "\"\\uDBFF\\uDFFF\"", "\"\\udc00\"", "\"\\uD83D\\uDE00\"",
      "\"\\u0000\"", "\"\\u001f\"", "\"\\u0020\"", "\"\\u007F\"", "\"\\x\"", "\"\\'\"",
      "\"\\U0041\"", "\"\t\"", "\"\x7F\"", "\"\x01\"", "/* c */ 1", "1 // c", "[1]\x00",
      std::string("\x00", 1), std::string("[\"a\x00\"]", 6), "\xEF\xBB\xBF{}", "\xEF\xBB{}",
      "\v1", "\f1", std::string("[1]\x00x", 5), std::string("1 \x00 ]", 5),
      std::string("\"a\"\x00\"", 5), std::string(" \x00", 2), std::string("[\x00]", 3),
      std::string("{\"a\":\x00}", 7), std::string("tru\x00", 4), "[1\xC2\xA0]", "\xC3\xA9", "'a'", "{\"a\":1}{", "{\"a\":1,\"a\":2}",
      "{\"a\":1,\"\\u0061\":2}", "{\"a\":{\"b\":1,\"b\":1}}", "[\"\xE2\x82\xAC\"]",
      "[\"\xE2\x82\"]", "[\"\xE2\"]", "[\"\xF0\x9F\x98\"]", "[\"\xF0\x9F\x98\x80\"]",
      "[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\n\xC3\xA9 aaaaaaaaaaaaaaaa\\\"\"]",
      "{\"\xC3\xA9\\u00e9\":\"\\u00e9\xC3\xA9\"}", "[\"a\\/b\"]", "[\"\\\\\\\"\"]"};
  Options options;
  Tally tally;
  for (const std::string& json : cases) ASSERT_NO_FATAL_FAILURE(expect_agree(json, options, tally));
  EXPECT_GT(tally.accepted, 30u);
  EXPECT_GT(tally.rejected, 60u);
}

TEST(CanonFastParser, AgreesWithReferenceOnEveryShortUtf8Sequence) {
  // Every lead byte >= 0x80 with every second byte, then a few endings: the RFC 3629 ranges of
  // the second byte (E0, ED, F0, F4) and cut-short sequences are all covered.
  Options options;
  Tally tally;
  const char* const k_endings[] = {"", "\x80", "\x80\x80"};
  for (unsigned lead = 0x80; lead <= 0xFF; ++lead) {
    for (unsigned second = 0; second <= 0xFF; ++second) {
      for (const char* ending : k_endings) {
        std::string json = "[\"";
        json += static_cast<char>(lead);
        json += static_cast<char>(second);
        json += ending;
        json += "\"]";
        ASSERT_NO_FATAL_FAILURE(expect_agree(json, options, tally, false));
      }
    }
  }
  EXPECT_GT(tally.accepted, 1500u);
  EXPECT_GT(tally.rejected, 90000u);
}

TEST(CanonFastParser, AgreesWithReferenceOnEveryTwoByteInput) {
  // All 65,536 two-byte texts, alone and inside a string at every alignment of an 8-byte word.
  Options options;
  Tally tally;
  for (unsigned a = 0; a <= 0xFF; ++a) {
    for (unsigned b = 0; b <= 0xFF; ++b) {
      const std::string pair{static_cast<char>(a), static_cast<char>(b)};
      ASSERT_NO_FATAL_FAILURE(expect_agree(pair, options, tally, false));
      const std::string padding((a * 256 + b) % 9, 'x');
      ASSERT_NO_FATAL_FAILURE(expect_agree("[\"" + padding + pair + "\"]", options, tally, false));
    }
  }
  EXPECT_GT(tally.accepted, 9000u);
}

TEST(CanonFastParser, AgreesWithReferenceOnDeepNesting) {
  // At the default limit (128 levels) and at a raised one far past it.
  Options options;
  options.max_depth = 100000;
  Tally tally;
  for (const auto& [limit, depths] :
       {std::pair{Options{}, std::vector<std::size_t>{127, 128, 129}},
        std::pair{options, std::vector<std::size_t>{99999, 100000, 100001}}}) {
    for (const std::size_t depth : depths) {
      ASSERT_NO_FATAL_FAILURE(expect_agree(std::string(depth, '[') + std::string(depth, ']'), limit, tally));
      std::string objects;
      for (std::size_t i = 0; i < depth; ++i) objects += "{\"a\":";
      objects += "1";
      objects.append(depth, '}');
      ASSERT_NO_FATAL_FAILURE(expect_agree(objects, limit, tally));
    }
  }
  // Cut short, or closed with the wrong bracket, at depth.
  ASSERT_NO_FATAL_FAILURE(expect_agree(std::string(5000, '[') + std::string(4999, ']'), options, tally));
  ASSERT_NO_FATAL_FAILURE(
      expect_agree(std::string(5000, '[') + "}" + std::string(4999, ']'), options, tally));
  EXPECT_EQ(tally.accepted, 8u);
  EXPECT_EQ(tally.rejected, 6u);
}

}  // namespace
}  // namespace coldgate::canon
