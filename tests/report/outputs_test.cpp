// The --out folder's lock (report::lock_outputs): what a second coldgate is told.
#include "report/outputs.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>
#include <string>

#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::report {
namespace {

using coldgate::testing::TempDir;

std::string refusal(const std::filesystem::path& out) {
  try {
    lock_outputs(out, "ab");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    return e.message();
  }
  return "(not refused)";
}

TEST(OutputsLock, ASecondCommandIsToldWhoHoldsTheFolderAndWhatToDo) {
  TempDir dir;
  const auto out = dir / "coldgate-out";
  {
    util::FileLock held = lock_outputs(out, "run");
    const std::regex expected(
        std::regex_replace(out.string(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
        R"(: in use by another coldgate \(coldgate run, pid )" + std::to_string(::getpid()) +
        R"(, started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\); wait for it to end or pass --out DIR)");
    std::string message = refusal(out);
    EXPECT_TRUE(std::regex_match(message, expected)) << message;
  }
  // Released: the next one takes it, and what it writes replaces the first holder's line.
  util::FileLock next = lock_outputs(out, "compare");
  EXPECT_NE(util::read_file(out / ".lock").find("coldgate compare, pid "), std::string::npos);
}

TEST(OutputsLock, AHolderThatHasNotSaidWhoItIsYetIsStillRefused) {
  TempDir dir;
  auto held = util::FileLock::try_lock(dir / "out/.lock");  // taken, nothing written yet
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(refusal(dir / "out"), (dir / "out").string() +
                                      ": in use by another coldgate (it is starting); wait for it "
                                      "to end or pass --out DIR");
}

}  // namespace
}  // namespace coldgate::report
