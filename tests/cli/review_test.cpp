// `coldgate review` as a person uses it: the built binary on a tmux terminal, keys sent one at a
// time, the screen read back; and its refusals where there is no terminal or CI mode is on.
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>

#include "support/support.hpp"
#include "support/terminal.hpp"

namespace coldgate::testing {
namespace {

namespace fs = std::filesystem;

const char* k_config = R"(version: 1
stages:
  - name: alpha
    query: select 1
    snapshot: { path: snapshots/alpha.json }
  - name: beta
    query: select 2
    snapshot: { path: snapshots/beta.json }
  - name: gamma
    query: select 3
    snapshot: { path: snapshots/gamma.json }
  - name: delta
    query: select 4
    snapshot: { path: snapshots/delta.json }
)";

const std::string k_alpha_old = "{\n  \"limit\": 50,\n  \"name\": \"shop\"\n}\n";
const std::string k_alpha_new = "{\n  \"limit\": 40,\n  \"name\": \"shop\"\n}\n";
const std::string k_beta_new = "{\n  \"tables\": 2\n}\n";
const std::string k_gamma_old = "[\n  1\n]\n";
const std::string k_gamma_new = "[\n  1,\n  2\n]\n";

// A project with three pending candidates: alpha changed, beta missing, gamma changed (delta
// has nothing pending).
class Review : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.write("coldgate.yaml", k_config);
    dir_.write("snapshots/alpha.json", k_alpha_old);
    dir_.write("snapshots/alpha.json.new", k_alpha_new);
    dir_.write("snapshots/alpha.json.new.diff", "the run's whole diff\n");
    dir_.write("snapshots/beta.json.new", k_beta_new);
    dir_.write("snapshots/gamma.json", k_gamma_old);
    dir_.write("snapshots/gamma.json.new", k_gamma_new);
    dir_.write("snapshots/delta.json", "{}\n");
  }
  bool exists(const std::string& name) const { return fs::exists(dir_ / name); }
  TempDir dir_;
};

const char* k_alpha_screen = R"(review: 3 pending snapshots

── 1/3 · stage alpha · snapshots/alpha.json
snapshot changed: 1 path differs (1 changed, 0 added, 0 removed)

1 path differs: 1 changed, 0 added, 0 removed
  /limit: 50 → 40

--- snapshots/alpha.json
+++ snapshots/alpha.json.new
@@ -1,4 +1,4 @@
 {
-  "limit": 50,
+  "limit": 40,
   "name": "shop"
 }

  a accept · r reject (delete the candidate) · s skip · q quit ›
)";

TEST_F(Review, AcceptRejectSkipOneKeyEachThenTheSummary) {
  TmuxSession term({COLDGATE_BINARY, "review"}, dir_.path());
  EXPECT_EQ(term.wait_for("quit ›"), k_alpha_screen);
  term.keys({"x", "a"});  // a key that means nothing is ignored
  term.wait_for("2/3 · stage beta");
  term.keys({"r"});
  term.wait_for("3/3 · stage gamma");
  term.keys({"s"});
  EXPECT_EQ(term.wait_exit(), 0);
  EXPECT_EQ(term.screen(), std::string(k_alpha_screen).substr(0, std::string(k_alpha_screen).size() - 1) + R"( a
accepted alpha: snapshots/alpha.json

── 2/3 · stage beta · snapshots/beta.json
snapshot missing: snapshots/beta.json does not exist

--- /dev/null
+++ snapshots/beta.json.new
@@ -0,0 +1,3 @@
+{
+  "tables": 2
+}

  a accept · r reject (delete the candidate) · s skip · q quit › r
rejected beta: removed snapshots/beta.json.new

── 3/3 · stage gamma · snapshots/gamma.json
snapshot changed: 1 path differs (0 changed, 1 added, 0 removed)

1 path differs: 0 changed, 1 added, 0 removed
  /1: added 2

--- snapshots/gamma.json
+++ snapshots/gamma.json.new
@@ -1,3 +1,4 @@
 [
-  1
+  1,
+  2
 ]

  a accept · r reject (delete the candidate) · s skip · q quit › s
skipped gamma

review: 1 accepted, 1 rejected, 1 skipped
  accepted: alpha
  rejected: beta
  skipped:  gamma (still pending: coldgate review, or coldgate accept)
)");
  // Accepted: the candidate's bytes are the snapshot, nothing pending is left.
  EXPECT_EQ(slurp(dir_ / "snapshots/alpha.json"), k_alpha_new);
  EXPECT_FALSE(exists("snapshots/alpha.json.new"));
  EXPECT_FALSE(exists("snapshots/alpha.json.new.diff"));
  // Rejected: the candidate is gone and no snapshot was made.
  EXPECT_FALSE(exists("snapshots/beta.json.new"));
  EXPECT_FALSE(exists("snapshots/beta.json"));
  // Skipped: as it was.
  EXPECT_EQ(slurp(dir_ / "snapshots/gamma.json"), k_gamma_old);
  EXPECT_EQ(slurp(dir_ / "snapshots/gamma.json.new"), k_gamma_new);
  EXPECT_EQ(term.stty_after(), term.stty_before());
}

TEST_F(Review, QuitLeavesTheRestPendingAndTheTerminalAsItWas) {
  TmuxSession term({COLDGATE_BINARY, "review"}, dir_.path());
  term.wait_for("1/3 · stage alpha");
  term.wait_for("quit ›");
  term.keys({"s"});
  term.wait_for("2/3 · stage beta");
  term.keys({"q"});
  EXPECT_EQ(term.wait_exit(), 0);
  std::string screen = term.screen();
  EXPECT_NE(screen.find("  a accept · r reject (delete the candidate) · s skip · q quit › q\n"
                        "\n"
                        "review: 0 accepted, 0 rejected, 3 skipped\n"
                        "  skipped:  alpha, beta, gamma (still pending: coldgate review, or coldgate accept)\n"),
            std::string::npos)
      << screen;
  EXPECT_EQ(slurp(dir_ / "snapshots/alpha.json"), k_alpha_old);
  EXPECT_TRUE(exists("snapshots/alpha.json.new"));
  EXPECT_TRUE(exists("snapshots/beta.json.new"));
  EXPECT_TRUE(exists("snapshots/gamma.json.new"));
  EXPECT_FALSE(term.stty_before().empty());
  EXPECT_EQ(term.stty_after(), term.stty_before());
}

TEST_F(Review, EscapeAndCtrlDQuitTooWhileCtrlZAndCtrlBackslashAreIgnored) {
  for (const char* key : {"Escape", "C-d"}) {
    TmuxSession term({COLDGATE_BINARY, "review"}, dir_.path());
    term.wait_for("quit ›");
    // Neither stops nor dumps core with the terminal in cbreak mode: the quit key still comes.
    term.keys({"C-z", "C-\\", key});
    EXPECT_EQ(term.wait_exit(), 0) << key;
    EXPECT_NE(term.screen().find("review: 0 accepted, 0 rejected, 3 skipped\n"), std::string::npos)
        << key << "\n" << term.screen();
    EXPECT_EQ(term.stty_after(), term.stty_before()) << key;
  }
  EXPECT_TRUE(exists("snapshots/alpha.json.new"));
}

TEST_F(Review, CtrlCEndsWithExit130AfterSayingWhatWasDone) {
  TmuxSession term({COLDGATE_BINARY, "review"}, dir_.path());
  term.wait_for("quit ›");
  term.keys({"a"});
  term.wait_for("2/3 · stage beta");
  term.keys({"C-c"});
  EXPECT_EQ(term.wait_exit(), 130);
  std::string screen = term.screen();
  EXPECT_NE(screen.find("  a accept · r reject (delete the candidate) · s skip · q quit ›\n"
                        "review: 1 accepted, 0 rejected, 0 skipped\n"
                        "  accepted: alpha\n"
                        "coldgate: error: interrupted by SIGINT\n"),
            std::string::npos)
      << screen;
  EXPECT_EQ(slurp(dir_ / "snapshots/alpha.json"), k_alpha_new);
  EXPECT_TRUE(exists("snapshots/beta.json.new"));
  EXPECT_EQ(term.stty_after(), term.stty_before());
}

TEST_F(Review, SigtermEndsWithExit130AndTheTerminalAsItWas) {
  TmuxSession term({COLDGATE_BINARY, "review"}, dir_.path());
  term.wait_for("quit ›");
  pid_t pid = term.command_pid();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  EXPECT_EQ(term.wait_exit(), 130);
  EXPECT_NE(term.screen().find("review: 0 accepted, 0 rejected, 0 skipped\n"
                               "coldgate: error: interrupted by SIGTERM\n"),
            std::string::npos)
      << term.screen();
  EXPECT_EQ(term.stty_after(), term.stty_before());
  EXPECT_TRUE(exists("snapshots/alpha.json.new"));
}

TEST_F(Review, AnErrorLeavesTheTerminalAsItWas) {
  // beta's snapshot path is a folder: reading it fails once review has set up the terminal.
  fs::create_directories(dir_ / "snapshots/beta.json");
  TmuxSession term({COLDGATE_BINARY, "review"}, dir_.path());
  term.wait_for("quit ›");
  term.keys({"s"});
  EXPECT_EQ(term.wait_exit(), 2);
  EXPECT_NE(term.screen().find("skipped alpha\n"
                               "\n"
                               "review: 0 accepted, 0 rejected, 1 skipped\n"
                               "  skipped:  alpha (still pending: coldgate review, or coldgate accept)\n"
                               "coldgate: error: " + (dir_ / "snapshots/beta.json").string() +
                               ": is a folder; expected a file\n"),
            std::string::npos)
      << term.screen();
  EXPECT_EQ(term.stty_after(), term.stty_before());
}

TEST_F(Review, ACandidateThatIsNotCanonicalIsNotAccepted) {
  dir_.write("snapshots/gamma.json.new", "[2, 1]\n");
  TmuxSession term({COLDGATE_BINARY, "review", "gamma"}, dir_.path());
  std::string screen = term.wait_for("quit ›");
  EXPECT_NE(screen.find("── 1/1 · stage gamma · snapshots/gamma.json\n"
                        "snapshot changed: 1 path differs (1 changed, 0 added, 0 removed); the "
                        "candidate is not in canonical form from line 1 (unsorted keys, re-indented "
                        "or edited by hand?), so it cannot be accepted\n"
                        "\n"
                        "1 path differs: 1 changed, 0 added, 0 removed\n"
                        "  (root): [1 item] → [2, 1]\n"),
            std::string::npos)
      << screen;
  term.keys({"a"});
  term.wait_for("not accepted");
  term.keys({"s"});
  EXPECT_EQ(term.wait_exit(), 0);
  EXPECT_NE(term.screen().find(
                "quit › a\n"
                "not accepted: accept: refusing " + (dir_ / "snapshots/gamma.json.new").string() +
                " (stage 'gamma'): it is not "
                "in canonical form from line 1 (unsorted keys, re-indented or edited by hand?); "
                "nothing was changed\n"
                "\n"
                "  a accept · r reject (delete the candidate) · s skip · q quit › s\n"
                "skipped gamma\n"),
            std::string::npos)
      << term.screen();
  EXPECT_EQ(slurp(dir_ / "snapshots/gamma.json"), k_gamma_old);
  EXPECT_EQ(term.stty_after(), term.stty_before());
}

TEST_F(Review, ASnapshotWrittenUnderOtherRulesIsShownRearrangedWithoutADiff) {
  // Arrays are sorted under delta's rules; its committed file kept the order of other rules.
  dir_.write("snapshots/delta.json", "[\n  2,\n  1\n]\n");
  dir_.write("snapshots/delta.json.new", "[\n  1,\n  2\n]\n");
  TmuxSession term({COLDGATE_BINARY, "review", "delta"}, dir_.path());
  EXPECT_EQ(term.wait_for("quit ›"),
            "review: 1 pending snapshot\n"
            "\n"
            "── 1/1 · stage delta · snapshots/delta.json\n"
            "snapshot rearranged: snapshots/delta.json is arranged under changed rules, content "
            "identical: accepting rewrites it\n"
            "\n"
            "  a accept · r reject (delete the candidate) · s skip · q quit ›\n");
  term.keys({"a"});
  EXPECT_EQ(term.wait_exit(), 0);
  EXPECT_EQ(slurp(dir_ / "snapshots/delta.json"), "[\n  1,\n  2\n]\n");
}

TEST_F(Review, StagesNamedReviewOnlyThoseAndCOptionNamesTheConfig) {
  fs::create_directories(dir_ / "sub");
  fs::rename(dir_ / "coldgate.yaml", dir_ / "sub/gate.yaml");
  fs::rename(dir_ / "snapshots", dir_ / "sub/snapshots");
  TmuxSession term({COLDGATE_BINARY, "review", "-c", "sub/gate.yaml", "gamma"}, dir_.path());
  EXPECT_NE(term.wait_for("quit ›").find("review: 1 pending snapshot\n\n"
                                         "── 1/1 · stage gamma · sub/snapshots/gamma.json\n"),
            std::string::npos)
      << term.screen();
  term.keys({"s"});
  EXPECT_EQ(term.wait_exit(), 0);
  EXPECT_NE(term.screen().find("  skipped:  gamma (still pending: coldgate review -c "
                               "sub/gate.yaml, or coldgate accept -c sub/gate.yaml)\n"),
            std::string::npos)
      << term.screen();
}

TEST_F(Review, UnknownStageSuggestsTheClosest) {
  TmuxSession term({COLDGATE_BINARY, "review", "gama"}, dir_.path());
  EXPECT_EQ(term.wait_exit(), 2);
  EXPECT_EQ(term.screen(), "coldgate: error: review: unknown stage 'gama' (did you mean 'gamma'?)\n");
  EXPECT_EQ(term.stty_after(), term.stty_before());
}

TEST_F(Review, NothingPendingSaysSoAndExits0) {
  TmuxSession term({COLDGATE_BINARY, "review", "delta"}, dir_.path());
  EXPECT_EQ(term.wait_exit(), 0);
  EXPECT_EQ(term.screen(), "review: no pending snapshots (coldgate run writes a .new candidate "
                           "beside each snapshot that does not match)\n");
}

TEST_F(Review, WithoutATerminalItRefusesAndNamesAccept) {
  auto r = run_coldgate({"review", "--no-ci"}, dir_.path());  // stdin a file, stdout a pipe
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "coldgate: error: review needs a terminal (stdin is not one): run `coldgate "
                   "accept` to take every pending snapshot\n");
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(exists("snapshots/alpha.json.new"));

  // A terminal on stdin but stdout into a file.
  TmuxSession term({"/bin/sh", "-c", std::string(COLDGATE_BINARY) + " review > out.txt"},
                   dir_.path());
  EXPECT_EQ(term.wait_exit(), 2);
  EXPECT_EQ(term.screen(), "coldgate: error: review needs a terminal (stdout is not one): run "
                           "`coldgate accept` to take every pending snapshot\n");
  EXPECT_EQ(slurp(dir_ / "out.txt"), "");
}

TEST_F(Review, InCiModeItRefuses) {
  for (auto [args, env] : {std::pair<std::vector<std::string>, std::vector<std::string>>{
                               {"review"}, {"CI=true"}},
                           {{"review", "--ci"}, {"CI=false"}}}) {
    auto r = run_coldgate(args, dir_.path(), {}, env);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "coldgate: error: review is interactive and CI mode (--ci, CI=true) never "
                     "writes under snapshots/: run it locally with --no-ci, or take the candidates "
                     "from the job's artifacts (--from DIR)\n");
  }
  EXPECT_TRUE(exists("snapshots/alpha.json.new"));
}

// `--from DIR`: the candidates a CI run or `ab` wrote under DIR/snapshots/ (by their path in
// the checkout), reviewed the same way; the .new files beside the snapshots are not looked at.
TEST_F(Review, FromTakesTheCandidatesARunWroteInItsOutputFolder) {
  dir_.write("coldgate-out/snapshots/snapshots/gamma.json", k_gamma_new);
  dir_.write("coldgate-out/snapshots/snapshots/gamma.json.diff", "the run's whole diff\n");
  dir_.write("coldgate-out/snapshots/snapshots/delta.json", "{\n  \"d\": 4\n}\n");
  TmuxSession term({COLDGATE_BINARY, "review", "--from", "coldgate-out"}, dir_.path());
  const std::string first = term.wait_for("quit ›");
  EXPECT_EQ(first.rfind("review: 2 pending snapshots\n\n── 1/2 · stage gamma · snapshots/gamma.json\n"
                        "snapshot changed: 1 path differs (0 changed, 1 added, 0 removed)\n",
                        0),
            0u)
      << first;
  EXPECT_NE(first.find("+++ coldgate-out/snapshots/snapshots/gamma.json\n"), std::string::npos)
      << first;
  term.keys({"a"});
  EXPECT_NE(term.wait_for("2/2 · stage delta").find("accepted gamma: snapshots/gamma.json"),
            std::string::npos);
  term.wait_for("quit ›");
  term.keys({"s"});
  EXPECT_EQ(term.wait_exit(), 0);
  EXPECT_NE(term.screen().find("review: 1 accepted, 0 rejected, 1 skipped\n"
                               "  accepted: gamma\n"
                               "  skipped:  delta (still pending: coldgate review --from "
                               "coldgate-out, or coldgate accept --from coldgate-out)\n"),
            std::string::npos)
      << term.screen();
  EXPECT_EQ(slurp(dir_ / "snapshots/gamma.json"), k_gamma_new);
  EXPECT_FALSE(exists("coldgate-out/snapshots/snapshots/gamma.json"));
  EXPECT_FALSE(exists("coldgate-out/snapshots/snapshots/gamma.json.diff"));
  EXPECT_TRUE(exists("coldgate-out/snapshots/snapshots/delta.json"));
  EXPECT_TRUE(exists("snapshots/gamma.json.new")) << "the local candidate is not --from's";
  EXPECT_EQ(slurp(dir_ / "snapshots/delta.json"), "{}\n");

  // Nothing there: said so, exit 0; a folder that is not there: exit 2 naming --from.
  TmuxSession none({COLDGATE_BINARY, "review", "--from", "coldgate-out", "alpha"}, dir_.path());
  EXPECT_EQ(none.wait_exit(), 0);
  EXPECT_EQ(none.screen(), "review: no pending snapshots under coldgate-out/snapshots (coldgate "
                           "run --ci and coldgate ab write a candidate there for each snapshot "
                           "that does not match)\n");
  TmuxSession missing({COLDGATE_BINARY, "review", "--from", "no-such-out"}, dir_.path());
  EXPECT_EQ(missing.wait_exit(), 2);
  EXPECT_EQ(missing.screen().rfind("coldgate: error: --from: no-such-out is not a folder", 0), 0u)
      << missing.screen();
}

}  // namespace
}  // namespace coldgate::testing
