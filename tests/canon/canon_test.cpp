#include "canon/canon.hpp"

#include "canon/document.hpp"

#include <gtest/gtest.h>

#include <string>

#include "util/error.hpp"

namespace coldgate::canon {
namespace {

Options with_ordered(std::vector<std::string> ordered) {
  Options options;
  options.ordered = std::move(ordered);
  return options;
}

Options with_redact(std::vector<std::string> redact, bool ids = false) {
  Options options;
  options.redact = std::move(redact);
  options.redact_ids = ids;
  return options;
}

// The error canonicalize throws for `json`, as "<where>: <what>".
std::string error_of(std::string_view json, const Options& options = {}) {
  try {
    canonicalize(json, options);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.message();
  }
  return "(no error)";
}

TEST(CanonFormat, PrettyPrintsWithTwoSpacesAndOneFinalNewline) {
  EXPECT_EQ(canonicalize(R"({"b":{"y":[true,null]},"a":"x"})"),
            "{\n  \"a\": \"x\",\n  \"b\": {\n    \"y\": [\n      null,\n      true\n    ]\n  }\n}\n");
  EXPECT_EQ(canonicalize("  \r\n 42 \n\n"), "42\n");
  EXPECT_EQ(canonicalize("\"s\""), "\"s\"\n");
  EXPECT_EQ(canonicalize("null"), "null\n");
}

TEST(CanonFormat, EmptyContainers) {
  EXPECT_EQ(canonicalize("{}"), "{}\n");
  EXPECT_EQ(canonicalize("[ ]"), "[]\n");
  EXPECT_EQ(canonicalize(R"({"a":{},"b":[],"c":[{}, []]})"),
            "{\n  \"a\": {},\n  \"b\": [],\n  \"c\": [\n    [],\n    {}\n  ]\n}\n");
}

TEST(CanonFormat, NumbersInDocuments) {
  EXPECT_EQ(canonicalize(R"([1.50, -0, 1E3, 1e400, 12345678901234567890.123])", with_ordered({""})),
            "[\n  1.5,\n  0,\n  1000,\n  1e400,\n  12345678901234567890.123\n]\n");
  EXPECT_EQ(canonicalize(R"({"a":-1e999,"b":0.1000000000000000055511151231257827,"c":-0.0})"),
            "{\n  \"a\": -1e999,\n  \"b\": 0.1000000000000000055511151231257827,\n  \"c\": 0\n}\n");
  EXPECT_EQ(canonicalize("1e400"), "1e400\n");
  EXPECT_EQ(canonicalize("-9223372036854775808"), "-9223372036854775808\n");
  EXPECT_EQ(canonicalize("18446744073709551615"), "18446744073709551615\n");
}

TEST(CanonFormat, EscapesOnlyQuoteBackslashAndControls) {
  const std::string in = "[\"q\\\" b\\\\ \\b\\t\\n\\f\\r \\u0000\\u0001\\u001f\\u001F \\u007f \\u2028 "
                         "\\u00e9 \xC3\xA9 \\ud83d\\ude00 \xF0\x9F\x98\x80 \\/\"]";
  EXPECT_EQ(canonicalize(in), "[\n  \"q\\\" b\\\\ \\b\\t\\n\\f\\r \\u0000\\u0001\\u001f\\u001f \x7f \xE2\x80\xA8 "
                              "\xC3\xA9 \xC3\xA9 \xF0\x9F\x98\x80 \xF0\x9F\x98\x80 /\"\n]\n");
  EXPECT_EQ(canonicalize("{\"k\\u000b\\\"\":1}"), "{\n  \"k\\u000b\\\"\": 1\n}\n");
}

TEST(CanonOrder, KeysByCodePoint) {
  // "Z" < "a" < "é" (U+00E9) < "中" (U+4E2D) < "😀" (U+1F600) < "" (U+FFFF)? no: U+FFFF < U+1F600.
  const std::string in = "{\"\xF0\x9F\x98\x80\":1,\"\xEF\xBF\xBF\":2,\"\xE4\xB8\xAD\":3,\"\xC3\xA9\":4,"
                         "\"a\":5,\"Z\":6,\"\":7,\"aa\":8}";
  EXPECT_EQ(canonicalize(in), "{\n  \"\": 7,\n  \"Z\": 6,\n  \"a\": 5,\n  \"aa\": 8,\n  \"\xC3\xA9\": 4,\n"
                              "  \"\xE4\xB8\xAD\": 3,\n  \"\xEF\xBF\xBF\": 2,\n  \"\xF0\x9F\x98\x80\": 1\n}\n");
}

TEST(CanonOrder, ScalarsByTypeThenValue) {
  EXPECT_EQ(canonicalize(R"([{}, [], "b", "a", 10, 2, 1e400, -5, 0.5, true, false, null, "10"])"),
            "[\n  null,\n  false,\n  true,\n  -5,\n  0.5,\n  2,\n  10,\n  1e400,\n  \"10\",\n"
            "  \"a\",\n  \"b\",\n  [],\n  {}\n]\n");
  // Strings by code point, not by UTF-16 unit: U+FFFF sorts before U+1F600.
  EXPECT_EQ(canonicalize("[\"\xF0\x9F\x98\x80\", \"\xEF\xBF\xBF\", \"z\"]"),
            "[\n  \"z\",\n  \"\xEF\xBF\xBF\",\n  \"\xF0\x9F\x98\x80\"\n]\n");
  // Equal numbers in different spellings become identical.
  EXPECT_EQ(canonicalize("[1.0, 1, 10e-1]"), "[\n  1,\n  1,\n  1\n]\n");
}

TEST(CanonOrder, ArraysByCompactCanonicalText) {
  // Compact texts: [1,2] < [10] (',' < '0') < [2] < [[]] ('[' after digits) < ["a"]? '"' < '1'.
  EXPECT_EQ(canonicalize(R"([[2], [10], [2,1], [[]], ["a"]])"),
            "[\n  [\n    \"a\"\n  ],\n  [\n    1,\n    2\n  ],\n  [\n    10\n  ],\n  [\n    2\n  ],\n"
            "  [\n    []\n  ]\n]\n");
}

TEST(CanonOrder, ObjectsByIdentityThenText) {
  EXPECT_EQ(canonicalize(R"([{"id":10},{"id":2},{"id":"b"},{"id":"a"},{"x":1},{"id":1e400}])"),
            "[\n  {\n    \"id\": 2\n  },\n  {\n    \"id\": 10\n  },\n  {\n    \"id\": 1e400\n  },\n"
            "  {\n    \"id\": \"a\"\n  },\n  {\n    \"id\": \"b\"\n  },\n  {\n    \"x\": 1\n  }\n]\n");
  // $id is preferred over id; ties on identity fall back to canonical text.
  EXPECT_EQ(canonicalize(R"([{"$id":2,"id":1,"n":"x"},{"$id":1,"id":2},{"id":1,"n":"b"},{"id":1,"n":"a"}])"),
            "[\n  {\n    \"$id\": 1,\n    \"id\": 2\n  },\n  {\n    \"id\": 1,\n    \"n\": \"a\"\n  },\n"
            "  {\n    \"id\": 1,\n    \"n\": \"b\"\n  },\n  {\n    \"$id\": 2,\n    \"id\": 1,\n    \"n\": \"x\"\n  }\n]\n");
  // Custom identity.
  Options options;
  options.identity = {"name"};
  EXPECT_EQ(canonicalize(R"([{"id":1,"name":"z"},{"id":2,"name":"a"}])", options),
            "[\n  {\n    \"id\": 2,\n    \"name\": \"a\"\n  },\n  {\n    \"id\": 1,\n    \"name\": \"z\"\n  }\n]\n");
}

TEST(CanonOrder, NestedArraysSortBottomUp) {
  // Inner arrays are sorted first, so [2,1] and [1,2] are equal and order by what follows.
  EXPECT_EQ(canonicalize(R"([{"a":[2,1],"b":2},{"b":1,"a":[1,2]}])"),
            "[\n  {\n    \"a\": [\n      1,\n      2\n    ],\n    \"b\": 1\n  },\n"
            "  {\n    \"a\": [\n      1,\n      2\n    ],\n    \"b\": 2\n  }\n]\n");
}

TEST(CanonPatterns, OrderedKeepsOrderOnlyWhereMatched) {
  const char* in = R"({"log":[3,1,2],"x":{"log":[3,1,2]},"items":[{"id":2,"t":[2,1]},{"id":1,"t":[2,1]}]})";
  EXPECT_EQ(canonicalize(in, with_ordered({"/log"})),
            "{\n  \"items\": [\n    {\n      \"id\": 1,\n      \"t\": [\n        1,\n        2\n      ]\n    },\n"
            "    {\n      \"id\": 2,\n      \"t\": [\n        1,\n        2\n      ]\n    }\n  ],\n"
            "  \"log\": [\n    3,\n    1,\n    2\n  ],\n  \"x\": {\n    \"log\": [\n      1,\n      2,\n      3\n    ]\n  }\n}\n");
  EXPECT_EQ(canonicalize(in, with_ordered({"/**/log", "/items/*/t"})),
            "{\n  \"items\": [\n    {\n      \"id\": 1,\n      \"t\": [\n        2,\n        1\n      ]\n    },\n"
            "    {\n      \"id\": 2,\n      \"t\": [\n        2,\n        1\n      ]\n    }\n  ],\n"
            "  \"log\": [\n    3,\n    1,\n    2\n  ],\n  \"x\": {\n    \"log\": [\n      3,\n      1,\n      2\n    ]\n  }\n}\n");
  // `/**` matches everything, the root included.
  EXPECT_EQ(canonicalize("[[2,1],1]", with_ordered({"/**"})), "[\n  [\n    2,\n    1\n  ],\n  1\n]\n");
  // `*` is exactly one segment.
  EXPECT_EQ(canonicalize("[[[4,3]],[2,1]]", with_ordered({"/*"})),
            "[\n  [\n    2,\n    1\n  ],\n  [\n    [\n      3,\n      4\n    ]\n  ]\n]\n");
}

TEST(CanonPatterns, EscapedSegments) {
  EXPECT_EQ(canonicalize(R"({"a/b":[2,1],"m~n":[2,1]})", with_ordered({"/a~1b", "/m~0n"})),
            "{\n  \"a/b\": [\n    2,\n    1\n  ],\n  \"m~n\": [\n    2,\n    1\n  ]\n}\n");
}

TEST(CanonPatterns, Validate) {
  EXPECT_NO_THROW(validate_pattern("/log"));
  EXPECT_NO_THROW(validate_pattern("/**/updated_at"));
  EXPECT_NO_THROW(validate_pattern("/a~0b/~1/*"));
  EXPECT_NO_THROW(validate_pattern("/"));  // the member named ""
  try {
    validate_pattern("log");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "pattern \"log\": a path pattern is a JSON Pointer and starts with '/' (e.g. /items/*/id)");
  }
  try {
    validate_pattern("/a~2");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "pattern \"/a~2\": '~' must be followed by 0 or 1 (RFC 6901: ~0 is '~', ~1 is '/')");
  }
  EXPECT_NO_THROW(validate_pattern(""));
  EXPECT_THROW(validate_pattern("/a~"), Error);
  EXPECT_THROW(canonicalize("{}", with_ordered({"x"})), Error);
}

TEST(CanonRedact, ReplacesValuesAtPaths) {
  const char* in = R"({"updated_at":"2024","a":{"updated_at":{"x":1},"k":[{"updated_at":5}]},"tags":["b","a"]})";
  EXPECT_EQ(canonicalize(in, with_redact({"/**/updated_at", "/tags/*"})),
            "{\n  \"a\": {\n    \"k\": [\n      {\n        \"updated_at\": \"[redacted]\"\n      }\n    ],\n"
            "    \"updated_at\": \"[redacted]\"\n  },\n  \"tags\": [\n    \"[redacted]\",\n    \"[redacted]\"\n  ],\n"
            "  \"updated_at\": \"[redacted]\"\n}\n");
  // Only the matched depth with a single `*`.
  EXPECT_EQ(canonicalize(R"({"a":{"b":1},"c":{"d":{"b":2}}})", with_redact({"/*/b"})),
            "{\n  \"a\": {\n    \"b\": \"[redacted]\"\n  },\n  \"c\": {\n    \"d\": {\n      \"b\": 2\n    }\n  }\n}\n");
  // Redaction happens before sorting: redacted values sort as "[redacted]".
  EXPECT_EQ(canonicalize(R"([{"t":"zzz","n":1},{"t":"aaa","n":2}])", with_redact({"/*/t"})),
            "[\n  {\n    \"n\": 1,\n    \"t\": \"[redacted]\"\n  },\n  {\n    \"n\": 2,\n    \"t\": \"[redacted]\"\n  }\n]\n");
}

TEST(CanonRedact, IdsNumberEqualValuesByFirstAppearanceInCanonicalOrder) {
  const char* in = R"({"b":{"uuid":"u-9"},"a":[{"uuid":"u-7","n":1},{"uuid":"u-9","n":2}],"c":{"uuid":"u-7"}})";
  const std::string expected =
      "{\n  \"a\": [\n    {\n      \"n\": 1,\n      \"uuid\": \"[uuid-1]\"\n    },\n"
      "    {\n      \"n\": 2,\n      \"uuid\": \"[uuid-2]\"\n    }\n  ],\n"
      "  \"b\": {\n    \"uuid\": \"[uuid-2]\"\n  },\n  \"c\": {\n    \"uuid\": \"[uuid-1]\"\n  }\n}\n";
  EXPECT_EQ(canonicalize(in, with_redact({"/**/uuid"}, true)), expected);
  // Different values with the same structure give the same snapshot.
  const char* other = R"({"b":{"uuid":"X"},"a":[{"uuid":"Y","n":1},{"uuid":"X","n":2}],"c":{"uuid":"Y"}})";
  EXPECT_EQ(canonicalize(other, with_redact({"/**/uuid"}, true)), expected);
  // Idempotent: placeholders already in the input keep their numbers.
  EXPECT_EQ(canonicalize(expected, with_redact({"/**/uuid"}, true)), expected);
  // Array elements are named after the member holding the array; the root after "redacted".
  // Elements that differ only in redacted values are ordered by those values (x < y), so the
  // numbering does not depend on input order.
  const std::string tags = "{\n  \"tags\": [\n    \"[tags-1]\",\n    \"[tags-1]\",\n    \"[tags-2]\"\n  ]\n}\n";
  EXPECT_EQ(canonicalize(R"({"tags":["x","y","x"]})", with_redact({"/tags/*"}, true)), tags);
  EXPECT_EQ(canonicalize(R"({"tags":["x","x","y"]})", with_redact({"/tags/*"}, true)), tags);
  EXPECT_EQ(canonicalize(R"({"tags":["y","x","x"]})", with_redact({"/tags/*"}, true)), tags);
  EXPECT_EQ(canonicalize(R"("secret")", with_redact({"/**"}, true)), "\"[redacted-1]\"\n");
}

TEST(CanonRedact, IdsStableWithMoreThanNineValues) {
  std::string in = "[";
  for (int i = 0; i < 12; ++i) in += std::string(i ? "," : "") + R"({"id":"v)" + std::to_string(i * 7 % 12) + "\"}";
  in += "]";
  const Options options = with_redact({"/*/id"}, true);
  const std::string once = canonicalize(in, options);
  EXPECT_EQ(canonicalize(once, options), once);
  EXPECT_TRUE(is_canonical(once, options));
  for (int n = 1; n <= 12; ++n) {
    EXPECT_NE(once.find(std::string("\"[id-").append(std::to_string(n)).append("]\"")), std::string::npos) << n;
  }
  // The final order compares the placeholders as strings: "[id-10]" sorts before "[id-2]".
  EXPECT_LT(once.find("\"[id-10]\""), once.find("\"[id-2]\""));
}

TEST(CanonFormat, NeedsEscapeIsExactForEveryByteAtEveryPosition) {
  // needs_escape scans eight bytes at a time; check each byte value at each offset of a
  // 17-byte string whose other bytes (ASCII and UTF-8 continuation bytes) need no escaping.
  for (int value = 0; value < 256; ++value) {
    for (std::size_t pos = 0; pos < 17; ++pos) {
      for (const char filler : {'a', ' ', '\x80', '\xA0', '\xFF', '!'}) {
        std::string s(17, filler);
        s[pos] = static_cast<char>(value);
        const bool expected = value < 0x20 || value == '"' || value == '\\';
        ASSERT_EQ(needs_escape(s), expected) << value << " at " << pos;
      }
    }
  }
}

TEST(CanonFormat, StreamedTextEqualsReturnedText) {
  // canonicalize_to prints through a 256 KiB buffer: a line larger than it (a string whose
  // escapes make it 900 KB), deep indentation and many small lines.
  std::string big = "{\"s\": \"";
  for (int i = 0; i < 100000; ++i) big += "\\u0001\\\"x";
  big += "\", \"deep\": " + std::string(1000, '[') + "1" + std::string(1000, ']') + ", \"many\": [";
  for (int i = 0; i < 50000; ++i) big += std::to_string(i * 7919 % 50000) + (i + 1 < 50000 ? "," : "");
  big += "]}";
  Options deep;  // "deep" is 1,001 levels down
  deep.max_depth = 2000;
  for (const std::string& json : {big, std::string("1"), std::string("[]"), std::string("{\"a\":\"\\n\"}")}) {
    std::string streamed;
    std::size_t pieces = 0;
    canonicalize_to(json, deep, "input", [&](std::string_view piece) {
      EXPECT_FALSE(piece.empty());
      streamed += piece;
      ++pieces;
    });
    EXPECT_EQ(streamed, canonicalize(json, deep));
    if (json.size() > 1000) {
      EXPECT_GT(pieces, 10u);
    }
  }
  // Errors come before any piece.
  bool called = false;
  EXPECT_THROW(canonicalize_to("[1,", {}, "input", [&](std::string_view) { called = true; }), Error);
  EXPECT_FALSE(called);
}

TEST(CanonRedact, IdsKeepExistingPlaceholdersAndGiveNewValuesTheSmallestFreeNumbers) {
  const Options options = with_redact({"/tags/*"}, true);
  // "[tags-2]" keeps its number; the new values a < b take 1 and 3.
  const std::string expected = "{\n  \"tags\": [\n    \"[tags-1]\",\n    \"[tags-2]\",\n    \"[tags-3]\"\n  ]\n}\n";
  EXPECT_EQ(canonicalize(R"({"tags":["b","[tags-2]","a"]})", options), expected);
  EXPECT_EQ(canonicalize(R"({"tags":["a","b","[tags-2]"]})", options), expected);
  EXPECT_EQ(canonicalize(expected, options), expected);
  // Numbers order numerically as original values: 10 < 9.5e1 < 100.
  EXPECT_EQ(canonicalize(R"({"tags":[100, 10, 9.5e1, 10]})", options),
            "{\n  \"tags\": [\n    \"[tags-1]\",\n    \"[tags-1]\",\n    \"[tags-2]\",\n    \"[tags-3]\"\n  ]\n}\n");
}

TEST(CanonRedact, IdsFollowStructureBeforeValues) {
  // Objects that differ elsewhere are ordered by that first; numbering follows their order.
  const Options options = with_redact({"/*/id"}, true);
  const std::string expected =
      "[\n  {\n    \"id\": \"[id-1]\",\n    \"n\": \"alice\"\n  },\n"
      "  {\n    \"id\": \"[id-2]\",\n    \"n\": \"bob\"\n  }\n]\n";
  EXPECT_EQ(canonicalize(R"([{"id":"zz","n":"alice"},{"id":"aa","n":"bob"}])", options), expected);
  EXPECT_EQ(canonicalize(R"([{"id":"aa","n":"bob"},{"id":"zz","n":"alice"}])", options), expected);
  EXPECT_EQ(canonicalize(R"([{"n":"bob","id":"zz"},{"n":"alice","id":"aa"}])", options), expected);
}

TEST(CanonIsCanonical, TrueOnlyForExactCanonicalText) {
  EXPECT_TRUE(is_canonical("{\n  \"a\": 1\n}\n"));
  EXPECT_FALSE(is_canonical("{\"a\":1}"));
  EXPECT_FALSE(is_canonical("{\n  \"a\": 1\n}"));
  EXPECT_FALSE(is_canonical("{\n  \"a\": 1\n}\n\n"));
  EXPECT_FALSE(is_canonical("{\r\n  \"a\": 1\r\n}\r\n"));
  EXPECT_FALSE(is_canonical("\xEF\xBB\xBF{}\n"));
  EXPECT_FALSE(is_canonical("[\n  2,\n  1\n]\n"));
  EXPECT_TRUE(is_canonical("[\n  2,\n  1\n]\n", with_ordered({""})));
  EXPECT_FALSE(is_canonical("{"));
  EXPECT_FALSE(is_canonical("{\"a\":1,\"a\":1}"));
  EXPECT_FALSE(is_canonical(""));
}

TEST(CanonErrors, ExactMessagesAndOffsets) {
  EXPECT_EQ(error_of("[\"ab\xC3(\"]"), "input: byte 4: invalid UTF-8 in string");
  EXPECT_EQ(error_of("[\"ab\xFF\"]"), "input: byte 4: invalid UTF-8 in string");
  EXPECT_EQ(error_of("[\"\xE2\x82\"]"), "input: byte 2: invalid UTF-8 in string");
  EXPECT_EQ(error_of("[\"\xC0\x80\"]"), "input: byte 2: invalid UTF-8 in string");
  EXPECT_EQ(error_of(R"(["ok", "a\ud800"])"), "input: byte 9: lone surrogate \\ud800");
  EXPECT_EQ(error_of(R"(["a\ud800\u0041"])"), "input: byte 3: lone surrogate \\ud800");
  EXPECT_EQ(error_of(R"(["a\uDC00"])"), "input: byte 3: lone surrogate \\uDC00");
  EXPECT_EQ(error_of(R"({"id":1,"x":{"id":2},"id":3})"),
            "input: byte 21: duplicate key \"id\"; each member name may appear once per object");
  EXPECT_EQ(error_of(R"([{"a\"b":1,"a\"b":2}])"),
            "input: byte 11: duplicate key \"a\\\"b\"; each member name may appear once per object");
  EXPECT_EQ(error_of(R"({"a": [1, 2,, 3]})"), "input: byte 12: unexpected ','; expected '[', '{', or a literal");
  EXPECT_EQ(error_of("[1 22]"), "input: byte 3: unexpected number literal; expected ']'");
  EXPECT_EQ(error_of(R"({"a" "b"})"), "input: byte 5: unexpected string literal; expected ':'");
  EXPECT_EQ(error_of("[nul]"),
            "input: byte 1: invalid literal; expected a value (null, true, false, number, string, array or object)");
  EXPECT_EQ(error_of("[1] x"), "input: byte 4: unexpected data after the JSON value");
  EXPECT_EQ(error_of("{} {}"), "input: byte 3: unexpected data after the JSON value");
  EXPECT_EQ(error_of("12 3"), "input: byte 3: unexpected data after the JSON value");
  EXPECT_EQ(error_of("[1]]"), "input: byte 3: unexpected data after the JSON value");
  EXPECT_EQ(error_of("[1, 2"), "input: byte 5: unexpected end of input; the JSON text is truncated");
  EXPECT_EQ(error_of("{\"a\": \"xy"), "input: byte 9: unexpected end of input; the JSON text is truncated");
  EXPECT_EQ(error_of(""), "input: byte 0: empty input; expected a JSON value");
  EXPECT_EQ(error_of("  \n"), "input: byte 3: empty input; expected a JSON value");
  EXPECT_EQ(error_of("\xEF\xBB\xBF{}"),
            "input: byte 0: UTF-8 byte order mark at the start; remove the BOM (canonical JSON has none)");
  EXPECT_EQ(error_of("[\"a\nb\"]"), "input: byte 3: unescaped control character U+000A in string; escape it");
  Options shallow;
  shallow.max_depth = 3;
  EXPECT_EQ(error_of("[[[1]]]", shallow), "(no error)");
  EXPECT_EQ(error_of("[[{\"a\":[1]}]]", shallow), "input: byte 7: nesting deeper than 3 levels (limit max_depth)");
  Options small;
  small.max_input_bytes = 4;
  EXPECT_EQ(error_of("[1,2]", small), "input: byte 4: input is 5 bytes, more than the limit of 4 (max_input_bytes)");
  try {
    canonicalize("[1,", {}, "snap.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "snap.json: byte 3");
  }
}

// fuzz_canon (heap-buffer-overflow, tests/fuzz/corpus/canon/error-words-in-a-cut-escape.json):
// nlohmann's message quotes the input it read last, and an input cut short in a \u escape
// that held the words "control character" got that error, at the byte past its end, read.
// Each input here must get the message of the same input without the words.
TEST(CanonErrors, TheWordsOfAnErrorInTheInputDoNotChooseTheMessage) {
  for (const std::string words : {"control character", "ill-formed UTF-8", "surrogate U+",
                                  "expected end of input", "unexpected end of input",
                                  "missing closing quote", "invalid literal"}) {
    for (const std::string tail : {"\\u0", "\\u00zz\"]", "\\q\"]", "\\u12"}) {
      const std::string plain = "[\"" + tail;
      const std::string worded = "[\"" + words + " " + tail;
      // The same message, its byte offset ("input: byte N: …") moved past the words.
      std::string expected = error_of(plain);
      const std::size_t colon = expected.find(':', 12);
      const std::size_t at = std::stoul(expected.substr(12, colon - 12));
      expected = "input: byte " + std::to_string(at + words.size() + 1) + expected.substr(colon);
      EXPECT_EQ(error_of(worded), expected) << worded;
    }
  }
  EXPECT_EQ(error_of("[\"control character \\u0"),
            "input: byte 23: invalid string: '\\u' must be followed by 4 hex digits");
}

TEST(CanonErrors, DuplicateKeyNextToHugeNumbers) {
  EXPECT_EQ(error_of(R"({"n":1e400,"n":2})"),
            "input: byte 11: duplicate key \"n\"; each member name may appear once per object");
  EXPECT_EQ(error_of(R"([1e400, 1e400 x])"),
            "input: byte 14: invalid literal; expected a value (null, true, false, number, string, array or object)");
  EXPECT_EQ(error_of("1e400 x"), "input: byte 6: unexpected data after the JSON value");
}

}  // namespace
}  // namespace coldgate::canon

namespace coldgate::canon {
namespace {

// nlohmann reads a NUL byte as the end of input; JSON text can hold none, so it is an error
// wherever it stands, with its offset.
TEST(CanonErrors, NulByteAnywhereIsRefusedWithItsOffset) {
  for (auto [text, offset] : std::vector<std::pair<std::string, int>>{
           {std::string("[1]\0junk", 8), 3}, {std::string("[1,\0 2]", 7), 3},
           {std::string("\"a\0b\"", 5), 2}, {std::string("\0", 1), 0}}) {
    try {
      canonicalize(text, {}, "doc.json");
      ADD_FAILURE() << "accepted a NUL at " << offset;
    } catch (const Error& e) {
      EXPECT_EQ(e.message(), "doc.json: byte " + std::to_string(offset) +
                                 ": NUL byte; JSON text cannot contain one (escape it as \\u0000 "
                                 "inside a string)");
    }
  }
}

// `{"a":` nested `depth` levels around 1: 6 bytes a level, as the campaign of issue 50 printed
// it at 30,000 levels (180,001 bytes).
std::string nested_objects(std::size_t depth) {
  std::string out;
  for (std::size_t i = 0; i < depth; ++i) out += "{\"a\":";
  out += "1";
  out.append(depth, '}');
  return out;
}

// The DepthError canonicalize throws for `json` from "doc.json", as "<where>: <what>".
std::string depth_error_of(const std::string& json, const Options& options = {}) {
  try {
    canonicalize(json, options, "doc.json");
  } catch (const DepthError& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.message();
  }
  return "(no depth error)";
}

TEST(CanonDepth, TheDefaultLimitIs128LevelsRefusedAtTheByteThatOpensThe129th) {
  EXPECT_EQ(Options{}.max_depth, 128u);
  // At the limit: accepted, and its canonical text is 2D² + 9D + 2 bytes (each level's line
  // and its closing line indented 2 bytes a level): 33,922 from 769.
  const std::string at_limit = nested_objects(128);
  const std::string out = canonicalize(at_limit);
  EXPECT_EQ(out.size(), 2u * 128 * 128 + 9 * 128 + 2);
  EXPECT_TRUE(is_canonical(out));
  EXPECT_EQ(out.substr(out.size() - 6), "  }\n}\n");
  EXPECT_EQ(canonicalize(std::string(128, '[') + std::string(128, ']')).size(),
            2u * 128 * 128 + 1);
  // One level more: refused at the byte that opens it (the 129th `{` at 128 × 5, the 129th `[`
  // at 128, under an array the 128th `{` at 1 + 127 × 5), whatever follows: the campaign's
  // 30,000 levels stop there too.
  EXPECT_EQ(depth_error_of(nested_objects(129)),
            "doc.json: byte 640: nesting deeper than 128 levels (limit max_depth)");
  EXPECT_EQ(depth_error_of(nested_objects(30'000)),
            "doc.json: byte 640: nesting deeper than 128 levels (limit max_depth)");
  EXPECT_EQ(depth_error_of(std::string(129, '[') + std::string(129, ']')),
            "doc.json: byte 128: nesting deeper than 128 levels (limit max_depth)");
  EXPECT_EQ(depth_error_of("[" + nested_objects(128) + "]"),
            "doc.json: byte 636: nesting deeper than 128 levels (limit max_depth)");
  // Canonical text one level too deep is not canonical under the default, as the committed
  // snapshot of a stage is read.
  Options raised;
  raised.max_depth = 129;
  const std::string too_deep = canonicalize(nested_objects(129), raised);
  EXPECT_TRUE(is_canonical(too_deep, raised));
  EXPECT_FALSE(is_canonical(too_deep));
  EXPECT_THROW(text_sorted_arrays(nested_objects(129), {}), DepthError);
}

TEST(CanonDepth, ARaisedLimitHoldsAtItsBoundary) {
  Options raised;
  raised.max_depth = 1000;
  EXPECT_EQ(canonicalize(nested_objects(1000), raised).size(), 2u * 1000 * 1000 + 9 * 1000 + 2);
  EXPECT_EQ(depth_error_of(nested_objects(1001), raised),
            "doc.json: byte 5000: nesting deeper than 1000 levels (limit max_depth)");
  raised.max_depth = 1;
  EXPECT_EQ(canonicalize("[1,2]", raised), "[\n  1,\n  2\n]\n");
  EXPECT_EQ(depth_error_of("[1,{\"a\":2}]", raised),
            "doc.json: byte 3: nesting deeper than 1 levels (limit max_depth)");
}

TEST(CanonTextSorted, FindsArraysOfObjectsWithoutIdentityAndAMemberThatWouldPairThem) {
  const std::string doc = R"({
    "by_id": [{"id": 2, "n": 1}, {"id": 1, "n": 2}],
    "log": [{"at": 2}, {"at": 1}],
    "shops": [{"id": 1, "items": [{"sku": "b", "price": 1, "note": "x"},
                                 {"sku": "a", "price": 1, "note": "yy"}]}],
    "a/b": [{"k": 1}, {"k": 1}],
    "mixed": [3, {"name": "x", "v": 1}, {"name": "y", "v": 1}],
    "one": [{"x": 1}],
    "kinds": [{"c": 1, "d": "p"}, {"c": "1", "d": "q"}]
  })";
  auto arrays = text_sorted_arrays(doc, with_ordered({"/log"}));
  ASSERT_EQ(arrays.size(), 4u);
  // Document order of the arranged document: keys sorted, arrays as sorted.
  EXPECT_EQ(arrays[0].pointer, "/a~1b");
  EXPECT_EQ(arrays[0].elements, 2u);
  EXPECT_EQ(arrays[0].member, "");  // `k` is present in both but not unique
  EXPECT_EQ(arrays[1].pointer, "/kinds");
  EXPECT_EQ(arrays[1].member, "d");  // `c` is unique only across kinds: `d` is of one kind
  EXPECT_EQ(arrays[2].pointer, "/mixed");
  EXPECT_EQ(arrays[2].elements, 3u);
  EXPECT_EQ(arrays[2].objects, 2u);
  EXPECT_EQ(arrays[2].member, "name");
  EXPECT_EQ(arrays[3].pointer, "/shops/0/items");
  EXPECT_EQ(arrays[3].member, "sku");  // `note` is unique too, but longer
  // With `identity: [sku]` the items are paired by sku; `/by_id` never was text-sorted.
  Options sku;
  sku.identity = {"$id", "id", "sku"};
  sku.ordered = {"/log"};
  auto paired = text_sorted_arrays(doc, sku);
  ASSERT_EQ(paired.size(), 3u);
  EXPECT_EQ(paired[2].pointer, "/mixed");
  // The root itself.
  auto root = text_sorted_arrays(R"([{"a": 1}, {"a": 2}])", {});
  ASSERT_EQ(root.size(), 1u);
  EXPECT_EQ(root[0].pointer, "");
  EXPECT_EQ(root[0].member, "a");
  EXPECT_TRUE(text_sorted_arrays(R"([{"a": 1}, {"a": 2}])", with_ordered({""})).empty());
}

TEST(CanonNumbers, IsJsonNumberFollowsRfc8259) {
  for (const char* yes : {"0", "-0", "347", "1.50", "12345678901234567890.123", "1e+100", "1E-7"})
    EXPECT_TRUE(is_json_number(yes)) << yes;
  for (const char* no : {"", "NaN", "Infinity", "-Infinity", "+1", "01", "1.", ".5", " 1", "1e"})
    EXPECT_FALSE(is_json_number(no)) << no;
}

}  // namespace
}  // namespace coldgate::canon
