#include <gtest/gtest.h>

#include <random>

#include "diff/diff.hpp"
#include "diff/patch_applier.hpp"

namespace coldgate::diff {
namespace {

const char* k_before = R"({
  "a": {
    "b": [
      1,
      2,
      3,
      {
        "c": 10
      }
    ]
  },
  "y": "old"
}
)";

const char* k_after = R"({
  "a": {
    "b": [
      1,
      2,
      3,
      {
        "c": 11
      }
    ]
  },
  "x": 5
}
)";

TEST(DiffRender, IdenticalDocumentsRenderNothing) {
  EXPECT_EQ(render(k_before, k_before), "");
}

TEST(DiffRender, SummaryThenHunks) {
  EXPECT_EQ(render(k_before, k_after),
            "3 paths differ: 1 changed, 1 added, 1 removed\n"
            "  /a/b/3/c: 10 → 11\n"
            "  /x: added 5\n"
            "  /y: removed \"old\"\n"
            "\n"
            "--- a\n"
            "+++ b\n"
            "@@ -5,9 +5,9 @@\n"
            "       2,\n"
            "       3,\n"
            "       {\n"
            "-        \"c\": 10\n"
            "+        \"c\": 11\n"
            "       }\n"
            "     ]\n"
            "   },\n"
            "-  \"y\": \"old\"\n"
            "+  \"x\": 5\n"
            " }\n");
}

TEST(DiffRender, SinglePathAndMorePathsThanListed) {
  EXPECT_EQ(render("1\n", "2\n"),
            "1 path differs: 1 changed, 0 added, 0 removed\n  (root): 1 → 2\n\n"
            "--- a\n+++ b\n@@ -1 +1 @@\n-1\n+2\n");
  Options o;
  o.max_paths = 2;
  o.max_lines = 3;
  o.full_diff_path = "out/x.json.diff";
  EXPECT_EQ(render(k_before, k_after, o),
            "3 paths differ: 1 changed, 1 added, 1 removed\n"
            "  /a/b/3/c: 10 → 11\n"
            "  /x: added 5\n"
            "  … and 1 more\n"
            "\n"
            "--- a\n+++ b\n@@ -5,9 +5,9 @@\n       2,\n       3,\n"
            "… diff cut at 3 lines (9 more); full diff: out/x.json.diff\n");
}

TEST(DiffRender, MoreCountsPathsInsideListedSubtreesCorrectly) {
  // The first entry covers a whole subtree of 3 leaves; the other 2 paths are unlisted.
  std::string a = "{\n  \"a\": 1,\n  \"z\": [\n    1,\n    2\n  ]\n}\n";
  std::string b =
      "{\n  \"a\": 1,\n  \"m\": {\n    \"p\": 1,\n    \"q\": 2,\n    \"r\": 3\n  },\n  \"z\": [\n"
      "    5,\n    6\n  ]\n}\n";
  Options o;
  o.max_paths = 1;
  std::string r = render(a, b, o);
  EXPECT_EQ(
      r.substr(0, r.find("\n\n") + 1),
      "5 paths differ: 2 changed, 3 added, 0 removed\n  /m: added {3 keys}\n  … and 2 more\n");
}

TEST(DiffRender, TextThatIsNotCanonicalGetsNoPathSummary) {
  Options o;
  o.label_a = "snapshots/x.json";
  std::string r = render("{\r\n  \"a\": 1\r\n}\r\n", "{\n  \"a\": 1\n}\n", o);
  EXPECT_EQ(r.substr(0, r.find('\n') + 1),
            "path summary unavailable: snapshots/x.json is not canonical JSON (line 1)\n");
  auto patched = testing::apply_unified("{\r\n  \"a\": 1\r\n}\r\n", r.substr(r.find("\n\n") + 2));
  // The rendered hunks are capped at 200 lines; this one is short, so it applies whole.
  ASSERT_TRUE(patched);
  EXPECT_EQ(*patched, "{\n  \"a\": 1\n}\n");
}

// A canonical document of `records` objects, one value in `changed_permille` ‰ altered by `salt`.
std::string document(std::size_t records, std::uint32_t seed, int changed_permille, int salt) {
  std::mt19937 rng(seed);
  std::mt19937 edit(seed ^ 0x9e3779b9u ^ static_cast<std::uint32_t>(salt));
  std::uniform_int_distribution<int> roll(0, 999);
  auto value = [&](std::uint32_t v) {
    int r = roll(edit);
    return std::to_string(r < changed_permille ? v + 1 + static_cast<std::uint32_t>(salt) : v);
  };
  std::string out = "{\n  \"items\": [\n";
  for (std::size_t i = 0; i < records; ++i) {
    out += "    {\n";
    out += "      \"active\": " + std::string(rng() % 2 ? "true" : "false") + ",\n";
    out += "      \"id\": " + std::to_string(i) + ",\n";
    out += "      \"name\": \"item-" + std::to_string(rng() % 100000) + "\",\n";
    out += "      \"score\": " + value(rng() % 1000) + ",\n";
    out += "      \"tags\": [\n        \"t" + std::to_string(rng() % 7) + "\",\n        \"u" +
           std::to_string(rng() % 5) + "\"\n      ],\n";
    out += "      \"weight\": " + value(rng() % 100) + "\n";
    out += "    }" + std::string(i + 1 < records ? "," : "") + "\n";
  }
  out += "  ]\n}\n";
  return out;
}

TEST(DiffRender, UnrelatedLargeDocumentsDiffCorrectly) {
  // ~200k lines each, generated from different seeds: almost every value differs.
  std::string a = document(17000, 1, 0, 0);
  std::string b = document(18000, 2, 0, 0);
  Options o;
  o.max_lines = 0;
  std::string d = unified(a, b, o);
  auto patched = testing::apply_unified(a, d);
  ASSERT_TRUE(patched);
  EXPECT_TRUE(*patched == b);
  PathSummary s = summarize(a, b);
  EXPECT_EQ(s.added, 1000u * 7);  // the 1,000 extra records have 7 leaves each
  EXPECT_GT(s.changed, 17000u);
}

TEST(DiffRender, SimilarLargeDocumentsGiveAProportionateDiff) {
  std::string a = document(17000, 3, 0, 0);
  std::string b = document(17000, 3, 10, 1);  // 1% of score/weight values changed
  PathSummary s = summarize(a, b);
  EXPECT_GT(s.changed, 200u);
  EXPECT_LT(s.changed, 500u);
  EXPECT_EQ(s.added + s.removed, 0u);
  Options o;
  o.max_lines = 0;
  o.context_lines = 0;
  std::string d = unified(a, b, o);
  auto patched = testing::apply_unified(a, d);
  ASSERT_TRUE(patched);
  EXPECT_TRUE(*patched == b);
  std::size_t minus = 0;
  for (std::size_t p = 0; (p = d.find("\n-", p)) != std::string::npos; ++p) ++minus;
  EXPECT_EQ(minus, s.changed);  // one removed line per changed value: the diff is minimal
}

// 120 items without `id`, sorted by their text; item 5 renamed moves to the end of the "item
// 5…" run, so every element between its old and new place differs (the 54 names after "item 5"
// and the last place, 3 members each, less one price that happens to be equal: 164 paths): the
// note says why, and names the member that would pair them.
// Without `unique`, names repeat after 60 items and no member identifies an element.
std::string items(const std::string& renamed, bool unique = true) {
  std::string doc = "{\"items\": [";
  for (int i = 0; i < 120; ++i) {
    doc += i ? "," : "";
    const int n = unique ? i : i % 60;
    doc += "{\"name\": \"" + (i == 5 ? renamed : "item " + std::to_string(n)) + "\", \"price\": " +
           std::to_string(i % 7) + (unique ? ", \"sku\": \"S" + std::to_string(1000 + i) + "\"" : "") +
           "}";
  }
  return canon::canonicalize(doc + "]}");
}

TEST(Render, AnArraySortedByTextGetsANoteWithAMemberForIdentity) {
  Options options;
  options.arrangement = canon::Options{};
  std::string out = render(items("item 5"), items("zz"), options);
  const std::string note =
      "/items: an array of objects without `$id` or `id`, sorted by their text, so a changed "
      "value can move elements: 164 paths differ. `identity: [$id, id, sku]` with member `sku` "
      "would pair them (present and unique in all 120 elements).\n\n--- a\n";
  EXPECT_NE(out.find("  … and 144 more\n" + note), std::string::npos) << out.substr(0, 2000);
  // No member qualifies: said so.
  out = render(items("item 5", false), items("zz", false), options);
  EXPECT_NE(out.find("/items: an array of objects without `$id` or `id`, sorted by their text, so "
                     "a changed value can move elements: 43 paths differ. No member is present "
                     "and unique in all 120 elements, so none would work as `identity:`.\n"),
            std::string::npos)
      << out.substr(0, 2000);
  // Without the rules, or where the array is paired by identity, no note.
  EXPECT_EQ(render(items("item 5"), items("zz"), Options{}).find("sorted by their text"),
            std::string::npos);
  canon::Options by_sku;
  by_sku.identity = {"sku"};
  options.arrangement = by_sku;
  std::string a = canon::canonicalize(items("item 5"), by_sku);
  std::string b = canon::canonicalize(items("zz"), by_sku);
  out = render(a, b, options);
  EXPECT_EQ(out.substr(0, out.find('\n')), "1 path differs: 1 changed, 0 added, 0 removed");
  EXPECT_EQ(out.find("sorted by their text"), std::string::npos);
}

TEST(Render, NotesNameIdentityMembersAsYamlAndStopAfterThree) {
  // Four arrays, each with one value changed that moves its element from first to last (5 paths
  // each); `a` is not unique, so the member is one that YAML must quote.
  std::string a = "{", b = "{";
  for (int k = 0; k < 4; ++k) {
    std::string name = "l" + std::to_string(k);
    const std::string rest = ", {\"a\": 2, \"my key\": \"q\"}, {\"a\": 2, \"my key\": \"r\"}]";
    a += (k ? "," : "") + ("\"" + name + "\": [{\"a\": 1, \"my key\": \"p\"}" + rest);
    b += (k ? "," : "") + ("\"" + name + "\": [{\"a\": 5, \"my key\": \"p\"}" + rest);
  }
  Options options;
  canon::Options code;
  code.identity = {"code"};
  options.arrangement = code;
  std::string out = render(canon::canonicalize(a + "}", code), canon::canonicalize(b + "}", code),
                           options);
  EXPECT_NE(out.find("/l0: an array of objects without `code`, sorted by their text, so a changed "
                     "value can move elements: 5 paths differ. `identity: [code, \"my key\"]` with "
                     "member `my key` would pair them (present and unique in all 3 elements).\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\n/l2: "), std::string::npos);
  EXPECT_EQ(out.find("\n/l3: "), std::string::npos);
  EXPECT_NE(out.find("… and 1 more array sorted by their text with paths that differ\n\n--- a\n"),
            std::string::npos)
      << out;
}

TEST(Render, AnIdentitySortedArrayThatGrewReadsAsAddedElements) {
  // A page of 20 articles (ids 15, 30, … 300) that grew to 300 (ids 1 … 300): by index, 234 of
  // the 20 + 280 elements read as changed; by id, 280 were added and nothing else differs.
  auto page = [](int step) {
    std::string json = "{\"articles\": [";
    for (int id = step; id <= 300; id += step) {
      json += (id == step ? "" : ",") + std::string("{\"id\": ") + std::to_string(id) +
              ", \"slug\": \"article-" + std::to_string(id) + "\", \"body\": \"text " +
              std::to_string(id * 7) + "\"}";
    }
    return canon::canonicalize(json + "]}");
  };
  Options options;
  options.arrangement = canon::Options{};
  std::string out = render(page(15), page(1), options);
  EXPECT_EQ(out.substr(0, out.find('\n')), "840 paths differ: 0 changed, 840 added, 0 removed");
  EXPECT_NE(out.find("\n/articles: 280 elements added (paired by `id`)\n\n--- a\n"),
            std::string::npos)
      << out.substr(0, 2000);
  EXPECT_NE(out.find("\n  /articles/0: added {3 keys}\n"), std::string::npos);
}

}  // namespace
}  // namespace coldgate::diff
