#include "forge/http.hpp"

#include <curl/curl.h>
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::forge {
namespace {

using Clock = std::chrono::steady_clock;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw Error(ExitCode::infrastructure, "libcurl", "curl_global_init failed");
    }
    std::atexit(curl_global_cleanup);
  });
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto& headers = *static_cast<std::map<std::string, std::string>*>(user);
  std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) headers.clear();  // a new response (after 100 Continue)
  std::size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view value = line.substr(colon + 1);
    std::size_t b = value.find_first_not_of(" \t\r\n");  // GitLab ends with an empty X-Next-Page
    std::size_t e = value.find_last_not_of(" \t\r\n");
    headers[name] = b == std::string_view::npos ? "" : std::string(value.substr(b, e - b + 1));
  }
  return size * n;
}

int on_progress(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return util::interrupted() ? 1 : 0;  // non-zero aborts the transfer
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

std::string masked_header(const std::string& line, const std::string& secret) {
  std::string out = redact(line, secret);
  for (const char* name : {"Authorization:", "PRIVATE-TOKEN:"}) {
    if (out.starts_with(name)) {
      std::string value = out.substr(std::string_view(name).size());
      bool bearer = value.find("Bearer") != std::string::npos;
      return std::string(name) + (bearer ? " Bearer ***" : " ***");
    }
  }
  return out;
}

long to_long(const std::string& text) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  return end != text.c_str() && *end == '\0' ? v : -1;
}

}  // namespace

std::string HttpResponse::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::string redact(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (std::size_t pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos + 3)) {
    text.replace(pos, secret.size(), "***");
  }
  return text;
}

HttpResponse send(const HttpRequest& request, long timeout_ms, const std::string& secret) {
  global_init();
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) throw Error(ExitCode::infrastructure, "libcurl", "curl_easy_init failed");
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  std::vector<std::string> lines = request.headers;
  lines.emplace_back("Expect:");  // no 100-continue round trip before a large body
  for (const auto& h : lines) {
    curl_slist* next = curl_slist_append(headers.get(), h.c_str());
    if (!next) throw Error(ExitCode::infrastructure, "libcurl", "out of memory");
    (void)headers.release();
    headers.reset(next);
  }
  HttpResponse response;
  char errbuf[CURL_ERROR_SIZE] = {};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.method == "GET") curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  if (!request.body.empty() || request.method != "GET") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &response.headers);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, std::max(timeout_ms, 1000L));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, std::min(std::max(timeout_ms, 1000L), 15'000L));
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl can decode
  CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_ABORTED_BY_CALLBACK) util::throw_if_interrupted();
  if (rc != CURLE_OK) {
    std::string detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    throw Error(ExitCode::infrastructure, request.method + " " + redact(request.url, secret),
                redact(detail, secret));
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

std::optional<long> retry_wait_ms(const HttpResponse& response, int attempt,
                                  const RetryPolicy& policy, std::time_t now) {
  long status = response.status;
  std::string retry_after = response.header("retry-after");
  std::string remaining = response.header("x-ratelimit-remaining");
  bool rate_limited = status == 429 || (status == 403 && (!retry_after.empty() || remaining == "0"));
  if (status < 500 && !rate_limited) return std::nullopt;
  if (long s = to_long(retry_after); s >= 0) return s * 1000;
  if (long reset = to_long(response.header("x-ratelimit-reset")); reset > 0 && remaining == "0") {
    return std::max(0L, (reset - static_cast<long>(now)) * 1000 + 1000);
  }
  long wait = policy.base_backoff_ms;
  for (int i = 1; i < attempt && wait < 3'600'000; ++i) wait *= 2;
  return wait;
}

HttpResponse send_with_retry(const HttpRequest& request, const RetryPolicy& policy,
                             const std::string& secret, const Log& log) {
  auto start = Clock::now();
  auto left_ms = [&] {
    auto used = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    return policy.max_total_ms - static_cast<long>(used);
  };
  for (int attempt = 1;; ++attempt) {
    if (log) {
      log(fmt::format("> {} {}{}", request.method, redact(request.url, secret),
                      request.body.empty() ? "" : fmt::format(" ({} bytes)", request.body.size())));
      for (const auto& h : request.headers) log("> " + masked_header(h, secret));
    }
    std::optional<HttpResponse> response;
    std::optional<Error> failure;
    try {
      response = send(request, std::max(left_ms(), 1000L), secret);
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted) throw;
      failure = e;
    }
    std::optional<long> wait;
    if (response) {
      if (log) {
        log(fmt::format("< {} ({} bytes)", response->status, response->body.size()));
        for (const char* h : {"link", "x-next-page", "retry-after", "x-ratelimit-remaining",
                              "x-ratelimit-reset"}) {
          if (auto v = response->header(h); !v.empty()) log(fmt::format("< {}: {}", h, redact(v, secret)));
        }
      }
      wait = retry_wait_ms(*response, attempt, policy, std::time(nullptr));
    } else {
      if (log) log("< " + failure->message());
      HttpResponse none;
      none.status = 599;  // a transport failure backs off like a server error
      wait = retry_wait_ms(none, attempt, policy, std::time(nullptr));
    }
    if (!wait || attempt >= policy.max_attempts || *wait >= left_ms()) {
      if (failure) throw *failure;
      return *response;
    }
    if (log) log(fmt::format("  retrying in {} ms (attempt {} of {})", *wait, attempt + 1, policy.max_attempts));
    sleep_interruptibly(*wait);
  }
}

void sleep_interruptibly(long ms) {
  auto until = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < until) {
    util::throw_if_interrupted();
    std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(100)));
  }
  util::throw_if_interrupted();
}

}  // namespace coldgate::forge
