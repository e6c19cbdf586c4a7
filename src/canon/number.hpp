#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace coldgate::canon {

/// Outcome of normalize_number_to.
enum class NumberStatus { ok, invalid, exponent_out_of_range };

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

/// A double that rounds the canonical number `text` monotonically (a < b implies
/// approx(a) <= approx(b)), for a fast first comparison; ±inf beyond the double range.
double approximate_number(std::string_view text);

}  // namespace coldgate::canon
