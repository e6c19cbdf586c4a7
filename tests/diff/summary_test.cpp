#include <gtest/gtest.h>

#include "diff/diff.hpp"

namespace coldgate::diff {
namespace {

std::string entry(const PathChange& c) {
  switch (c.kind) {
    case PathChange::Kind::changed:
      return c.path + ": " + c.before + " -> " + c.after;
    case PathChange::Kind::added:
      return c.path + ": added " + c.after;
    case PathChange::Kind::removed:
      return c.path + ": removed " + c.before;
  }
  return {};
}

std::vector<std::string> entries(const PathSummary& s) {
  std::vector<std::string> out;
  for (const auto& c : s.first) out.push_back(entry(c));
  return out;
}

TEST(DiffSummary, ChangedAddedRemovedScalars) {
  PathSummary s = summarize(R"({
  "a": 1,
  "b": "old",
  "c": true
}
)",
                            R"({
  "a": 2,
  "c": true,
  "d": null
}
)");
  EXPECT_EQ(s.changed, 1u);
  EXPECT_EQ(s.added, 1u);
  EXPECT_EQ(s.removed, 1u);
  EXPECT_EQ(entries(s),
            (std::vector<std::string>{"/a: 1 -> 2", R"(/b: removed "old")", "/d: added null"}));
  EXPECT_TRUE(s.first[0].before == "1" && s.first[0].after == "2");
  EXPECT_TRUE(s.first[1].after.empty());
  EXPECT_TRUE(s.first[2].before.empty());
}

TEST(DiffSummary, IdenticalDocumentsHaveNoDifferences) {
  std::string doc = "{\n  \"a\": [\n    1,\n    {}\n  ]\n}\n";
  PathSummary s = summarize(doc, doc);
  EXPECT_EQ(s.changed + s.added + s.removed, 0u);
  EXPECT_TRUE(s.first.empty());
}

TEST(DiffSummary, NestedSubtreesCountLeavesAndListTheRootOnce) {
  PathSummary s = summarize(R"({
  "x": {
    "p": 1,
    "q": [
      1,
      2
    ]
  },
  "y": 1
}
)",
                            R"({
  "y": 1,
  "z": {
    "k": {
      "m": []
    }
  }
}
)");
  EXPECT_EQ(s.removed, 3u);  // /x/p, /x/q/0, /x/q/1
  EXPECT_EQ(s.added, 1u);    // /z/k/m (an empty container is a leaf)
  EXPECT_EQ(s.changed, 0u);
  EXPECT_EQ(entries(s), (std::vector<std::string>{"/x: removed {2 keys}", "/z: added {1 key}"}));
}

TEST(DiffSummary, ArraysGrowAndShrink) {
  std::string two = "{\n  \"l\": [\n    1,\n    2\n  ]\n}\n";
  std::string three = "{\n  \"l\": [\n    1,\n    2,\n    3\n  ]\n}\n";
  std::string empty = "{\n  \"l\": []\n}\n";
  PathSummary grow = summarize(two, three);
  EXPECT_EQ(grow.added, 1u);
  EXPECT_EQ(entries(grow), (std::vector<std::string>{"/l/2: added 3"}));
  PathSummary shrink = summarize(three, two);
  EXPECT_EQ(shrink.removed, 1u);
  EXPECT_EQ(entries(shrink), (std::vector<std::string>{"/l/2: removed 3"}));
  PathSummary from_empty = summarize(empty, three);
  EXPECT_EQ(from_empty.added, 3u);
  EXPECT_EQ(from_empty.changed, 0u);
  EXPECT_EQ(entries(from_empty), (std::vector<std::string>{"/l: added [3 items]"}));
  PathSummary to_empty = summarize(two, empty);
  EXPECT_EQ(to_empty.removed, 2u);
  EXPECT_EQ(entries(to_empty), (std::vector<std::string>{"/l: removed [2 items]"}));
}

TEST(DiffSummary, ArrayIndicesOrderNumerically) {
  // Eleven elements: index 10 must come after 9, not after 1.
  std::string a = "[\n";
  std::string b = "[\n";
  for (int i = 0; i <= 10; ++i) {
    a += "  " + std::to_string(i) + (i < 10 ? ",\n" : "\n");
    b += "  " + std::to_string(i == 10 ? 99 : i) + (i < 10 ? ",\n" : "\n");
  }
  a += "]\n";
  b += "]\n";
  PathSummary s = summarize(a, b);
  EXPECT_EQ(s.changed, 1u);
  EXPECT_EQ(entries(s), (std::vector<std::string>{"/10: 10 -> 99"}));
}

TEST(DiffSummary, KeysAreEscapedPerRfc6901) {
  PathSummary s = summarize(R"({
  "a/b": 1,
  "m~n": {
    "q\"r": 1
  }
}
)",
                            R"({
  "a/b": 2,
  "m~n": {
    "q\"r": 2
  }
}
)");
  EXPECT_EQ(entries(s), (std::vector<std::string>{"/a~1b: 1 -> 2", "/m~0n/q\"r: 1 -> 2"}));
}

TEST(DiffSummary, NestedArrayOfObjectsPaths) {
  PathSummary s = summarize(R"({
  "a": {
    "b": [
      {
        "c": 10
      },
      {
        "c": 10
      }
    ]
  }
}
)",
                            R"({
  "a": {
    "b": [
      {
        "c": 10
      },
      {
        "c": 11
      }
    ]
  }
}
)");
  EXPECT_EQ(entries(s), (std::vector<std::string>{"/a/b/1/c: 10 -> 11"}));
}

TEST(DiffSummary, TypeChangeIsOneChangedValue) {
  PathSummary s = summarize(
      "{\n  \"a\": 1,\n  \"b\": [\n    1\n  ]\n}\n",
      "{\n  \"a\": {\n    \"x\": 1,\n    \"y\": 2\n  },\n  \"b\": {\n    \"0\": 1\n  }\n}\n");
  EXPECT_EQ(s.changed, 2u);
  EXPECT_EQ(s.added + s.removed, 0u);
  EXPECT_EQ(entries(s), (std::vector<std::string>{"/a: 1 -> {2 keys}", "/b: [1 item] -> {1 key}"}));
}

TEST(DiffSummary, RootScalarHasTheEmptyPointer) {
  PathSummary s = summarize("5\n", "6\n");
  ASSERT_EQ(s.first.size(), 1u);
  EXPECT_EQ(s.first[0].path, "");
  EXPECT_EQ(s.first[0].before, "5");
}

TEST(DiffSummary, LongValuesAreShortenedTo80CodePoints) {
  std::string longer(100, 'x');
  std::string umlauts;
  for (int i = 0; i < 100; ++i) umlauts += "ü";
  PathSummary s = summarize("{\n  \"a\": \"" + longer + "\",\n  \"b\": \"" + umlauts + "\"\n}\n",
                            "{\n  \"a\": 1,\n  \"b\": 2\n}\n");
  ASSERT_EQ(s.first.size(), 2u);
  EXPECT_EQ(s.first[0].before, "\"" + std::string(78, 'x') + "…");
  std::string cut = "\"";
  for (int i = 0; i < 78; ++i) cut += "ü";
  EXPECT_EQ(s.first[1].before, cut + "…");
}

TEST(DiffSummary, KeepsOnlyTheFirstMaxPaths) {
  std::string a = "[\n", b = "[\n";
  for (int i = 0; i < 50; ++i) {
    a += "  " + std::to_string(i) + (i < 49 ? ",\n" : "\n");
    b += "  " + std::to_string(i + 1000) + (i < 49 ? ",\n" : "\n");
  }
  a += "]\n";
  b += "]\n";
  PathSummary s = summarize(a, b, 5);
  EXPECT_EQ(s.changed, 50u);
  ASSERT_EQ(s.first.size(), 5u);
  EXPECT_EQ(entry(s.first[4]), "/4: 4 -> 1004");
}

}  // namespace
}  // namespace coldgate::diff
