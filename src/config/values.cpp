#include "config/values.hpp"

#include <fmt/core.h>
#include <algorithm>
#include <cctype>

namespace coldgate::config::detail {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// A decimal number "123" or "1.25" split into mantissa and number of fraction digits, followed
// by an optional unit (after optional blanks). Digits are limited so that the mantissa fits.
struct Decimal {
  std::uint64_t mantissa = 0;
  int fraction_digits = 0;
  std::string_view unit;
};

std::optional<Decimal> split_decimal(std::string_view text) {
  Decimal d;
  std::size_t i = 0;
  int digits = 0;
  auto take_digits = [&](bool fraction) {
    std::size_t start = i;
    while (i < text.size() && is_digit(text[i])) {
      if (++digits > 18) return false;
      d.mantissa = d.mantissa * 10 + static_cast<std::uint64_t>(text[i] - '0');
      if (fraction) ++d.fraction_digits;
      ++i;
    }
    return i > start;
  };
  if (!take_digits(false)) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!take_digits(true)) return std::nullopt;
  }
  while (i < text.size() && text[i] == ' ') ++i;
  d.unit = text.substr(i);
  return d;
}

// mantissa / 10^fraction_digits * factor, exactly; nullopt when not a whole number; sets
// `overflow` when the result does not fit.
std::optional<std::uint64_t> scale(const Decimal& d, std::uint64_t factor, bool& overflow) {
  std::uint64_t product = 0;
  overflow = __builtin_mul_overflow(d.mantissa, factor, &product);
  if (overflow) return std::nullopt;
  std::uint64_t divisor = 1;
  for (int k = 0; k < d.fraction_digits; ++k) divisor *= 10;
  if (product % divisor != 0) return std::nullopt;
  return product / divisor;
}

}  // namespace

Parsed<std::int64_t> duration_ms(std::string_view text) {
  const std::string shown = fmt::format("'{}'", text);
  const std::string generic = "expected a duration such as 250ms, 1.5s, 10m or 1h, got " + shown;
  auto d = split_decimal(text);
  if (!d) {
    if (!text.empty() && text[0] == '-') return {{}, "a duration cannot be negative, got " + shown};
    return {{}, generic};
  }
  if (d->unit.empty())
    return {{},
            shown + " has no unit; write e.g. " + std::string(text) + "ms, " + std::string(text) +
                "s or " + std::string(text) + "m"};
  std::uint64_t factor = 0;
  if (d->unit == "ms")
    factor = 1;
  else if (d->unit == "s")
    factor = 1000;
  else if (d->unit == "m")
    factor = 60 * 1000;
  else if (d->unit == "h")
    factor = 60 * 60 * 1000;
  else if (std::all_of(d->unit.begin(), d->unit.end(), is_alpha))
    return {{}, "unknown unit '" + std::string(d->unit) + "' in " + shown + "; use ms, s, m or h"};
  else
    return {{}, generic};
  bool overflow = false;
  auto ms = scale(*d, factor, overflow);
  if (overflow || (ms && *ms > static_cast<std::uint64_t>(INT64_MAX)))
    return {{}, shown + " is too long a duration"};
  if (!ms) return {{}, shown + " is not a whole number of milliseconds"};
  return {static_cast<std::int64_t>(*ms), {}};
}

Parsed<std::uint64_t> size_bytes(std::string_view text) {
  const std::string shown = fmt::format("'{}'", text);
  auto d = split_decimal(text);
  if (!d) {
    if (!text.empty() && text[0] == '-') return {{}, "a size cannot be negative, got " + shown};
    return {{}, "expected a size such as 100B, 512KiB, 16MiB or 1GB, got " + shown};
  }
  struct Unit {
    std::string_view name;
    std::uint64_t factor;
  };
  static constexpr Unit k_units[] = {
      {"", 1},
      {"B", 1},
      {"kB", 1000},
      {"KB", 1000},
      {"MB", 1000 * 1000},
      {"GB", 1000ull * 1000 * 1000},
      {"TB", 1000ull * 1000 * 1000 * 1000},
      {"KiB", 1ull << 10},
      {"MiB", 1ull << 20},
      {"GiB", 1ull << 30},
      {"TiB", 1ull << 40},
  };
  const Unit* unit = nullptr;
  for (const auto& u : k_units)
    if (u.name == d->unit) unit = &u;
  if (!unit)
    return {{},
            "unknown unit '" + std::string(d->unit) + "' in " + shown +
                "; use B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)"};
  bool overflow = false;
  auto bytes = scale(*d, unit->factor, overflow);
  if (overflow) return {{}, shown + " is too large a size"};
  if (!bytes) return {{}, shown + " is not a whole number of bytes"};
  return {*bytes, {}};
}

std::string pattern_problem(std::string_view pattern) {
  const std::string shown = fmt::format("'{}'", pattern);
  if (pattern.empty()) return {};  // RFC 6901: the empty pointer is the whole document
  if (pattern[0] != '/')
    return "invalid path pattern " + shown +
           ": a pattern is a JSON Pointer and starts with '/' (e.g. /log, /**/updated_at), or "
           "is '' for the whole document";
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '~') continue;
    if (i + 1 >= pattern.size() || (pattern[i + 1] != '0' && pattern[i + 1] != '1'))
      return "invalid path pattern " + shown +
             ": '~' must be followed by 0 or 1 (~0 stands for '~', ~1 for '/', RFC 6901)";
    ++i;
  }
  return {};
}

bool is_stage_name(std::string_view name) {
  if (name.empty() || !(is_alpha(name[0]) || is_digit(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return is_alpha(c) || is_digit(c) || c == '.' || c == '_' || c == '-';
  });
}

bool is_metric_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || is_digit(c) || c == '_';
  });
}

bool is_setting_name(std::string_view name) {
  bool segment_start = true;
  for (char c : name) {
    if (c == '.') {
      if (segment_start) return false;
      segment_start = true;
    } else if (is_alpha(c) || c == '_' || (!segment_start && is_digit(c))) {
      segment_start = false;
    } else {
      return false;
    }
  }
  return !segment_start;
}

bool is_psql_variable_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return is_alpha(c) || is_digit(c) || c == '_';
  });
}

std::string quoted_list(const std::vector<std::string>& items, std::string_view last_sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += (i + 1 == items.size()) ? std::string(last_sep) : std::string(", ");
    out += "'" + items[i] + "'";
  }
  return out;
}

}  // namespace coldgate::config::detail
