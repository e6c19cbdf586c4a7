#include "forge/forge.hpp"

#include <gtest/gtest.h>

#include <map>

#include "report/report.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::forge {
namespace {

using coldgate::testing::TempDir;

Env env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(ForgeLinks, FindsNextAmongSeveralRelations) {
  std::string link =
      "<https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=1>; rel=\"prev\", "
      "<https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=3>; rel=\"next\", "
      "<https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=9>; rel=\"last\"";
  EXPECT_EQ(next_link(link), "https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=3");
  EXPECT_EQ(next_link("<https://x/a?page=9>; rel=\"last\", <https://x/a?page=1>; rel=\"first\""), "");
  EXPECT_EQ(next_link("<https://x/a?page=2>; rel=next"), "https://x/a?page=2");
  EXPECT_EQ(next_link("<https://x/a?page=2>; title=\"n\"; rel=\"prev next\""), "https://x/a?page=2");
  EXPECT_EQ(next_link(""), "");
  // "nextish" is not "next".
  EXPECT_EQ(next_link("<https://x/a?page=2>; rel=\"nextish\""), "");
}

TEST(ForgeLinks, SetsThePageParameterForGitLabsXNextPage) {
  EXPECT_EQ(with_page("https://g/api/v4/p/notes?per_page=100", "2"), "https://g/api/v4/p/notes?per_page=100&page=2");
  EXPECT_EQ(with_page("https://g/n?page=2&per_page=100", "3"), "https://g/n?page=3&per_page=100");
  EXPECT_EQ(with_page("https://g/n", "4"), "https://g/n?page=4");
  HttpResponse r;
  r.headers["x-next-page"] = "5";
  EXPECT_EQ(next_page_url(r, "https://g/n?per_page=100"), "https://g/n?per_page=100&page=5");
  r.headers["x-next-page"] = "";
  EXPECT_EQ(next_page_url(r, "https://g/n?per_page=100"), "");
  r.headers["link"] = "<https://g/n?id=1&page=2>; rel=\"next\"";
  EXPECT_EQ(next_page_url(r, "https://g/n?per_page=100"), "https://g/n?id=1&page=2");
}

TEST(ForgeMarker, MatchesOnlyAtTheStartOfALineAndTheWholeKey) {
  std::string m = marker_line("Start-up");
  EXPECT_EQ(m, "<!-- coldgate:report:Start-up -->");
  EXPECT_TRUE(has_marker(m + "\n## Start-up", m));
  EXPECT_TRUE(has_marker("intro\n" + m + "\n", m));
  EXPECT_FALSE(has_marker("> " + m + "\n", m));  // a quote in a reply
  EXPECT_FALSE(has_marker(marker_line("Start-up-2") + "\n", m));
  EXPECT_FALSE(has_marker(m, marker_line("Start")));
}

TEST(ForgeRetry, WaitsForRetryAfterTheResetOrBacksOff) {
  RetryPolicy p;
  p.base_backoff_ms = 1000;
  HttpResponse r;
  r.status = 200;
  EXPECT_FALSE(retry_wait_ms(r, 1, p, 0));
  r.status = 404;
  EXPECT_FALSE(retry_wait_ms(r, 1, p, 0));
  r.status = 403;  // a plain 403 is a permission problem, not a rate limit
  EXPECT_FALSE(retry_wait_ms(r, 1, p, 0));
  r.status = 502;
  EXPECT_EQ(retry_wait_ms(r, 1, p, 0), 1000);
  EXPECT_EQ(retry_wait_ms(r, 3, p, 0), 4000);
  r.status = 403;
  r.headers["retry-after"] = "7";  // secondary rate limit
  EXPECT_EQ(retry_wait_ms(r, 1, p, 0), 7000);
  r.headers.clear();
  r.headers["x-ratelimit-remaining"] = "0";
  r.headers["x-ratelimit-reset"] = "1000030";
  EXPECT_EQ(retry_wait_ms(r, 1, p, 1000000), 31000);
  r.status = 429;
  r.headers.clear();
  EXPECT_EQ(retry_wait_ms(r, 2, p, 0), 2000);
}

TEST(ForgeRedact, ReplacesEverySecret) {
  EXPECT_EQ(redact("a ghp_x b ghp_x", "ghp_x"), "a *** b ***");
  EXPECT_EQ(redact("nothing", ""), "nothing");
}

TEST(ForgeTarget, GitHubFromTheActionsEnvironment) {
  TempDir dir;
  auto event = dir.write("event.json", R"({"action":"opened","number":12,"pull_request":{"number":12,
    "head":{"repo":{"full_name":"someone/fork"}},"base":{"repo":{"full_name":"acme/app"}}}})");
  Target t = resolve_target({}, env_of({{"GITHUB_ACTIONS", "true"},
                                        {"GITHUB_REPOSITORY", "acme/app"},
                                        {"GITHUB_TOKEN", "tok"},
                                        {"GITHUB_API_URL", "https://ghe.example/api/v3/"},
                                        {"GITHUB_EVENT_PATH", event.string()}}));
  EXPECT_EQ(t.kind, Kind::github);
  EXPECT_EQ(t.number, 12);
  EXPECT_TRUE(t.number_from_event);
  EXPECT_EQ(t.fork, true);
  EXPECT_EQ(t.list_url, "https://ghe.example/api/v3/repos/acme/app/issues/12/comments?per_page=100");
  EXPECT_EQ(t.create_url, "https://ghe.example/api/v3/repos/acme/app/issues/12/comments");
  EXPECT_EQ(t.item_url, "https://ghe.example/api/v3/repos/acme/app/issues/comments/");
  EXPECT_EQ(t.update_method, "PATCH");
  EXPECT_EQ(t.headers.at(0), "Authorization: Bearer tok");

  // --pr wins over the event; the default API URL; an issue_comment event's issue.number.
  auto comment_event = dir.write("comment.json", R"({"issue":{"number":5}})");
  t = resolve_target({"github", "", 77}, env_of({{"GITHUB_REPOSITORY", "acme/app"},
                                                 {"GITHUB_TOKEN", "tok"},
                                                 {"GITHUB_EVENT_PATH", comment_event.string()}}));
  EXPECT_EQ(t.number, 77);
  EXPECT_FALSE(t.number_from_event);
  EXPECT_FALSE(t.fork.has_value());
  EXPECT_EQ(t.list_url, "https://api.github.com/repos/acme/app/issues/77/comments?per_page=100");
  t = resolve_target({"github", "", 0}, env_of({{"GITHUB_REPOSITORY", "acme/app"},
                                                {"GITHUB_TOKEN", "tok"},
                                                {"GITHUB_EVENT_PATH", comment_event.string()}}));
  EXPECT_EQ(t.number, 5);
}

TEST(ForgeTarget, SaysWhatIsMissing) {
  auto message = [](const TargetOptions& o, std::map<std::string, std::string> vars) {
    try {
      resolve_target(o, env_of(vars));
    } catch (const NotConfigured& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({}, {}).find("no forge detected"), std::string::npos);
  EXPECT_NE(message({}, {{"GITHUB_REPOSITORY", "a/b"}}).find("$GITHUB_TOKEN is not set"), std::string::npos);
  EXPECT_NE(message({"github", "MY_TOKEN", 1}, {{"GITHUB_REPOSITORY", "a/b"}, {"MY_TOKEN", ""}})
                .find("$MY_TOKEN is empty"),
            std::string::npos);
  EXPECT_NE(message({}, {{"GITHUB_REPOSITORY", "a/b"}, {"GITHUB_TOKEN", "t"}}).find("--pr N"), std::string::npos);
  EXPECT_NE(message({}, {{"GITLAB_CI", "true"}, {"CI_API_V4_URL", "https://g/api/v4"}, {"CI_PROJECT_ID", "3"},
                         {"COLDGATE_GITLAB_TOKEN", "t"}})
                .find("CI_MERGE_REQUEST_IID"),
            std::string::npos);
  EXPECT_THROW(resolve_target({"gitea", "", 1}, env_of({})), Error);
}

TEST(ForgeTarget, GitLabNotesWithAnEncodedProjectPath) {
  Target t = resolve_target({}, env_of({{"GITLAB_CI", "true"},
                                        {"CI_API_V4_URL", "https://gitlab.example/api/v4"},
                                        {"CI_PROJECT_ID", "group/sub proj"},
                                        {"CI_MERGE_REQUEST_IID", "9"},
                                        {"COLDGATE_GITLAB_TOKEN", "glpat"}}));
  EXPECT_EQ(t.kind, Kind::gitlab);
  EXPECT_EQ(t.list_url, "https://gitlab.example/api/v4/projects/group%2Fsub%20proj/merge_requests/9/notes?per_page=100");
  EXPECT_EQ(t.item_url, "https://gitlab.example/api/v4/projects/group%2Fsub%20proj/merge_requests/9/notes/");
  EXPECT_EQ(t.update_method, "PUT");
  EXPECT_EQ(t.headers.at(0), "PRIVATE-TOKEN: glpat");
}

TEST(ReportCut, CutsAtALineAndUtf8BoundaryAndClosesWhatIsOpen) {
  std::string text = "<!-- coldgate:report:x -->\n## x\n\n<details><summary>d</summary>\n\n```diff\n";
  while (text.size() < 5000) text += "+ Grüße, ünïcödé line\n";
  std::string cut = report::cut_markdown(text, 2000, "coldgate-out/report-full.md");
  EXPECT_LE(cut.size(), 2000u);
  EXPECT_TRUE(cut.starts_with("<!-- coldgate:report:x -->\n"));
  EXPECT_NE(cut.find("\n```\n</details>\n"), std::string::npos) << cut.substr(cut.size() - 300);
  EXPECT_NE(cut.find("This report was cut to stay under 2,000 characters. The whole report is "
                     "`coldgate-out/report-full.md`."),
            std::string::npos)
      << cut.substr(cut.size() - 300);
  // Every kept line is whole: the text before the closing fence ends with a complete line.
  std::string kept = cut.substr(0, cut.find("\n```\n</details>\n") + 1);
  EXPECT_TRUE(kept.ends_with("line\n"));
  EXPECT_EQ(report::cut_markdown("short\n", 2000, "f"), "short\n");
}

}  // namespace
}  // namespace coldgate::forge
