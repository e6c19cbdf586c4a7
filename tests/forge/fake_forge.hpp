#pragma once

// A small GitHub + GitLab REST server on 127.0.0.1 for the forge tests, following the
// documented request and response shapes: issue comments (GitHub REST "Issue comments": list
// with per_page/page and a Link header, create 201, update 200) and merge request notes (GitLab
// "Notes API": list with Link and X-Next-Page, create 201, update 200), and for stack discovery
// the repository (GitHub "Get a repository", GitLab "Get a single project": default_branch) and
// its pull requests (GitHub "List pull requests": state, default open; GitLab "List project merge
// requests": state, default all), paged the same way. Everything lives in memory.

#include <httplib.h>

#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace coldgate::testing {

/// The in-memory forge; serves on a free port from construction until destruction.
class FakeForge {
 public:
  /// One stored comment or note.
  struct Comment {
    long id = 0;
    std::string body;
    bool system = false;  // GitLab system note
  };
  /// One request as received.
  struct Seen {
    std::string method;
    std::string path;  // with the query string
    std::map<std::string, std::string> headers;  // as sent (names as the client wrote them)
    std::string body;
  };
  /// One pull request (GitHub) or merge request (GitLab) for the list endpoints.
  struct Pull {
    long number = 0;        // number / iid
    std::string head;       // head.ref / source_branch
    std::string base;       // base.ref / target_branch
    std::string title;
    bool open = true;
    std::string head_repo;  // GitHub head.repo.full_name / GitLab source_project_id; "" = this one
  };
  /// A canned answer served before the real one.
  struct Canned {
    int status = 500;
    std::string body = R"({"message":"Server Error"})";
    std::vector<std::pair<std::string, std::string>> headers;
    std::string method;  // only for this method; "" = any
    bool apply = false;  // do the real work first, then answer this (a lost response)
  };

  explicit FakeForge(std::string token) : m_token(std::move(token)) {
    auto github_list = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res, [&] { list(req, res, "/repos/" + req.matches[1].str() + "/issues/" + req.matches[2].str(), false); });
    };
    auto github_create = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res, [&] { create(req, res, "/repos/" + req.matches[1].str() + "/issues/" + req.matches[2].str()); });
    };
    auto github_update = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res, [&] { update(req, res, std::stol(req.matches[2].str())); });
    };
    m_server.Get(R"(/repos/([^/]+/[^/]+)/issues/(\d+)/comments)", github_list);
    m_server.Post(R"(/repos/([^/]+/[^/]+)/issues/(\d+)/comments)", github_create);
    m_server.Patch(R"(/repos/([^/]+/[^/]+)/issues/comments/(\d+))", github_update);
    auto gitlab_list = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res, [&] { list(req, res, "/projects/" + req.matches[1].str() + "/mr/" + req.matches[2].str(), true); });
    };
    auto gitlab_create = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res, [&] { create(req, res, "/projects/" + req.matches[1].str() + "/mr/" + req.matches[2].str()); });
    };
    auto gitlab_update = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res, [&] { update(req, res, std::stol(req.matches[3].str())); });
    };
    m_server.Get(R"(/repos/([^/]+/[^/]+)/pulls)", [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res, [&] { pulls(req, res, "/repos/" + req.matches[1].str(), false); });
    });
    m_server.Get(R"(/repos/([^/]+/[^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res, [&] { repository(res, "/repos/" + req.matches[1].str()); });
    });
    m_server.Get(R"(/api/v4/projects/(.+)/merge_requests/(\d+)/notes)", gitlab_list);
    m_server.Post(R"(/api/v4/projects/(.+)/merge_requests/(\d+)/notes)", gitlab_create);
    m_server.Put(R"(/api/v4/projects/(.+)/merge_requests/(\d+)/notes/(\d+))", gitlab_update);
    m_server.Get(R"(/api/v4/projects/([^/]+)/merge_requests)", [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res, [&] { pulls(req, res, "/projects/" + req.matches[1].str(), true); });
    });
    m_server.Get(R"(/api/v4/projects/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res, [&] { repository(res, "/projects/" + req.matches[1].str()); });
    });
    // bind_to_any_port also listen()s: connections wait in the backlog until the loop runs.
    m_port = m_server.bind_to_any_port("127.0.0.1");
    m_thread = std::thread([this] {
      m_server.listen_after_bind();
      m_loop_ended = true;
    });
    // httplib's stop() does nothing until the loop has started (is_running()), so a fixture torn
    // down before the thread ran would leave the loop running and the join waiting forever.
    while (!m_server.is_running() && !m_loop_ended) std::this_thread::yield();
  }
  ~FakeForge() {
    m_server.stop();
    m_thread.join();
  }
  FakeForge(const FakeForge&) = delete;
  FakeForge& operator=(const FakeForge&) = delete;

  /// http://127.0.0.1:PORT
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

  /// Adds a comment to the thread `key` ("/repos/o/r/issues/N" or "/projects/ID/mr/N").
  long add(const std::string& key, const std::string& body, bool system = false) {
    std::lock_guard lock(m_mutex);
    m_threads[key].push_back({++m_next_id, body, system});
    return m_next_id;
  }
  /// The comments of thread `key`, oldest first.
  std::vector<Comment> comments(const std::string& key) {
    std::lock_guard lock(m_mutex);
    return m_threads[key];
  }
  /// Makes the repository `key` ("/repos/o/r" or "/projects/ID") exist with `default_branch`.
  void set_repository(const std::string& key, const std::string& default_branch) {
    std::lock_guard lock(m_mutex);
    m_repositories[key] = default_branch;
  }
  /// Adds a pull/merge request to the repository `key`, listed in the order added.
  void add_pull(const std::string& key, Pull pull) {
    std::lock_guard lock(m_mutex);
    m_pulls[key].push_back(std::move(pull));
  }
  /// Every request received so far.
  std::vector<Seen> seen() {
    std::lock_guard lock(m_mutex);
    return m_seen;
  }
  /// Serves `answer` to the next request (of answer.method) instead of the real one.
  void fail_next(Canned answer) {
    std::lock_guard lock(m_mutex);
    m_canned.push_back(std::move(answer));
  }
  /// Writes (POST, PATCH, PUT) answer 403 as GitHub does for a read-only token.
  void read_only(bool on) {
    std::lock_guard lock(m_mutex);
    m_read_only = on;
  }
  /// GitLab pages: announce the next page by X-Next-Page only, without a Link header.
  void gitlab_without_link(bool on) {
    std::lock_guard lock(m_mutex);
    m_no_link = on;
  }

 private:
  template <typename F>
  void handle(const httplib::Request& req, httplib::Response& res, F real) {
    std::unique_lock lock(m_mutex);
    Seen s{req.method, req.path, {}, req.body};
    if (!req.params.empty()) {
      std::string q;
      for (const auto& [k, v] : req.params) q += (q.empty() ? "?" : "&") + k + "=" + v;
      s.path += q;
    }
    for (const auto& [k, v] : req.headers) s.headers[k] = v;
    m_seen.push_back(s);
    bool github = req.path.starts_with("/repos/");
    std::string credential = github ? req.get_header_value("Authorization") : req.get_header_value("PRIVATE-TOKEN");
    std::string expected = github ? "Bearer " + m_token : m_token;
    if (credential != expected) {
      res.status = 401;
      res.set_content(github ? R"({"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"})"
                             : R"({"message":"401 Unauthorized"})",
                      "application/json");
      return;
    }
    if (github && (req.get_header_value("User-Agent").empty() ||
                   req.get_header_value("Accept") != "application/vnd.github+json" ||
                   req.get_header_value("X-GitHub-Api-Version").empty())) {
      res.status = 400;
      res.set_content(R"({"message":"missing User-Agent, Accept or X-GitHub-Api-Version"})", "application/json");
      return;
    }
    for (auto it = m_canned.begin(); it != m_canned.end(); ++it) {
      if (!it->method.empty() && it->method != req.method) continue;
      Canned answer = *it;
      m_canned.erase(it);
      if (answer.apply) {
        lock.unlock();
        real();
      }
      res.status = answer.status;
      for (const auto& [k, v] : answer.headers) res.set_header(k, v);
      res.set_content(answer.body, "application/json");
      return;
    }
    if (m_read_only && req.method != "GET") {
      res.status = 403;
      res.set_content(R"({"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment"})",
                      "application/json");
      return;
    }
    lock.unlock();
    real();
  }

  nlohmann::json to_json(const Comment& c) const {
    nlohmann::json j = {{"id", c.id}, {"body", c.body}};
    j["html_url"] = url() + "/comment/" + std::to_string(c.id);
    j["system"] = c.system;
    return j;
  }

  void list(const httplib::Request& req, httplib::Response& res, const std::string& key, bool gitlab) {
    std::vector<nlohmann::json> all;
    {
      std::lock_guard lock(m_mutex);
      for (const auto& c : m_threads[key]) all.push_back(to_json(c));
    }
    page(req, res, all, gitlab);
  }

  // One page of `all` as per_page and page ask, with the forges' Link (and GitLab's X-*) headers.
  void page(const httplib::Request& req, httplib::Response& res, const std::vector<nlohmann::json>& all,
            bool gitlab) {
    std::lock_guard lock(m_mutex);
    std::size_t per_page = req.has_param("per_page") ? std::stoul(req.get_param_value("per_page")) : 30;
    per_page = std::min<std::size_t>(per_page, 100);
    std::size_t page = req.has_param("page") ? std::stoul(req.get_param_value("page")) : 1;
    std::size_t pages = std::max<std::size_t>(1, (all.size() + per_page - 1) / per_page);
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = (page - 1) * per_page; i < all.size() && i < page * per_page; ++i) {
      out.push_back(all[i]);
    }
    // The query the client sent, per_page and page replaced, as the forges' links keep it.
    std::string query;
    for (const auto& [k, v] : req.params) {
      if (k != "per_page" && k != "page") query += k + "=" + v + "&";
    }
    auto page_url = [&](std::size_t p) {
      return url() + req.path + "?" + query + "per_page=" + std::to_string(per_page) + "&page=" + std::to_string(p);
    };
    std::string link;
    if (page < pages) link += "<" + page_url(page + 1) + ">; rel=\"next\", ";
    link += "<" + page_url(pages) + ">; rel=\"last\"";
    if (page > 1) link = "<" + page_url(1) + ">; rel=\"first\", <" + page_url(page - 1) + ">; rel=\"prev\", " + link;
    if (!(gitlab && m_no_link)) res.set_header("Link", link);
    if (gitlab) {
      res.set_header("X-Page", std::to_string(page));
      res.set_header("X-Next-Page", page < pages ? std::to_string(page + 1) : "");
      res.set_header("X-Total-Pages", std::to_string(pages));
    }
    res.status = 200;
    res.set_content(out.dump(), "application/json");
  }

  void not_found(httplib::Response& res) {
    res.status = 404;
    res.set_content(R"({"message":"Not Found"})", "application/json");
  }

  void repository(httplib::Response& res, const std::string& key) {
    std::lock_guard lock(m_mutex);
    auto it = m_repositories.find(key);
    if (it == m_repositories.end()) return not_found(res);
    res.status = 200;
    res.set_content(nlohmann::json{{"id", 42}, {"default_branch", it->second}}.dump(), "application/json");
  }

  void pulls(const httplib::Request& req, httplib::Response& res, const std::string& key, bool gitlab) {
    std::vector<nlohmann::json> all;
    {
      std::lock_guard lock(m_mutex);
      if (!m_repositories.contains(key)) return not_found(res);
      std::string state = req.has_param("state") ? req.get_param_value("state") : gitlab ? "all" : "open";
      std::string repo = key.substr(key.find('/', 1) + 1);
      for (const Pull& p : m_pulls[key]) {
        if (state != "all" && p.open != (state == (gitlab ? "opened" : "open"))) continue;
        std::string web = url() + "/web/" + repo + "/" + std::to_string(p.number);
        if (gitlab) {
          nlohmann::json source = p.head_repo.empty() ? nlohmann::json(42) : nlohmann::json(std::stol(p.head_repo));
          all.push_back({{"iid", p.number}, {"id", 9000 + p.number}, {"title", p.title},
                         {"source_branch", p.head}, {"target_branch", p.base}, {"web_url", web},
                         {"source_project_id", source}, {"target_project_id", 42},
                         {"state", p.open ? "opened" : "closed"}});
        } else {
          std::string from = p.head_repo.empty() ? repo : p.head_repo;
          all.push_back({{"number", p.number}, {"title", p.title}, {"html_url", web},
                         {"state", p.open ? "open" : "closed"},
                         {"head", {{"ref", p.head}, {"repo", {{"full_name", from}}}}},
                         {"base", {{"ref", p.base}, {"repo", {{"full_name", repo}}}}}});
        }
      }
    }
    page(req, res, all, gitlab);
  }

  void create(const httplib::Request& req, httplib::Response& res, const std::string& key) {
    auto body = nlohmann::json::parse(req.body, nullptr, false);
    if (!body.is_object() || !body.contains("body") || !body["body"].is_string()) {
      res.status = 422;
      res.set_content(R"({"message":"Validation Failed"})", "application/json");
      return;
    }
    std::lock_guard lock(m_mutex);
    m_threads[key].push_back({++m_next_id, body["body"].get<std::string>(), false});
    res.status = 201;
    res.set_content(to_json(m_threads[key].back()).dump(), "application/json");
  }

  void update(const httplib::Request& req, httplib::Response& res, long id) {
    auto body = nlohmann::json::parse(req.body, nullptr, false);
    std::lock_guard lock(m_mutex);
    for (auto& [key, list] : m_threads) {
      for (auto& c : list) {
        if (c.id == id && body.is_object() && body.contains("body")) {
          c.body = body["body"].get<std::string>();
          res.status = 200;
          res.set_content(to_json(c).dump(), "application/json");
          return;
        }
      }
    }
    res.status = 404;
    res.set_content(R"({"message":"Not Found"})", "application/json");
  }

  std::string m_token;
  httplib::Server m_server;
  int m_port = 0;
  std::atomic<bool> m_loop_ended{false};
  std::thread m_thread;
  std::mutex m_mutex;
  std::map<std::string, std::vector<Comment>> m_threads;
  std::map<std::string, std::string> m_repositories;  // key → default branch
  std::map<std::string, std::vector<Pull>> m_pulls;
  std::vector<Seen> m_seen;
  std::deque<Canned> m_canned;
  bool m_read_only = false;
  bool m_no_link = false;
  long m_next_id = 1000;
};

}  // namespace coldgate::testing
