#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "canon/canon.hpp"
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

// A page's items as the canonical text of {"items": [...]}: `ids` in any order, each item's
// other members derived from its id, `title` changed for the ids in `retitled`.
std::string page(const std::vector<int>& ids, const canon::Options& options,
                 const std::vector<int>& retitled = {}) {
  std::string json = "{\"items\": [";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const int id = ids[i];
    const bool changed = std::find(retitled.begin(), retitled.end(), id) != retitled.end();
    json += (i ? "," : "") + std::string("{\"id\": ") + std::to_string(id) + ", \"title\": \"item " +
            std::to_string(id) + (changed ? " (edited)" : "") + "\", \"author\": {\"name\": \"u" +
            std::to_string(id % 7) + "\"}, \"tags\": [\"a\", \"b\"]}";
  }
  return canon::canonicalize(json + "]}", options);
}

std::vector<int> range(int from, int to, int step = 1) {
  std::vector<int> out;
  for (int i = from; i <= to; i += step) out.push_back(i);
  return out;
}

TEST(DiffSummary, ElementsOfAnIdentitySortedArrayPairByTheirIdentity) {
  // A page that grew from 20 to 300 items: the 20 are among the 300 (every 15th id), so by
  // index nearly every element differs from the one at its place; by id, 280 were added.
  const canon::Options options;
  const std::string before = page(range(15, 300, 15), options);
  const std::string after = page(range(1, 300), options);
  PathSummary s = summarize(before, after, 5, &options);
  EXPECT_EQ(s.changed, 0u);
  EXPECT_EQ(s.removed, 0u);
  EXPECT_EQ(s.added, 280u * 5);  // id, title, author/name, tags/0, tags/1
  ASSERT_EQ(s.paired.size(), 1u);
  EXPECT_EQ(s.paired[0].pointer, "/items");
  EXPECT_EQ(s.paired[0].member, "id");
  EXPECT_EQ(s.paired[0].added, 280u);
  EXPECT_EQ(s.paired[0].changed + s.paired[0].removed, 0u);
  // Each listed path is where the element is in the new document, the whole element once.
  ASSERT_EQ(s.first.size(), 5u);
  EXPECT_EQ(entry(s.first[0]), "/items/0: added {4 keys}");
  EXPECT_EQ(entry(s.first[4]), "/items/4: added {4 keys}");
  EXPECT_EQ(paired_text(s.paired[0]), "/items: 280 elements added (paired by `id`)");
  // Without the rules, by index: what the report said before.
  PathSummary by_index = summarize(before, after, 5);
  EXPECT_GT(by_index.changed, 0u);
  EXPECT_TRUE(by_index.paired.empty());
}

TEST(DiffSummary, PairedElementsChangedRemovedAndAdded) {
  const canon::Options options;
  // 3 removed (ids 1–3), 2 added (101, 102), two edited (10, 50), the rest identical.
  std::vector<int> before = range(1, 60);
  std::vector<int> after = range(4, 60);
  after.push_back(101);
  after.insert(after.begin(), 102);  // canon sorts them; the input order does not matter
  PathSummary s = summarize(page(before, options), page(after, options, {10, 50}), 20, &options);
  EXPECT_EQ(s.changed, 2u);
  EXPECT_EQ(s.removed, 3u * 5);
  EXPECT_EQ(s.added, 2u * 5);
  ASSERT_EQ(s.paired.size(), 1u);
  EXPECT_EQ(s.paired[0].added, 2u);
  EXPECT_EQ(s.paired[0].removed, 3u);
  EXPECT_EQ(s.paired[0].changed, 2u);
  ASSERT_GE(s.first.size(), 5u);
  EXPECT_EQ(entry(s.first[0]), "/items/0: removed {4 keys}");
  // id 10 is the 7th element of the new page (ids 4…): its title changed, nothing else.
  EXPECT_EQ(entry(s.first[3]), R"x(/items/6/title: "item 10" -> "item 10 (edited)")x");
  EXPECT_EQ(paired_text(s.paired[0]),
            "/items: 2 elements added, 2 changed, 3 removed (paired by `id`)");
}

TEST(DiffSummary, PairingFollowsNestedArraysStringIdsAndDuplicates) {
  canon::Options options;
  options.identity = {"slug"};
  // Articles by slug (one with a quote in it, two with the same slug), each with comments by
  // slug; a new article "b" moves the others; the comment added to "d" is one added element.
  auto doc = [&](bool head) {
    std::string json = "{\"articles\": [";
    json += R"({"slug": "a\"q", "comments": [{"slug": "c1", "body": "x"}]},)";
    if (head) json += R"({"slug": "b", "comments": []},)";
    json += R"({"slug": "d", "comments": [{"slug": "c1", "body": "y"})";
    json += head ? R"(, {"slug": "c0", "body": "new"}]},)" : "]},";
    json += R"({"slug": "e", "n": 1}, {"slug": "e", "n": 2}]})";
    return canon::canonicalize(json, options);
  };
  PathSummary s = summarize(doc(false), doc(true), 20, &options);
  EXPECT_EQ(s.changed, 0u);
  EXPECT_EQ(s.removed, 0u);
  EXPECT_EQ(s.added, 2u + 2u);  // b: slug and [] comments; d's new comment: body and slug
  ASSERT_EQ(s.paired.size(), 2u);
  EXPECT_EQ(paired_text(s.paired[0]), "/articles: 1 element added, 1 changed (paired by `slug`)");
  EXPECT_EQ(paired_text(s.paired[1]),
            "/articles/2/comments: 1 element added (paired by `slug`)");
}

TEST(DiffSummary, OrderedArraysAndDocumentsWithoutIdentityStayPairedByIndex) {
  canon::Options options;
  options.ordered = {"/items"};
  const std::string before = page({3, 1, 2}, options);
  const std::string after = page({0, 3, 1, 2}, options);
  PathSummary s = summarize(before, after, 20, &options);
  EXPECT_TRUE(s.paired.empty());
  EXPECT_GT(s.changed, 0u);  // every element moved one place
  canon::Options no_identity;
  no_identity.identity = {};
  PathSummary t = summarize(page({1, 2}, no_identity), page({0, 1, 2}, no_identity), 20,
                            &no_identity);
  EXPECT_TRUE(t.paired.empty());
}

TEST(DiffSummary, PairedCountsMatchTheIdsOfRandomPages) {
  // Random pages of ids 0–59 (numbers, or strings that sort otherwise than numbers), some
  // elements edited: the element counts are the set differences of the ids.
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    const bool strings = round % 2 == 1;
    std::set<int> a, b, edited;
    for (int id = 0; id < 60; ++id) {
      if (random() % 3 != 0) a.insert(id);
      if (random() % 3 != 0) b.insert(id);
      if (a.count(id) && b.count(id) && random() % 5 == 0) edited.insert(id);
    }
    auto doc = [&](const std::set<int>& ids, bool head) {
      std::string json = "{\"items\": [";
      bool first = true;
      for (int id : ids) {
        const std::string key = strings ? fmt::format("\"{}\"", id) : std::to_string(id);
        json += (first ? "" : ",") + fmt::format("{{\"id\": {}, \"v\": {}, \"tags\": [1, 2]}}", key,
                                                 head && edited.count(id) ? 1 : 0);
        first = false;
      }
      return canon::canonicalize(json + "]}");
    };
    const canon::Options options;
    PathSummary s = summarize(doc(a, false), doc(b, true), 0, &options);
    std::size_t added = 0, removed = 0;
    for (int id : b) added += a.count(id) == 0;
    for (int id : a) removed += b.count(id) == 0;
    EXPECT_EQ(s.changed, edited.size()) << round;
    EXPECT_EQ(s.added, added * 4) << round;
    EXPECT_EQ(s.removed, removed * 4) << round;
    if (added + removed == 0) {
      EXPECT_TRUE(s.paired.empty()) << round;
      continue;
    }
    ASSERT_EQ(s.paired.size(), 1u) << round;
    EXPECT_EQ(s.paired[0].added, added) << round;
    EXPECT_EQ(s.paired[0].removed, removed) << round;
    EXPECT_EQ(s.paired[0].changed, edited.size()) << round;
  }
}

}  // namespace
}  // namespace coldgate::diff
