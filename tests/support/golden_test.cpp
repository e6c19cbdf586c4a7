// The one rule of every golden test (support/golden.hpp): COLDGATE_UPDATE_GOLDEN unset or 0
// compares, 1 rewrites (never under CI), anything else fails.
#include "support/golden.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "support/support.hpp"

namespace coldgate::testing {
namespace {

// The messages of the failures `f` reports, caught so that they do not fail this test, without
// the "Failed\n" that ADD_FAILURE puts first and the "\n" GoogleTest 1.16 (Debian 13) puts last.
std::vector<std::string> failures_of(const std::function<void()>& f) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    f();
  }
  std::vector<std::string> out;
  for (int i = 0; i < results.size(); ++i) {
    std::string message = results.GetTestPartResult(i).message();
    if (message.rfind("Failed\n", 0) == 0) message.erase(0, 7);
    if (!message.empty() && message.back() == '\n') message.pop_back();
    out.push_back(std::move(message));
  }
  return out;
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

struct GoldenRule : ::testing::Test {
  GoldenRule() { file = dir.write("golden.txt", "kept\n"); }
  // The last line of the failure a difference from the golden file gives.
  std::string differs() const {
    return file.string() + " differs (COLDGATE_UPDATE_GOLDEN=1 rewrites it)";
  }

  TempDir dir;
  std::filesystem::path file;
  // Whatever the environment this suite runs in, each test sets both variables itself.
  ScopedEnv ci{"CI", nullptr};
  ScopedEnv update{"COLDGATE_UPDATE_GOLDEN", nullptr};
};

TEST_F(GoldenRule, UnsetEmptyAndZeroCompare) {
  for (const char* value : {static_cast<const char*>(nullptr), "", "0"}) {
    // (No SCOPED_TRACE: its text would join the messages caught.)
    const std::string shown = value ? value : "(unset)";
    ScopedEnv set("COLDGATE_UPDATE_GOLDEN", value);
    EXPECT_FALSE(updating_goldens()) << shown;
    EXPECT_EQ(failures_of([&] { expect_golden(file, "kept\n"); }), std::vector<std::string>{})
        << shown;
    const auto failures = failures_of([&] { expect_golden(file, "made\n"); });
    ASSERT_EQ(failures.size(), 1u) << shown;
    EXPECT_TRUE(ends_with(failures[0], differs())) << shown << ": " << failures[0];
    EXPECT_EQ(slurp(file), "kept\n") << shown;
  }
}

TEST_F(GoldenRule, OneRewrites) {
  ScopedEnv one("COLDGATE_UPDATE_GOLDEN", "1");
  ScopedEnv not_ci("CI", "false");
  EXPECT_TRUE(updating_goldens());
  expect_golden(file, "made\n");
  EXPECT_EQ(slurp(file), "made\n");
}

TEST_F(GoldenRule, OneIsRefusedUnderCi) {
  ScopedEnv one("COLDGATE_UPDATE_GOLDEN", "1");
  for (const char* value : {"true", "1"}) {
    ScopedEnv ci_on("CI", value);
    const std::string refused = std::string("COLDGATE_UPDATE_GOLDEN=1 is refused under CI=") +
                                value +
                                ": goldens are rewritten on a developer's machine and reviewed";
    bool updating = true;
    EXPECT_EQ(failures_of([&] { updating = updating_goldens(); }),
              std::vector<std::string>{refused});
    EXPECT_FALSE(updating);
    // Refused, it compares: the file stays, and a difference fails as well.
    const auto failures = failures_of([&] { expect_golden(file, "made\n"); });
    ASSERT_EQ(failures.size(), 2u);
    EXPECT_EQ(failures[0], refused);
    EXPECT_TRUE(ends_with(failures[1], differs())) << failures[1];
    EXPECT_EQ(slurp(file), "kept\n");
  }
}

TEST_F(GoldenRule, AnyOtherValueFailsNamingTheAcceptedOnes) {
  for (const char* value : {"yes", "true", "2", " 1"}) {
    ScopedEnv other("COLDGATE_UPDATE_GOLDEN", value);
    bool updating = true;
    EXPECT_EQ(failures_of([&] { updating = updating_goldens(); }),
              std::vector<std::string>{std::string("COLDGATE_UPDATE_GOLDEN=") + value +
                                       " is not understood: unset it or set 0 to compare the "
                                       "golden files, 1 to rewrite them"});
    EXPECT_FALSE(updating);
    EXPECT_EQ(failures_of([&] { expect_golden(file, "made\n"); }).size(), 2u);
    EXPECT_EQ(slurp(file), "kept\n");
  }
}

}  // namespace
}  // namespace coldgate::testing
