// Deep nesting and large inputs: nothing may recurse on depth or degrade quadratically.
#include <gtest/gtest.h>

#include <string>

#include "canon/canon.hpp"
#include "canon/document.hpp"
#include "util/error.hpp"

namespace coldgate::canon {
namespace {

std::string nested_arrays(std::size_t depth) {
  std::string s(depth, '[');
  s.append("1").append(depth, ']');
  return s;
}

TEST(CanonScale, Depth10000Canonicalizes) {
  const std::size_t depth = 10'000;
  const std::string out = canonicalize(nested_arrays(depth));
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
  EXPECT_NO_THROW(canonicalize(in));
  std::string twins = "[";
  twins.append(nested_arrays(5000)).append(",").append(nested_arrays(5000)).append("]");
  EXPECT_NO_THROW(canonicalize(twins));
}

TEST(CanonScale, Depth100000ParsesSortsAndIsRefusedForPrintingOnlyBySize) {
  const std::size_t depth = 100'000;
  const std::string in = nested_arrays(depth);
  const Options options;
  Document document = parse_document(in, options, "deep");
  arrange_document(document, options, in, "deep");
  EXPECT_GT(canonical_size(document), std::size_t{20'000'000'000});
  EXPECT_FALSE(is_canonical(in));
  try {
    canonicalize(in, options, "deep");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "deep: canonical text would be 20000400002 bytes, more than 4294967296 (max_output_bytes); "
              "is the nesting unreasonably deep?");
  }
  // One level more than max_depth is refused while parsing.
  EXPECT_THROW(canonicalize(nested_arrays(depth + 1)), Error);
  try {
    std::string deeper = "[";
    deeper.append(in).append("]");
    canonicalize(deeper);
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
}

}  // namespace
}  // namespace coldgate::canon
