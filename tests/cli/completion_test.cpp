// The bash completion (packaging/coldgate.bash-completion) as installed by `cmake --install`,
// sourced into `bash --noprofile --norc` and called as bash calls it: COMP_WORDS, COMP_CWORD,
// COMP_LINE, COMP_POINT set, then the function `complete -p coldgate` names; COMPREPLY read
// back. Its candidates come from the built binary's --help, found on PATH as `coldgate`.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "support/support.hpp"
#include "util/process.hpp"

namespace coldgate::testing {
namespace {

namespace fs = std::filesystem;

// What one completion produced.
struct Completion {
  std::set<std::string> reply;  // COMPREPLY's words
  std::vector<std::string> words;  // in COMPREPLY's order
  std::string err;
  int exit_code = -1;
};

class BashCompletion : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    prefix_ = new TempDir;
    auto r = util::run({.argv = {COLDGATE_CMAKE, "--install", COLDGATE_BUILD_DIR, "--component",
                                 "completion", "--prefix", prefix_->path().string()}});
    ASSERT_TRUE(r.status.ok()) << r.out << r.err;
  }
  static void TearDownTestSuite() {
    delete prefix_;
    prefix_ = nullptr;
  }

  static fs::path script() { return prefix_->path() / "share/bash-completion/completions/coldgate"; }

  // Completes `words` (the last one is the word under the cursor) in folder `cwd`, with the
  // built binary's folder first on PATH.
  static Completion complete(const std::vector<std::string>& words, const fs::path& cwd = {}) {
    std::vector<std::string> argv{
        "bash", "--noprofile", "--norc", "-c",
        "source \"$1\" && shift\n"
        "func=$(complete -p coldgate | sed -n 's/.* -F \\([^ ]*\\) .*/\\1/p')\n"
        "COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMP_LINE=\"$*\"; COMP_POINT=${#COMP_LINE}\n"
        "\"$func\" \"${COMP_WORDS[0]}\" \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD - 1]}\"\n"
        "for w in \"${COMPREPLY[@]}\"; do printf '%s\\n' \"$w\"; done",
        "completion-test", script().string()};
    argv.insert(argv.end(), words.begin(), words.end());
    const std::string bin_dir = fs::path(COLDGATE_BINARY).parent_path().string();
    auto r = util::run({.argv = argv, .cwd = cwd, .env = {"PATH=" + bin_dir + ":/usr/bin:/bin"}});
    Completion c;
    c.exit_code = r.status.exit_code;
    c.err = r.err;
    std::size_t start = 0;
    for (std::size_t nl; (nl = r.out.find('\n', start)) != std::string::npos; start = nl + 1) {
      c.words.push_back(r.out.substr(start, nl - start));
    }
    c.reply.insert(c.words.begin(), c.words.end());
    return c;
  }

  static inline TempDir* prefix_ = nullptr;
};

using Set = std::set<std::string>;

TEST_F(BashCompletion, IsInstalledWhereBashCompletionLoadsItAndRegistersTheFunction) {
  ASSERT_TRUE(fs::is_regular_file(script())) << script();
  auto r = util::run({.argv = {"bash", "--noprofile", "--norc", "-c", "source \"$1\" && complete -p coldgate",
                               "completion-test", script().string()}});
  EXPECT_EQ(r.status.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "complete -F _coldgate coldgate\n");
}

TEST_F(BashCompletion, CommandsComeFromTheBinarysHelp) {
  auto all = complete({"coldgate", ""});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.err, "");
  for (const char* command : {"run", "compare", "accept", "canon", "diff", "explain", "comment", "ab",
                              "merge", "db"}) {
    EXPECT_EQ(all.reply.count(command), 1u) << command;
  }
  EXPECT_EQ(all.reply.count("probe"), 0u) << "the internal command is not offered";
  // Every candidate is a command the binary lists (two spaces, the name, its summary).
  auto help = run_coldgate({"--help"});
  for (const auto& w : all.words) {
    EXPECT_NE(help.out.find("\n  " + w + " "), std::string::npos) << w;
  }
  EXPECT_EQ(complete({"coldgate", "e"}).words, std::vector<std::string>{"explain"});
  EXPECT_EQ(complete({"coldgate", "co"}).reply, (Set{"compare", "comment"}));
  EXPECT_EQ(complete({"coldgate", "--"}).reply, (Set{"--help", "--version"}));
  EXPECT_EQ(complete({"coldgate", "-"}).reply, (Set{"-h", "--help", "--version"}));
}

TEST_F(BashCompletion, OptionsOfTheCommandBeingCompleted) {
  EXPECT_EQ(complete({"coldgate", "run", "--c"}).reply, (Set{"--config", "--ci", "--comment"}));
  EXPECT_EQ(complete({"coldgate", "explain", "--"}).reply,
            (Set{"--help", "--config", "--json", "--statement", "--top", "--try"}));
  EXPECT_EQ(complete({"coldgate", "diff", "-"}).reply,
            (Set{"-h", "--help", "--max-lines", "--paths", "-U", "--context", "--color", "-o", "--output"}));
  // Options after other words and values: still the command's.
  EXPECT_EQ(complete({"coldgate", "run", "-c", "x.yaml", "--stage", "a", "--u"}).words,
            std::vector<std::string>{"--update-snapshots"});
  // An unknown command has no help to read: nothing, quietly.
  auto none = complete({"coldgate", "nosuch", "--"});
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_EQ(none.words, std::vector<std::string>{});
  EXPECT_EQ(none.err, "");
}

TEST_F(BashCompletion, ConfigOptionCompletesYamlFilesAndFolders) {
  TempDir dir;
  for (const char* f : {"a.yaml", "b.yml", "c.json", "with space.yaml", "sub/d.yaml"}) dir.write(f, "");
  EXPECT_EQ(complete({"coldgate", "run", "-c", ""}, dir.path()).reply,
            (Set{"a.yaml", "b.yml", "with space.yaml", "sub"}));
  EXPECT_EQ(complete({"coldgate", "db", "--config", "w"}, dir.path()).words,
            std::vector<std::string>{"with space.yaml"});
  // --config=FILE: bash splits it into "--config", "=", "FILE".
  EXPECT_EQ(complete({"coldgate", "run", "--config", "="}, dir.path()).reply,
            (Set{"a.yaml", "b.yml", "with space.yaml", "sub"}));
  EXPECT_EQ(complete({"coldgate", "run", "--config", "=", "a"}, dir.path()).words,
            std::vector<std::string>{"a.yaml"});
  EXPECT_EQ(complete({"coldgate", "run", "-c", "sub/"}, dir.path()).words,
            std::vector<std::string>{"sub/d.yaml"});
}

TEST_F(BashCompletion, ValuesAreTheChoicesTheBinaryListsElseFileNames) {
  TempDir dir;
  for (const char* f : {"base.json", "head.json"}) dir.write(f, "{}");
  EXPECT_EQ(complete({"coldgate", "db", ""}).reply, (Set{"up", "down", "url"}));
  EXPECT_EQ(complete({"coldgate", "db", "u"}).reply, (Set{"up", "url"}));
  EXPECT_EQ(complete({"coldgate", "diff", "--color", ""}).reply, (Set{"auto", "always", "never"}));
  EXPECT_EQ(complete({"coldgate", "comment", "--mode", "o"}).words, std::vector<std::string>{"on-change"});
  // A number takes no file name.
  EXPECT_EQ(complete({"coldgate", "diff", "--max-lines", ""}, dir.path()).words, std::vector<std::string>{});
  // Positional file arguments and text options: file names.
  EXPECT_EQ(complete({"coldgate", "compare", ""}, dir.path()).reply, (Set{"base.json", "head.json"}));
  EXPECT_EQ(complete({"coldgate", "compare", "base.json", "h"}, dir.path()).words,
            std::vector<std::string>{"head.json"});
  EXPECT_EQ(complete({"coldgate", "run", "--baseline", "b"}, dir.path()).words,
            std::vector<std::string>{"base.json"});
  // A flag takes no value: the next word is an option or an argument again.
  EXPECT_EQ(complete({"coldgate", "run", "--ci", "--no"}).words, std::vector<std::string>{"--no-ci"});
}

TEST_F(BashCompletion, TheCommandWordAsTypedIsTheBinaryAsked) {
  // A path to the binary works without it on PATH; a coldgate found nowhere completes nothing.
  auto r = util::run({.argv = {"bash", "--noprofile", "--norc", "-c",
                               "source \"$1\"; COMP_WORDS=(\"$2\" e); COMP_CWORD=1; _coldgate; "
                               "echo \"${COMPREPLY[*]}\"; COMP_WORDS=(coldgate e); _coldgate; "
                               "echo \"${#COMPREPLY[@]}\"",
                               "completion-test", script().string(), COLDGATE_BINARY},
                      .env = {"PATH=/usr/bin:/bin"}});
  EXPECT_EQ(r.status.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "explain\n0\n");
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace coldgate::testing
