#pragma once

#include <string>
#include <string_view>

namespace coldgate::util {

/// Registers `value` as a secret of this process (a database password, a token): from now on
/// mask_secrets() replaces it, and its percent-encoded form (RFC 3986 §2.1, as it stands in a
/// URL), by "***". Values shorter than 4 bytes are ignored (they would mask ordinary text).
/// Thread-safe.
void add_secret(std::string_view value);

/// Registers the values of environment variables whose names hold TOKEN, PASSWORD, PASSWD,
/// SECRET or API_KEY (GITHUB_TOKEN, PGPASSWORD, COLDGATE_GITLAB_TOKEN …) and the password of
/// DATABASE_URL (`scheme://user:password@…`) as secrets.
void add_secrets_from_environment();

/// True for an environment variable name that holds TOKEN, PASSWORD, PASSWD, SECRET or API_KEY
/// (any case): its value is a secret.
bool is_secret_name(std::string_view name);

/// `text` with every registered secret replaced by "***", longest first; for every text that
/// leaves the process: error messages, stage errors (a command's stderr tail), reports.
std::string mask_secrets(std::string_view text);

}  // namespace coldgate::util
