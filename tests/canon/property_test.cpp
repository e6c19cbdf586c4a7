// Seeded random documents: canonical form is a fixed point and ignores member order, array order
// (outside `ordered`), whitespace, number spelling and optional string escapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "canon/canon.hpp"

namespace coldgate::canon {
namespace {

// A generated value; numbers are kept as sign, digits and exponent so they can be re-spelled.
struct Value {
  enum Kind { null, false_, true_, number, string, array, object } kind = null;
  bool negative = false;
  std::string digits;  // number: non-empty, no leading zero unless "0"
  int exponent = 0;    // number: value = digits * 10^exponent
  std::string text;    // string value (UTF-8)
  std::vector<std::pair<std::string, Value>> members;  // object (keys unique) or array (keys "")
};

const char* const k_pieces[] = {"a", "b", "Z", "id", " ", "\"", "\\", "\n", "\t", "\x01", "\x1f", "\x7f",
                                "\xC3\xA9", "\xE4\xB8\xAD", "\xE2\x80\xA8", "\xF0\x9F\x98\x80", "/", "~"};

class Generator {
 public:
  explicit Generator(unsigned seed) : m_rng(seed) {}

  Value value(int depth) {
    Value v;
    const int pick = depth < 2 ? 7 : static_cast<int>(m_rng() % (depth > 5 ? 6 : 9));
    if (pick <= 2) {
      v.kind = static_cast<Value::Kind>(pick);
    } else if (pick == 3 || pick == 6) {
      v.kind = Value::number;
      v.negative = m_rng() % 3 == 0;
      const int length = 1 + static_cast<int>(m_rng() % 25);
      for (int i = 0; i < length; ++i) v.digits.push_back(static_cast<char>('0' + m_rng() % 10));
      v.digits.erase(0, std::min(v.digits.find_first_not_of('0'), v.digits.size() - 1));
      v.exponent = static_cast<int>(m_rng() % 61) - 30;
      if (m_rng() % 20 == 0) v.exponent = static_cast<int>(m_rng() % 801) - 400;
    } else if (pick == 4 || pick == 5) {
      v.kind = Value::string;
      v.text = text();
    } else {
      v.kind = m_rng() % 2 ? Value::array : Value::object;
      const int count = static_cast<int>(m_rng() % (depth < 2 ? 10 : 6));
      for (int i = 0; i < count; ++i) {
        std::string key;
        if (v.kind == Value::object) {
          key = m_rng() % 3 == 0 ? std::string(m_rng() % 2 ? "id" : "$id") : text();
          bool unique = std::none_of(v.members.begin(), v.members.end(),
                                     [&](const auto& m) { return m.first == key; });
          if (!unique) continue;
        }
        v.members.emplace_back(key, value(depth + 1));
      }
    }
    return v;
  }

  std::string text() {
    std::string s;
    const int count = static_cast<int>(m_rng() % 5);
    for (int i = 0; i < count; ++i) s += k_pieces[m_rng() % std::size(k_pieces)];
    return s;
  }

  std::mt19937& rng() { return m_rng; }

 private:
  std::mt19937 m_rng;
};

// Serializes `v`; `style` 0 = compact, 1 = pretty, 2 = shuffled with odd spellings.
class Writer {
 public:
  Writer(int style, std::mt19937& rng) : m_style(style), m_rng(rng) {}

  void write(const Value& v, std::string& out, int depth = 0) {
    switch (v.kind) {
      case Value::null: out += "null"; return;
      case Value::false_: out += "false"; return;
      case Value::true_: out += "true"; return;
      case Value::number: number(v, out); return;
      case Value::string: string(v.text, out); return;
      default: break;
    }
    std::vector<const std::pair<std::string, Value>*> order;
    for (const auto& member : v.members) order.push_back(&member);
    if (m_style == 2) std::shuffle(order.begin(), order.end(), m_rng);
    out += v.kind == Value::array ? '[' : '{';
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i) out += ',';
      if (m_style == 1) out.append("\n").append(2 * depth + 2, ' ');
      if (m_style == 2 && m_rng() % 3 == 0) out += " \t\r\n";
      if (v.kind == Value::object) {
        string(order[i]->first, out);
        out += m_style == 0 ? ":" : ": ";
      }
      write(order[i]->second, out, depth + 1);
    }
    if (m_style == 1 && !order.empty()) out.append("\n").append(2 * depth, ' ');
    out += v.kind == Value::array ? ']' : '}';
  }

 private:
  void number(const Value& v, std::string& out) {
    if (v.negative) out += '-';
    const int variant = m_style == 0 ? 0 : static_cast<int>(m_rng() % 4);
    switch (variant) {
      case 0:  // digits e exponent
        out.append(v.digits).append("e").append(std::to_string(v.exponent));
        break;
      case 1:  // trailing zeros, exponent adjusted, capital E and explicit sign
        out.append(v.digits == "0" ? "0.0" : v.digits).append("00E");
        out.append(v.exponent - 2 >= 0 ? "+" : "").append(std::to_string(v.exponent - 2));
        break;
      case 2:  // a decimal point inside: d.ddd e (exponent + digits after the point)
        if (v.digits.size() > 1) {
          out.append(v.digits, 0, 1).append(".").append(v.digits, 1).append("e");
          out.append(std::to_string(v.exponent + static_cast<int>(v.digits.size()) - 1));
        } else {
          out.append(v.digits).append(".000e").append(std::to_string(v.exponent));
        }
        break;
      default:  // 0.digits e (exponent + length)
        out.append("0.").append(v.digits).append("e");
        out.append(std::to_string(v.exponent + static_cast<int>(v.digits.size())));
        break;
    }
  }

  void string(const std::string& s, std::string& out) {
    out += '"';
    for (std::size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      const bool escape_anyway = m_style == 2 && m_rng() % 4 == 0;
      char buffer[16];
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20 || (escape_anyway && c < 0x80)) {
        std::snprintf(buffer, sizeof buffer, m_rng() % 2 ? "\\u%04x" : "\\u%04X", c);
        out += buffer;
      } else if (escape_anyway && c == 0xF0) {  // the 4-byte emoji as a surrogate pair
        out += "\\ud83d\\ude00";
        i += 3;
      } else if (escape_anyway && c == 0xE4) {  // 中 = U+4E2D
        out += "\\u4e2d";
        i += 2;
      } else {
        out += static_cast<char>(c);
      }
    }
    out += '"';
  }

  int m_style;
  std::mt19937& m_rng;
};

TEST(CanonProperty, FixedPointAndInvariantUnderReserialization) {
  std::size_t total_bytes = 0;
  for (unsigned seed = 1; seed <= 500; ++seed) {
    Generator generator(seed);
    const Value doc = generator.value(0);
    std::string compact, pretty, shuffled;
    Writer(0, generator.rng()).write(doc, compact);
    Writer(1, generator.rng()).write(doc, pretty);
    Writer(2, generator.rng()).write(doc, shuffled);
    const std::string canon = canonicalize(compact);
    ASSERT_EQ(canonicalize(canon), canon) << "seed " << seed << ": " << compact;
    ASSERT_TRUE(is_canonical(canon)) << "seed " << seed;
    ASSERT_EQ(canonicalize(pretty), canon) << "seed " << seed << ": " << pretty;
    ASSERT_EQ(canonicalize(shuffled), canon) << "seed " << seed << ": " << shuffled;
    total_bytes += compact.size();
  }
  EXPECT_GT(total_bytes, 100'000u);  // the documents are not trivially small
}

TEST(CanonProperty, RedactionIsIdempotent) {
  Options options;
  options.redact = {"/**/id", "/*/a"};
  Options ids = options;
  ids.redact_ids = true;
  for (unsigned seed = 1; seed <= 500; ++seed) {
    Generator generator(seed);
    const Value doc = generator.value(0);
    std::string compact, shuffled;
    Writer(0, generator.rng()).write(doc, compact);
    Writer(2, generator.rng()).write(doc, shuffled);
    const std::string once = canonicalize(compact, options);
    ASSERT_EQ(canonicalize(once, options), once) << "seed " << seed;
    ASSERT_EQ(canonicalize(shuffled, options), once) << "seed " << seed;
    const std::string once_ids = canonicalize(compact, ids);
    ASSERT_EQ(canonicalize(once_ids, ids), once_ids) << "seed " << seed << ": " << compact;
    ASSERT_EQ(canonicalize(shuffled, ids), once_ids) << "seed " << seed << ": " << shuffled;
  }
}

TEST(CanonProperty, RedactIdsIgnoresOrderAndIsAFixedPoint) {
  // Dense redaction: many equal-looking elements that differ only in redacted values, nested
  // redacted containers, and numbers, under one counter name per member.
  const std::vector<std::vector<std::string>> pattern_sets = {
      {"/**/id", "/**/$id"}, {"/*/*"}, {"/**/a", "/*/*/*"}, {"/**"}, {"/*"}};
  std::size_t checked = 0;
  for (const auto& patterns : pattern_sets) {
    Options ids;
    ids.redact = patterns;
    ids.redact_ids = true;
    for (unsigned seed = 1; seed <= 300; ++seed) {
      Generator generator(seed);
      const Value doc = generator.value(0);
      std::string compact;
      Writer(0, generator.rng()).write(doc, compact);
      const std::string once = canonicalize(compact, ids);
      ASSERT_EQ(canonicalize(once, ids), once) << "seed " << seed << ": " << compact;
      ASSERT_TRUE(is_canonical(once, ids)) << "seed " << seed;
      for (int shuffle = 0; shuffle < 3; ++shuffle) {
        std::string shuffled;
        Writer(2, generator.rng()).write(doc, shuffled);
        ASSERT_EQ(canonicalize(shuffled, ids), once) << "seed " << seed << ": " << shuffled;
      }
      checked += once.size();
      if (patterns[0] == "/**/id") {
        // Existing placeholders next to new values: [canonical, raw] in either order.
        std::string raw;
        Writer(2, generator.rng()).write(doc, raw);
        const std::string mixed = canonicalize(std::string("[").append(once).append(",").append(compact).append("]"), ids);
        const std::string swapped = std::string("[").append(raw).append(",").append(once).append("]");
        ASSERT_EQ(canonicalize(swapped, ids), mixed) << "seed " << seed;
        ASSERT_EQ(canonicalize(mixed, ids), mixed) << "seed " << seed;
      }
    }
  }
  EXPECT_GT(checked, 100'000u);
}

}  // namespace
}  // namespace coldgate::canon
