#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "forge/http.hpp"

namespace coldgate::forge {

/// Looks up an environment variable; nullopt when unset.
using Env = std::function<std::optional<std::string>(const std::string&)>;

/// The process environment (getenv).
std::optional<std::string> process_env(const std::string& name);

/// Which forge a comment goes to.
enum class Kind { github, gitlab };

/// File of the GitHub workflow that comments on pull requests from forks (`workflow_run`).
inline constexpr const char* k_fork_recipe = "ci/github/coldgate-comment.yml";

/// Where the comment of one pull/merge request lives and how to reach it.
struct Target {
  Kind kind = Kind::github;
  std::string list_url;       // first page of comments/notes, per_page=100
  std::string create_url;     // POST {"body"} here
  std::string item_url;       // + comment id: PATCH (GitHub) / PUT (GitLab) {"body"}
  std::string update_method;  // PATCH or PUT
  std::vector<std::string> headers;  // every request's headers, the credential among them
  std::string token;          // the credential, to redact from every output
  std::string token_variable; // environment variable it came from (for messages)
  std::string what;           // "pull request #12 of owner/repo" (for messages)
  std::string repository;     // "owner/repo" (GitHub) or the project ID or path (GitLab)
  std::string repository_url; // GitHub {api}/repos/{owner}/{repo}, GitLab {api}/projects/{id}
  long number = 0;            // pull request number / merge request IID
  bool number_from_event = false;  // GitHub: read from $GITHUB_EVENT_PATH
  std::optional<bool> fork;   // GitHub: head repository differs from base (from the event)
};

/// How the target is chosen; empty fields mean "from the environment".
struct TargetOptions {
  std::string forge;      // "github" | "gitlab" | "" (auto: GITHUB_ACTIONS/GITHUB_REPOSITORY, GITLAB_CI/CI_API_V4_URL)
  std::string token_env;  // variable holding the token (default GITHUB_TOKEN / COLDGATE_GITLAB_TOKEN)
  long pr = 0;            // pull/merge request number, 0 = from the environment
};

/// Raised by resolve_target when the environment lacks what commenting needs (no forge
/// detected, no token, no repository or PR number): `--optional` turns it into a warning.
class NotConfigured : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The Target from `options` and `env`. GitHub: GITHUB_API_URL (default https://api.github.com),
/// GITHUB_REPOSITORY, the token, the PR number (`pull_request.number`, `issue.number` or `number`
/// of $GITHUB_EVENT_PATH). GitLab: CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID. Throws
/// NotConfigured naming the missing variable; Error(usage) for a bad --forge or event file.
Target resolve_target(const TargetOptions& options, const Env& env);

/// The repository of `options` and `env` without a pull request, for what reads the whole
/// repository (forge/stack.hpp discover_stack): as resolve_target, but `options.pr` and the
/// event's number are not used, `number` is 0, the comment URLs are empty and `what` names the
/// repository ("repository owner/repo", "project 42"). Throws NotConfigured naming the missing
/// variable (forge, repository or project, token); Error(usage) for a bad --forge.
Target resolve_repository(const TargetOptions& options, const Env& env);

/// Reads `url` and the pages after it (next_page_url) with `target`'s headers, each retried per
/// `policy`, handing each page (its URL and body) to `page` until it returns false or the pages end. Throws
/// Error(infrastructure) for a status other than 200 (401/403/404 explained, token redacted)
/// and for pages that do not end (a repeated next page, or more than 1000).
void read_pages(const Target& target, const std::string& url, const RetryPolicy& policy, const Log& log,
                const std::function<bool(const std::string& url, const std::string& body)>& page);

/// `<!-- coldgate:report:<key> -->`, the line that identifies coldgate's comment.
std::string marker_line(const std::string& key);

/// The URL of the next page from an RFC 8288 `Link` header value (`<url>; rel="next"`), taken
/// verbatim; "" when there is none.
std::string next_link(const std::string& link_header);

/// `url` with its `page` query parameter set to `page` (added when absent).
std::string with_page(const std::string& url, const std::string& page);

/// The next page after `response` to `url`: the Link rel="next" URL, else (GitLab) `url` with
/// page=X-Next-Page; "" on the last page.
std::string next_page_url(const HttpResponse& response, const std::string& url);

/// True when `body` has `marker` at the start of a line (a quote of the comment, `> <!--…`,
/// does not count).
bool has_marker(const std::string& body, const std::string& marker);

/// What upsert_comment did.
enum class Action { created, updated, skipped };

/// The result of upsert_comment.
struct Outcome {
  Action action = Action::skipped;
  std::string id;   // the comment's id (empty when skipped)
  std::string url;  // its web address when the forge returned one
};

/// Finds the first comment of `target` with `marker` (reading every page) and updates it with
/// `body`, else creates one — unless `create` is false (then skipped). A POST is not repeated
/// blindly: after a retryable failure the comments are read again first (it may have landed). Throws Error
/// (infrastructure) with a message for 401/403/404 and other failures (token redacted); a 403
/// "Resource not accessible by integration" on GitHub throws ForkReadOnly.
Outcome upsert_comment(const Target& target, const std::string& marker, const std::string& body,
                       bool create, const RetryPolicy& policy, const Log& log);

/// Thrown by upsert_comment when the token may read but not write comments, as on a GitHub
/// pull request from a fork: a warning, not a failure.
class ForkReadOnly : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace coldgate::forge
