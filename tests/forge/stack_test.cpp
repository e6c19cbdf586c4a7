// Stack discovery (forge::discover_stack) and the stack's comments (cli::comment_stack) against
// FakeForge, a GitHub/GitLab REST server on 127.0.0.1 that pages its lists as the forges do.
#include "forge/stack.hpp"

#include <gtest/gtest.h>

#include <map>

#include "cli/stack_command.hpp"
#include "forge/fake_forge.hpp"
#include "support/support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::forge {
namespace {

using coldgate::testing::FakeForge;
using coldgate::testing::ScopedEnv;
using coldgate::testing::TempDir;
using Pull = FakeForge::Pull;

constexpr const char* k_token = "ghp_StackT0kenThatMustNeverBePrinted";
constexpr const char* k_repo = "/repos/acme/app";
constexpr const char* k_project = "/projects/42";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Env env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

struct ForgeStackTest : ::testing::Test {
  ForgeStackTest() : forge(k_token) {
    forge.set_repository(k_repo, "main");
    forge.set_repository(k_project, "main");
    policy.base_backoff_ms = 1;
  }

  Target github(const std::string& token = k_token) {
    std::map<std::string, std::string> vars{{"GITHUB_ACTIONS", "true"},
                                            {"GITHUB_REPOSITORY", "acme/app"},
                                            {"GITHUB_API_URL", forge.url()},
                                            {"GITHUB_TOKEN", token}};
    return resolve_repository({}, env_of(vars));
  }
  Target gitlab() {
    std::map<std::string, std::string> vars{{"GITLAB_CI", "true"},
                                            {"CI_API_V4_URL", forge.url() + "/api/v4"},
                                            {"CI_PROJECT_ID", "42"},
                                            {"COLDGATE_GITLAB_TOKEN", k_token}};
    return resolve_repository({}, env_of(vars));
  }
  // main ← f1 (#11) ← f2 (#12) ← f3 (#13) in `key`, listed out of order among others that must
  // not count: a closed pull request and one from a fork with heads of the stack, an unrelated one.
  void three(const std::string& key) {
    bool gitlab = key == k_project;
    forge.add_pull(key, {12, "f2", "f1", "Second", true, ""});
    forge.add_pull(key, {9, "f2", "main", "Closed attempt", false, ""});
    forge.add_pull(key, {30, "f1", "main", "Someone's f1", true, gitlab ? "77" : "someone/fork"});
    forge.add_pull(key, {13, "f3", "f2", "Third", true, ""});
    forge.add_pull(key, {20, "docs", "main", "Unrelated", true, ""});
    forge.add_pull(key, {11, "f1", "main", "First", true, ""});
  }
  // The message of the Error that discovering `branch` throws, checked for its code.
  std::string error(const Target& t, const std::string& branch, ExitCode code = ExitCode::usage) {
    try {
      discover_stack(t, branch, policy, {});
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.message();
      EXPECT_FALSE(contains(e.message(), k_token)) << e.message();
      return e.message();
    }
    ADD_FAILURE() << "no error discovering " << branch;
    return "";
  }
  std::vector<FakeForge::Seen> requests(const std::string& path_part) {
    std::vector<FakeForge::Seen> out;
    for (const auto& s : forge.seen()) {
      if (contains(s.path, path_part)) out.push_back(s);
    }
    return out;
  }

  FakeForge forge;
  RetryPolicy policy;
};

TEST_F(ForgeStackTest, GitHubChainFromTheTopDownToTheDefaultBranch) {
  three(k_repo);
  Stack s = discover_stack(github(), "f3", policy, {});
  EXPECT_EQ(s.default_branch, "main");
  ASSERT_EQ(s.pulls.size(), 3u);
  EXPECT_EQ(s.pulls[0].number, 11);
  EXPECT_EQ(s.pulls[0].head, "f1");
  EXPECT_EQ(s.pulls[0].base, "main");
  EXPECT_EQ(s.pulls[0].title, "First");
  EXPECT_EQ(s.pulls[0].url, forge.url() + "/web/acme/app/11");
  EXPECT_EQ(s.pulls[1].number, 12);
  EXPECT_EQ(s.pulls[1].base, "f1");
  EXPECT_EQ(s.pulls[2].number, 13);
  EXPECT_EQ(s.pulls[2].head, "f3");
  EXPECT_EQ(s.pulls[2].base, "f2");
  // Only open pull requests were asked for.
  for (const auto& r : requests("/pulls")) EXPECT_TRUE(contains(r.path, "state=open")) << r.path;

  s = discover_stack(github(), "f2", policy, {});
  ASSERT_EQ(s.pulls.size(), 2u);
  EXPECT_EQ(s.pulls[0].number, 11);
  EXPECT_EQ(s.pulls[1].number, 12);
  s = discover_stack(github(), "docs", policy, {});
  ASSERT_EQ(s.pulls.size(), 1u);
  EXPECT_EQ(s.pulls[0].number, 20);
}

TEST_F(ForgeStackTest, GitLabChainOfMergeRequests) {
  three(k_project);
  forge.set_repository(k_project, "trunk");
  // The chain ends at the project's default branch, whatever it is called.
  forge.add_pull(k_project, {40, "t1", "trunk", "On trunk", true, ""});
  forge.add_pull(k_project, {41, "t2", "t1", "On t1", true, ""});
  Stack s = discover_stack(gitlab(), "t2", policy, {});
  EXPECT_EQ(s.default_branch, "trunk");
  ASSERT_EQ(s.pulls.size(), 2u);
  EXPECT_EQ(s.pulls[0].number, 40);
  EXPECT_EQ(s.pulls[1].number, 41);
  EXPECT_EQ(s.pulls[1].title, "On t1");
  EXPECT_EQ(s.pulls[1].url, forge.url() + "/web/42/41");

  forge.set_repository(k_project, "main");
  s = discover_stack(gitlab(), "f3", policy, {});
  ASSERT_EQ(s.pulls.size(), 3u);
  EXPECT_EQ(s.pulls[0].number, 11);  // not the fork's !30, not the closed !9
  EXPECT_EQ(s.pulls[1].number, 12);
  EXPECT_EQ(s.pulls[2].number, 13);
  for (const auto& r : requests("/merge_requests")) EXPECT_TRUE(contains(r.path, "state=opened")) << r.path;
}

TEST_F(ForgeStackTest, ReadsEveryPage) {
  // 230 open pull requests: the stack's are on the first, second and third page of 100.
  long n = 100;
  auto filler = [&](int count) {
    for (int i = 0; i < count; ++i, ++n) {
      forge.add_pull(k_repo, {n, "other-" + std::to_string(n), "main", "", true, ""});
      forge.add_pull(k_project, {n, "other-" + std::to_string(n), "main", "", true, ""});
    }
  };
  forge.add_pull(k_repo, {13, "f3", "f2", "Third", true, ""});
  forge.add_pull(k_project, {13, "f3", "f2", "Third", true, ""});
  filler(110);
  forge.add_pull(k_repo, {11, "f1", "main", "First", true, ""});
  forge.add_pull(k_project, {11, "f1", "main", "First", true, ""});
  filler(117);
  forge.add_pull(k_repo, {12, "f2", "f1", "Second", true, ""});
  forge.add_pull(k_project, {12, "f2", "f1", "Second", true, ""});
  Stack s = discover_stack(github(), "f3", policy, {});
  ASSERT_EQ(s.pulls.size(), 3u);
  EXPECT_EQ(s.pulls[0].number, 11);
  EXPECT_EQ(s.pulls[2].number, 13);
  EXPECT_EQ(requests("/repos/acme/app/pulls").size(), 3u);
  // GitLab, following X-Next-Page alone.
  forge.gitlab_without_link(true);
  s = discover_stack(gitlab(), "f3", policy, {});
  ASSERT_EQ(s.pulls.size(), 3u);
  EXPECT_EQ(s.pulls[1].number, 12);
  EXPECT_EQ(requests("/projects/42/merge_requests").size(), 3u);
}

TEST_F(ForgeStackTest, ABrokenChainNamesThePullRequestAndItsBase) {
  forge.add_pull(k_repo, {11, "f1", "main", "First", true, ""});
  forge.add_pull(k_repo, {12, "f2", "gone", "Second", true, ""});
  forge.add_pull(k_repo, {13, "f3", "f2", "Third", true, ""});
  EXPECT_EQ(
      error(github(), "f3"),
      "--github: pull request #12 ('f2') is based on 'gone', which is neither the default branch "
      "'main' nor the head of another open pull request: the stack is broken there; retarget it "
      "onto the branch below it, or pass the refs (coldgate stack REF0 … REFn)");
  // The merged bottom of a stack leaves the next one based on a closed pull request's branch.
  forge.add_pull(k_project, {11, "f1", "main", "First", true, ""});
  forge.add_pull(k_project, {14, "f0", "main", "Merged", false, ""});
  forge.add_pull(k_project, {12, "f2", "f0", "Second", true, ""});
  EXPECT_EQ(
      error(gitlab(), "f2"),
      "--gitlab: merge request !12 ('f2') is based on 'f0', which is neither the default branch "
      "'main' nor the head of another open merge request: the stack is broken there; retarget it "
      "onto the branch below it, or pass the refs (coldgate stack REF0 … REFn)");
}

TEST_F(ForgeStackTest, ACycleNamesItsPullRequests) {
  forge.add_pull(k_repo, {5, "top", "a", "Top", true, ""});
  forge.add_pull(k_repo, {6, "a", "b", "A", true, ""});
  forge.add_pull(k_repo, {7, "b", "c", "B", true, ""});
  forge.add_pull(k_repo, {8, "c", "a", "C", true, ""});
  // #5 leads into the cycle and is not named: it is not in it.
  EXPECT_EQ(
      error(github(), "top"),
      "--github: the base branches go round in a cycle: pull request #6 (b ← a), pull request #7 "
      "(c ← b), pull request #8 (a ← c); retarget one of them onto the branch below it "
      "(or 'main')");
}

TEST_F(ForgeStackTest, NoPullRequestOfTheBranch) {
  three(k_repo);
  const std::string none =
      "--github: no open pull request of acme/app has head branch 'f4': open one for it, or pass "
      "the refs (coldgate stack REF0 … REFn)";
  EXPECT_EQ(error(github(), "f4"), none);
  // A fork's pull request of that name does not count.
  forge.add_pull(k_repo, {31, "f4", "f3", "Forked", true, "someone/fork"});
  EXPECT_EQ(error(github(), "f4"), none);
}

TEST_F(ForgeStackTest, TwoOpenPullRequestsOfOneHead) {
  three(k_repo);
  forge.add_pull(k_repo, {14, "f2", "main", "Second, again", true, ""});
  EXPECT_EQ(
      error(github(), "f3"),
      "--github: pull request #12 and pull request #14 are all open from branch 'f2': which one is "
      "in the stack is ambiguous; close all but one, or pass the refs "
      "(coldgate stack REF0 … REFn)");
}

TEST_F(ForgeStackTest, TooDeepAStack) {
  std::string base = "main";
  for (long i = 1; i <= 51; ++i) {
    forge.add_pull(k_repo, {i, "s" + std::to_string(i), base, "", true, ""});
    base = "s" + std::to_string(i);
  }
  EXPECT_EQ(
      error(github(), "s51"),
      "--github: the stack below pull request #51 is more than 50 pull requests deep; pass the "
      "refs of the part to measure (coldgate stack REF0 … REFn)");
  EXPECT_EQ(discover_stack(github(), "s50", policy, {}).pulls.size(), 50u);
}

TEST_F(ForgeStackTest, HttpFailuresNameTheRequestNotTheToken) {
  three(k_repo);
  std::string m = error(github("ghp_WrongTokenAlsoNeverPrinted"), "f3", ExitCode::infrastructure);
  EXPECT_TRUE(contains(m, "token rejected (401)")) << m;
  EXPECT_FALSE(contains(m, "ghp_WrongTokenAlsoNeverPrinted")) << m;
  forge.fail_next({403, R"({"message":"Resource not accessible by integration"})", {}, "GET"});
  m = error(github(), "f3", ExitCode::infrastructure);
  EXPECT_TRUE(contains(m, "may not read repository acme/app")) << m;
  // A server error is retried; the answer after it is used.
  forge.fail_next({502, R"({"message":"Bad Gateway"})", {}, "GET"});
  EXPECT_EQ(discover_stack(github(), "f3", policy, {}).pulls.size(), 3u);
  // An unknown repository.
  std::map<std::string, std::string> vars{{"GITHUB_REPOSITORY", "acme/none"},
                                          {"GITHUB_API_URL", forge.url()},
                                          {"GITHUB_TOKEN", k_token}};
  Target none = resolve_repository({"github", "", 0}, env_of(vars));
  m = error(none, "f3", ExitCode::infrastructure);
  EXPECT_TRUE(contains(m, "not found (404): repository acme/none does not exist")) << m;
}

TEST(ForgeStackRepository, IsTheTargetWithoutAPullRequest) {
  std::map<std::string, std::string> vars{{"GITHUB_ACTIONS", "true"}, {"GITHUB_REPOSITORY", "acme/app"},
                                          {"GITHUB_TOKEN", "tok"}, {"GITHUB_API_URL", "https://ghe.example/api/v3/"}};
  Target t = resolve_repository({}, env_of(vars));  // no pull request number anywhere: not needed
  EXPECT_EQ(t.repository_url, "https://ghe.example/api/v3/repos/acme/app");
  EXPECT_EQ(t.number, 0);
  EXPECT_EQ(t.what, "repository acme/app");
  EXPECT_TRUE(t.list_url.empty());
  vars = {{"GITLAB_CI", "true"}, {"CI_API_V4_URL", "https://g.example/api/v4"}, {"CI_PROJECT_ID", "group/app"},
          {"COLDGATE_GITLAB_TOKEN", "glpat"}};
  t = resolve_repository({}, env_of(vars));
  EXPECT_EQ(t.kind, Kind::gitlab);
  EXPECT_EQ(t.repository_url, "https://g.example/api/v4/projects/group%2Fapp");
  vars.erase("COLDGATE_GITLAB_TOKEN");
  EXPECT_THROW(resolve_repository({}, env_of(vars)), NotConfigured);
}

// comment_stack: each pull request's report on its own pull request, updated in place later.
struct ForgeStackCommentTest : ::testing::Test {
  ForgeStackCommentTest() : forge(k_token) {}

  void report(int k, const std::string& ref, const std::string& text) {
    dir.write("coldgate-out/stack/" + std::to_string(k) + "-" + ref + "/report.md",
              "<!-- coldgate:report:Start-up -->\n## Start-up\n\n" + text + "\n");
  }
  std::vector<report::StackEntry> entries() {
    std::vector<report::StackEntry> out;
    long numbers[] = {11, 12, 13};
    const char* refs[] = {"f1", "f2", "f3"};
    for (int k = 1; k <= 3; ++k) {
      report::StackEntry e;
      e.index = k;
      e.ref = refs[k - 1];
      e.number = numbers[k - 1];
      e.report = std::to_string(k) + "-" + e.ref + "/report.md";
      out.push_back(e);
    }
    return out;
  }
  cli::StackArgs args() {
    cli::StackArgs a;
    a.out = (dir / "coldgate-out").string();
    a.github = true;
    a.comment = true;
    return a;
  }
  std::vector<FakeForge::Seen> writes(const std::string& method) {
    std::vector<FakeForge::Seen> out;
    for (const auto& s : forge.seen()) {
      if (s.method == method) out.push_back(s);
    }
    return out;
  }

  FakeForge forge;
  TempDir dir;
  ScopedEnv actions{"GITHUB_ACTIONS", "true"};
  ScopedEnv repository{"GITHUB_REPOSITORY", "acme/app"};
  ScopedEnv api{"GITHUB_API_URL", forge.url().c_str()};
  ScopedEnv token{"GITHUB_TOKEN", k_token};
  ScopedEnv event{"GITHUB_EVENT_PATH", nullptr};
  ScopedEnv gitlab_ci{"GITLAB_CI", nullptr};
  ScopedEnv gitlab_api{"CI_API_V4_URL", nullptr};
};

TEST_F(ForgeStackCommentTest, OneCommentPerPullRequestUpdatedInPlace) {
  report(1, "f1", "f1: passes");
  report(2, "f2", "f2: regresses");
  report(3, "f3", "f3: fixes it");
  auto list = entries();
  cli::comment_stack(args(), list, "https://ci.example/run/1");
  for (int k = 1; k <= 3; ++k) {
    auto c = forge.comments("/repos/acme/app/issues/" + std::to_string(10 + k));
    ASSERT_EQ(c.size(), 1u) << k;
    EXPECT_TRUE(c[0].body.starts_with("<!-- coldgate:report:Start-up -->\n")) << c[0].body;
    EXPECT_TRUE(contains(c[0].body, list[k - 1].ref + ": ")) << c[0].body;
    EXPECT_TRUE(contains(c[0].body, "\nPull request " + std::to_string(k) +
                                        " of 3 in this stack: [stack summary](https://ci.example/run/1)\n"))
        << c[0].body;
  }
  EXPECT_EQ(writes("POST").size(), 3u);

  // A later run with new reports: the same three comments, edited; none added. An entry without
  // a pull request (a ref given by hand) gets none.
  report(2, "f2", "f2: now passes");
  list.push_back({4, "f4", 0, "", "", "4-f4/report.md", nullptr});
  report(4, "f4", "fourth");
  cli::comment_stack(args(), list, "");
  EXPECT_EQ(writes("POST").size(), 3u);
  EXPECT_EQ(writes("PATCH").size(), 3u);
  auto c = forge.comments("/repos/acme/app/issues/12");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(contains(c[0].body, "f2: now passes")) << c[0].body;
  EXPECT_FALSE(contains(c[0].body, "regresses")) << c[0].body;
  EXPECT_TRUE(contains(c[0].body, "Pull request 2 of 4 in this stack: `" + util::display_path(dir / "coldgate-out/stack/summary.md") + "`"))
      << c[0].body;
  EXPECT_TRUE(forge.comments("/repos/acme/app/issues/0").empty());
}

TEST_F(ForgeStackCommentTest, AMissingTokenIsAnErrorBeforeAnyComment) {
  report(1, "f1", "first");
  ScopedEnv no_token{"GITHUB_TOKEN", nullptr};
  try {
    cli::comment_stack(args(), entries(), "");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_TRUE(contains(e.message(), "--comment: no token: $GITHUB_TOKEN is not set")) << e.message();
  }
  EXPECT_TRUE(forge.seen().empty());
}

}  // namespace
}  // namespace coldgate::forge
