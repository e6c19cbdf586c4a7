#include "db/connection_info.hpp"

#include <fmt/core.h>
#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "util/error.hpp"
#include "util/secrets.hpp"

namespace coldgate::db {

std::vector<std::pair<std::size_t, std::size_t>> password_spans(std::string_view s) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  auto scheme = s.find("://");
  if (scheme != std::string_view::npos) {
    auto at = s.find('@', scheme + 3);
    auto slash = s.find('/', scheme + 3);
    if (at != std::string_view::npos && (slash == std::string_view::npos || at < slash)) {
      auto colon = s.find(':', scheme + 3);
      if (colon != std::string_view::npos && colon < at) spans.emplace_back(colon + 1, at - colon - 1);
    }
  }
  for (std::string_view key : {"password=", "password ="}) {
    auto p = s.find(key);
    if (p == std::string_view::npos) continue;
    auto start = p + key.size();
    while (start < s.size() && s[start] == ' ') ++start;
    auto end = start;
    if (end < s.size() && s[end] == '\'') {
      ++end;
      while (end < s.size() && s[end] != '\'') end += (s[end] == '\\') ? 2 : 1;
      end = std::min(end + 1, s.size());
    } else {
      while (end < s.size() && s[end] != ' ' && s[end] != '&') ++end;
    }
    // One inside the user information (`u:password=x@h`) is that password's own text.
    bool inside = std::any_of(spans.begin(), spans.end(), [&](const auto& span) {
      return start < span.first + span.second && span.first < end;
    });
    if (!inside) spans.emplace_back(start, end - start);
  }
  std::sort(spans.begin(), spans.end());
  return spans;
}

namespace {

// Quotes a conninfo value: single quotes, backslash-escaped (libpq docs, 34.1.1.1).
std::string quote_value(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

// Percent-encodes everything but RFC 3986 unreserved characters.
std::string pct(const std::string& v) {
  std::string out;
  for (unsigned char c : v) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// Replaces the password in a URL or key=value string with *** for error messages.
std::string mask(std::string_view text) {
  std::string s(text);
  auto spans = password_spans(text);
  // From the end, so the earlier offsets stay true.
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) s.replace(it->first, it->second, "***");
  return s;
}

}  // namespace

ConnectionInfo ConnectionInfo::parse(std::string_view text, const std::string& where) {
  std::string s(text);
  char* err = nullptr;
  std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)> opts(
      PQconninfoParse(s.c_str(), &err), PQconninfoFree);
  if (!opts) {
    std::string msg = err ? err : "out of memory";
    if (err) PQfreemem(err);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    throw usage_error(where, fmt::format("invalid connection string '{}': {}", mask(text), msg));
  }
  ConnectionInfo info;
  info.host.clear();
  for (auto* o = opts.get(); o->keyword; ++o) {
    if (!o->val || !*o->val) continue;
    std::string key = o->keyword, val = o->val;
    if (key == "host" || key == "hostaddr") {
      if (info.host.empty() || key == "host") info.host = val;
    } else if (key == "port") {
      try {
        info.port = std::stoi(val);
      } catch (const std::exception&) {
        throw usage_error(where, fmt::format("invalid port '{}' in '{}'", val, mask(text)));
      }
    } else if (key == "user") {
      info.user = val;
    } else if (key == "password") {
      info.password = val;
      util::add_secret(val);
    } else if (key == "dbname") {
      info.dbname = val;
    } else {
      info.options[key] = val;
    }
  }
  return info;
}

std::string ConnectionInfo::conninfo() const {
  std::string out;
  auto add = [&](const std::string& k, const std::string& v) {
    if (v.empty()) return;
    if (!out.empty()) out.push_back(' ');
    out += k + "=" + quote_value(v);
  };
  add("host", host);
  add("port", std::to_string(port));
  add("user", user);
  add("password", password);
  add("dbname", dbname);
  for (const auto& [k, v] : options) add(k, v);
  return out;
}

std::string ConnectionInfo::url(bool mask_password) const {
  std::string out = "postgresql://";
  if (!user.empty()) {
    out += pct(user);
    if (!password.empty()) {
      out += ':';
      out += mask_password ? std::string("***") : pct(password);
    }
    out += "@";
  }
  bool socket = !host.empty() && host.front() == '/';
  if (!socket) {
    out += host.find(':') != std::string::npos ? fmt::format("[{}]", host) : host;  // IPv6 literal
    out += fmt::format(":{}", port);
  }
  out += '/';
  out += pct(dbname);
  std::string query;
  auto add = [&](const std::string& k, const std::string& v) {
    query += (query.empty() ? "?" : "&") + k + "=" + pct(v);
  };
  if (socket) {
    add("host", host);
    add("port", std::to_string(port));
  }
  for (const auto& [k, v] : options) add(k, v);
  return out + query;
}

std::vector<std::string> ConnectionInfo::env() const {
  std::vector<std::string> out{"PGHOST=" + host, "PGPORT=" + std::to_string(port), "PGUSER=" + user,
                               "PGDATABASE=" + dbname, "DATABASE_URL=" + url(false)};
  if (!password.empty()) out.push_back("PGPASSWORD=" + password);
  if (auto it = options.find("connect_timeout"); it != options.end()) {
    out.push_back("PGCONNECT_TIMEOUT=" + it->second);
  }
  if (auto it = options.find("sslmode"); it != options.end())
    out.push_back("PGSSLMODE=" + it->second);
  return out;
}

std::string ConnectionInfo::jdbc_url() const {
  std::string out = "jdbc:postgresql://";
  out += host.find(':') != std::string::npos ? fmt::format("[{}]", host) : host;  // IPv6 literal
  out += fmt::format(":{}/{}", port, pct(dbname));
  char sep = '?';
  auto add = [&](const std::string& k, const std::string& v) {
    if (v.empty()) return;
    out += sep + k + "=" + pct(v);
    sep = '&';
  };
  add("user", user);
  add("password", password);
  if (auto it = options.find("sslmode"); it != options.end()) add("sslmode", it->second);
  return out;
}

std::map<std::string, std::string> ConnectionInfo::facts() const {
  return {{"PGHOST", host},         {"PGPORT", std::to_string(port)},
          {"PGUSER", user},         {"PGPASSWORD", password},
          {"PGDATABASE", dbname},   {"DATABASE_URL", url(false)},
          {"JDBC_DATABASE_URL", jdbc_url()}};
}

std::vector<std::string> ConnectionInfo::env_names() {
  return {"PGHOST",    "PGHOSTADDR", "PGPORT",
          "PGUSER",    "PGPASSWORD", "PGDATABASE",
          "PGSERVICE", "PGPASSFILE", "PGCONNECT_TIMEOUT",
          "PGSSLMODE", "PGOPTIONS",  "DATABASE_URL"};
}

}  // namespace coldgate::db
