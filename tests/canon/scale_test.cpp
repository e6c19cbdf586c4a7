// Deep nesting and large inputs: nothing may recurse on depth or degrade quadratically.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "canon/canon.hpp"
#include "canon/document.hpp"
#include "util/error.hpp"

namespace coldgate::canon {
namespace {

// Depths far past the default limit (128 levels), as `coldgate canon --max-depth` and a stage's
// `snapshot.max_depth` may allow: the parsers and the writer must still neither recurse nor
// slow down.
Options deep() {
  Options options;
  options.max_depth = 100'000;
  return options;
}

std::string nested_arrays(std::size_t depth) {
  std::string s(depth, '[');
  s.append("1").append(depth, ']');
  return s;
}

// Walks a text line by line against the lines it must hold, without building a second copy of
// outputs that run to hundreds of megabytes; reports the first line that differs.
class Lines {
 public:
  explicit Lines(const std::string& text) : m_text(text) {}
  // The next line is `indent` spaces, then `rest`.
  void expect(std::size_t indent, std::string_view rest) {
    if (m_failed) return;
    ++m_line;
    const std::size_t end = m_text.find('\n', m_pos);
    const std::string_view line =
        std::string_view(m_text).substr(m_pos, end == std::string::npos ? end : end - m_pos);
    if (end == std::string::npos || line.size() != indent + rest.size() ||
        line.substr(0, indent).find_first_not_of(' ') != std::string_view::npos ||
        line.substr(indent) != rest) {
      ADD_FAILURE() << "line " << m_line << ": expected " << indent << " spaces and '" << rest
                    << "', got '" << line.substr(0, 200) << "'";
      m_failed = true;
      return;
    }
    m_pos = end + 1;
  }
  // Nothing follows the lines expected so far.
  void expect_end() const {
    if (!m_failed) {
      EXPECT_EQ(m_pos, m_text.size()) << "more text after line " << m_line;
    }
  }

 private:
  const std::string& m_text;
  std::size_t m_pos = 0;
  std::size_t m_line = 0;
  bool m_failed = false;
};

// nested_arrays(depth) as an element of an array at `indent`, followed by `after` (",", "").
void expect_nested_arrays(Lines& lines, std::size_t indent, std::size_t depth,
                          std::string_view after) {
  for (std::size_t d = 0; d < depth; ++d) lines.expect(indent + 2 * d, "[");
  lines.expect(indent + 2 * depth, "1");
  for (std::size_t d = depth; d-- > 1;) lines.expect(indent + 2 * d, "]");
  lines.expect(indent, std::string("]").append(after));
}

TEST(CanonScale, Depth10000Canonicalizes) {
  const std::size_t depth = 10'000;
  const std::string out = canonicalize(nested_arrays(depth), deep());
  // Line d (0-based) opens level d+1 with 2d spaces; the innermost "1" sits at 2*depth spaces.
  std::size_t expected_size = 0;
  for (std::size_t d = 0; d < depth; ++d) expected_size += 2 * (2 * d + 2);
  expected_size += 2 * depth + 2;
  ASSERT_EQ(out.size(), expected_size);
  EXPECT_EQ(out.substr(0, 10), "[\n  [\n    ");
  EXPECT_EQ(out.substr(out.size() - 6), "  ]\n]\n");
}

TEST(CanonScale, Depth10000ObjectsWithSortingAndComparison) {
  // Two deep, nearly equal siblings at every level force deep lazy comparisons.
  std::string in;
  const std::size_t depth = 10'000;
  for (std::size_t d = 0; d < depth; ++d) in += "{\"b\":1,\"a\":[";
  for (std::size_t d = 0; d < depth; ++d) in += "]}";
  {
    // Level d at 4d spaces, "a" sorted before "b"; the innermost "a" is empty.
    const std::string out = canonicalize(in, deep());
    Lines lines(out);
    for (std::size_t d = 0; d + 1 < depth; ++d) {
      lines.expect(4 * d, "{");
      lines.expect(4 * d + 2, "\"a\": [");
    }
    const std::size_t in_most = 4 * (depth - 1);
    lines.expect(in_most, "{");
    lines.expect(in_most + 2, "\"a\": [],");
    lines.expect(in_most + 2, "\"b\": 1");
    lines.expect(in_most, "}");
    for (std::size_t d = depth - 1; d-- > 0;) {
      lines.expect(4 * d + 2, "],");
      lines.expect(4 * d + 2, "\"b\": 1");
      lines.expect(4 * d, "}");
    }
    lines.expect_end();
  }
  std::string twins = "[";
  twins.append(nested_arrays(5000)).append(",").append(nested_arrays(5000)).append("]");
  const std::string out = canonicalize(twins, deep());
  Lines lines(out);
  lines.expect(0, "[");
  expect_nested_arrays(lines, 2, 5000, ",");
  expect_nested_arrays(lines, 2, 5000, "");
  lines.expect(0, "]");
  lines.expect_end();
}

TEST(CanonScale, Depth100000ParsesSortsAndIsRefusedForPrintingOnlyBySize) {
  const std::size_t depth = 100'000;
  const std::string in = nested_arrays(depth);
  const Options options = deep();
  Document document = parse_document(in, options, "deep");
  arrange_document(document, options, in, "deep");
  EXPECT_GT(canonical_size(document), std::size_t{20'000'000'000});
  EXPECT_FALSE(is_canonical(in, options));
  try {
    canonicalize(in, options, "deep");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "deep: canonical text would be 20000400002 bytes, more than 4294967296 (max_output_bytes); "
              "is the nesting unreasonably deep?");
  }
  // One level more than max_depth is refused while parsing.
  EXPECT_THROW(canonicalize(nested_arrays(depth + 1), options), DepthError);
  try {
    std::string deeper = "[";
    deeper.append(in).append("]");
    canonicalize(deeper, options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "input: byte 100000: nesting deeper than 100000 levels (limit max_depth)");
  }
}

TEST(CanonScale, MillionElementArray) {
  std::string in = "[";
  const int count = 1'000'000;
  for (int i = count - 1; i >= 0; --i) {
    in.append(std::to_string(i % 2 ? i : -i));
    if (i) in += ',';
  }
  in += ']';
  const std::string out = canonicalize(in);
  EXPECT_EQ(out.substr(0, 22), "[\n  -999998,\n  -999996");
  EXPECT_EQ(out.substr(out.size() - 11), "  999999\n]\n");
  EXPECT_TRUE(is_canonical(out));
}

TEST(CanonScale, ManyEqualObjectsSortFast) {
  std::string in = "[";
  for (int i = 0; i < 50'000; ++i) in.append(i ? "," : "").append(R"({"k":[1,2,3],"v":"same"})");
  in += "]";
  const std::string out = canonicalize(in);
  EXPECT_TRUE(is_canonical(out));
  // 50,000 equal objects of 8 lines each, "k" before "v".
  Lines lines(out);
  lines.expect(0, "[");
  for (int i = 0; i < 50'000; ++i) {
    lines.expect(2, "{");
    lines.expect(4, "\"k\": [");
    lines.expect(6, "1,");
    lines.expect(6, "2,");
    lines.expect(6, "3");
    lines.expect(4, "],");
    lines.expect(4, "\"v\": \"same\"");
    lines.expect(2, i + 1 < 50'000 ? "}," : "}");
  }
  lines.expect(0, "]");
  lines.expect_end();
}

}  // namespace
}  // namespace coldgate::canon
