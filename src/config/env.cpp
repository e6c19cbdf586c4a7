#include "config/env.hpp"

#include <cstdlib>

#include "config/config.hpp"
#include "util/error.hpp"
#include "util/secrets.hpp"

namespace coldgate::config::detail {
namespace {

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}

}  // namespace

std::optional<std::string> getenv_lookup(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string expand_env(std::string_view text, const EnvLookup& lookup, std::string& error) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '$' || i + 1 >= text.size() || (text[i + 1] != '$' && text[i + 1] != '{')) {
      out += c;
      continue;
    }
    if (text[i + 1] == '$') {
      // "$${" is a literal "${"; any other "$$" stays as written, so dollar-quoted SQL
      // (`$$ … $$`) in an inline query needs no escaping.
      if (i + 2 < text.size() && text[i + 2] == '{') {
        out += "${";
        i += 2;
      } else {
        out += "$$";
        ++i;
      }
      continue;
    }
    std::size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      error = "unterminated '${' in '" + std::string(text) + "' (write $${ for a literal '${')";
      return {};
    }
    std::string_view inner = text.substr(i + 2, close - i - 2);
    std::size_t sep = inner.find(":-");
    std::string name(inner.substr(0, sep));
    bool valid = !name.empty() && is_name_start(name[0]);
    for (char n : name) valid = valid && is_name_char(n);
    if (!valid) {
      error = "invalid variable reference '${" + std::string(inner) +
              "}': write ${NAME} or ${NAME:-default}, NAME of letters, digits and '_'";
      return {};
    }
    auto value = lookup(name);
    if (sep != std::string_view::npos) {
      out += (value && !value->empty()) ? *value : std::string(inner.substr(sep + 2));
    } else if (value) {
      out += *value;
    } else {
      error = "environment variable '" + name + "' is not set (use ${" + name +
              ":-default} for a default)";
      return {};
    }
    i = close;
  }
  return out;
}

}  // namespace coldgate::config::detail

namespace coldgate::config {

const std::vector<std::string>& connection_fact_names() {
  static const std::vector<std::string> k_names = {"PGHOST",     "PGPORT",       "PGUSER",
                                                   "PGPASSWORD", "PGDATABASE",   "DATABASE_URL",
                                                   "JDBC_DATABASE_URL"};
  return k_names;
}

std::vector<std::string> expand_env_values(const EnvMap& env,
                                           const std::map<std::string, std::string>& facts) {
  const detail::EnvLookup lookup = [&](const std::string& name) -> std::optional<std::string> {
    if (auto it = facts.find(name); it != facts.end()) return it->second;
    return detail::getenv_lookup(name);
  };
  std::vector<std::string> out;
  for (const auto& [name, value] : env) {
    std::string error;
    std::string text = detail::expand_env(value.text, lookup, error);
    if (!error.empty()) throw usage_error(value.where.str(), value.key + ": " + error);
    if (util::is_secret_name(name)) util::add_secret(text);
    out.push_back(name + "=" + text);
  }
  return out;
}

}  // namespace coldgate::config
