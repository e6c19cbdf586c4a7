#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Value parsers shared by the loader and the public parse_duration / parse_size. They return the
// problem as text (without a place) so the loader can prefix it with the key path.
namespace coldgate::config::detail {

/// A parsed value, or the reason it could not be parsed.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;  // set when value is empty
};

/// "250ms", "1.5s", "10m", "1h" → milliseconds; whole milliseconds only, no sign, unit required.
Parsed<std::int64_t> duration_ms(std::string_view text);

/// "16MiB", "512KiB", "1GB", "100B", "1024" → bytes (KiB = 1024, kB/KB = 1000).
Parsed<std::uint64_t> size_bytes(std::string_view text);

/// Problem with a canon path pattern ("" for the whole document as in RFC 6901, else it starts
/// with '/'; '~' only as ~0 / ~1), or "" when fine.
std::string pattern_problem(std::string_view pattern);

/// True for a stage name: [A-Za-z0-9][A-Za-z0-9._-]* (stage names become file names).
bool is_stage_name(std::string_view name);

/// True for a metric name: [a-z0-9_]+.
bool is_metric_name(std::string_view name);

/// True for a PostgreSQL setting name: [A-Za-z_][A-Za-z0-9_]*, optionally dotted (custom options).
bool is_setting_name(std::string_view name);

/// True for a psql variable name: [A-Za-z0-9_]+ (psql's docs, "Variables": letters, digits and
/// underscores).
bool is_psql_variable_name(std::string_view name);

/// "a, b or c" with each item quoted as 'x'.
std::string quoted_list(const std::vector<std::string>& items, std::string_view last_sep = " or ");

}  // namespace coldgate::config::detail
