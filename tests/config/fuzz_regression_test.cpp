// Inputs fuzz/fuzz_config.cpp found, kept as regression tests: each must give a located config
// error quickly (under ctest's timeout), never a hang or a crash.
#include <gtest/gtest.h>

#include <string>

#include "config/config.hpp"
#include "util/error.hpp"

namespace coldgate::config {
namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml, "c.yaml");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.message();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(ConfigFuzzRegressions, NulInACommentIsRefusedAtItsPlace) {
  // timeout-537ef678… of fuzz_config, cut down: the NUL is refused first (YAML 1.2 §5.1); the
  // hang itself was the ", b" line, below.
  EXPECT_EQ(error_of(std::string("# x\0\n, b\n", 9)),
            "c.yaml:1:4: invalid YAML: control character U+0000 is not allowed (YAML 1.2 §5.1); "
            "remove it");
}

TEST(ConfigFuzzRegressions, ACommaAtDocumentLevelIsAnErrorNotAnEndlessRunOfDocuments) {
  // yaml-cpp 0.7's LoadAll never returns on these (timeout-ce1ca036… of fuzz_config: the
  // example config with a comment line cut so that ", ${VAR} …" starts a line).
  const std::string what =
      "invalid YAML: cannot parse past this point (a ',' outside [...] or {...}?)";
  EXPECT_EQ(error_of(", x\n"), "c.yaml:1:1: " + what);
  EXPECT_EQ(error_of("# comment\n, x\n"), "c.yaml:2:1: " + what);
  EXPECT_EQ(error_of("[a]\n, x\n"), "c.yaml:2:1: " + what);
  EXPECT_EQ(error_of("version: 1\n---\n, x\n"), "c.yaml:3:1: " + what);
  EXPECT_EQ(error_of("&a , x\n"), "c.yaml:1:4: " + what);
  // Two real documents are still the loader's own error.
  EXPECT_NE(error_of("version: 1\n---\nversion: 1\n").find("more than one YAML document"),
            std::string::npos);
}

TEST(ConfigFuzzRegressions, ControlCharactersAreLocatedByCharacter) {
  EXPECT_EQ(error_of("version: 1\nname: \"é\x01\"\n"),
            "c.yaml:2:9: invalid YAML: control character U+0001 is not allowed (YAML 1.2 §5.1); "
            "remove it");
  EXPECT_EQ(error_of("version: 1\n\x7F"),
            "c.yaml:2:1: invalid YAML: control character U+007F is not allowed (YAML 1.2 §5.1); "
            "remove it");
}

}  // namespace
}  // namespace coldgate::config
