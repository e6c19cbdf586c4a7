// The history stores against real git: temporary repositories, bare "remotes" with clones, hooks
// that make another writer land first, and two writers at once.
#include "history/store.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "support/support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate::history {
namespace {

namespace fs = std::filesystem;
using testing::run_git;
using testing::ScopedEnv;
using testing::TempDir;

const std::string k_branch = "coldgate-history";
const std::string k_ref = "refs/heads/coldgate-history";

// git's exit status and output, for runs expected to fail.
util::RunOutput git_status(const fs::path& dir, const std::vector<std::string>& args) {
  util::SpawnOptions o;
  o.argv = {"git"};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.cwd = dir;
  return util::run(o, std::chrono::seconds(60));
}

// A temporary repository whose folder no parent repository can be mistaken for.
class Repo {
 public:
  explicit Repo(int commits = 0)
      : m_ceiling("GIT_CEILING_DIRECTORIES", m_dir.path().parent_path().c_str()) {
    run_git(path(), {"init", "-q"});
    for (int i = 0; i < commits; ++i) {
      m_dir.write("src.txt", "version " + std::to_string(i) + "\n");
      run_git(path(), {"add", "src.txt"});
      run_git(path(), {"commit", "-q", "-m", "change " + std::to_string(i)});
      shas.push_back(run_git(path(), {"rev-parse", "HEAD"}));
    }
  }
  const fs::path& path() const { return m_dir.path(); }
  fs::path operator/(const std::string& name) const { return m_dir / name; }
  std::vector<std::string> shas;  // the main branch's commits, oldest first

 private:
  TempDir m_dir;
  ScopedEnv m_ceiling;
};

StoreSpec git_store(const std::string& branch = k_branch) {
  return parse_store("git:" + branch, "/", "--store");
}

std::string record_text(const std::string& sha, int i) {
  return "{\n  \"commit\": \"" + sha + "\",\n  \"n\": " + std::to_string(i) + "\n}\n";
}

// The branch's commits, newest first, each with its parents: {commit, parent...}.
std::vector<std::vector<std::string>> history_of(const fs::path& dir, const std::string& ref) {
  std::vector<std::vector<std::string>> out;
  std::istringstream lines(run_git(dir, {"rev-list", "--parents", ref}));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> shas;
    for (std::string w; words >> w;) shas.push_back(w);
    out.push_back(shas);
  }
  return out;
}

// Every commit has the next-older one as its only parent, the oldest none.
void expect_linear(const std::vector<std::vector<std::string>>& history) {
  for (std::size_t i = 0; i < history.size(); ++i) {
    if (i + 1 < history.size()) {
      ASSERT_EQ(history[i].size(), 2u) << "commit " << history[i][0] << " is not linear";
      EXPECT_EQ(history[i][1], history[i + 1][0]);
    } else {
      EXPECT_EQ(history[i].size(), 1u) << "the first commit has a parent";
    }
  }
}

std::vector<std::string> names_of(const std::vector<StoredFile>& files) {
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.name);
  return names;
}

std::map<std::string, std::string> contents_of(const std::vector<StoredFile>& files) {
  std::map<std::string, std::string> by_name;
  for (const auto& f : files) by_name[f.name] = f.contents;
  return by_name;
}

// The file names at the top of `ref`'s tree.
std::vector<std::string> tree_names(const fs::path& dir, const std::string& ref) {
  std::vector<std::string> names;
  std::istringstream lines(run_git(dir, {"ls-tree", "--name-only", ref}));
  for (std::string line; std::getline(lines, line);) names.push_back(line);
  return names;
}

// Writes a shell script whose @NAME@ placeholders are replaced by `values`.
void make_executable(const fs::path& path, std::string text,
                     const std::map<std::string, std::string>& values = {}) {
  for (const auto& [name, value] : values) {
    const std::string key = "@" + name + "@";
    for (auto at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size())) {
      text.replace(at, key.size(), value);
    }
  }
  util::write_file_atomic(path, text, 0755);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The Error `f` throws; fails the test (and returns an ok "error") when it throws none.
Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error(ExitCode::ok, "", "no error");
}

// Runs `write(0)` … `write(writers - 1)` on threads at once (each spawning its own git
// processes); the messages of the errors they threw, "" for none.
std::vector<std::string> at_once(int writers, const std::function<void(int)>& write) {
  std::vector<std::string> errors(static_cast<std::size_t>(writers));
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      try {
        write(w);
      } catch (const Error& e) {
        errors[static_cast<std::size_t>(w)] = e.message();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

// ---------------------------------------------------------------------------------------------
// parse_store

TEST(ParseStore, GitBranchAndFolders) {
  auto git = parse_store("git:coldgate-history", "/base", "--store");
  EXPECT_EQ(git.kind, StoreSpec::Kind::git);
  EXPECT_EQ(git.branch, "coldgate-history");
  EXPECT_EQ(git.text, "git:coldgate-history");
  EXPECT_EQ(parse_store("git:history/main", "/base", "--store").branch, "history/main");

  auto rel = parse_store("history/", "/base/sub", "--store");
  EXPECT_EQ(rel.kind, StoreSpec::Kind::folder);
  EXPECT_EQ(rel.dir, fs::path("/base/sub/history/"));
  EXPECT_EQ(rel.text, "history/");
  EXPECT_EQ(parse_store("../h", "/base/sub", "--store").dir, fs::path("/base/h"));
  EXPECT_EQ(parse_store("/abs/h", "/base", "--store").dir, fs::path("/abs/h"));
}

TEST(ParseStore, EmptySpecAndEmptyBranchAreUsageErrors) {
  for (const char* text : {"", "git:"}) {
    const Error e = error_of([&] { parse_store(text, "/base", "coldgate.yaml:12:10"); });
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.where(), "coldgate.yaml:12:10");
    EXPECT_TRUE(contains(e.what(), "git:coldgate-history")) << e.what();  // the hint
  }
}

// The names git itself refuses as branches (git check-ref-format --branch) are refused, and the
// ones it takes are taken.
TEST(ParseStore, BranchNamesAsGitJudgesThem) {
  TempDir dir;
  for (std::string name : {"coldgate-history",
                           "history/main",
                           "a@b",
                           "v1.2",
                           "HEAD",
                           "a b",
                           "a..b",
                           "-x",
                           "x.lock",
                           "a/.b",
                           ".x",
                           "a~1",
                           "a^",
                           "a:b",
                           "x/",
                           "/x",
                           "@{u}",
                           "a\\b",
                           "a//b",
                           "a.",
                           "x.lock/y",
                           "a?",
                           "a*",
                           "a[",
                           "tab\there"}) {
    const bool git_takes =
        git_status(dir.path(), {"check-ref-format", "--branch", name}).status.ok();
    bool we_take = true;
    try {
      parse_store("git:" + name, "/", "--store");
    } catch (const Error& e) {
      we_take = false;
      EXPECT_EQ(e.code(), ExitCode::usage);
      EXPECT_EQ(e.where(), "--store");
      EXPECT_TRUE(contains(e.what(), "not a branch name")) << e.what();
    }
    EXPECT_EQ(we_take, git_takes) << "branch '" << name << "'";
  }
  // Stricter than git on purpose: `@` is git's shorthand for HEAD.
  EXPECT_THROW(parse_store("git:@", "/", "--store"), Error);
}

// ---------------------------------------------------------------------------------------------
// Git store, local branch

TEST(GitStore, TwentyCommitsWrittenAndReadBackWithoutTouchingTheCheckout) {
  Repo repo(20);
  const std::string head = run_git(repo.path(), {"rev-parse", "HEAD"});
  const std::string head_ref = run_git(repo.path(), {"symbolic-ref", "HEAD"});
  const std::string index = util::sha256_hex(testing::slurp(repo / ".git/index"));
  const auto spec = git_store();

  std::vector<std::string> landed;
  for (int i = 0; i < 20; ++i) {
    WriteOptions o;
    o.message = "record " + repo.shas[i].substr(0, 7) + ": change " + std::to_string(i);
    landed.push_back(
        write_file(spec, repo.path(), repo.shas[i] + ".json", record_text(repo.shas[i], i), o));
  }

  EXPECT_EQ(run_git(repo.path(), {"status", "--porcelain"}), "");
  EXPECT_EQ(run_git(repo.path(), {"rev-parse", "HEAD"}), head);
  EXPECT_EQ(run_git(repo.path(), {"symbolic-ref", "HEAD"}), head_ref);
  EXPECT_EQ(util::sha256_hex(testing::slurp(repo / ".git/index")), index);

  std::vector<std::string> warnings;
  auto files = read_files(spec, repo.path(), "origin", warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(files.size(), 20u);
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 20; ++i) expected[repo.shas[i] + ".json"] = record_text(repo.shas[i], i);
  EXPECT_EQ(contents_of(files), expected);
  for (std::size_t i = 0; i + 1 < files.size(); ++i) EXPECT_LT(files[i].name, files[i + 1].name);
  for (const auto& f : files) EXPECT_EQ(f.where, "git:coldgate-history:" + f.name);

  // One commit per write, each on the one before, with the message given.
  auto history = history_of(repo.path(), k_ref);
  ASSERT_EQ(history.size(), 20u);
  expect_linear(history);
  for (int i = 0; i < 20; ++i) {
    const std::string& commit = history[19 - i][0];
    EXPECT_EQ(landed[i], "git:coldgate-history at " + commit.substr(0, 7));
    EXPECT_EQ(run_git(repo.path(), {"log", "-1", "--format=%B", commit}),
              "record " + repo.shas[i].substr(0, 7) + ": change " + std::to_string(i));
    EXPECT_EQ(tree_names(repo.path(), commit).size(), static_cast<std::size_t>(i + 1));
  }
}

TEST(GitStore, ReplacingAFileKeepsOneOfThatName) {
  Repo repo(1);
  const auto spec = git_store();
  write_file(spec, repo.path(), "a.json", "{\"v\": 1}\n", {});
  const std::string first = run_git(repo.path(), {"rev-parse", k_ref});
  write_file(spec, repo.path(), "b.json", "{\"b\": true}\n", {});
  write_file(spec, repo.path(), "a.json", "{\"v\": 2}\n", {});

  std::vector<std::string> warnings;
  auto files = read_files(spec, repo.path(), "origin", warnings);
  EXPECT_EQ(contents_of(files), (std::map<std::string, std::string>{
                                    {"a.json", "{\"v\": 2}\n"}, {"b.json", "{\"b\": true}\n"}}));
  EXPECT_EQ(tree_names(repo.path(), k_ref), (std::vector<std::string>{"a.json", "b.json"}));
  auto history = history_of(repo.path(), k_ref);
  ASSERT_EQ(history.size(), 3u);
  expect_linear(history);
  EXPECT_EQ(history.back()[0], first);
  // The file's old version is still in the history.
  EXPECT_EQ(run_git(repo.path(), {"show", first + ":a.json"}), "{\"v\": 1}");
}

TEST(GitStore, OtherEntriesOfTheBranchAreKeptAndSkippedWithAWarning) {
  Repo repo(1);
  const auto spec = git_store();
  write_file(spec, repo.path(), "a.json", "{}\n", {});
  // Someone else's commit adds a README, a folder and a folder called like a record.
  TempDir scratch;
  const std::string blob = run_git(
      repo.path(), {"hash-object", "-w", "--no-filters", scratch.write("f", "hi\n").string()});
  const std::string listing = run_git(repo.path(), {"ls-tree", k_ref});
  auto mktree = [&](const std::string& text) {
    util::SpawnOptions o;
    o.argv = {"git", "mktree"};
    o.cwd = repo.path();
    o.stdin_path = scratch.write("tree", text);
    auto r = util::run(o, std::chrono::seconds(60));
    EXPECT_TRUE(r.status.ok()) << r.err;
    return r.out.substr(0, r.out.find('\n'));
  };
  const std::string sub = mktree("100644 blob " + blob + "\tx.json\n");
  const std::string tree = mktree(listing + "\n100644 blob " + blob + "\tREADME\n040000 tree " +
                                  sub + "\tsub\n040000 tree " + sub + "\tnested.json\n");
  const std::string commit =
      run_git(repo.path(), {"commit-tree", "-m", "extras", "-p", k_ref, tree});
  run_git(repo.path(), {"update-ref", k_ref, commit});

  std::vector<std::string> warnings;
  auto files = read_files(spec, repo.path(), "origin", warnings);
  EXPECT_EQ(names_of(files), (std::vector<std::string>{"a.json"}));
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_EQ(warnings[0], "git:coldgate-history:README: not a .json file, skipped");
  EXPECT_EQ(warnings[1],
            "git:coldgate-history:nested.json: a folder in the history branch, skipped");
  EXPECT_EQ(warnings[2], "git:coldgate-history:sub: a folder in the history branch, skipped");

  // A write keeps what it does not own.
  write_file(spec, repo.path(), "b.json", "{}\n", {});
  EXPECT_EQ(tree_names(repo.path(), k_ref),
            (std::vector<std::string>{"README", "a.json", "b.json", "nested.json", "sub"}));
}

TEST(GitStore, NoBranchIsAnEmptyStore) {
  Repo repo(1);
  std::vector<std::string> warnings;
  EXPECT_TRUE(read_files(git_store(), repo.path(), "origin", warnings).empty());
  EXPECT_TRUE(warnings.empty());
}

TEST(GitStore, NotARepositoryIsAUsageErrorNamingTheFolderStore) {
  TempDir dir;
  ScopedEnv ceiling("GIT_CEILING_DIRECTORIES", dir.path().parent_path().c_str());
  std::vector<std::string> warnings;
  for (int writing = 0; writing < 2; ++writing) {
    const Error e = error_of([&] {
      if (writing) {
        write_file(git_store(), dir.path(), "a.json", "{}\n", {});
      } else {
        read_files(git_store(), dir.path(), "origin", warnings);
      }
    });
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_EQ(e.where(), "git:coldgate-history");
    EXPECT_TRUE(contains(e.what(), "not inside a git repository")) << e.what();
    EXPECT_TRUE(contains(e.what(), "--store DIR")) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(GitStore, FileNamesWithAFolderPartAreRefused) {
  Repo repo(1);
  for (const char* name : {"", "a/b.json", "..", "line\nbreak.json"}) {
    const Error e = error_of([&] { write_file(git_store(), repo.path(), name, "{}\n", {}); });
    EXPECT_EQ(e.code(), ExitCode::usage);
  }
  EXPECT_FALSE(git_status(repo.path(), {"rev-parse", "--verify", "--quiet", k_ref}).status.ok());
}

TEST(GitStore, CommitsAsColdgateWhenGitKnowsNoIdentity) {
  Repo repo(1);
  TempDir home;
  ScopedEnv h("HOME", home.path().c_str());
  ScopedEnv x("XDG_CONFIG_HOME", home.path().c_str());
  ScopedEnv g("GIT_CONFIG_GLOBAL", (home / "no-gitconfig").c_str());
  ScopedEnv s("GIT_CONFIG_NOSYSTEM", "1");
  ScopedEnv e("EMAIL", nullptr);
  ScopedEnv an("GIT_AUTHOR_NAME", nullptr);
  ScopedEnv ae("GIT_AUTHOR_EMAIL", nullptr);
  ScopedEnv cn("GIT_COMMITTER_NAME", nullptr);
  ScopedEnv ce("GIT_COMMITTER_EMAIL", nullptr);
  write_file(git_store(), repo.path(), "a.json", "{}\n", {});
  EXPECT_EQ(run_git(repo.path(), {"log", "-1", "--format=%an <%ae>|%cn <%ce>", k_ref}),
            "coldgate <coldgate@localhost>|coldgate <coldgate@localhost>");
  // The user's config is left as it was.
  EXPECT_FALSE(git_status(repo.path(), {"config", "--get", "user.name"}).status.ok());
  EXPECT_TRUE(fs::is_empty(home.path()));

  // An identity git knows is the one used.
  run_git(repo.path(), {"config", "user.name", "Jo Tester"});
  run_git(repo.path(), {"config", "user.email", "jo@coldgate.invalid"});
  write_file(git_store(), repo.path(), "b.json", "{}\n", {});
  EXPECT_EQ(run_git(repo.path(), {"log", "-1", "--format=%an <%ae>|%cn <%ce>", k_ref}),
            "Jo Tester <jo@coldgate.invalid>|Jo Tester <jo@coldgate.invalid>");
}

// A `git` for PATH that runs the real one, but before each of the first `times` update-refs
// another writer lands a commit adding rival-<n>.json on the history branch (with real git), so
// the update-ref that follows finds the branch moved since its writer read it. Returns the file
// counting update-refs.
fs::path rival_git(const TempDir& bin, int times) {
  const auto real_git = util::find_program("git");
  EXPECT_TRUE(real_git);
  const fs::path count = bin / "update-refs";
  make_executable(bin / "git", R"(#!/bin/sh
real='@REAL@'
if [ "$1" = update-ref ]; then
  n=$(cat '@COUNT@' 2>/dev/null || echo 0); n=$((n + 1))
  echo $n > '@COUNT@'
  if [ $n -le @TIMES@ ]; then
    blob=$(echo "{\"rival\": $n}" | "$real" hash-object -w --stdin)
    tip=$("$real" rev-parse @REF@)
    tree=$( { "$real" ls-tree "$tip"; printf '100644 blob %s\trival-%s.json\n' "$blob" "$n"; } | "$real" mktree)
    c=$("$real" -c user.name=rival -c user.email=rival@coldgate.invalid commit-tree -m "rival $n" -p "$tip" "$tree")
    "$real" update-ref @REF@ "$c" "$tip" || exit 1
  fi
fi
exec "$real" "$@"
)",
                  {{"REAL", real_git ? real_git->string() : "git"},
                   {"COUNT", count.string()},
                   {"TIMES", std::to_string(times)},
                   {"REF", k_ref}});
  return count;
}

// A writer whose compare-and-swap loses once: it reads the tip again and lands on it.
TEST(GitStore, LostCompareAndSwapIsRetriedOnTheNewTip) {
  Repo repo(1);
  const auto spec = git_store();
  write_file(spec, repo.path(), "a.json", "{\"a\": 1}\n", {});
  const std::string before = run_git(repo.path(), {"rev-parse", k_ref});
  TempDir bin;
  const auto count = rival_git(bin, 1);
  {
    ScopedEnv path("PATH", (bin.path().string() + ":" + std::getenv("PATH")).c_str());
    write_file(spec, repo.path(), "b.json", "{\"b\": 1}\n", {});
  }
  EXPECT_EQ(testing::slurp(count), "2\n");  // the lost update-ref and the one that landed

  std::vector<std::string> warnings;
  auto files = read_files(spec, repo.path(), "origin", warnings);
  EXPECT_EQ(names_of(files), (std::vector<std::string>{"a.json", "b.json", "rival-1.json"}));
  auto history = history_of(repo.path(), k_ref);
  ASSERT_EQ(history.size(), 3u);
  expect_linear(history);
  EXPECT_EQ(run_git(repo.path(), {"log", "-1", "--format=%s", k_ref + "~1"}), "rival 1");
  EXPECT_EQ(history[2][0], before);
}

// A branch that moves before every update-ref: max_attempts lost races, then an error naming
// them; the branch holds the rivals' commits only.
TEST(GitStore, EveryCompareAndSwapLostEndsInAnInfrastructureError) {
  Repo repo(1);
  const auto spec = git_store();
  write_file(spec, repo.path(), "a.json", "{}\n", {});
  TempDir bin;
  const auto count = rival_git(bin, 1000);
  {
    ScopedEnv path("PATH", (bin.path().string() + ":" + std::getenv("PATH")).c_str());
    WriteOptions o;
    o.max_attempts = 2;
    const Error e = error_of([&] { write_file(spec, repo.path(), "b.json", "{}\n", o); });
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_EQ(e.where(), "git:coldgate-history");
    EXPECT_TRUE(contains(e.what(), "2 attempts")) << e.what();
    EXPECT_TRUE(contains(e.what(), "but expected")) << e.what();  // git's words
  }
  EXPECT_EQ(testing::slurp(count), "2\n");
  EXPECT_EQ(tree_names(repo.path(), k_ref),
            (std::vector<std::string>{"a.json", "rival-1.json", "rival-2.json"}));
}

// A ref lock no killed coldgate writer claims (the user's own git, or one that is still running)
// is not coldgate's to remove: the error names it and git's remedy, and it stays.
TEST(GitStore, ALockNoGoneWriterClaimsIsNamedAndLeftAlone) {
  Repo repo(1);
  const auto spec = git_store();
  write_file(spec, repo.path(), "a.json", "{}\n", {});
  const std::string before = run_git(repo.path(), {"rev-parse", k_ref});
  const fs::path lock = repo / (".git/" + k_ref + ".lock");
  std::ofstream(lock) << before << "\n";
  WriteOptions o;
  o.max_attempts = 2;
  const Error e = error_of([&] { write_file(spec, repo.path(), "b.json", "{}\n", o); });
  EXPECT_EQ(e.code(), ExitCode::infrastructure);
  EXPECT_TRUE(contains(e.what(), "found refs/heads/coldgate-history locked")) << e.what();
  EXPECT_TRUE(contains(e.what(), "when no git runs in this repository, remove ")) << e.what();
  EXPECT_TRUE(fs::exists(lock));
  EXPECT_EQ(run_git(repo.path(), {"rev-parse", k_ref}), before);
}

// Two writers at once on one local branch: both land, whoever wins each race. Each lost race of
// one writer is a write of the other, so 15 writes each need at most 16 attempts.
TEST(GitStore, TwoConcurrentWritersBothLand) {
  Repo repo(1);
  const auto spec = git_store();
  const auto errors = at_once(2, [&](int w) {
    WriteOptions o;
    o.max_attempts = 64;
    for (int i = 0; i < 15; ++i) {
      write_file(spec, repo.path(), fmt::format("w{}-{:02}.json", w, i),
                 fmt::format("{{\"writer\": {}, \"i\": {}}}\n", w, i), o);
    }
  });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");

  std::vector<std::string> warnings;
  auto files = contents_of(read_files(spec, repo.path(), "origin", warnings));
  ASSERT_EQ(files.size(), 30u);
  for (int w = 0; w < 2; ++w) {
    for (int i = 0; i < 15; ++i) {
      EXPECT_EQ(files[fmt::format("w{}-{:02}.json", w, i)],
                fmt::format("{{\"writer\": {}, \"i\": {}}}\n", w, i));
    }
  }
  auto history = history_of(repo.path(), k_ref);
  EXPECT_EQ(history.size(), 30u);
  expect_linear(history);
  EXPECT_EQ(run_git(repo.path(), {"status", "--porcelain"}), "");
}

// ---------------------------------------------------------------------------------------------
// Git store, pushed

// A bare repository standing for the project's remote, and two clones of it.
struct Remote {
  TempDir dir;
  ScopedEnv ceiling{"GIT_CEILING_DIRECTORIES", dir.path().parent_path().c_str()};
  fs::path bare = dir / "remote.git";
  fs::path one = dir / "one";
  fs::path two = dir / "two";
  Remote() {
    run_git(dir.path(), {"init", "-q", "--bare", bare.string()});
    run_git(dir.path(), {"clone", "-q", bare.string(), one.string()});
    run_git(dir.path(), {"clone", "-q", bare.string(), two.string()});
  }
  // A pre-push hook in clone one: on each of its first `times` runs, clone two pushes a commit
  // adding rival-<n>.json first, so the push of clone one finds the remote branch moved.
  fs::path rival_hook(int times) const {
    const fs::path count = dir / "pre-push-runs";
    make_executable(one / ".git/hooks/pre-push", R"(#!/bin/sh
n=$(cat '@COUNT@' 2>/dev/null || echo 0); n=$((n + 1))
echo $n > '@COUNT@'
[ $n -le @TIMES@ ] || exit 0
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX
cd '@TWO@' || exit 1
git fetch -q origin +@REF@:refs/remotes/origin/@BRANCH@ 2>/dev/null
blob=$(echo "{\"rival\": $n}" | git hash-object -w --stdin)
entry=$(printf '100644 blob %s\trival-%s.json' "$blob" "$n")
if tip=$(git rev-parse -q --verify refs/remotes/origin/@BRANCH@); then
  tree=$( { git ls-tree "$tip"; echo "$entry"; } | git mktree)
  parent="-p $tip"
else
  tree=$(echo "$entry" | git mktree)
  parent=
fi
c=$(git -c user.name=rival -c user.email=rival@coldgate.invalid commit-tree -m "rival $n" $parent "$tree")
git push -q origin "$c:@REF@" >&2
)",
                    {{"COUNT", count.string()},
                     {"TIMES", std::to_string(times)},
                     {"TWO", two.string()},
                     {"REF", k_ref},
                     {"BRANCH", k_branch}});
    return count;
  }
};

WriteOptions pushing(int max_attempts = 8) {
  WriteOptions o;
  o.push = true;
  o.remote = "origin";
  o.max_attempts = max_attempts;
  return o;
}

std::string ref_or_none(const fs::path& dir, const std::string& ref) {
  auto r = git_status(dir, {"rev-parse", "--verify", "--quiet", ref});
  return r.status.ok() ? r.out.substr(0, r.out.find('\n')) : "none";
}

TEST(PushedStore, LandsInTheRemoteAndIsReadAfterAFetch) {
  Remote remote;
  const auto spec = git_store();
  auto landed = write_file(spec, remote.one, "a.json", "{\"a\": 1}\n", pushing());
  const std::string tip = run_git(remote.bare, {"rev-parse", k_ref});
  EXPECT_EQ(landed, "git:coldgate-history at " + tip.substr(0, 7) + " (pushed to origin)");
  EXPECT_EQ(run_git(remote.one, {"rev-parse", k_ref}), tip);
  EXPECT_EQ(run_git(remote.one, {"rev-parse", "refs/remotes/origin/" + k_branch}), tip);
  write_file(spec, remote.one, "b.json", "{\"b\": 1}\n", pushing());
  EXPECT_EQ(tree_names(remote.bare, k_ref), (std::vector<std::string>{"a.json", "b.json"}));
  expect_linear(history_of(remote.bare, k_ref));

  // The other clone sees nothing before it fetches, then the remote-tracking branch.
  std::vector<std::string> warnings;
  EXPECT_TRUE(read_files(spec, remote.two, "origin", warnings).empty());
  run_git(remote.two, {"fetch", "-q", "origin", "+" + k_ref + ":refs/remotes/origin/" + k_branch});
  EXPECT_EQ(ref_or_none(remote.two, k_ref), "none");
  EXPECT_EQ(
      contents_of(read_files(spec, remote.two, "origin", warnings)),
      (std::map<std::string, std::string>{{"a.json", "{\"a\": 1}\n"}, {"b.json", "{\"b\": 1}\n"}}));
  EXPECT_TRUE(warnings.empty());
  // Another remote name reads only the local branch (there is none here).
  EXPECT_TRUE(read_files(spec, remote.two, "upstream", warnings).empty());
}

TEST(PushedStore, LocalBranchWinsOverTheFetchedOneByName) {
  Remote remote;
  const auto spec = git_store();
  write_file(spec, remote.one, "a.json", "{\"v\": \"pushed\"}\n", pushing());
  write_file(spec, remote.one, "b.json", "{\"v\": \"pushed\"}\n", pushing());
  write_file(spec, remote.one, "a.json", "{\"v\": \"local\"}\n", {});  // not pushed
  std::vector<std::string> warnings;
  auto files = read_files(spec, remote.one, "origin", warnings);
  EXPECT_EQ(contents_of(files),
            (std::map<std::string, std::string>{{"a.json", "{\"v\": \"local\"}\n"},
                                                {"b.json", "{\"v\": \"pushed\"}\n"}}));
  // A name only the fetched branch has is read from it.
  write_file(spec, remote.two, "c.json", "{\"v\": \"two\"}\n", pushing());
  run_git(remote.one, {"fetch", "-q", "origin", "+" + k_ref + ":refs/remotes/origin/" + k_branch});
  files = read_files(spec, remote.one, "origin", warnings);
  EXPECT_EQ(names_of(files), (std::vector<std::string>{"a.json", "b.json", "c.json"}));
  EXPECT_EQ(contents_of(files)["a.json"], "{\"v\": \"local\"}\n");
  for (const auto& f : files) EXPECT_EQ(f.where, "git:coldgate-history:" + f.name);
}

// The remote moves between the writer's fetch and its push (clone two pushes from clone one's
// pre-push hook, once): the push is refused, and the writer fetches again and lands on top.
TEST(PushedStore, ARemoteThatMovedMeanwhileIsFetchedAgainAndPushedOnTop) {
  Remote remote;
  const auto spec = git_store();
  write_file(spec, remote.one, "a.json", "{\"a\": 1}\n", pushing());
  const auto runs = remote.rival_hook(1);
  write_file(spec, remote.one, "b.json", "{\"b\": 1}\n", pushing());

  EXPECT_EQ(testing::slurp(runs), "2\n");  // the refused push and the one that landed
  EXPECT_EQ(tree_names(remote.bare, k_ref),
            (std::vector<std::string>{"a.json", "b.json", "rival-1.json"}));
  auto history = history_of(remote.bare, k_ref);
  ASSERT_EQ(history.size(), 3u);
  expect_linear(history);
  EXPECT_EQ(run_git(remote.bare, {"log", "-1", "--format=%s", k_ref + "~1"}), "rival 1");
  EXPECT_EQ(run_git(remote.one, {"rev-parse", k_ref}), history[0][0]);
  EXPECT_EQ(run_git(remote.one, {"rev-parse", "refs/remotes/origin/" + k_branch}), history[0][0]);
}

// Likewise when the branch does not exist yet: the rival creates it first.
TEST(PushedStore, ABranchCreatedMeanwhileIsFetchedAndPushedOnTop) {
  Remote remote;
  const auto runs = remote.rival_hook(1);
  write_file(git_store(), remote.one, "a.json", "{\"a\": 1}\n", pushing());
  EXPECT_EQ(testing::slurp(runs), "2\n");
  EXPECT_EQ(tree_names(remote.bare, k_ref), (std::vector<std::string>{"a.json", "rival-1.json"}));
  auto history = history_of(remote.bare, k_ref);
  ASSERT_EQ(history.size(), 2u);
  expect_linear(history);
}

// Two writers in each of two clones at once (in one clone they also race for its
// remote-tracking ref): all land, none pushed over another. A writer loses a push only to a
// landed write of another and a fetch only to a fetch or push beside it in its clone, so 64
// attempts per write are far more than 24 writes can take from it.
TEST(PushedStore, TwoClonesPushingAtOnceBothLand) {
  Remote remote;
  const auto spec = git_store();
  const auto errors = at_once(4, [&](int w) {
    for (int i = 0; i < 6; ++i) {
      write_file(spec, w % 2 ? remote.two : remote.one, fmt::format("c{}-{}.json", w, i),
                 fmt::format("{{\"writer\": {}, \"i\": {}}}\n", w, i), pushing(64));
    }
  });
  EXPECT_EQ(errors, std::vector<std::string>(4, ""));
  std::vector<std::string> expected;
  for (int w = 0; w < 4; ++w) {
    for (int i = 0; i < 6; ++i) expected.push_back(fmt::format("c{}-{}.json", w, i));
  }
  EXPECT_EQ(tree_names(remote.bare, k_ref), expected);
  auto history = history_of(remote.bare, k_ref);
  EXPECT_EQ(history.size(), 24u);  // nothing pushed over another
  expect_linear(history);
  // Each clone's branches ended at a commit of the remote.
  for (const auto& clone : {remote.one, remote.two}) {
    for (const std::string& ref : {k_ref, "refs/remotes/origin/" + k_branch}) {
      const std::string at = run_git(clone, {"rev-parse", ref});
      EXPECT_TRUE(git_status(remote.bare, {"merge-base", "--is-ancestor", at, k_ref}).status.ok())
          << clone << " " << ref;
    }
  }
}

// A remote that moves before every push: max_attempts lost races, then an error; the local
// branch is as it was and the remote-tracking one names a commit the remote has.
TEST(PushedStore, EveryAttemptLostEndsInAnInfrastructureErrorNamingThem) {
  Remote remote;
  const auto spec = git_store();
  write_file(spec, remote.one, "a.json", "{\"a\": 1}\n", pushing());
  const std::string local_before = run_git(remote.one, {"rev-parse", k_ref});
  const auto runs = remote.rival_hook(1000);
  const Error e =
      error_of([&] { write_file(spec, remote.one, "b.json", "{\"b\": 1}\n", pushing(3)); });
  EXPECT_EQ(e.code(), ExitCode::infrastructure);
  EXPECT_EQ(e.where(), "git:coldgate-history");
  EXPECT_TRUE(contains(e.what(), "3 attempts")) << e.what();
  EXPECT_TRUE(contains(e.what(), "lost the race")) << e.what();
  EXPECT_TRUE(contains(e.what(), "[remote rejected] (failed to update ref)")) << e.what();
  EXPECT_EQ(testing::slurp(runs), "3\n");
  EXPECT_EQ(run_git(remote.one, {"rev-parse", k_ref}), local_before);
  const std::string tracking =
      run_git(remote.one, {"rev-parse", "refs/remotes/origin/" + k_branch});
  EXPECT_TRUE(
      git_status(remote.bare, {"merge-base", "--is-ancestor", tracking, k_ref}).status.ok());
  auto names = tree_names(remote.bare, k_ref);
  EXPECT_EQ(std::count(names.begin(), names.end(), "b.json"), 0);
  EXPECT_EQ(names.size(), 4u);  // a.json and the three rivals
}

TEST(PushedStore, ARefusalThatIsNoRaceFailsAtOnceWithGitsReason) {
  Remote remote;
  const fs::path runs = remote.dir / "pre-receive-runs";
  make_executable(remote.bare / "hooks/pre-receive", "#!/bin/sh\necho run >> '" + runs.string() +
                                                         "'\necho 'policy: no' >&2\nexit 1\n");
  const Error e =
      error_of([&] { write_file(git_store(), remote.one, "a.json", "{}\n", pushing()); });
  EXPECT_EQ(e.code(), ExitCode::infrastructure);
  EXPECT_TRUE(contains(e.what(), "git push origin failed")) << e.what();
  EXPECT_TRUE(contains(e.what(),
                       "[remote rejected] (pre-receive hook declined) (remote: "
                       "policy: no)"))
      << e.what();
  EXPECT_EQ(testing::slurp(runs), "run\n");
  EXPECT_EQ(ref_or_none(remote.one, k_ref), "none");
  EXPECT_EQ(ref_or_none(remote.bare, k_ref), "none");
}

TEST(PushedStore, NoSuchRemoteFailsAtOnce) {
  Remote remote;
  WriteOptions o = pushing();
  o.remote = "nosuch";
  const Error e = error_of([&] { write_file(git_store(), remote.one, "a.json", "{}\n", o); });
  EXPECT_EQ(e.code(), ExitCode::infrastructure);
  EXPECT_TRUE(contains(e.what(), "git fetch nosuch failed")) << e.what();
  EXPECT_TRUE(contains(e.what(), "'nosuch' does not appear to be a git repository")) << e.what();
  EXPECT_TRUE(contains(e.what(), "git remote -v")) << e.what();
  EXPECT_EQ(ref_or_none(remote.one, k_ref), "none");
  // A remote that git would take for an option is refused before git runs.
  o.remote = "--upload-pack=touch gotcha";
  EXPECT_EQ(error_of([&] { write_file(git_store(), remote.one, "a.json", "{}\n", o); }).code(),
            ExitCode::usage);
  EXPECT_FALSE(fs::exists(remote.one / "gotcha"));
}

// SIGINT while the push runs (the pre-push hook sends it, then waits): the write stops with
// Error(interrupted), no ref moved anywhere, and its temp folder is gone. In a child process, as
// the interrupt flag stays set for the rest of a process's life.
TEST(PushedStore, InterruptedPushLeavesNoRefMovedAndNoTempFolder) {
  Remote remote;
  const auto spec = git_store();
  write_file(spec, remote.one, "a.json", "{\"a\": 1}\n", pushing());
  const std::string before = run_git(remote.bare, {"rev-parse", k_ref});
  make_executable(remote.one / ".git/hooks/pre-push",
                  "#!/bin/sh\nkill -INT \"$COLDGATE_TEST_PID\"\nsleep 30\n");
  TempDir tmp;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 1;
    try {
      ::setenv("TMPDIR", tmp.path().c_str(), 1);
      ::setenv("COLDGATE_TEST_PID", std::to_string(::getpid()).c_str(), 1);
      util::install_interrupt_handlers();
      write_file(spec, remote.one, "b.json", "{\"b\": 1}\n", pushing());
      code = 2;  // not interrupted
    } catch (const Error& e) {
      code = e.code() == ExitCode::interrupted ? 0 : 3;
    } catch (...) {
      code = 4;
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: not interrupted, 3: another error, 4: no Error";
  EXPECT_EQ(run_git(remote.bare, {"rev-parse", k_ref}), before);
  EXPECT_EQ(run_git(remote.one, {"rev-parse", k_ref}), before);
  EXPECT_EQ(run_git(remote.one, {"rev-parse", "refs/remotes/origin/" + k_branch}), before);
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

// ---------------------------------------------------------------------------------------------
// Folder store

TEST(FolderStore, TwentyFilesWrittenAndReadBack) {
  TempDir dir;
  const auto spec = parse_store("history", dir.path(), "--store");
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 20; ++i) {
    const std::string sha = util::sha256_hex(std::to_string(i)).substr(0, 40);
    const std::string name = sha + ".json";
    EXPECT_EQ(write_file(spec, {}, name, record_text(sha, i), {}),
              util::display_path(dir / "history" / name));
    expected[name] = record_text(sha, i);
  }
  std::vector<std::string> warnings;
  auto files = read_files(spec, {}, "origin", warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(contents_of(files), expected);
  for (std::size_t i = 0; i + 1 < files.size(); ++i) EXPECT_LT(files[i].name, files[i + 1].name);
  for (const auto& f : files) EXPECT_EQ(f.where, util::display_path(dir / "history" / f.name));
  // No temp file is left beside them.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir / "history")) ++entries;
  EXPECT_EQ(entries, 20u);

  write_file(spec, {}, files[0].name, "{\"replaced\": true}\n", {});
  auto again = read_files(spec, {}, "origin", warnings);
  EXPECT_EQ(again.size(), 20u);
  EXPECT_EQ(again[0].contents, "{\"replaced\": true}\n");
}

TEST(FolderStore, AMissingFolderIsAnEmptyStore) {
  TempDir dir;
  std::vector<std::string> warnings;
  EXPECT_TRUE(
      read_files(parse_store("none/yet", dir.path(), "--store"), {}, "origin", warnings).empty());
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(FolderStore, StraysAreSkippedWithAWarningNamingThem) {
  TempDir dir;
  dir.write("h/a.json", "{\"a\": 1}\n");
  dir.write("h/notes.txt", "not a record\n");
  dir.write("h/sub.json/x.json", "{}\n");
  dir.write("h/b.json.tmp-Ab12Cd", "{\"half");  // a writer's temp file, not a stray
  fs::create_symlink(dir / "h/gone", dir / "h/broken.json");
  std::vector<std::string> warnings;
  auto files =
      read_files(parse_store(dir.path().string() + "/h", "/", "--store"), {}, "origin", warnings);
  EXPECT_EQ(names_of(files), (std::vector<std::string>{"a.json"}));
  EXPECT_EQ(files[0].contents, "{\"a\": 1}\n");
  const std::string h = util::display_path(dir / "h");
  EXPECT_EQ(warnings,
            (std::vector<std::string>{h + "/broken.json: cannot be read, skipped",
                                      h + "/notes.txt: not a .json file, skipped",
                                      h + "/sub.json: a folder in the history store, skipped"}));
}

TEST(FolderStore, AFileWhereTheFolderShouldBeIsAUsageError) {
  TempDir dir;
  dir.write("h", "a file\n");
  std::vector<std::string> warnings;
  const Error e = error_of(
      [&] { read_files(parse_store("h", dir.path(), "--store"), {}, "origin", warnings); });
  EXPECT_EQ(e.code(), ExitCode::usage);
  EXPECT_TRUE(contains(e.what(), "not a folder")) << e.what();
}

}  // namespace
}  // namespace coldgate::history

namespace coldgate::history {
namespace {

TEST(ParseStore, AFullRefIsRefusedThoughGitWouldTakeIt) {
  // git takes "refs/heads/x" as a branch name: the branch refs/heads/refs/heads/x.
  try {
    parse_store("git:refs/heads/x", "/", "coldgate.yaml:3:10");
    FAIL() << "a full ref was taken for a branch name";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "coldgate.yaml:3:10");
    EXPECT_NE(std::string(e.what()).find("it is a ref, not a branch's name (drop refs/heads/)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace coldgate::history
