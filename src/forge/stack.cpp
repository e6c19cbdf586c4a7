#include "forge/stack.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.hpp"

namespace coldgate::forge {
namespace {

using nlohmann::json;

// A stack taller than this is a loop in the data more likely than a real stack; ab's worktrees
// and builds would take hours anyway.
constexpr std::size_t k_max_stack = 50;

std::string option_of(const Target& t) { return t.kind == Kind::github ? "--github" : "--gitlab"; }

// "pull request #12" (GitHub) or "merge request !12" (GitLab), as each forge names them.
std::string name_of(const Target& t, long number) {
  return t.kind == Kind::github ? fmt::format("pull request #{}", number) : fmt::format("merge request !{}", number);
}

json parse_answer(const Target& t, const std::string& url, const std::string& body) {
  try {
    return json::parse(body);
  } catch (const json::exception& e) {
    throw Error(ExitCode::infrastructure, "GET " + redact(url, t.token),
                std::string("the answer is not JSON: ") + e.what());
  }
}

std::string string_at(const json& item, const char* pointer) {
  json::json_pointer p(pointer);
  return item.contains(p) && item.at(p).is_string() ? item.at(p).get<std::string>() : "";
}

std::string default_branch(const Target& t, const RetryPolicy& policy, const Log& log) {
  std::string branch;
  read_pages(t, t.repository_url, policy, log, [&](const std::string& url, const std::string& body) {
    json repo = parse_answer(t, url, body);
    branch = repo.is_object() ? string_at(repo, "/default_branch") : "";
    if (branch.empty()) {
      throw Error(ExitCode::infrastructure, "GET " + redact(url, t.token),
                  "the answer has no default_branch");
    }
    return false;
  });
  return branch;
}

// Every open pull request of the repository itself: one from a fork may have any head name,
// and its branch is not in this repository for `ab` to check out.
std::vector<StackPull> open_pulls(const Target& t, const RetryPolicy& policy, const Log& log) {
  bool github = t.kind == Kind::github;
  std::string first = t.repository_url + (github ? "/pulls?state=open&per_page=100"
                                                 : "/merge_requests?state=opened&per_page=100");
  std::vector<StackPull> pulls;
  read_pages(t, first, policy, log, [&](const std::string& url, const std::string& body) {
    json items = parse_answer(t, url, body);
    if (!items.is_array()) {
      throw Error(ExitCode::infrastructure, "GET " + redact(url, t.token),
                  github ? "expected a JSON array of pull requests" : "expected a JSON array of merge requests");
    }
    for (const json& item : items) {
      if (!item.is_object()) continue;
      const char* number_key = github ? "number" : "iid";
      if (!item.contains(number_key) || !item[number_key].is_number_integer()) continue;
      StackPull p;
      p.number = item[number_key].get<long>();
      p.title = string_at(item, "/title");
      if (github) {
        std::string from = string_at(item, "/head/repo/full_name");
        if (!from.empty() && from != t.repository) continue;
        p.head = string_at(item, "/head/ref");
        p.base = string_at(item, "/base/ref");
        p.url = string_at(item, "/html_url");
      } else {
        if (item.contains("source_project_id") && item.contains("target_project_id") &&
            item["source_project_id"] != item["target_project_id"]) {
          continue;
        }
        p.head = string_at(item, "/source_branch");
        p.base = string_at(item, "/target_branch");
        p.url = string_at(item, "/web_url");
      }
      if (!p.head.empty() && !p.base.empty()) pulls.push_back(std::move(p));
    }
    return true;
  });
  return pulls;
}

}  // namespace

Stack discover_stack(const Target& t, const std::string& branch, const RetryPolicy& policy,
                     const Log& log) {
  Stack stack;
  stack.default_branch = default_branch(t, policy, log);
  std::vector<StackPull> pulls = open_pulls(t, policy, log);
  std::multimap<std::string, const StackPull*> by_head;
  for (const StackPull& p : pulls) by_head.emplace(p.head, &p);
  std::string where = option_of(t);
  std::string pulls_word = t.kind == Kind::github ? "pull request" : "merge request";

  // The one open pull request of `head`; nullptr when there is none.
  auto pull_of = [&](const std::string& head) -> const StackPull* {
    auto [from, to] = by_head.equal_range(head);
    if (from == to) return nullptr;
    if (std::next(from) != to) {
      std::vector<long> numbers;
      for (auto it = from; it != to; ++it) numbers.push_back(it->second->number);
      std::sort(numbers.begin(), numbers.end());
      std::string names;
      for (long n : numbers) names += (names.empty() ? "" : " and ") + name_of(t, n);
      throw Error(ExitCode::usage, where,
                  fmt::format("{} are all open from branch '{}': which one is in the stack is "
                              "ambiguous; close all but one, or pass the refs (coldgate stack REF0 … REFn)",
                              names, head));
    }
    return from->second;
  };

  const StackPull* top = pull_of(branch);
  if (!top) {
    throw Error(ExitCode::usage, where,
                fmt::format("no open {} of {} has head branch '{}': open one for it, or pass the "
                            "refs (coldgate stack REF0 … REFn)",
                            pulls_word, t.repository, branch));
  }
  std::vector<StackPull> chain;  // top-down
  std::set<long> seen;
  for (const StackPull* p = top; p;) {
    if (!seen.insert(p->number).second) {
      // The chain came back to p: the cycle is p and what follows it in the chain.
      auto at = std::find_if(chain.begin(), chain.end(), [&](const StackPull& c) { return c.number == p->number; });
      std::string names;
      for (auto it = at; it != chain.end(); ++it) {
        names += fmt::format("{}{} ({} ← {})", names.empty() ? "" : ", ", name_of(t, it->number), it->base, it->head);
      }
      throw Error(ExitCode::usage, where,
                  fmt::format("the base branches go round in a cycle: {}; retarget one of them onto "
                              "the branch below it (or '{}')",
                              names, stack.default_branch));
    }
    chain.push_back(*p);
    if (chain.size() > k_max_stack) {
      throw Error(ExitCode::usage, where,
                  fmt::format("the stack below {} is more than {} {}s deep; pass the refs of the part "
                              "to measure (coldgate stack REF0 … REFn)",
                              name_of(t, top->number), k_max_stack, pulls_word));
    }
    if (p->base == stack.default_branch) break;
    const StackPull* below = pull_of(p->base);
    if (!below) {
      throw Error(ExitCode::usage, where,
                  fmt::format("{} ('{}') is based on '{}', which is neither the default branch '{}' nor "
                              "the head of another open {}: the stack is broken there; retarget it "
                              "onto the branch below it, or pass the refs (coldgate stack REF0 … REFn)",
                              name_of(t, p->number), p->head, p->base, stack.default_branch, pulls_word));
    }
    p = below;
  }
  stack.pulls.assign(chain.rbegin(), chain.rend());
  return stack;
}

}  // namespace coldgate::forge
