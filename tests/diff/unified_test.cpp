#include <gtest/gtest.h>

#include <random>

#include "diff/diff.hpp"
#include "diff/patch_applier.hpp"

namespace coldgate::diff {
namespace {

using testing::apply_unified;

std::string numbered(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i) out += std::to_string(i) + "\n";
  return out;
}

std::string replace_line(std::string text, const std::string& line, const std::string& by) {
  auto at = text.find("\n" + line + "\n");
  if (at == std::string::npos && text.rfind(line + "\n", 0) == 0)
    return by + "\n" + text.substr(line.size() + 1);
  return text.replace(at + 1, line.size(), by);
}

TEST(DiffUnified, IdenticalTextsGiveNothing) {
  EXPECT_EQ(unified("a\nb\n", "a\nb\n"), "");
  EXPECT_EQ(unified("", ""), "");
}

TEST(DiffUnified, OneChangeWithThreeLinesOfContext) {
  std::string a = numbered(1, 10);
  std::string b = replace_line(a, "5", "five");
  EXPECT_EQ(unified(a, b),
            "--- a\n"
            "+++ b\n"
            "@@ -2,7 +2,7 @@\n"
            " 2\n"
            " 3\n"
            " 4\n"
            "-5\n"
            "+five\n"
            " 6\n"
            " 7\n"
            " 8\n");
}

TEST(DiffUnified, DistantChangesMakeTwoHunksNearOnesOne) {
  std::string a = numbered(1, 20);
  std::string b = replace_line(replace_line(a, "2", "two"), "15", "fifteen");
  Options o;
  o.label_a = "snapshots/x.json";
  o.label_b = "snapshots/x.json.new";
  EXPECT_EQ(unified(a, b, o),
            "--- snapshots/x.json\n"
            "+++ snapshots/x.json.new\n"
            "@@ -1,5 +1,5 @@\n"
            " 1\n"
            "-2\n"
            "+two\n"
            " 3\n"
            " 4\n"
            " 5\n"
            "@@ -12,7 +12,7 @@\n"
            " 12\n"
            " 13\n"
            " 14\n"
            "-15\n"
            "+fifteen\n"
            " 16\n"
            " 17\n"
            " 18\n");
  // Six equal lines between two changes (= 2 × context) still join into one hunk.
  std::string c = replace_line(replace_line(a, "5", "five"), "12", "twelve");
  EXPECT_EQ(unified(a, c),
            "--- a\n+++ b\n@@ -2,14 +2,14 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n 11\n"
            "-12\n+twelve\n 13\n 14\n 15\n");
}

TEST(DiffUnified, InsertionsAndDeletionsWithoutContext) {
  Options o;
  o.context_lines = 0;
  EXPECT_EQ(unified("b\nc\n", "a\nb\nc\n", o), "--- a\n+++ b\n@@ -0,0 +1 @@\n+a\n");
  EXPECT_EQ(unified("a\nb\nc\n", "a\nb\n", o), "--- a\n+++ b\n@@ -3 +2,0 @@\n-c\n");
  EXPECT_EQ(unified("a\nb\nc\n", "a\nx\ny\nc\n", o), "--- a\n+++ b\n@@ -2 +2,2 @@\n-b\n+x\n+y\n");
  EXPECT_EQ(unified("", "a\n", o), "--- a\n+++ b\n@@ -0,0 +1 @@\n+a\n");
}

TEST(DiffUnified, MissingFinalNewlineIsMarked) {
  EXPECT_EQ(unified("x\n", "x"),
            "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+x\n\\ No newline at end of file\n");
  auto patched = apply_unified("x\n", unified("x\n", "x"));
  ASSERT_TRUE(patched);
  EXPECT_EQ(*patched, "x");
}

TEST(DiffUnified, CapCutsHunkLinesAndNamesTheFullDiff) {
  std::string a = numbered(1, 100);
  std::string b = numbered(1001, 1100);
  Options o;
  o.max_lines = 4;
  o.full_diff_path = "coldgate-out/snapshots/x.json.diff";
  EXPECT_EQ(unified(a, b, o),
            "--- a\n+++ b\n@@ -1,100 +1,100 @@\n-1\n-2\n-3\n"
            "… diff cut at 4 lines (197 more); full diff: coldgate-out/snapshots/x.json.diff\n");
  o.full_diff_path.clear();
  o.max_lines = 2;
  std::string big_a = numbered(1, 3000);
  std::string big_b = numbered(5001, 8000);
  EXPECT_EQ(unified(big_a, big_b, o),
            "--- a\n+++ b\n@@ -1,3000 +1,3000 @@\n-1\n… diff cut at 2 lines (5,999 more)\n");
}

TEST(DiffUnified, ColourOnlyWhenAsked) {
  Options o;
  o.color = true;
  EXPECT_EQ(unified("a\n", "b\n", o),
            "--- a\n+++ b\n\x1b[36m@@ -1 +1 @@\x1b[0m\n\x1b[31m-a\x1b[0m\n\x1b[32m+b\x1b[0m\n");
  o.color = false;
  EXPECT_EQ(unified("a\n", "b\n", o).find('\x1b'), std::string::npos);
}

// Random line texts over a small alphabet, so that equal lines abound.
std::string random_text(std::mt19937& rng, std::size_t lines, int alphabet) {
  std::uniform_int_distribution<int> pick(0, alphabet - 1);
  std::string out;
  for (std::size_t i = 0; i < lines; ++i) out += "  \"k" + std::to_string(pick(rng)) + "\": 1,\n";
  if (lines > 0 && pick(rng) == 0) out.pop_back();  // sometimes no final newline
  return out;
}

// b derived from a by random line edits.
std::string mutate(std::mt19937& rng, const std::string& a, int percent) {
  std::uniform_int_distribution<int> roll(0, 99);
  std::string out;
  std::size_t pos = 0;
  while (pos < a.size()) {
    std::size_t end = a.find('\n', pos);
    end = end == std::string::npos ? a.size() : end + 1;
    std::string line = a.substr(pos, end - pos);
    pos = end;
    int r = roll(rng);
    if (r < percent / 3) continue;  // delete
    if (r < 2 * percent / 3)
      line = "  \"new" + std::to_string(roll(rng)) + "\": 2,\n";  // replace
    else if (r < percent)
      out += "  \"ins\": 3,\n";  // insert before
    out += line;
  }
  return out;
}

TEST(DiffUnified, PatchingAWithTheDiffGivesBForRandomInputs) {
  std::mt19937 rng(20240601);
  for (int round = 0; round < 60; ++round) {
    std::size_t n = round < 40 ? rng() % 60 : 1000 + rng() % 4000;  // small ones and windowed ones
    int alphabet = round % 3 == 0 ? 3 : round % 3 == 1 ? 50 : 100000;
    std::string a = random_text(rng, n, alphabet);
    std::string b = round % 2 == 0 ? mutate(rng, a, 1 + round % 40)
                                   : random_text(rng, n / 2 + rng() % (n + 1), alphabet);
    Options o;
    o.max_lines = 0;
    o.context_lines = round % 4;
    std::string d = unified(a, b, o);
    auto patched = apply_unified(a, d);
    ASSERT_TRUE(patched) << "round " << round << ": the diff does not apply";
    ASSERT_EQ(*patched, b) << "round " << round;
    EXPECT_EQ(d.empty(), a == b);
  }
}

TEST(DiffUnified, SmallEditsToALargeTextGiveASmallDiff) {
  std::mt19937 rng(7);
  std::string a = random_text(rng, 20000, 1000000);
  std::string b = mutate(rng, a, 3);
  Options o;
  o.max_lines = 0;
  o.context_lines = 0;
  std::string d = unified(a, b, o);
  auto patched = apply_unified(a, d);
  ASSERT_TRUE(patched);
  ASSERT_EQ(*patched, b);
  std::size_t changed_lines = 0;
  for (std::size_t p = 0; (p = d.find("\n-", p)) != std::string::npos; ++p) ++changed_lines;
  for (std::size_t p = 0; (p = d.find("\n+", p)) != std::string::npos; ++p) ++changed_lines;
  // 3% of 20,000 lines edited, a third each deleted, replaced (2 lines) and inserted before:
  // a minimal diff has ~800 lines.
  EXPECT_LT(changed_lines, 1000u);
}

}  // namespace
}  // namespace coldgate::diff
