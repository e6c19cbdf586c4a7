#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace coldgate::canon {

/// Outcome of normalize_number_to.
enum class NumberStatus { ok, invalid, exponent_out_of_range };

/// An ASCII digit '0'–'9' (JSON's grammar; std::isdigit depends on the locale).
inline constexpr bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

/// Largest decimal exponent magnitude accepted in a number's text (`1e<this>` still parses).
inline constexpr std::int64_t k_max_exponent = 1'000'000'000'000'000;

/// Appends the canonical text of the JSON number `text` (RFC 8259 grammar) to `out`, exactly,
/// without going through double; on failure appends nothing and says why.
NumberStatus normalize_number_to(std::string_view text, std::string& out);

/// Appends the canonical text of a 64-bit integer to `out` (`-0` cannot occur).
void append_integer(std::int64_t value, std::string& out);
/// Appends the canonical text of an unsigned 64-bit integer to `out`.
void append_unsigned(std::uint64_t value, std::string& out);

/// Three-way numeric comparison (<0, 0, >0) of two canonical number texts, exact.
int compare_numbers(std::string_view a, std::string_view b);

/// An integer that orders the JSON number `text` monotonically (a < b implies key(a) <= key(b);
/// equal keys need compare_numbers), for a fast first comparison: the sign, the decimal
/// exponent (clamped to ±2047) and the first 15 significant digits. No strtod, no allocation.
std::int64_t number_order_key(std::string_view text);

}  // namespace coldgate::canon
