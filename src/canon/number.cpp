// Exact decimal normalization of JSON numbers. Nothing here goes through double except
// approximate_number, whose result is only ever used as a monotonic pre-filter.
#include "canon/number.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string>

namespace coldgate::canon {
namespace {

// Appends `count` copies of '0'.
void append_zeros(std::int64_t count, std::string& out) {
  if (count > 0) out.append(static_cast<std::size_t>(count), '0');
}

// A canonical (or any valid JSON) number decoded as value = sign * 0.D * 10^n, where D are the
// significant digits: the mantissa's digits minus leading zeros (trailing zeros may remain).
struct Decimal {
  bool negative = false;
  bool zero = true;
  std::int64_t n = 0;
  std::string_view int_digits;   // digits before '.', leading zeros already skipped
  std::string_view frac_digits;  // digits after '.', leading zeros skipped when int_digits empty

  // The i-th significant digit, '0' past the end.
  char digit(std::size_t i) const {
    if (i < int_digits.size()) return int_digits[i];
    i -= int_digits.size();
    return i < frac_digits.size() ? frac_digits[i] : '0';
  }
  std::size_t size() const { return int_digits.size() + frac_digits.size(); }
};

// Decodes a number text already validated by the parser (or produced by normalize_number_to).
Decimal decode(std::string_view text) {
  Decimal d;
  std::size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    d.negative = true;
    ++i;
  }
  std::size_t start = i;
  while (i < text.size() && is_digit(text[i])) ++i;
  std::string_view int_part = text.substr(start, i - start);
  std::string_view frac_part;
  if (i < text.size() && text[i] == '.') {
    start = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    frac_part = text.substr(start, i - start);
  }
  std::int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool negative_exponent = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative_exponent = text[i++] == '-';
    for (; i < text.size(); ++i) {
      if (exponent < k_max_exponent * 10) exponent = exponent * 10 + (text[i] - '0');
    }
    if (negative_exponent) exponent = -exponent;
  }
  std::size_t lead = int_part.find_first_not_of('0');
  if (lead == std::string_view::npos) lead = int_part.size();
  int_part.remove_prefix(lead);
  std::int64_t n = static_cast<std::int64_t>(int_part.size());
  if (int_part.empty()) {
    std::size_t frac_lead = frac_part.find_first_not_of('0');
    if (frac_lead == std::string_view::npos) frac_lead = frac_part.size();
    frac_part.remove_prefix(frac_lead);
    n = -static_cast<std::int64_t>(frac_lead);
  }
  d.int_digits = int_part;
  d.frac_digits = frac_part;
  d.zero = int_part.empty() && frac_part.find_first_not_of('0') == std::string_view::npos;
  d.n = n + exponent;
  if (d.zero) d.negative = false;
  return d;
}

}  // namespace

namespace {

// A JSON number's parts as written: sign, integer and fraction digits, decimal exponent.
struct NumberParts {
  bool negative = false;
  std::string_view int_part;
  std::string_view frac_part;
  std::int64_t exponent = 0;
};

// Validates the RFC 8259 grammar, -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, and
// splits the text into its parts.
NumberStatus parse_parts(std::string_view text, NumberParts& p) {
  std::size_t i = 0;
  const std::size_t size = text.size();
  if (i < size && text[i] == '-') {
    p.negative = true;
    ++i;
  }
  const std::size_t int_begin = i;
  if (i < size && text[i] == '0') {
    ++i;
  } else if (i < size && is_digit(text[i])) {
    while (i < size && is_digit(text[i])) ++i;
  } else {
    return NumberStatus::invalid;
  }
  p.int_part = text.substr(int_begin, i - int_begin);
  if (i < size && text[i] == '.') {
    const std::size_t frac_begin = ++i;
    while (i < size && is_digit(text[i])) ++i;
    if (i == frac_begin) return NumberStatus::invalid;
    p.frac_part = text.substr(frac_begin, i - frac_begin);
  }
  if (i < size && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool negative_exponent = false;
    if (i < size && (text[i] == '+' || text[i] == '-')) negative_exponent = text[i++] == '-';
    const std::size_t exp_begin = i;
    for (; i < size && is_digit(text[i]); ++i) {
      p.exponent = p.exponent * 10 + (text[i] - '0');
      if (p.exponent > k_max_exponent) return NumberStatus::exponent_out_of_range;
    }
    if (i == exp_begin) return NumberStatus::invalid;
    if (negative_exponent) p.exponent = -p.exponent;
  }
  return i == size ? NumberStatus::ok : NumberStatus::invalid;
}

// The significant digits D of a number without leading or trailing zeros, as two views
// (D = a then b, so nothing is copied), and n with value = 0.D × 10^n.
struct Significand {
  std::string_view a;
  std::string_view b;
  std::int64_t n = 0;
  std::int64_t size() const { return static_cast<std::int64_t>(a.size() + b.size()); }
  // Appends D[from, to) to `out`.
  void append(std::int64_t from, std::int64_t to, std::string& out) const {
    const auto a_size = static_cast<std::int64_t>(a.size());
    if (from < a_size) {
      out.append(a.substr(static_cast<std::size_t>(from),
                          static_cast<std::size_t>(std::min(to, a_size) - from)));
    }
    if (to > a_size) {
      const std::int64_t b_from = std::max(from, a_size) - a_size;
      out.append(b.substr(static_cast<std::size_t>(b_from),
                          static_cast<std::size_t>(to - a_size - b_from)));
    }
  }
};

Significand significand(const NumberParts& p) {
  std::string_view lead_int =
      p.int_part.substr(std::min(p.int_part.find_first_not_of('0'), p.int_part.size()));
  Significand d{lead_int, p.frac_part, static_cast<std::int64_t>(lead_int.size()) + p.exponent};
  if (lead_int.empty()) {
    const std::size_t frac_lead = std::min(p.frac_part.find_first_not_of('0'), p.frac_part.size());
    d.b = p.frac_part.substr(frac_lead);
    d.n = p.exponent - static_cast<std::int64_t>(frac_lead);
  }
  // Strip trailing zeros from the concatenation.
  if (d.b.empty() || d.b.find_first_not_of('0') == std::string_view::npos) {
    d.b = {};
    const std::size_t last = d.a.find_last_not_of('0');
    d.a = last == std::string_view::npos ? std::string_view{} : d.a.substr(0, last + 1);
  } else {
    d.b = d.b.substr(0, d.b.find_last_not_of('0') + 1);
  }
  return d;
}

}  // namespace

NumberStatus normalize_number_to(std::string_view text, std::string& out) {
  NumberParts parts;
  if (NumberStatus status = parse_parts(text, parts); status != NumberStatus::ok) return status;
  const Significand d = significand(parts);
  const std::int64_t k = d.size();
  const std::int64_t n = d.n;
  if (k == 0) {
    out.push_back('0');  // every spelling of zero, including -0 and -0.0e5
    return NumberStatus::ok;
  }
  if (parts.negative) out.push_back('-');
  // Thresholds of ECMAScript Number::toString (ECMA-262 §6.1.6.1.20, used by RFC 8785 §3.2.2.3),
  // applied to the exact decimal instead of the shortest double.
  if (k <= n && n <= 21) {
    d.append(0, k, out);
    append_zeros(n - k, out);
  } else if (0 < n && n <= 21) {
    d.append(0, n, out);
    out.push_back('.');
    d.append(n, k, out);
  } else if (-6 < n && n <= 0) {
    out.append("0.");
    append_zeros(-n, out);
    d.append(0, k, out);
  } else {
    d.append(0, 1, out);
    if (k > 1) {
      out.push_back('.');
      d.append(1, k, out);
    }
    out.push_back('e');
    char buffer[24];
    auto result = std::to_chars(buffer, buffer + sizeof buffer, n - 1);
    out.append(buffer, result.ptr);
  }
  return NumberStatus::ok;
}

void append_integer(std::int64_t value, std::string& out) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void append_unsigned(std::uint64_t value, std::string& out) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

int compare_numbers(std::string_view a, std::string_view b) {
  const Decimal x = decode(a);
  const Decimal y = decode(b);
  const int sign_x = x.zero ? 0 : (x.negative ? -1 : 1);
  const int sign_y = y.zero ? 0 : (y.negative ? -1 : 1);
  if (sign_x != sign_y) return sign_x < sign_y ? -1 : 1;
  if (sign_x == 0) return 0;
  int magnitude = 0;  // compare |x| with |y|
  if (x.n != y.n) {
    magnitude = x.n < y.n ? -1 : 1;
  } else {
    const std::size_t size = std::max(x.size(), y.size());
    for (std::size_t i = 0; i < size && magnitude == 0; ++i) {
      const char dx = x.digit(i);
      const char dy = y.digit(i);
      if (dx != dy) magnitude = dx < dy ? -1 : 1;
    }
  }
  return sign_x < 0 ? -magnitude : magnitude;
}

std::int64_t number_order_key(std::string_view text) {
  // |x| = 0.D × 10^n with D the significant digits; the key packs clamp(n) above the first
  // 15 digits of D, so it never decreases as x grows (ties are settled by compare_numbers).
  constexpr std::size_t k_digits = 15;             // 10^15 < 2^50
  constexpr std::int64_t k_exponent_limit = 2047;  // 12-bit exponent field, 1..4095
  const char* p = text.data();
  const char* const end = p + text.size();
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  const char* const int_begin = p;
  while (p < end && is_digit(*p)) ++p;
  const char* const int_end = p;
  const char* frac_begin = p;
  if (p < end && *p == '.') {
    frac_begin = ++p;
    while (p < end && is_digit(*p)) ++p;
  }
  const char* const frac_end = p;
  std::int64_t exponent = 0;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool negative_exponent = false;
    if (p < end && (*p == '+' || *p == '-')) negative_exponent = *p++ == '-';
    for (; p < end && is_digit(*p); ++p) {
      if (exponent <= k_max_exponent) exponent = exponent * 10 + (*p - '0');
    }
    if (negative_exponent) exponent = -exponent;
  }
  // Leading zeros (only "0" before the point, or zeros right after "0.") are not significant.
  const char* a = int_begin;
  while (a < int_end && *a == '0') ++a;
  const char* b = frac_begin;
  std::int64_t n = exponent + (int_end - a);
  if (a == int_end) {
    while (b < frac_end && *b == '0') ++b;
    n -= b - frac_begin;
  }
  std::uint64_t mantissa = 0;
  std::size_t taken = 0;
  for (; a < int_end && taken < k_digits; ++a, ++taken) mantissa = mantissa * 10 + static_cast<std::uint64_t>(*a - '0');
  for (; b < frac_end && taken < k_digits; ++b, ++taken) mantissa = mantissa * 10 + static_cast<std::uint64_t>(*b - '0');
  if (mantissa == 0) return 0;  // zero (all digits zero), whatever its spelling
  constexpr std::uint64_t k_pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                       100000000, 1000000000, 10000000000, 100000000000,
                                       1000000000000, 10000000000000, 100000000000000,
                                       1000000000000000};
  mantissa *= k_pow10[k_digits - taken];
  const std::int64_t field = std::clamp(n, -k_exponent_limit, k_exponent_limit) + k_exponent_limit + 1;
  const auto magnitude = static_cast<std::int64_t>((static_cast<std::uint64_t>(field) << 50) | mantissa);
  return negative ? -magnitude : magnitude;
}

}  // namespace coldgate::canon
