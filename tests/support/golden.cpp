#include "support/golden.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include "support/support.hpp"
#include "util/fs.hpp"

namespace coldgate::testing {

namespace {

// The file as the failure names it: relative to the source tree when inside it.
std::string shown(const std::filesystem::path& file) {
  const std::filesystem::path rel = file.lexically_relative(source_dir());
  return rel.empty() || *rel.begin() == ".." ? file.string() : rel.string();
}

}  // namespace

bool updating_goldens() {
  const char* update = std::getenv("COLDGATE_UPDATE_GOLDEN");
  const std::string_view value = update ? update : "";
  if (value.empty() || value == "0") return false;
  if (value != "1") {
    ADD_FAILURE() << "COLDGATE_UPDATE_GOLDEN=" << value
                  << " is not understood: unset it or set 0 to compare the golden files, 1 to "
                     "rewrite them";
    return false;
  }
  // The same reading of CI as coldgate's own (cli::ci_mode).
  const char* ci = std::getenv("CI");
  if (ci && (std::string_view(ci) == "true" || std::string_view(ci) == "1")) {
    ADD_FAILURE() << "COLDGATE_UPDATE_GOLDEN=1 is refused under CI=" << ci
                  << ": goldens are rewritten on a developer's machine and reviewed";
    return false;
  }
  return true;
}

void expect_golden(const std::filesystem::path& file, const std::string& actual) {
  if (updating_goldens()) {
    util::write_file_atomic(file, actual);
    return;
  }
  EXPECT_EQ(actual, slurp(file)) << shown(file)
                                 << " differs (COLDGATE_UPDATE_GOLDEN=1 rewrites it)";
}

}  // namespace coldgate::testing
