#include "util/suggest.hpp"

#include <gtest/gtest.h>

namespace coldgate::util {
namespace {

TEST(EditDistance, CountsInsertDeleteSubstituteAndTransposition) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("canno", "canon"), 1u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  EXPECT_EQ(edit_distance("pth", "path"), 1u);
}

TEST(Closest, SuggestsLikelyTyposOnly) {
  std::vector<std::string> subcommands{"run", "compare", "accept", "canon", "diff"};
  EXPECT_EQ(closest("canno", subcommands), "canon");
  EXPECT_EQ(closest("acept", subcommands), "accept");
  EXPECT_EQ(closest("comp", subcommands), "compare");
  EXPECT_EQ(closest("frobnicate", subcommands), std::nullopt);
  EXPECT_EQ(closest("x", {}), std::nullopt);
}

TEST(Closest, ConfigKeyTyposIgnoringCase) {
  const std::vector<std::string> keys = {"path",     "from",   "ordered",
                                         "identity", "redact", "redact_ids"};
  EXPECT_EQ(closest("pth", keys), "path");
  EXPECT_EQ(closest("Path", keys), "path");
  EXPECT_EQ(closest("redcat", keys), "redact");
  EXPECT_EQ(closest("redact-ids", keys), "redact_ids");
  EXPECT_EQ(closest("identities", keys), "identity");
  EXPECT_EQ(closest("xyz", keys), std::nullopt);
  EXPECT_EQ(closest("sort", keys), std::nullopt);
  EXPECT_EQ(edit_distance("tiemout", "timeout"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(DidYouMean, FormatsTheHint) {
  EXPECT_EQ(did_you_mean("dif", {"diff", "db"}), " (did you mean 'diff'?)");
  EXPECT_EQ(did_you_mean("zzzzzz", {"diff", "db"}), "");
}

}  // namespace
}  // namespace coldgate::util
