#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace coldgate::util {

/// `s` without leading and trailing ASCII whitespace.
std::string_view trim(std::string_view s);

/// `s` with ASCII letters in lower case (SQL keywords, unquoted identifiers as PostgreSQL folds them).
std::string lower(std::string_view s);

/// Whether `line` starts with the lower-case `word` in any letter case, followed by whitespace
/// or the end (`CREATE DATABASE` → word "create").
bool starts_with_word(std::string_view line, std::string_view word);

/// Length in bytes of the well-formed UTF-8 sequence starting at text[i], or 0 when none starts
/// there (RFC 3629 §4: no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

/// `text` cut to at most `max_bytes` bytes at a UTF-8 character boundary (no partial sequence).
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

/// Byte offset of the first byte of `text` that is not part of well-formed UTF-8 (RFC 3629),
/// or nullopt when all of it is.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

}  // namespace coldgate::util
