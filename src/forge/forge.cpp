#include "forge/forge.hpp"

#include <curl/curl.h>
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::forge {
namespace {

using nlohmann::json;

// The REST API version coldgate is written against (GitHub docs "API Versions").
constexpr const char* k_github_api_version = "2022-11-28";
// A run of the API never needs this many pages of 100 comments; it stops a server that loops.
constexpr int k_max_pages = 1000;

std::string value_of(const Env& env, const std::string& name) {
  auto v = env(name);
  return v ? *v : "";
}

std::string trim_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::string url_escape(const std::string& text) {
  std::unique_ptr<char, decltype(&curl_free)> escaped(
      curl_easy_escape(nullptr, text.c_str(), static_cast<int>(text.size())), &curl_free);
  if (!escaped) throw Error(ExitCode::infrastructure, "libcurl", "curl_easy_escape failed");
  return escaped.get();
}

long positive(const std::string& text) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  return end != text.c_str() && *end == '\0' && v > 0 ? v : 0;
}

std::string user_agent() { return std::string("User-Agent: coldgate/") + COLDGATE_VERSION; }

std::string token_from(const Env& env, const std::string& variable, const std::string& default_variable) {
  std::string name = variable.empty() ? default_variable : variable;
  std::string token = value_of(env, name);
  if (token.empty()) {
    throw NotConfigured(fmt::format("no token: ${} is {}; {}", name,
                                    env(name) ? "empty" : "not set",
                                    variable.empty() ? "set it or name another variable with --token-env"
                                                     : "set it"));
  }
  return token;
}

// The pull request number and whether it comes from a fork, from the event file GitHub
// Actions writes (docs "Webhook events and payloads").
void read_event(const std::string& path, Target& t) {
  json event;
  try {
    event = json::parse(util::read_file(path));
  } catch (const json::exception& e) {
    throw usage_error(path, std::string("not a JSON event file: ") + e.what());
  }
  auto number_at = [&](const json::json_pointer& p) -> long {
    return event.contains(p) && event.at(p).is_number_integer() ? event.at(p).get<long>() : 0;
  };
  if (t.number == 0) {
    for (const char* p : {"/pull_request/number", "/issue/number", "/number"}) {
      if (long n = number_at(json::json_pointer(p)); n > 0) {
        t.number = n;
        t.number_from_event = true;
        break;
      }
    }
  }
  if (event.contains("pull_request") && event["pull_request"].is_object()) {
    const json& pr = event["pull_request"];
    auto name = [&](const char* side) -> std::string {
      json::json_pointer p(std::string("/") + side + "/repo/full_name");
      return pr.contains(p) && pr.at(p).is_string() ? pr.at(p).get<std::string>() : "";
    };
    std::string base = name("base");
    if (!base.empty() && (t.number == 0 || number_at(json::json_pointer("/pull_request/number")) == t.number)) {
      t.fork = name("head") != base;  // a head repository that was deleted has no name
    }
  }
}

// The repository's part of a GitHub target: API, credential, headers.
Target github_repository(const TargetOptions& o, const Env& env) {
  Target t;
  t.kind = Kind::github;
  std::string repo = value_of(env, "GITHUB_REPOSITORY");
  if (repo.find('/') == std::string::npos) {
    throw NotConfigured(repo.empty() ? "no repository: $GITHUB_REPOSITORY is not set (owner/name)"
                                     : "$GITHUB_REPOSITORY is '" + repo + "', not owner/name");
  }
  t.token_variable = o.token_env.empty() ? "GITHUB_TOKEN" : o.token_env;
  t.token = token_from(env, o.token_env, "GITHUB_TOKEN");
  std::string api = trim_slash(value_of(env, "GITHUB_API_URL"));
  if (api.empty()) api = "https://api.github.com";
  t.repository = repo;
  t.repository_url = fmt::format("{}/repos/{}", api, repo);
  t.headers = {"Authorization: Bearer " + t.token, "Accept: application/vnd.github+json",
               std::string("X-GitHub-Api-Version: ") + k_github_api_version, user_agent()};
  t.what = "repository " + repo;
  return t;
}

Target github_target(const TargetOptions& o, const Env& env) {
  Target t = github_repository(o, env);
  t.number = o.pr;
  if (std::string event = value_of(env, "GITHUB_EVENT_PATH"); !event.empty()) read_event(event, t);
  if (t.number == 0) {
    throw NotConfigured("no pull request number: not in $GITHUB_EVENT_PATH (" +
                        value_of(env, "GITHUB_EVENT_NAME") +
                        " event); pass --pr N (the workflow_run recipe reads coldgate-out/pr-number)");
  }
  std::string issue = fmt::format("{}/issues/{}", t.repository_url, t.number);
  t.list_url = issue + "/comments?per_page=100";
  t.create_url = issue + "/comments";
  t.item_url = t.repository_url + "/issues/comments/";
  t.update_method = "PATCH";
  t.what = fmt::format("pull request #{} of {}", t.number, t.repository);
  return t;
}

// The project's part of a GitLab target: API, credential, headers.
Target gitlab_repository(const TargetOptions& o, const Env& env) {
  Target t;
  t.kind = Kind::gitlab;
  std::string api = trim_slash(value_of(env, "CI_API_V4_URL"));
  std::string project = value_of(env, "CI_PROJECT_ID");
  if (api.empty()) throw NotConfigured("no GitLab API: $CI_API_V4_URL is not set");
  if (project.empty()) throw NotConfigured("no GitLab project: $CI_PROJECT_ID is not set");
  t.token_variable = o.token_env.empty() ? "COLDGATE_GITLAB_TOKEN" : o.token_env;
  t.token = token_from(env, o.token_env, "COLDGATE_GITLAB_TOKEN");
  t.repository = project;
  t.repository_url = fmt::format("{}/projects/{}", api, url_escape(project));
  t.headers = {"PRIVATE-TOKEN: " + t.token, "Accept: application/json", user_agent()};
  t.what = "project " + project;
  return t;
}

Target gitlab_target(const TargetOptions& o, const Env& env) {
  Target t = gitlab_repository(o, env);
  t.number = o.pr != 0 ? o.pr : positive(value_of(env, "CI_MERGE_REQUEST_IID"));
  if (t.number == 0) {
    throw NotConfigured("no merge request: $CI_MERGE_REQUEST_IID is not set (run the job in a "
                        "merge request pipeline, or pass --pr IID)");
  }
  std::string notes = fmt::format("{}/merge_requests/{}/notes", t.repository_url, t.number);
  t.list_url = notes + "?per_page=100";
  t.create_url = notes;
  t.item_url = notes + "/";
  t.update_method = "PUT";
  t.what = fmt::format("merge request !{} of project {}", t.number, t.repository);
  return t;
}

// "github" or "gitlab": --forge, else detected from the CI's variables.
std::string forge_of(const TargetOptions& options, const Env& env) {
  if (!options.forge.empty()) {
    if (options.forge != "github" && options.forge != "gitlab") {
      throw usage_error("--forge", "'" + options.forge + "' is not github or gitlab");
    }
    return options.forge;
  }
  if (!value_of(env, "GITHUB_ACTIONS").empty() || !value_of(env, "GITHUB_REPOSITORY").empty()) return "github";
  if (!value_of(env, "GITLAB_CI").empty() || !value_of(env, "CI_API_V4_URL").empty()) return "gitlab";
  throw NotConfigured("no forge detected: neither GitHub Actions ($GITHUB_REPOSITORY) nor GitLab "
                      "CI ($CI_API_V4_URL) is set; pass --forge github|gitlab with their variables");
}

// GitHub's and GitLab's error bodies carry `message` (GitLab also `error`).
std::string server_message(const HttpResponse& r, const std::string& secret) {
  std::string m;
  try {
    json body = json::parse(r.body);
    if (body.is_object()) {
      for (const char* k : {"message", "error"}) {
        if (body.contains(k)) {
          m = body[k].is_string() ? body[k].get<std::string>() : body[k].dump();
          break;
        }
      }
    }
  } catch (const json::exception&) {
    m = r.body.substr(0, 200);
  }
  for (char& c : m) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return redact(m, secret);
}

[[noreturn]] void fail(const Target& t, const HttpRequest& req, const HttpResponse& r) {
  std::string where = req.method + " " + redact(req.url, t.token);
  std::string message = server_message(r, t.token);
  std::string said = message.empty() ? "" : " (\"" + message + "\")";
  bool github = t.kind == Kind::github;
  switch (r.status) {
    case 401:
      throw Error(ExitCode::infrastructure, where,
                  fmt::format("token rejected (401){}: check ${} and the token's scopes{}", said,
                              t.token_variable, github ? "" : " (a project access token with `api` scope)"));
    case 403: {
      if (r.header("x-ratelimit-remaining") == "0" || !r.header("retry-after").empty()) {
        throw Error(ExitCode::infrastructure, where,
                    "rate limited (403)" + said + " beyond the retry time; run it again later");
      }
      if (req.method == "GET") {
        throw Error(ExitCode::infrastructure, where,
                    fmt::format("forbidden (403){}: ${} may not read {}{}", said, t.token_variable, t.what,
                                github ? "; give the job `permissions: pull-requests: read` (or write)"
                                       : "; the token needs `read_api` (or `api`) scope and at least the "
                                         "Reporter role on the project"));
      }
      if (github && message.find("Resource not accessible by integration") != std::string::npos &&
          t.fork.value_or(true)) {
        throw ForkReadOnly(fmt::format(
            "cannot write the comment on {}: the token is read-only{}. Comment from a separate "
            "workflow_run workflow instead (recipe: {}); on a pull request from this repository, "
            "give the job `permissions: pull-requests: write`",
            t.what, t.fork ? " (a pull request from a fork)" : " (a pull request from a fork?)",
            k_fork_recipe));
      }
      throw Error(ExitCode::infrastructure, where,
                  github ? "forbidden (403)" + said + ": the token may not write comments; give the job "
                               "`permissions: pull-requests: write`"
                         : "forbidden (403)" + said + ": the token needs `api` scope and at least the "
                               "Reporter role on the project");
    }
    case 404:
      throw Error(ExitCode::infrastructure, where,
                  fmt::format("not found (404): {} does not exist, or ${} cannot see it", t.what,
                              t.token_variable));
    default:
      throw Error(ExitCode::infrastructure, where, fmt::format("HTTP {}{}", r.status, said));
  }
}

std::string id_text(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_string()) return v.get<std::string>();
  return "";
}

}  // namespace

std::optional<std::string> process_env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

Target resolve_target(const TargetOptions& options, const Env& env) {
  return forge_of(options, env) == "github" ? github_target(options, env) : gitlab_target(options, env);
}

Target resolve_repository(const TargetOptions& options, const Env& env) {
  return forge_of(options, env) == "github" ? github_repository(options, env) : gitlab_repository(options, env);
}

std::string marker_line(const std::string& key) { return "<!-- coldgate:report:" + key + " -->"; }

std::string next_link(const std::string& link_header) {
  // link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param ), separated by commas
  // (RFC 8288 §3); a URL holds no unescaped '>' so the first '>' ends it.
  std::size_t pos = 0;
  while ((pos = link_header.find('<', pos)) != std::string::npos) {
    std::size_t close = link_header.find('>', pos);
    if (close == std::string::npos) return "";
    std::string url = link_header.substr(pos + 1, close - pos - 1);
    std::size_t end = link_header.find('<', close);
    std::string params = link_header.substr(close + 1, end == std::string::npos ? std::string::npos : end - close - 1);
    std::size_t rel = params.find("rel=");
    if (rel != std::string::npos) {
      std::string value = params.substr(rel + 4);
      value = value.substr(0, value.find_first_of(";,"));
      // rel may list several space-separated types: rel="next last"
      std::string padded = " ";
      for (char c : value) padded += c == '"' ? ' ' : c;
      padded += ' ';
      if (padded.find(" next ") != std::string::npos) return url;
    }
    pos = close;
  }
  return "";
}

std::string with_page(const std::string& url, const std::string& page) {
  std::size_t q = url.find('?');
  if (q == std::string::npos) return url + "?page=" + page;
  std::string out = url.substr(0, q + 1);
  std::string query = url.substr(q + 1);
  bool set = false;
  std::size_t start = 0;
  while (start <= query.size()) {
    std::size_t amp = query.find('&', start);
    std::string part = query.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
    if (part.starts_with("page=")) {
      part = "page=" + page;
      set = true;
    }
    out += (start == 0 ? "" : "&") + part;
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
  return set ? out : out + "&page=" + page;
}

std::string next_page_url(const HttpResponse& response, const std::string& url) {
  if (std::string link = response.header("link"); !link.empty()) return next_link(link);
  if (std::string page = response.header("x-next-page"); !page.empty()) return with_page(url, page);
  return "";
}

bool has_marker(const std::string& body, const std::string& marker) {
  for (std::size_t pos = body.find(marker); pos != std::string::npos; pos = body.find(marker, pos + 1)) {
    if (pos == 0 || body[pos - 1] == '\n') return true;
  }
  return false;
}

void read_pages(const Target& t, const std::string& first, const RetryPolicy& policy, const Log& log,
                const std::function<bool(const std::string& url, const std::string& body)>& page) {
  std::set<std::string> seen;
  std::string url = first;
  for (int n = 1; !url.empty(); ++n) {
    if (n > k_max_pages || !seen.insert(url).second) {
      throw Error(ExitCode::infrastructure, "GET " + redact(url, t.token),
                  "the pages do not end (Link rel=\"next\" repeats)");
    }
    HttpRequest req{"GET", url, t.headers, ""};
    HttpResponse r = send_with_retry(req, policy, t.token, log);
    if (r.status != 200) fail(t, req, r);
    if (!page(url, r.body)) return;
    url = next_page_url(r, url);
  }
}

// The id of the first comment of `t` with `marker`, reading page after page; "" when none.
static std::string find_comment(const Target& t, const std::string& marker, const RetryPolicy& policy,
                                const Log& log) {
  std::string found;
  read_pages(t, t.list_url, policy, log, [&](const std::string& url, const std::string& body) {
    json items;
    try {
      items = json::parse(body);
    } catch (const json::exception& e) {
      throw Error(ExitCode::infrastructure, "GET " + redact(url, t.token),
                  std::string("the answer is not JSON: ") + e.what());
    }
    if (!items.is_array()) {
      throw Error(ExitCode::infrastructure, "GET " + redact(url, t.token),
                  "expected a JSON array of comments");
    }
    for (const auto& c : items) {
      if (!c.is_object() || !c.contains("body") || !c["body"].is_string()) continue;
      if (c.value("system", false)) continue;  // GitLab's own notes ("added 1 commit")
      if (has_marker(c["body"].get<std::string>(), marker) && c.contains("id")) {
        found = id_text(c["id"]);
        return false;
      }
    }
    return true;
  });
  return found;
}

Outcome upsert_comment(const Target& t, const std::string& marker, const std::string& body,
                       bool create, const RetryPolicy& policy, const Log& log) {
  auto start = std::chrono::steady_clock::now();
  for (int attempt = 1;; ++attempt) {
    std::string existing = find_comment(t, marker, policy, log);
    if (existing.empty() && !create) return {Action::skipped, "", ""};
    HttpRequest req;
    req.method = existing.empty() ? "POST" : t.update_method;
    req.url = existing.empty() ? t.create_url : t.item_url + existing;
    req.headers = t.headers;
    req.headers.push_back("Content-Type: application/json");
    req.body = json{{"body", body}}.dump(-1, ' ', false, json::error_handler_t::replace);
    HttpResponse r;
    if (existing.empty()) {
      // A POST that failed with a 5xx may still have created the comment: look again before
      // posting again, so a retry never leaves two.
      RetryPolicy once = policy;
      once.max_attempts = 1;
      r = send_with_retry(req, once, t.token, log);
      auto used = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      auto wait = retry_wait_ms(r, attempt, policy, std::time(nullptr));
      if (wait && attempt < policy.max_attempts && *wait < policy.max_total_ms - used) {
        if (log) log(fmt::format("  looking for the comment again in {} ms (attempt {} of {})", *wait,
                                 attempt + 1, policy.max_attempts));
        sleep_interruptibly(*wait);
        continue;
      }
    } else {
      r = send_with_retry(req, policy, t.token, log);  // PATCH and PUT are idempotent
    }
    if (r.status != 200 && r.status != 201) fail(t, req, r);
    Outcome out{existing.empty() ? Action::created : Action::updated, existing, ""};
    try {
      json answer = json::parse(r.body);
      if (answer.is_object()) {
        if (answer.contains("id")) out.id = id_text(answer["id"]);
        if (answer.contains("html_url") && answer["html_url"].is_string()) out.url = answer["html_url"];
      }
    } catch (const json::exception&) {
      // The write succeeded; an unreadable answer only costs the link in the message.
    }
    return out;
  }
}

}  // namespace coldgate::forge
