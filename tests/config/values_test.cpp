#include "config/values.hpp"

#include <gtest/gtest.h>

#include "config/config.hpp"
#include "config/env.hpp"
#include "util/error.hpp"

namespace coldgate::config {
namespace {

std::string duration_error(std::string_view text) {
  try {
    parse_duration(text, "here");
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "here");
    return e.what();
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return {};
}

std::string size_error(std::string_view text) {
  try {
    parse_size(text, "here");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.what();
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return {};
}

TEST(ConfigDuration, Units) {
  EXPECT_EQ(parse_duration("250ms", "").count(), 250);
  EXPECT_EQ(parse_duration("1.5s", "").count(), 1500);
  EXPECT_EQ(parse_duration("10m", "").count(), 600000);
  EXPECT_EQ(parse_duration("1h", "").count(), 3600000);
  EXPECT_EQ(parse_duration("0ms", "").count(), 0);
  EXPECT_EQ(parse_duration("2 s", "").count(), 2000);
  EXPECT_EQ(parse_duration("0.001s", "").count(), 1);
  EXPECT_EQ(parse_duration("1.25h", "").count(), 4500000);
}

TEST(ConfigDuration, BadSpellings) {
  EXPECT_EQ(duration_error("10"), "'10' has no unit; write e.g. 10ms, 10s or 10m");
  EXPECT_EQ(duration_error("1.5"), "'1.5' has no unit; write e.g. 1.5ms, 1.5s or 1.5m");
  EXPECT_EQ(duration_error("5sec"), "unknown unit 'sec' in '5sec'; use ms, s, m or h");
  EXPECT_EQ(duration_error("5MS"), "unknown unit 'MS' in '5MS'; use ms, s, m or h");
  EXPECT_EQ(duration_error("five"),
            "expected a duration such as 250ms, 1.5s, 10m or 1h, got 'five'");
  EXPECT_EQ(duration_error(""), "expected a duration such as 250ms, 1.5s, 10m or 1h, got ''");
  EXPECT_EQ(duration_error("1.s"), "expected a duration such as 250ms, 1.5s, 10m or 1h, got '1.s'");
  EXPECT_EQ(duration_error(".5s"), "expected a duration such as 250ms, 1.5s, 10m or 1h, got '.5s'");
  EXPECT_EQ(duration_error("1m30s"),
            "expected a duration such as 250ms, 1.5s, 10m or 1h, got '1m30s'");
  EXPECT_EQ(duration_error("-1s"), "a duration cannot be negative, got '-1s'");
  EXPECT_EQ(duration_error("0.5ms"), "'0.5ms' is not a whole number of milliseconds");
  EXPECT_EQ(duration_error("99999999999999999h"), "'99999999999999999h' is too long a duration");
  EXPECT_EQ(duration_error("1234567890123456789ms"),
            "expected a duration such as 250ms, 1.5s, 10m or 1h, got '1234567890123456789ms'");
}

TEST(ConfigSize, Units) {
  EXPECT_EQ(parse_size("16MiB", ""), 16ull << 20);
  EXPECT_EQ(parse_size("512KiB", ""), 512ull << 10);
  EXPECT_EQ(parse_size("1GB", ""), 1000000000ull);
  EXPECT_EQ(parse_size("100B", ""), 100ull);
  EXPECT_EQ(parse_size("1024", ""), 1024ull);
  EXPECT_EQ(parse_size("2kB", ""), 2000ull);
  EXPECT_EQ(parse_size("2KB", ""), 2000ull);
  EXPECT_EQ(parse_size("1.5KiB", ""), 1536ull);
  EXPECT_EQ(parse_size("3TiB", ""), 3ull << 40);
  EXPECT_EQ(parse_size("16 MiB", ""), 16ull << 20);
}

TEST(ConfigSize, BadSpellings) {
  const std::string units =
      "; use B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)";
  EXPECT_EQ(size_error("16Mib"), "unknown unit 'Mib' in '16Mib'" + units);
  EXPECT_EQ(size_error("16mb"), "unknown unit 'mb' in '16mb'" + units);
  EXPECT_EQ(size_error("1G"), "unknown unit 'G' in '1G'" + units);
  EXPECT_EQ(size_error("big"), "expected a size such as 100B, 512KiB, 16MiB or 1GB, got 'big'");
  EXPECT_EQ(size_error("-1MiB"), "a size cannot be negative, got '-1MiB'");
  EXPECT_EQ(size_error("0.5B"), "'0.5B' is not a whole number of bytes");
  EXPECT_EQ(size_error("99999999TiB"), "'99999999TiB' is too large a size");
}

TEST(ConfigValues, PatternsStageAndMetricNames) {
  EXPECT_EQ(detail::pattern_problem("/log"), "");
  EXPECT_EQ(detail::pattern_problem("/**/updated_at"), "");
  EXPECT_EQ(detail::pattern_problem("/a~0b/c~1d"), "");
  EXPECT_EQ(detail::pattern_problem(""), "");  // RFC 6901: the whole document
  EXPECT_NE(detail::pattern_problem("log"), "");
  EXPECT_NE(detail::pattern_problem("/a~"), "");
  EXPECT_NE(detail::pattern_problem("/a~x"), "");
  EXPECT_TRUE(detail::is_stage_name("config-load"));
  EXPECT_TRUE(detail::is_stage_name("v1.2_x"));
  EXPECT_FALSE(detail::is_stage_name(".hidden"));
  EXPECT_FALSE(detail::is_stage_name("-x"));
  EXPECT_FALSE(detail::is_stage_name("a/b"));
  EXPECT_FALSE(detail::is_stage_name(""));
  EXPECT_TRUE(detail::is_metric_name("jit_total_ms"));
  EXPECT_FALSE(detail::is_metric_name("Wall_ms"));
  EXPECT_TRUE(detail::is_setting_name("jit"));
  EXPECT_TRUE(detail::is_setting_name("auto_explain.log_min_duration"));
  EXPECT_FALSE(detail::is_setting_name("a..b"));
  EXPECT_FALSE(detail::is_setting_name("1abc"));
}


std::optional<std::string> fake_env(const std::string& name) {
  if (name == "HOME_DIR") return "/home/me";
  if (name == "EMPTY") return "";
  return std::nullopt;
}

std::string expand(std::string_view text, std::string* error = nullptr) {
  std::string e;
  std::string out = detail::expand_env(text, fake_env, e);
  if (error)
    *error = e;
  else
    EXPECT_EQ(e, "") << text;
  return out;
}

TEST(ConfigEnv, Expansion) {
  EXPECT_EQ(expand("${HOME_DIR}/x"), "/home/me/x");
  EXPECT_EQ(expand("a ${UNSET:-fallback} b"), "a fallback b");
  EXPECT_EQ(expand("${HOME_DIR:-fallback}"), "/home/me");
  EXPECT_EQ(expand("${EMPTY:-fallback}"), "fallback");  // as in sh: unset or empty
  EXPECT_EQ(expand("${EMPTY}"), "");
  EXPECT_EQ(expand("${UNSET:-}"), "");
  EXPECT_EQ(expand("${UNSET:-a:-b}"), "a:-b");
  EXPECT_EQ(expand("cost $$5"), "cost $$5");
  EXPECT_EQ(expand("DO $$ BEGIN PERFORM 1; END $$"), "DO $$ BEGIN PERFORM 1; END $$");
  EXPECT_EQ(expand("price: $5, $1"), "price: $5, $1");
  EXPECT_EQ(expand("$${HOME_DIR}"), "${HOME_DIR}");
  EXPECT_EQ(expand("select $1, $2"), "select $1, $2");
  EXPECT_EQ(expand("trailing $"), "trailing $");
  EXPECT_EQ(expand("$HOME_DIR"), "$HOME_DIR");
}

TEST(ConfigEnv, Errors) {
  std::string error;
  expand("${FOO}", &error);
  EXPECT_EQ(error, "environment variable 'FOO' is not set (use ${FOO:-default} for a default)");
  expand("x ${FOO", &error);
  EXPECT_EQ(error, "unterminated '${' in 'x ${FOO' (write $${ for a literal '${')");
  expand("${1X}", &error);
  EXPECT_EQ(
      error,
      "invalid variable reference '${1X}': write ${NAME} or ${NAME:-default}, NAME of letters, "
      "digits and '_'");
  expand("${}", &error);
  EXPECT_NE(error, "");
}

}  // namespace
}  // namespace coldgate::config
