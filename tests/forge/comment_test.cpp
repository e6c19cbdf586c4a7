// `coldgate comment` end to end: the real binary against FakeForge, a GitHub/GitLab REST server
// on 127.0.0.1 that keeps comments in memory and pages them as the forges do.
#include <gtest/gtest.h>

#include <filesystem>

#include "forge/fake_forge.hpp"
#include "results/results.hpp"
#include "results/json.hpp"
#include "support/support.hpp"

namespace coldgate::forge {
namespace {

using coldgate::testing::FakeForge;
using coldgate::testing::RunResult;
using coldgate::testing::TempDir;
using coldgate::testing::run_coldgate;
using coldgate::testing::slurp;

constexpr const char* k_token = "ghp_T0kenThatMustNeverBePrinted42";
constexpr const char* k_thread = "/repos/acme/app/issues/7";

std::string marker(const std::string& key) { return "<!-- coldgate:report:" + key + " -->"; }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct CommentTest : ::testing::Test {
  CommentTest() : forge(k_token) {
    pull_request_event("acme/app");
    results(true);
  }

  // $GITHUB_EVENT_PATH of a pull_request event for PR 7 from `head_repo` into acme/app.
  void pull_request_event(const std::string& head_repo) {
    dir.write("event.json", R"({"action":"synchronize","number":7,"pull_request":{"number":7,)"
                            R"("head":{"repo":{"full_name":")" + head_repo + R"("}},)"
                            R"("base":{"repo":{"full_name":"acme/app"}}}})");
  }
  void report(const std::string& key, const std::string& text) {
    dir.write("coldgate-out/report.md", marker(key) + "\n## " + key + "\n\n" + text);
  }
  // results.json whose gate passes, or fails with a failed stage.
  void results(bool pass) {
    results::Results r;
    results::StageResult s;
    s.name = "config-load";
    if (!pass) s.error = "exit code 1";
    r.stages.push_back(s);
    dir.write("coldgate-out/results.json", results::to_json(r));
  }
  RunResult comment(std::vector<std::string> args = {}, std::vector<std::string> env = {}) {
    args.insert(args.begin(), "comment");
    std::vector<std::string> all{"GITHUB_ACTIONS=true",
                                 "GITHUB_REPOSITORY=acme/app",
                                 "GITHUB_API_URL=" + forge.url(),
                                 "GITHUB_EVENT_NAME=pull_request",
                                 "GITHUB_EVENT_PATH=" + (dir / "event.json").string(),
                                 std::string("GITHUB_TOKEN=") + k_token,
                                 "GITLAB_CI=",
                                 "CI_API_V4_URL="};
    all.insert(all.end(), env.begin(), env.end());
    RunResult r = run_coldgate(args, dir.path(), "", all);
    printed += r.out + r.err;
    return r;
  }
  // The environment of `coldgate run --comment` in a GitHub Actions pull request job.
  std::vector<std::string> run_env() {
    return {"CI=", "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/app",
            "GITHUB_API_URL=" + forge.url(), "GITHUB_EVENT_NAME=pull_request",
            "GITHUB_EVENT_PATH=" + (dir / "event.json").string(),
            std::string("GITHUB_TOKEN=") + k_token, "GITHUB_STEP_SUMMARY="};
  }
  std::vector<FakeForge::Seen> requests(const std::string& method) {
    std::vector<FakeForge::Seen> out;
    for (const auto& s : forge.seen()) {
      if (s.method == method) out.push_back(s);
    }
    return out;
  }

  // The token appears in nothing coldgate printed or wrote.
  void TearDown() override {
    EXPECT_FALSE(contains(printed, k_token)) << printed;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path())) {
      if (e.is_regular_file()) {
        EXPECT_FALSE(contains(slurp(e.path()), k_token)) << e.path();
      }
    }
  }

  TempDir dir;
  FakeForge forge;
  std::string printed;  // everything any run printed
};

TEST_F(CommentTest, FirstRunCreatesTheCommentAndTheSecondUpdatesIt) {
  report("Start-up", "first body\n");
  auto r = comment();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto list = forge.comments(k_thread);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].body, marker("Start-up") + "\n## Start-up\n\nfirst body\n");
  EXPECT_TRUE(contains(r.out, "comment created on pull request #7 of acme/app")) << r.out;
  // The documented REST headers on every request.
  for (const auto& s : forge.seen()) {
    EXPECT_EQ(s.headers.at("Authorization"), std::string("Bearer ") + k_token);
    EXPECT_EQ(s.headers.at("Accept"), "application/vnd.github+json");
    EXPECT_EQ(s.headers.at("X-GitHub-Api-Version"), "2022-11-28");
    EXPECT_TRUE(s.headers.at("User-Agent").starts_with("coldgate/"));
  }
  ASSERT_EQ(requests("POST").size(), 1u);
  EXPECT_EQ(requests("POST")[0].path, "/repos/acme/app/issues/7/comments");
  // The artifact carries the PR number to the workflow_run recipe.
  EXPECT_EQ(slurp(dir / "coldgate-out/pr-number"), "7\n");

  report("Start-up", "second body\n");
  r = comment();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  list = forge.comments(k_thread);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_TRUE(list[0].body.ends_with("second body\n"));
  ASSERT_EQ(requests("PATCH").size(), 1u);
  EXPECT_EQ(requests("PATCH")[0].path, "/repos/acme/app/issues/comments/" + std::to_string(list[0].id));
  EXPECT_EQ(requests("POST").size(), 1u);
  EXPECT_TRUE(contains(r.out, "comment " + std::to_string(list[0].id) + " updated")) << r.out;
}

TEST_F(CommentTest, FindsTheMarkerOnPageThreeOfThree) {
  for (int i = 0; i < 230; ++i) forge.add(k_thread, "LGTM " + std::to_string(i));
  // Quoted in a reply, the marker does not count.
  forge.add(k_thread, "> " + marker("Start-up") + "\n> quoted");
  long ours = forge.add(k_thread, marker("Start-up") + "\nold report");
  for (int i = 0; i < 20; ++i) forge.add(k_thread, "more " + std::to_string(i));
  report("Start-up", "new report\n");
  auto r = comment();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto gets = requests("GET");
  ASSERT_EQ(gets.size(), 3u);
  EXPECT_EQ(gets[0].path, "/repos/acme/app/issues/7/comments?per_page=100");
  EXPECT_TRUE(contains(gets[2].path, "page=3")) << gets[2].path;
  ASSERT_EQ(requests("PATCH").size(), 1u);
  EXPECT_EQ(requests("PATCH")[0].path, "/repos/acme/app/issues/comments/" + std::to_string(ours));
  EXPECT_TRUE(requests("POST").empty());
  auto list = forge.comments(k_thread);
  EXPECT_EQ(list.size(), 252u);
  EXPECT_TRUE(list[231].body.ends_with("new report\n"));
  EXPECT_EQ(list[230].body, "> " + marker("Start-up") + "\n> quoted");
}

TEST_F(CommentTest, TwoKeysKeepTwoComments) {
  report("Start-up", "startup v1\n");
  ASSERT_EQ(comment().exit_code, 0);
  report("Import", "import v1\n");
  ASSERT_EQ(comment().exit_code, 0);
  report("Start-up", "startup v2\n");
  ASSERT_EQ(comment().exit_code, 0);
  // --key overrides report.md's marker.
  report("Start-up", "import v2\n");
  auto r = comment({"--key", "Import"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto list = forge.comments(k_thread);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_TRUE(list[0].body.starts_with(marker("Start-up") + "\n"));
  EXPECT_TRUE(list[0].body.ends_with("startup v2\n"));
  EXPECT_TRUE(list[1].body.starts_with(marker("Import") + "\n"));
  EXPECT_TRUE(list[1].body.ends_with("import v2\n"));
}

TEST_F(CommentTest, ServerErrorsAndSecondaryRateLimitsAreRetried) {
  report("Start-up", "body\n");
  forge.fail_next({500, R"({"message":"Server Error"})", {}, "GET"});
  forge.fail_next({403,
                   R"({"message":"You have exceeded a secondary rate limit."})",
                   {{"Retry-After", "0"}},
                   "POST"});
  auto r = comment({"--verbose"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The GET is retried; after the failed POST the comments are read again before posting again.
  EXPECT_EQ(requests("GET").size(), 3u);
  EXPECT_EQ(requests("POST").size(), 2u);
  EXPECT_EQ(forge.comments(k_thread).size(), 1u);
  EXPECT_TRUE(contains(r.err, "< 500")) << r.err;
  EXPECT_TRUE(contains(r.err, "retrying in")) << r.err;
  // --verbose shows the credential header masked.
  EXPECT_TRUE(contains(r.err, "> Authorization: Bearer ***")) << r.err;
}

TEST_F(CommentTest, APostWhoseAnswerWasLostIsNotRepeated) {
  report("Start-up", "body\n");
  forge.fail_next({502, R"({"message":"Bad Gateway"})", {{"Retry-After", "0"}}, "POST", true});
  auto r = comment();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The POST created the comment although it answered 502: the second look finds it.
  EXPECT_EQ(forge.comments(k_thread).size(), 1u);
  EXPECT_EQ(requests("POST").size(), 1u);
  EXPECT_EQ(requests("PATCH").size(), 1u);
}

TEST_F(CommentTest, GivesUpAfterTheAttemptsWithTheStatus) {
  report("Start-up", "body\n");
  for (int i = 0; i < 5; ++i) forge.fail_next({502, R"({"message":"Bad Gateway"})", {{"Retry-After", "0"}}, ""});
  auto r = comment();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "HTTP 502 (\"Bad Gateway\")")) << r.err;
  EXPECT_EQ(forge.seen().size(), 5u);
}

TEST_F(CommentTest, ForkPullRequestWarnsAndPointsToTheRecipe) {
  pull_request_event("someone/app-fork");
  forge.read_only(true);
  report("Start-up", "body\n");
  auto r = comment();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "coldgate: warning: comment:")) << r.err;
  EXPECT_TRUE(contains(r.err, "a pull request from a fork")) << r.err;
  EXPECT_TRUE(contains(r.err, "ci/github/coldgate-comment.yml")) << r.err;
  EXPECT_TRUE(forge.comments(k_thread).empty());
  EXPECT_EQ(slurp(dir / "coldgate-out/pr-number"), "7\n");
}

TEST_F(CommentTest, ForbiddenOnOwnRepositoryNamesThePermission) {
  forge.read_only(true);
  report("Start-up", "body\n");
  auto r = comment();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "coldgate: error: POST ")) << r.err;
  EXPECT_TRUE(contains(r.err, "permissions: pull-requests: write")) << r.err;
}

TEST_F(CommentTest, RejectedTokenAndMissingPullRequestAreClear) {
  report("Start-up", "body\n");
  auto r = comment({}, {"GITHUB_TOKEN=ghp_wrongTokenAlsoSecret"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "token rejected (401) (\"Bad credentials\"): check $GITHUB_TOKEN")) << r.err;
  EXPECT_FALSE(contains(r.out + r.err, "ghp_wrongTokenAlsoSecret"));

  forge.fail_next({404, R"({"message":"Not Found"})", {}, "GET"});
  r = comment();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "not found (404): pull request #7 of acme/app does not exist, or $GITHUB_TOKEN cannot see it"))
      << r.err;
}

TEST_F(CommentTest, AbsentTokenFailsWithExit3OrWarnsWhenOptional) {
  report("Start-up", "body\n");
  auto r = comment({}, {"GITHUB_TOKEN="});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "coldgate: error: comment: no token: $GITHUB_TOKEN is empty")) << r.err;
  r = comment({"--optional"}, {"GITHUB_TOKEN="});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "coldgate: warning: comment: no token")) << r.err;
  // --token-env names another variable.
  r = comment({"--token-env", "MY_BOT_TOKEN"}, {"MY_BOT_TOKEN="});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "$MY_BOT_TOKEN is empty")) << r.err;
  EXPECT_TRUE(forge.seen().empty());
  r = comment({"--token-env", "MY_BOT_TOKEN"}, {"GITHUB_TOKEN=", std::string("MY_BOT_TOKEN=") + k_token});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(forge.comments(k_thread).size(), 1u);
}

TEST_F(CommentTest, OversizedReportIsCutUnderTheLimit) {
  std::string text;
  for (int i = 0; text.size() < 120'000; ++i) text += "| stage-" + std::to_string(i) + " | wall_ms | 1.0 ms | ✓ |\n";
  report("Start-up", text);
  auto r = comment();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto list = forge.comments(k_thread);
  ASSERT_EQ(list.size(), 1u);
  const std::string& body = list[0].body;
  EXPECT_LE(body.size(), 65'000u);
  EXPECT_GT(body.size(), 60'000u);
  EXPECT_TRUE(body.starts_with(marker("Start-up") + "\n"));
  EXPECT_TRUE(contains(body, "This report was cut to stay under 65,000 characters. The whole report is "
                             "`coldgate-out/report.md`."))
      << body.substr(body.size() - 300);
}

TEST_F(CommentTest, DryRunPrintsTheRequestsAndSendsNothing) {
  report("Start-up", "body\n");
  auto r = comment({"--dry-run"}, {"GITHUB_TOKEN="});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "would GET " + forge.url() + "/repos/acme/app/issues/7/comments?per_page=100 "
                              "(and following pages)"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "PATCH " + forge.url() + "/repos/acme/app/issues/comments/<id>")) << r.out;
  EXPECT_TRUE(contains(r.out, "POST " + forge.url() + "/repos/acme/app/issues/7/comments: body")) << r.out;
  EXPECT_TRUE(forge.seen().empty());
  EXPECT_FALSE(std::filesystem::exists(dir / "coldgate-out/pr-number"));
}

TEST_F(CommentTest, OnChangePostsNothingNewWhileTheGatePasses) {
  report("Start-up", "passing\n");
  auto r = comment({"--mode", "on-change"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(forge.comments(k_thread).empty());
  EXPECT_TRUE(contains(r.out, "no comment on pull request #7 of acme/app")) << r.out;

  results(false);
  report("Start-up", "failing\n");
  ASSERT_EQ(comment({"--mode", "on-change"}).exit_code, 0);
  ASSERT_EQ(forge.comments(k_thread).size(), 1u);

  results(true);
  report("Start-up", "fixed\n");
  ASSERT_EQ(comment({"--mode", "on-change"}).exit_code, 0);
  auto list = forge.comments(k_thread);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_TRUE(list[0].body.ends_with("fixed\n"));

  r = comment({"--mode", "never"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(forge.seen().size(), 5u);  // GET, GET+POST, GET+PATCH; never sends nothing
}

TEST_F(CommentTest, GitLabNotesAreCreatedAndUpdatedAcrossPages) {
  const std::string notes_thread = "/projects/group/app/mr/3";
  auto gitlab = [&](std::vector<std::string> args = {}) {
    args.insert(args.begin(), "comment");
    RunResult r = run_coldgate(args, dir.path(), "",
                               {"GITHUB_ACTIONS=", "GITHUB_REPOSITORY=", "GITLAB_CI=true",
                                "CI_API_V4_URL=" + forge.url() + "/api/v4", "CI_PROJECT_ID=group/app",
                                "CI_MERGE_REQUEST_IID=3", std::string("COLDGATE_GITLAB_TOKEN=") + k_token});
    printed += r.out + r.err;
    return r;
  };
  // GitLab's own system note quoting the marker is not ours.
  forge.add(notes_thread, marker("Start-up") + "\nchanged the description", true);
  for (int i = 0; i < 120; ++i) forge.add(notes_thread, "note " + std::to_string(i));
  report("Start-up", "v1\n");
  auto r = gitlab();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto list = forge.comments(notes_thread);
  ASSERT_EQ(list.size(), 122u);
  EXPECT_TRUE(list.back().body.ends_with("v1\n"));
  ASSERT_EQ(requests("POST").size(), 1u);
  EXPECT_EQ(requests("POST")[0].headers.at("PRIVATE-TOKEN"), k_token);

  forge.gitlab_without_link(true);  // then only X-Next-Page says there is a page 2
  report("Start-up", "v2\n");
  r = gitlab();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  list = forge.comments(notes_thread);
  ASSERT_EQ(list.size(), 122u);
  EXPECT_TRUE(list.back().body.ends_with("v2\n"));
  ASSERT_EQ(requests("PUT").size(), 1u);
  EXPECT_TRUE(requests("PUT")[0].path.ends_with("/notes/" + std::to_string(list.back().id)));
  EXPECT_TRUE(contains(requests("GET").back().path, "page=2")) << requests("GET").back().path;

  r = gitlab({"--optional"});
  EXPECT_EQ(r.exit_code, 0);
  r = run_coldgate({"comment"}, dir.path(), "",
                   {"GITHUB_ACTIONS=", "GITHUB_REPOSITORY=", "GITLAB_CI=true", "CI_API_V4_URL=" + forge.url() + "/api/v4",
                    "CI_PROJECT_ID=group/app", "CI_MERGE_REQUEST_IID=3", "COLDGATE_GITLAB_TOKEN="});
  printed += r.out + r.err;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err, "$COLDGATE_GITLAB_TOKEN is empty")) << r.err;
}

// `coldgate run --comment`: the run's report goes to the pull request; the gate's verdict
// outranks a failed comment. Runs a real PostgreSQL (local provider) like tests/measure.
TEST_F(CommentTest, RunWithCommentPostsTheReportAndKeepsTheGatesExitCode) {
  dir.write("coldgate.yaml", "version: 1\n"
                             "database: { provider: local }\n"
                             "defaults: { runs: 1, warm: 0 }\n"
                             "report: { title: Nightly import }\n"
                             "stages:\n"
                             "  - name: ok\n"
                             "    command: [\"true\"]\n");
  std::vector<std::string> env = run_env();
  RunResult r = run_coldgate({"run", "--comment"}, dir.path(), "", env);
  printed += r.out + r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto list = forge.comments(k_thread);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_TRUE(list[0].body.starts_with(marker("Nightly-import") + "\n## Nightly import")) << list[0].body;
  EXPECT_EQ(list[0].body, slurp(dir / "coldgate-out/report.md"));

  // A failing stage: exit 1 stands even though the comment cannot be posted (no token).
  dir.write("coldgate.yaml", "version: 1\n"
                             "database: { provider: local }\n"
                             "defaults: { runs: 1, warm: 0 }\n"
                             "report: { title: Nightly import }\n"
                             "stages:\n"
                             "  - name: broken\n"
                             "    command: [\"false\"]\n");
  env[6] = "GITHUB_TOKEN=";
  r = run_coldgate({"run", "--comment"}, dir.path(), "", env);
  printed += r.out + r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "coldgate: warning: comment not posted: comment: no token: $GITHUB_TOKEN is empty")) << r.err;
}

// A run whose setup fails has a report too, and `run --comment` posts it: the pull request
// says why, and the run keeps its exit code.
TEST_F(CommentTest, RunWithCommentPostsWhySetupFailed) {
  dir.write("coldgate.yaml", "version: 1\n"
                             "database: { provider: local }\n"
                             "setup:\n"
                             "  - sql: schema.sql\n"
                             "defaults: { runs: 1, warm: 0 }\n"
                             "stages:\n"
                             "  - name: ok\n"
                             "    command: [\"true\"]\n");
  dir.write("schema.sql", "CREATE TABLE t (id int);\nINSERT INTO t VALUES ('x');\n");
  std::vector<std::string> env = run_env();
  RunResult r = run_coldgate({"run", "--comment"}, dir.path(), "", env);
  printed += r.out + r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto list = forge.comments(k_thread);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].body, slurp(dir / "coldgate-out/report.md"));
  EXPECT_TRUE(contains(list[0].body, "\n❌ **failed: setup step sql schema.sql at schema.sql:2:23: "
                                     "SQLSTATE 22P02: invalid input syntax for type integer: "
                                     "\"x\"; 1 stage not run**\n"))
      << list[0].body;
  EXPECT_TRUE(contains(r.out, "comment created on pull request #7")) << r.out;
}

}  // namespace
}  // namespace coldgate::forge
