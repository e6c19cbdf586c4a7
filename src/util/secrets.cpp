// Secrets are masked where text leaves coldgate, not where it is made: a stage's stderr tail
// or a server message can quote a password coldgate never formatted itself.
#include "util/secrets.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>
#include <vector>

extern char** environ;

namespace coldgate::util {
namespace {

constexpr std::size_t k_min_secret_bytes = 4;

struct Registry {
  std::mutex mutex;
  std::set<std::string> values;
};

Registry& registry() {
  static Registry r;
  return r;
}

// RFC 3986 §2.1: everything but unreserved characters as %XX (uppercase hex).
std::string percent_encoded(std::string_view value) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += k_hex[c >> 4];
      out += k_hex[c & 15];
    }
  }
  return out;
}

}  // namespace

bool is_secret_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const char* word : {"TOKEN", "PASSWORD", "PASSWD", "SECRET", "API_KEY"}) {
    if (upper.find(word) != std::string::npos) return true;
  }
  return false;
}

namespace {

// The password of `scheme://user:password@host…`, or "".
std::string url_password(std::string_view url) {
  auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return "";
  std::string_view rest = url.substr(scheme + 3);
  auto at = rest.find('@');
  if (at == std::string_view::npos) return "";
  std::string_view userinfo = rest.substr(0, at);
  auto colon = userinfo.find(':');
  return colon == std::string_view::npos ? "" : std::string(userinfo.substr(colon + 1));
}

}  // namespace

void add_secret(std::string_view value) {
  if (value.size() < k_min_secret_bytes) return;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.values.emplace(value);
  r.values.insert(percent_encoded(value));
}

void add_secrets_from_environment() {
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq);
    std::string_view value = entry.substr(eq + 1);
    if (is_secret_name(name)) add_secret(value);
    if (name == "DATABASE_URL") add_secret(url_password(value));
  }
}

std::string mask_secrets(std::string_view text) {
  Registry& r = registry();
  std::vector<std::string> secrets;
  {
    std::lock_guard lock(r.mutex);
    secrets.assign(r.values.begin(), r.values.end());
  }
  std::sort(secrets.begin(), secrets.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::string out(text);
  for (const auto& secret : secrets) {
    for (auto pos = out.find(secret); pos != std::string::npos; pos = out.find(secret, pos + 3)) {
      out.replace(pos, secret.size(), "***");
    }
  }
  return out;
}

}  // namespace coldgate::util
