#pragma once

#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace coldgate::forge {

/// One HTTP request to a forge's REST API.
struct HttpRequest {
  std::string method = "GET";        // GET, POST, PATCH, PUT
  std::string url;                   // absolute http(s) URL
  std::vector<std::string> headers;  // "Name: value" lines, the credential among them
  std::string body;                  // sent when not empty (JSON)
};

/// The answer to an HttpRequest.
struct HttpResponse {
  long status = 0;                             // HTTP status code
  std::map<std::string, std::string> headers;  // names lower-cased; the last of repeated names
  std::string body;
  /// The header `lower_name` (lower case), or "" when absent.
  std::string header(const std::string& lower_name) const;
};

/// How long and how often send_with_retry tries.
struct RetryPolicy {
  int max_attempts = 5;          // tries of one request in all
  long max_total_ms = 60'000;    // waits and requests of one send_with_retry together
  long base_backoff_ms = 1'000;  // first exponential wait (doubling: 1 s, 2 s, 4 s …)
};

/// Writes one line of `--verbose` output (never carrying the credential).
using Log = std::function<void(const std::string&)>;

/// `text` with every occurrence of `secret` replaced by `***` (nothing when secret is empty).
std::string redact(std::string text, const std::string& secret);

/// Sends one request with libcurl within `timeout_ms`; no redirects are followed. Throws
/// Error(infrastructure) naming the method and URL on a transport failure (DNS, refused
/// connection, TLS, timeout); the message never contains `secret`.
HttpResponse send(const HttpRequest& request, long timeout_ms, const std::string& secret);

/// How long to wait before retrying after `response`, or nullopt when it is not to be retried:
/// 5xx, 429 and a 403 secondary rate limit (`Retry-After`, or `x-ratelimit-remaining: 0`) are
/// retried; the wait is `Retry-After` seconds, else until `x-ratelimit-reset` (epoch seconds,
/// compared with `now`), else base_backoff_ms · 2^(attempt−1). GitHub REST docs "Rate limits
/// for the REST API" ("Handle rate limit errors appropriately"). `attempt` counts from 1.
std::optional<long> retry_wait_ms(const HttpResponse& response, int attempt,
                                  const RetryPolicy& policy, std::time_t now);

/// Sleeps `ms` milliseconds in small steps; throws Error(interrupted) on SIGINT/SIGTERM.
void sleep_interruptibly(long ms);

/// send() retried per retry_wait_ms while attempts and the total time of `policy` allow; returns
/// the last response (which may be an error status). Transport failures are retried like a 5xx.
/// Logs each request and wait to `log` (may be empty) with `secret` redacted. Throws
/// Error(infrastructure) when the last try failed in transport, Error(interrupted) on SIGINT.
HttpResponse send_with_retry(const HttpRequest& request, const RetryPolicy& policy,
                             const std::string& secret, const Log& log);

}  // namespace coldgate::forge
