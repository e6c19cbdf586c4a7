#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "canon/canon.hpp"
#include "canon/number.hpp"
#include "util/error.hpp"

namespace coldgate::canon {
namespace {

TEST(CanonNumber, NormalizesExactly) {
  const std::pair<const char*, const char*> cases[] = {
      {"1.50", "1.5"},
      {"-0", "0"},
      {"-0.0", "0"},
      {"0.0", "0"},
      {"0", "0"},
      {"-0.0e+99", "0"},
      {"1E3", "1000"},
      {"1e400", "1e400"},
      {"-1e400", "-1e400"},
      {"1e-400", "1e-400"},
      {"12345678901234567890.123", "12345678901234567890.123"},
      {"0.1000000000000000055511151231257827", "0.1000000000000000055511151231257827"},
      {"1e-7", "1e-7"},
      {"0.000001", "0.000001"},
      {"1e-6", "0.000001"},
      {"0.0000001", "1e-7"},
      {"1.5e-7", "1.5e-7"},
      {"100e-2", "1"},
      {"-1.0e+2", "-100"},
      {"1e20", "100000000000000000000"},
      {"1e21", "1e21"},
      {"123e19", "1.23e21"},
      {"12.3e19", "123000000000000000000"},
      {"1.0", "1"},
      {"10", "10"},
      {"1200", "1200"},
      {"0.5", "0.5"},
      {"-0.5e1", "-5"},
      {"123.456", "123.456"},
      {"0.00012300", "0.000123"},
      {"9007199254740993", "9007199254740993"},
      {"18446744073709551616", "18446744073709551616"},
      {"5e-324", "5e-324"},
      {"1.7976931348623157e308", "1.7976931348623157e308"},
      {"2.5E+999999", "2.5e999999"},
      {"1e1000000000000000", "1e1000000000000000"},
  };
  for (const auto& [in, out] : cases) EXPECT_EQ(normalize_number(in), out) << in;
}

TEST(CanonNumber, RejectsWhatIsNotAJsonNumber) {
  for (const char* bad : {"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "0x10", "1 ", "NaN"}) {
    EXPECT_THROW(normalize_number(bad), Error) << bad;
  }
  try {
    normalize_number("1e10000000000000000");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "number 1e10000000000000000: exponent beyond ±10^15");
    EXPECT_EQ(e.code(), ExitCode::usage);
  }
}

TEST(CanonNumber, ComparesExactly) {
  EXPECT_LT(compare_numbers("2", "10"), 0);
  EXPECT_LT(compare_numbers("10", "1e400"), 0);
  EXPECT_LT(compare_numbers("-5", "0.5"), 0);
  EXPECT_LT(compare_numbers("-1e400", "-5"), 0);
  EXPECT_LT(compare_numbers("0", "1e-400"), 0);
  EXPECT_LT(compare_numbers("-1e-400", "0"), 0);
  EXPECT_EQ(compare_numbers("1000", "1000"), 0);
  EXPECT_LT(compare_numbers("0.1", "0.1000000000000000055511151231257827"), 0);
  EXPECT_GT(compare_numbers("12345678901234567890.123", "12345678901234567890.12"), 0);
  EXPECT_LT(compare_numbers("-2", "-1.5"), 0);
  EXPECT_LT(compare_numbers("0.000001", "1e21"), 0);
  EXPECT_LT(compare_numbers("1.5e-7", "0.000001"), 0);
  EXPECT_GT(compare_numbers("100", "99.99"), 0);
  EXPECT_LT(number_order_key("9007199254740992"), number_order_key("1e400"));
}

TEST(CanonNumber, OrderKeyNeverContradictsExactComparison) {
  std::vector<std::string> numbers = {"0", "1", "-1", "1e400", "-1e400", "1e-400", "-1e-400", "1e2047",
                                      "1e2048", "1e9999", "-1e9999", "1e-2046", "1e-2047", "1e-9999",
                                      "123456789012345678", "123456789012345679", "0.1", "-0.1"};
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {  // -?[1-9][0-9]*(.[0-9]+)?e[+-]N, normalized
    std::string text = rng() % 3 == 0 ? "-" : "";
    text.push_back(static_cast<char>('1' + rng() % 9));
    const int length = static_cast<int>(rng() % 20);
    for (int d = 0; d < length; ++d) text.push_back(static_cast<char>('0' + rng() % 10));
    if (rng() % 2) text.append(".").append(std::to_string(rng() % 1000));
    text.append("e").append(std::to_string(static_cast<int>(rng() % 80) - 40));
    numbers.push_back(normalize_number(text));
  }
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    for (std::size_t j = i + 1; j < numbers.size(); j += 1 + j % 7) {
      const int exact = compare_numbers(numbers[i], numbers[j]);
      const std::int64_t a = number_order_key(numbers[i]);
      const std::int64_t b = number_order_key(numbers[j]);
      if (exact < 0) {
        ASSERT_LE(a, b) << numbers[i] << " < " << numbers[j];
      } else if (exact > 0) {
        ASSERT_GE(a, b) << numbers[i] << " > " << numbers[j];
      } else {
        ASSERT_EQ(a, b) << numbers[i] << " = " << numbers[j];
      }
    }
  }
}

}  // namespace
}  // namespace coldgate::canon
