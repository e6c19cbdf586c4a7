#pragma once

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

}  // namespace coldgate::util
