// The CI files (ci/github, ci/gitlab) and the Dockerfile cannot run here (no GitHub, no GitLab);
// these tests check what can be checked without them: every YAML file parses, the composite
// action's inputs, step ids and shells are consistent, its inline scripts are valid bash, the
// workflows carry the permissions and history they need, the fork-safe pair names each other,
// and the Dockerfile has the shape docs/ci.md promises. The image itself: ci/docker-test.sh.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/support.hpp"
#include "util/process.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using coldgate::testing::slurp;
using coldgate::testing::source_dir;
using coldgate::testing::TempDir;

YAML::Node load(const std::string& relative) {
  return YAML::LoadFile((source_dir() / relative).string());
}

// Calls `visit(key, scalar)` for every scalar under `node` (key: the mapping key it is the value
// of, "" inside sequences).
void each_scalar(const YAML::Node& node, const std::string& key,
                 const std::function<void(const std::string&, const std::string&)>& visit) {
  if (node.IsScalar()) {
    visit(key, node.Scalar());
  } else if (node.IsSequence()) {
    for (const auto& item : node) each_scalar(item, "", visit);
  } else if (node.IsMap()) {
    for (const auto& kv : node) each_scalar(kv.second, kv.first.Scalar(), visit);
  }
}

// The `<context>.<name>` references in GitHub expressions under `node`: inside `${{ … }}`, and
// whole `if:` values (an implicit expression).
std::multiset<std::string> references(const YAML::Node& node, const std::string& context) {
  std::multiset<std::string> found;
  const std::regex expr(R"(\$\{\{([^}]*)\}\})");
  const std::regex ref("\\b" + context + R"(\.([A-Za-z0-9_-]+))");
  auto scan = [&](const std::string& text) {
    for (std::sregex_iterator e(text.begin(), text.end(), ref), end; e != end; ++e) {
      found.insert((*e)[1].str());
    }
  };
  each_scalar(node, "", [&](const std::string& key, const std::string& value) {
    if (key == "if") {
      scan(value);
      return;
    }
    for (std::sregex_iterator e(value.begin(), value.end(), expr), end; e != end; ++e) {
      scan((*e)[1].str());
    }
  });
  return found;
}

std::set<std::string> keys(const YAML::Node& map) {
  std::set<std::string> out;
  for (const auto& kv : map) out.insert(kv.first.Scalar());
  return out;
}

// `bash -n` on `script` with every `${{ … }}` replaced by a plain word, as the runner would
// substitute a value; returns bash's complaint, "" when the syntax is valid.
std::string bash_syntax_error(const std::string& script) {
  TempDir dir;
  fs::path file = dir.write("step.sh",
                            std::regex_replace(script, std::regex(R"(\$\{\{[^}]*\}\})"), "VALUE"));
  util::SpawnOptions options;
  options.argv = {"bash", "-n", file.string()};
  util::RunOutput out = util::run(options);
  return out.status.ok() ? std::string() : out.err;
}

TEST(CiFiles, EveryYamlFileUnderCiParses) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir() / "ci")) {
    auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".yml" || ext == ".yaml")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(fs::relative(f, source_dir()).string());
  EXPECT_EQ(names, (std::vector<std::string>{
                       "ci/github/action.yml", "ci/github/coldgate-comment.yml",
                       "ci/github/coldgate-history.yml", "ci/github/coldgate-record.yml",
                       "ci/github/coldgate-stack.yml", "ci/github/coldgate.yml", "ci/gitlab/coldgate.gitlab-ci.yml"}));
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    YAML::Node doc;
    EXPECT_NO_THROW(doc = YAML::LoadFile(f.string()));
    EXPECT_TRUE(doc.IsMap());
  }
}

TEST(GithubAction, InputsAreTheDocumentedOnesAndEveryOneIsUsedAndDefined) {
  YAML::Node action = load("ci/github/action.yml");
  ASSERT_EQ(action["runs"]["using"].as<std::string>(), "composite");
  std::set<std::string> defined = keys(action["inputs"]);
  for (const char* required : {"config", "base", "mode", "comment", "allow-no-baseline", "cache", "token",
                               "package"}) {
    EXPECT_TRUE(defined.count(required)) << "input " << required << " is missing";
  }
  for (const auto& kv : action["inputs"]) {
    EXPECT_TRUE(kv.second["description"]) << "input " << kv.first << " has no description";
  }
  std::multiset<std::string> used = references(action["runs"], "inputs");
  for (const auto& name : defined) EXPECT_TRUE(used.count(name)) << "input " << name << " unused";
  for (const auto& name : used) EXPECT_TRUE(defined.count(name)) << "inputs." << name << " undefined";
  // Outputs point at steps that exist.
  std::set<std::string> ids;
  for (const auto& step : action["runs"]["steps"]) {
    if (step["id"]) ids.insert(step["id"].as<std::string>());
  }
  for (const auto& name : references(action["outputs"], "steps")) EXPECT_TRUE(ids.count(name)) << name;
}

TEST(GithubAction, StepsReferOnlyToEarlierStepsAndRunStepsNameTheirShell) {
  YAML::Node steps = load("ci/github/action.yml")["runs"]["steps"];
  ASSERT_TRUE(steps.IsSequence());
  std::set<std::string> earlier;
  int index = 0;
  for (const auto& step : steps) {
    SCOPED_TRACE("step " + std::to_string(index++) + " " + step["name"].as<std::string>(""));
    for (const auto& name : references(step, "steps")) {
      EXPECT_TRUE(earlier.count(name)) << "steps." << name << " is not an earlier step's id";
    }
    if (step["run"]) {
      // A composite action's run step must say its shell (GitHub rejects the action otherwise).
      EXPECT_EQ(step["shell"].as<std::string>(""), "bash");
      EXPECT_EQ(bash_syntax_error(step["run"].as<std::string>()), "");
    } else {
      std::string uses = step["uses"].as<std::string>("");
      EXPECT_TRUE(std::regex_match(uses, std::regex(R"([\w.-]+/[\w./-]+@v\d+)"))) << uses;
    }
    if (step["id"]) earlier.insert(step["id"].as<std::string>());
  }
}

TEST(GithubAction, MeasuresWithAbOrRunAndUploadsWhatTheCommentWorkflowDownloads) {
  YAML::Node action = load("ci/github/action.yml");
  std::string run_scripts;
  std::string artifact;
  for (const auto& step : action["runs"]["steps"]) {
    run_scripts += step["run"].as<std::string>("") + "\n";
    if (step["uses"].as<std::string>("").rfind("actions/upload-artifact@", 0) == 0) {
      artifact = step["with"]["name"].as<std::string>();
      EXPECT_NE(step["with"]["path"].as<std::string>().find("coldgate-out/"), std::string::npos);
      EXPECT_EQ(step["if"].as<std::string>("").rfind("always()", 0), 0u) << "upload on failure too";
    }
  }
  EXPECT_NE(run_scripts.find("args=(ab "), std::string::npos);
  EXPECT_NE(run_scripts.find("args=(run "), std::string::npos);
  // run --allow-no-baseline only for a history baseline (a file baseline is read or fails).
  EXPECT_NE(
      run_scripts.find("if [[ \"$ALLOW_NO_BASELINE\" == true && \"$BASE\" == history* ]]; then "
                       "args+=(--allow-no-baseline); fi"),
      std::string::npos);
  EXPECT_NE(run_scripts.find("--baseline"), std::string::npos);
  EXPECT_NE(run_scripts.find("coldgate comment"), std::string::npos);
  EXPECT_NE(run_scripts.find("ci/setup.sh"), std::string::npos);
  EXPECT_NE(run_scripts.find("ci/build.sh\" release"), std::string::npos);
  EXPECT_EQ(artifact, "coldgate-out");
  // GitHub runs `bash -eo pipefail`: coldgate's exit code is captured, not left to end the step.
  EXPECT_NE(run_scripts.find("coldgate \"${args[@]}\" || code=$?"), std::string::npos);
  EXPECT_NE(run_scripts.find("echo \"exit-code=$code\" >> \"$GITHUB_OUTPUT\""), std::string::npos);
  EXPECT_NE(run_scripts.find("args=(ab --record "), std::string::npos);
  EXPECT_NE(run_scripts.find("--head \"$HEAD_SHA\""), std::string::npos);
  EXPECT_NE(run_scripts.find("git config --global --add safe.directory \"$GITHUB_WORKSPACE\""),
            std::string::npos);
  EXPECT_EQ(run_scripts.find("safe.directory '*'"), std::string::npos);
  EXPECT_EQ(run_scripts.find("safe.directory \"*\""), std::string::npos);
  // --allow-no-baseline only when the input says so.
  EXPECT_NE(run_scripts.find("if [[ \"$ALLOW_NO_BASELINE\" == true ]]; then args+=(--allow-no-baseline); fi"),
            std::string::npos);
  EXPECT_EQ(action["inputs"]["allow-no-baseline"]["default"].as<std::string>(), "false");
  EXPECT_EQ(action["inputs"]["cache"]["default"].as<std::string>(), "true");

  YAML::Node comment = load("ci/github/coldgate-comment.yml");
  std::string downloaded;
  for (const auto& step : comment["jobs"]["comment"]["steps"]) {
    if (step["uses"].as<std::string>("").rfind("actions/download-artifact@", 0) == 0) {
      downloaded = step["with"]["name"].as<std::string>();
      EXPECT_EQ(step["with"]["run-id"].as<std::string>(), "${{ github.event.workflow_run.id }}");
    }
  }
  EXPECT_EQ(downloaded, artifact);
}

TEST(GithubWorkflow, PullRequestWorkflowHasWritePermissionFullHistoryAndTheAction) {
  YAML::Node wf = load("ci/github/coldgate.yml");
  EXPECT_TRUE(wf["on"]["pull_request"]) << "runs on pull_request";
  EXPECT_EQ(wf["permissions"]["pull-requests"].as<std::string>(), "write");
  bool full_history = false;
  bool action = false;
  for (const auto& job : wf["jobs"]) {
    for (const auto& step : job.second["steps"]) {
      std::string uses = step["uses"].as<std::string>("");
      if (uses.rfind("actions/checkout@", 0) == 0) {
        full_history = step["with"]["fetch-depth"].as<std::string>("") == "0";
      }
      if (uses.find("/ci/github@") != std::string::npos) {
        action = true;
        EXPECT_TRUE(full_history) << "checkout with fetch-depth: 0 comes before the action";
        std::set<std::string> inputs = keys(load("ci/github/action.yml")["inputs"]);
        for (const auto& kv : step["with"]) EXPECT_TRUE(inputs.count(kv.first.Scalar())) << kv.first;
      }
    }
  }
  EXPECT_TRUE(full_history);
  EXPECT_TRUE(action);
}

TEST(GithubWorkflow, CommentWorkflowFollowsTheMeasuringOneByNameAndRunsNoPullRequestCode) {
  YAML::Node measuring = load("ci/github/coldgate.yml");
  YAML::Node wf = load("ci/github/coldgate-comment.yml");
  YAML::Node trigger = wf["on"]["workflow_run"];
  ASSERT_TRUE(trigger);
  std::vector<std::string> workflows = trigger["workflows"].as<std::vector<std::string>>();
  EXPECT_EQ(workflows, std::vector<std::string>{measuring["name"].as<std::string>()});
  EXPECT_EQ(trigger["types"].as<std::vector<std::string>>(), std::vector<std::string>{"completed"});
  EXPECT_EQ(wf["permissions"]["pull-requests"].as<std::string>(), "write");
  EXPECT_EQ(wf["permissions"]["actions"].as<std::string>(), "read");
  std::string scripts;
  for (const auto& job : wf["jobs"]) {
    EXPECT_NE(job.second["if"].as<std::string>("").find("workflow_run.event == 'pull_request'"),
              std::string::npos);
    for (const auto& step : job.second["steps"]) {
      EXPECT_NE(step["uses"].as<std::string>("").rfind("actions/checkout@", 0), 0u)
          << "no checkout in the privileged workflow";
      std::string run = step["run"].as<std::string>("");
      if (!run.empty()) {
        EXPECT_EQ(bash_syntax_error(run), "");
      }
      scripts += run;
    }
  }
  EXPECT_NE(scripts.find("pr=$(cat coldgate-out/pr-number)"), std::string::npos);
  EXPECT_NE(scripts.find("coldgate comment --out coldgate-out --pr \"$pr\""), std::string::npos);
}

TEST(GithubWorkflow, RecordRecipeRunsOnEveryBranchPushInModeRecord) {
  YAML::Node wf = load("ci/github/coldgate-record.yml");
  ASSERT_TRUE(wf["on"]["push"]);
  // Every branch of a stack, not the default branch: pull requests against it stay interleaved.
  EXPECT_EQ(wf["on"]["push"]["branches"].as<std::vector<std::string>>(),
            (std::vector<std::string>{"**", "!main", "!master"}));
  EXPECT_FALSE(wf["on"]["pull_request"]) << "record runs in the branch's cache scope, not a pull request's";
  int actions = 0;
  std::set<std::string> inputs = keys(load("ci/github/action.yml")["inputs"]);
  for (const auto& job : wf["jobs"]) {
    for (const auto& step : job.second["steps"]) {
      if (step["uses"].as<std::string>("").find("/ci/github@") == std::string::npos) continue;
      ++actions;
      EXPECT_EQ(step["with"]["mode"].as<std::string>(""), "record");
      for (const auto& kv : step["with"]) EXPECT_TRUE(inputs.count(kv.first.Scalar())) << kv.first;
    }
  }
  EXPECT_EQ(actions, 1);
  // The same runner as the measuring workflow: the cache serves only a like environment.
  YAML::Node measuring = load("ci/github/coldgate.yml");
  YAML::Node a = measuring["jobs"].begin()->second;
  YAML::Node b = wf["jobs"].begin()->second;
  EXPECT_EQ(a["runs-on"].as<std::string>(), b["runs-on"].as<std::string>());
  EXPECT_EQ(a["container"].as<std::string>(""), b["container"].as<std::string>(""));
}

TEST(GithubWorkflow, StackRecipeMeasuresStackedPullRequestsInModeStackAndComments) {
  YAML::Node wf = load("ci/github/coldgate-stack.yml");
  ASSERT_TRUE(wf["on"]["pull_request"]);
  EXPECT_FALSE(wf["on"]["push"]);
  // It reads the open pull requests and comments on each of the stack.
  EXPECT_EQ(wf["permissions"]["pull-requests"].as<std::string>(), "write");
  EXPECT_EQ(wf["permissions"]["contents"].as<std::string>(), "read");
  ASSERT_EQ(wf["jobs"].size(), 1u);
  YAML::Node job = wf["jobs"].begin()->second;
  // Only stacked pull requests of this repository: coldgate.yml has those against the default
  // branch, and a fork's head is no branch of a stack here.
  std::string condition = job["if"].as<std::string>("");
  EXPECT_NE(condition.find("github.event.pull_request.base.ref != github.event.repository.default_branch"),
            std::string::npos) << condition;
  EXPECT_NE(condition.find("github.event.pull_request.head.repo.full_name == github.repository"),
            std::string::npos) << condition;
  bool full_history = false;
  int actions = 0;
  std::set<std::string> inputs = keys(load("ci/github/action.yml")["inputs"]);
  for (const auto& step : job["steps"]) {
    std::string uses = step["uses"].as<std::string>("");
    if (uses.rfind("actions/checkout@", 0) == 0) full_history = step["with"]["fetch-depth"].as<std::string>("") == "0";
    if (uses.find("/ci/github@") == std::string::npos) continue;
    ++actions;
    EXPECT_TRUE(full_history) << "checkout with fetch-depth: 0 comes before the action";
    EXPECT_EQ(step["with"]["mode"].as<std::string>(""), "stack");
    EXPECT_NE(step["with"]["comment"].as<std::string>(""), "never");
    for (const auto& kv : step["with"]) EXPECT_TRUE(inputs.count(kv.first.Scalar())) << kv.first;
  }
  EXPECT_EQ(actions, 1);
  // The same runner as the measuring workflow.
  YAML::Node measuring = load("ci/github/coldgate.yml")["jobs"].begin()->second;
  EXPECT_EQ(measuring["runs-on"].as<std::string>(), job["runs-on"].as<std::string>());
  EXPECT_EQ(measuring["container"].as<std::string>(""), job["container"].as<std::string>(""));

  // The action's mode stack: coldgate stack with discovery and comments, the token in that
  // step only for stack, and not the single-report comment step after it.
  YAML::Node action = load("ci/github/action.yml");
  std::string run_scripts;
  for (const auto& step : action["runs"]["steps"]) {
    run_scripts += step["run"].as<std::string>("") + "\n";
    if (step["name"].as<std::string>("") == "Measure") {
      EXPECT_EQ(step["env"]["GITHUB_TOKEN"].as<std::string>(""),
                "${{ inputs.mode == 'stack' && inputs.token || '' }}");
    }
    if (step["name"].as<std::string>("") == "Comment on the pull request") {
      EXPECT_NE(step["if"].as<std::string>("").find("inputs.mode != 'stack'"), std::string::npos);
    }
  }
  EXPECT_NE(run_scripts.find("args=(stack --github -c \"$CONFIG\")"), std::string::npos);
  EXPECT_NE(run_scripts.find("if [[ \"$COMMENT\" != never ]]; then args+=(--comment); fi"), std::string::npos);
}

// The words of a shell command line, quotes removed ("$REPO_URL" stays one word).
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::string word;
  char quote = 0;
  bool in_word = false;
  for (char c : line) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(word);
  return out;
}

// The step of `job` whose name is `name` (or whose `uses:` starts with it).
YAML::Node step_of(const YAML::Node& job, const std::string& name) {
  for (const auto& step : job["steps"]) {
    if (step["name"].as<std::string>("") == name || step["id"].as<std::string>("") == name ||
        step["uses"].as<std::string>("").rfind(name, 0) == 0) {
      return step;
    }
  }
  ADD_FAILURE() << "no step " << name;
  return YAML::Node();
}

TEST(GithubWorkflow, HistoryRecipeRecordsEveryPushToMainAndPublishesThePage) {
  YAML::Node wf = load("ci/github/coldgate-history.yml");
  EXPECT_EQ(keys(wf["on"]), std::set<std::string>{"push"}) << "on push only";
  EXPECT_EQ(wf["on"]["push"]["branches"].as<std::vector<std::string>>(),
            std::vector<std::string>{"main"});
  EXPECT_EQ(wf["permissions"]["contents"].as<std::string>(), "read");
  EXPECT_EQ(keys(wf["jobs"]), (std::set<std::string>{"record", "deploy"}));
  // GitHub cancels a group's pending run when another queues: a group on the recording would
  // lose records. Only the deployment is serialized, and never cancelled midway.
  EXPECT_FALSE(wf["concurrency"]);
  YAML::Node record = wf["jobs"]["record"];
  YAML::Node deploy = wf["jobs"]["deploy"];
  EXPECT_FALSE(record["concurrency"]);
  EXPECT_EQ(deploy["concurrency"]["cancel-in-progress"].as<std::string>(), "false");
  EXPECT_FALSE(deploy["concurrency"]["group"].as<std::string>("").empty());

  // The recording job may push the store's branch, and nothing else; the deploying job has
  // what deploy-pages needs and runs nothing of the project's.
  EXPECT_EQ(record["permissions"]["contents"].as<std::string>(), "write");
  EXPECT_EQ(keys(record["permissions"]), std::set<std::string>{"contents"});
  EXPECT_EQ(deploy["permissions"]["pages"].as<std::string>(), "write");
  EXPECT_EQ(deploy["permissions"]["id-token"].as<std::string>(), "write");
  EXPECT_EQ(keys(deploy["permissions"]), (std::set<std::string>{"pages", "id-token"}));
  EXPECT_EQ(deploy["environment"]["name"].as<std::string>(), "github-pages");
  EXPECT_EQ(deploy["needs"].as<std::string>(), "record");
  ASSERT_EQ(deploy["steps"].size(), 1u);
  EXPECT_EQ(deploy["steps"][0]["uses"].as<std::string>(), "actions/deploy-pages@v4");
  EXPECT_EQ(deploy["environment"]["url"].as<std::string>(),
            "${{ steps." + deploy["steps"][0]["id"].as<std::string>() + ".outputs.page_url }}");
  EXPECT_NE(deploy["if"].as<std::string>("").find("needs.record.outputs.page == 'true'"),
            std::string::npos);
  EXPECT_EQ(record["outputs"]["page"].as<std::string>(), "${{ steps.page.outputs.written }}");

  // Checkout with full history, then the action measuring this commit against the history.
  std::set<std::string> inputs = keys(load("ci/github/action.yml")["inputs"]);
  EXPECT_EQ(step_of(record, "actions/checkout@")["with"]["fetch-depth"].as<std::string>(""), "0");
  YAML::Node action = step_of(record, "coldgate");
  ASSERT_NE(action["uses"].as<std::string>("").find("/ci/github@"), std::string::npos);
  for (const auto& kv : action["with"]) EXPECT_TRUE(inputs.count(kv.first.Scalar())) << kv.first;
  EXPECT_EQ(action["with"]["mode"].as<std::string>(), "run");
  EXPECT_EQ(action["with"]["base"].as<std::string>(), "history");
  EXPECT_EQ(action["with"]["allow-no-baseline"].as<std::string>(), "true");
  std::string config = action["with"]["config"].as<std::string>();

  // Every coldgate command of the run: steps exists, with options `coldgate history --help`
  // lists, on the action's config; record pushes, page writes what is uploaded.
  auto help = testing::run_coldgate({"history", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  std::map<std::string, std::vector<std::string>> commands;  // action → its words
  for (const auto& step : record["steps"]) {
    std::string run = step["run"].as<std::string>("");
    if (run.empty()) continue;
    SCOPED_TRACE(step["name"].as<std::string>(""));
    EXPECT_EQ(bash_syntax_error(run), "");
    std::istringstream lines(run);
    std::string line;
    while (std::getline(lines, line)) {
      std::vector<std::string> w = words(line);
      if (w.empty() || w[0] != "coldgate") continue;
      ASSERT_GE(w.size(), 3u) << line;
      EXPECT_EQ(w[1], "history") << line;
      EXPECT_TRUE(w[2] == "record" || w[2] == "page") << line;
      for (std::size_t i = 3; i < w.size(); ++i) {
        if (w[i].rfind("-", 0) != 0) continue;
        EXPECT_TRUE(std::regex_search(help.out, std::regex("(^|[ ,])" + w[i] + "\\b")))
            << w[i] << " is no option of coldgate history";
        if (w[i] == "-c") {
          ASSERT_LT(i + 1, w.size());
          EXPECT_EQ(w[i + 1], config) << "the action's config";
        }
      }
      commands[w[2]] = w;
    }
  }
  ASSERT_TRUE(commands.count("record") && commands.count("page"));
  auto has = [](const std::vector<std::string>& w, const std::string& word) {
    return std::find(w.begin(), w.end(), word) != w.end();
  };
  EXPECT_TRUE(has(commands["record"], "--push"));
  auto out = std::find(commands["page"].begin(), commands["page"].end(), "-o");
  ASSERT_NE(out, commands["page"].end());
  ASSERT_NE(out + 1, commands["page"].end());
  EXPECT_EQ(step_of(record, "actions/upload-pages-artifact@")["with"]["path"].as<std::string>(),
            *(out + 1));
  EXPECT_TRUE(has(commands["page"], "--repo-url"));

  // A regression is recorded too (exit 1), a run that did not finish is not; the page follows
  // whatever this run did.
  std::string record_if = step_of(record, "Record the results")["if"].as<std::string>();
  EXPECT_NE(record_if.find("steps.coldgate.outputs.exit-code == '0'"), std::string::npos);
  EXPECT_NE(record_if.find("steps.coldgate.outputs.exit-code == '1'"), std::string::npos);
  EXPECT_NE(record_if.find("!cancelled()"), std::string::npos);
  EXPECT_NE(step_of(record, "page")["if"].as<std::string>().find("!cancelled()"),
            std::string::npos);

  // The same runner as the pull-request workflow.
  YAML::Node measuring = load("ci/github/coldgate.yml")["jobs"].begin()->second;
  EXPECT_EQ(measuring["runs-on"].as<std::string>(), record["runs-on"].as<std::string>());
  EXPECT_EQ(measuring["container"].as<std::string>(""), record["container"].as<std::string>(""));
}

// The page step as GitHub's runner runs it (bash --noprofile --norc -eo pipefail): with the
// real coldgate on PATH, in a checkout whose config keeps the history in a folder.
TEST(GithubWorkflow, HistoryRecipesPageStepWritesTheSiteItUploads) {
  YAML::Node record = load("ci/github/coldgate-history.yml")["jobs"]["record"];
  YAML::Node step = step_of(record, "page");
  TempDir dir;
  dir.write("coldgate.yaml",
            "version: 1\nstages:\n  - name: one\n    sql: one.sql\nhistory: { store: history }\n");
  dir.write("one.sql", "SELECT 1;\n");
  fs::create_directories(dir / "history");
  fs::path script = dir.write("step.sh", step["run"].as<std::string>());
  fs::path output = dir.write("github_output", "");
  util::SpawnOptions o;
  o.argv = {"bash", "--noprofile", "--norc", "-eo", "pipefail", script.string()};
  o.cwd = dir.path();
  const char* path = std::getenv("PATH");
  o.env = {"PATH=" + fs::path(COLDGATE_BINARY).parent_path().string() + ":" + (path ? path : ""),
           "GITHUB_OUTPUT=" + output.string(), "REPO_URL=https://github.com/shop/app"};
  util::RunOutput out = util::run(o, std::chrono::minutes(1));
  EXPECT_EQ(out.status.exit_code, 0) << out.err;
  std::string site =
      step_of(record, "actions/upload-pages-artifact@")["with"]["path"].as<std::string>();
  EXPECT_TRUE(fs::is_regular_file(dir / site / "index.html"));
  EXPECT_NE(slurp(dir / site / "index.html").find("No records yet"), std::string::npos);
  EXPECT_EQ(slurp(output), "written=true\n");
}

TEST(GitlabJob, RunsOnMergeRequestsWithFullHistoryAndKeepsTheReport) {
  YAML::Node ci = load("ci/gitlab/coldgate.gitlab-ci.yml");
  YAML::Node job = ci["coldgate"];
  ASSERT_TRUE(job.IsMap());
  bool on_mr = false;
  for (const auto& rule : job["rules"]) {
    on_mr = on_mr || rule["if"].as<std::string>("").find("merge_request_event") != std::string::npos;
  }
  EXPECT_TRUE(on_mr);
  EXPECT_EQ(job["variables"]["GIT_DEPTH"].as<std::string>(), "0");
  EXPECT_EQ(job["artifacts"]["when"].as<std::string>(), "always");
  EXPECT_EQ(job["artifacts"]["paths"].as<std::vector<std::string>>(),
            std::vector<std::string>{"coldgate-out/"});
  EXPECT_EQ(job["artifacts"]["reports"]["junit"].as<std::string>(), "coldgate-out/junit.xml");
  std::string script;
  for (const auto& part : {"before_script", "script"}) {
    for (const auto& line : job[part]) script += line.as<std::string>() + "\n";
  }
  EXPECT_EQ(bash_syntax_error(script), "");
  EXPECT_NE(script.find("coldgate ab "), std::string::npos);
  EXPECT_NE(script.find("coldgate comment "), std::string::npos);
  EXPECT_NE(script.find("exit $code"), std::string::npos) << "the job fails with coldgate's code";
}

// The Dockerfile's instructions, continuation lines joined: {instruction, arguments}.
std::vector<std::pair<std::string, std::string>> dockerfile() {
  std::istringstream in(slurp(source_dir() / "Dockerfile"));
  std::vector<std::pair<std::string, std::string>> out;
  std::string line;
  std::string pending;
  while (std::getline(in, line)) {
    if (pending.empty() && (line.empty() || line[0] == '#')) continue;
    if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1);
      continue;
    }
    pending += line;
    auto space = pending.find(' ');
    out.emplace_back(pending.substr(0, space), pending.substr(space + 1));
    pending.clear();
  }
  return out;
}

TEST(Dockerfile, TwoBookwormStagesNonRootUserEntrypointAndWorkdir) {
  auto instructions = dockerfile();
  std::vector<std::string> from;
  std::map<std::string, std::string> last;  // in the final stage
  std::vector<std::string> copies;          // likewise, every one
  for (const auto& [op, args] : instructions) {
    if (op == "FROM") {
      from.push_back(args);
      last.clear();
      copies.clear();
    }
    last[op] = args;
    if (op == "COPY") copies.push_back(args);
  }
  EXPECT_EQ(from, (std::vector<std::string>{"debian:bookworm-slim AS build",
                                            "debian:bookworm-slim AS runtime"}));
  // The binary and, where it looks for it (../libexec/coldgate/ beside bin/), the helper that
  // starts measured children.
  EXPECT_EQ(copies, (std::vector<std::string>{
                        "--from=build /src/build/coldgate /usr/local/bin/coldgate",
                        "--from=build /src/build/coldgate-exec "
                        "/usr/local/libexec/coldgate/coldgate-exec"}));
  ASSERT_TRUE(last.count("USER"));
  EXPECT_NE(last["USER"], "root");
  EXPECT_NE(last["USER"], "0");
  EXPECT_EQ(last["ENTRYPOINT"], R"(["coldgate"])");
  EXPECT_EQ(last["WORKDIR"], "/work");
  bool pg_major = false;
  for (const auto& [op, args] : instructions) pg_major = pg_major || (op == "ARG" && args == "PG_MAJOR=15");
  EXPECT_TRUE(pg_major) << "ARG PG_MAJOR=15 chooses the PostgreSQL version";
  EXPECT_NE(last["RUN"].find("\"postgresql-$PG_MAJOR\" \"postgresql-client-$PG_MAJOR\""),
            std::string::npos);
  EXPECT_NE(last["RUN"].find(" git "), std::string::npos);
  EXPECT_NE(last["RUN"].find(" libjs-chart.js "), std::string::npos) << "for coldgate history page";
  EXPECT_NE(last["ENV"].find("/usr/lib/postgresql/${PG_MAJOR}/bin"), std::string::npos);
}

TEST(Dockerfile, EveryFileItCopiesIsInTheBuildContext) {
  // .dockerignore excludes everything ("*") and lets back in what the build stage copies.
  std::set<std::string> allowed;
  std::istringstream in(slurp(source_dir() / ".dockerignore"));
  std::string line;
  bool excludes_all = false;
  while (std::getline(in, line)) {
    if (line == "*") excludes_all = true;
    if (!line.empty() && line[0] == '!') allowed.insert(line.substr(1));
  }
  ASSERT_TRUE(excludes_all);
  int copies = 0;
  for (const auto& [op, args] : dockerfile()) {
    if (op != "COPY" || args.rfind("--from=", 0) == 0) continue;
    std::string source = args.substr(0, args.find(' '));
    EXPECT_TRUE(allowed.count(source) || allowed.count(source + "/")) << source;
    EXPECT_TRUE(fs::exists(source_dir() / source)) << source;
    ++copies;
  }
  EXPECT_EQ(copies, 2);
}

}  // namespace
}  // namespace coldgate
