#pragma once

#include <string>
#include <vector>

#include "forge/forge.hpp"
#include "forge/http.hpp"

namespace coldgate::forge {

/// One open pull/merge request of a stack.
struct StackPull {
  long number = 0;     // pull request number / merge request IID
  std::string head;    // its head branch ("feature-2")
  std::string base;    // its base branch ("feature-1", or the default branch)
  std::string title;
  std::string url;     // its web address
};

/// A stack discovered from the forge: the default branch at the bottom, then the pull
/// requests from the one based on it up to the one of the current branch.
struct Stack {
  std::string default_branch;   // REF0: "main"
  std::vector<StackPull> pulls;  // bottom-up: pulls[0].base == default_branch
};

/// The stack that ends in the open pull request whose head is `branch`: the chain of base
/// branches down to the repository's default branch, from the open pull requests of the target
/// repository (GitHub: GET /repos/{o}/{r} and /pulls?state=open, every page, those from forks
/// left out; GitLab: /projects/:id and /merge_requests?state=opened, likewise). `target` comes
/// from resolve_repository (resolve_target's works too: its number is not used). Throws
/// Error(usage) at "--github"/"--gitlab" naming the pull request ("pull request #12", GitLab
/// "merge request !12") when the chain is broken (a base that is neither the default branch nor
/// another open pull request's head; two open pull requests of one head), has a cycle, is more
/// than 50 deep, or has no pull request of `branch`; Error(infrastructure) for HTTP failures
/// (token redacted).
Stack discover_stack(const Target& target, const std::string& branch, const RetryPolicy& policy,
                     const Log& log);

}  // namespace coldgate::forge
