#include "config/env.hpp"

#include <cstdlib>

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
