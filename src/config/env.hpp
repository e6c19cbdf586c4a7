#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace coldgate::config::detail {

/// Looks up an environment variable; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

/// The process environment (getenv).
std::optional<std::string> getenv_lookup(const std::string& name);

/// Expands `${VAR}`, `${VAR:-default}` (default when VAR is unset or empty) and `$$` (a literal
/// `$`); any other `$` stays as written, so SQL parameters like `$1` need no escaping. Returns
/// the problem as text in `error` (and "" as result) for an unset variable without a default,
/// an unterminated `${` or an invalid variable name.
std::string expand_env(std::string_view text, const EnvLookup& lookup, std::string& error);

}  // namespace coldgate::config::detail
