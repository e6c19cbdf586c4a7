#include "measure/backends.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace coldgate::measure {
namespace {

const std::string k_pid = std::to_string(::getpid());

TEST(RunApplicationName, IsStageRunAndPid) {
  EXPECT_EQ(run_application_name("items", 3), "coldgate/items/3/" + k_pid);
}

TEST(RunApplicationName, ALongStageNameIsCutWithAHashAndStaysUnique) {
  const std::string a(80, 'a');
  const std::string b = std::string(79, 'a') + "b";
  std::string na = run_application_name(a, 12);
  std::string nb = run_application_name(b, 12);
  EXPECT_EQ(na.size(), k_max_application_name) << na;
  EXPECT_EQ(nb.size(), k_max_application_name) << nb;
  EXPECT_NE(na, nb);
  EXPECT_EQ(na.rfind("coldgate/aaaa", 0), 0u) << na;
  EXPECT_NE(na.find("~"), std::string::npos) << na;
  EXPECT_EQ(na.substr(na.size() - k_pid.size() - 4), "/12/" + k_pid);
  EXPECT_EQ(run_application_name(a, 12), na);  // stable
  // A name that just fits is kept whole.
  std::string fits(k_max_application_name - 9 - 3 - k_pid.size(), 'x');
  EXPECT_EQ(run_application_name(fits, 1), "coldgate/" + fits + "/1/" + k_pid);
}

TEST(EndedBackends, NoteSaysWhatWasStillRunningAndWhatIsLeft) {
  EXPECT_EQ(EndedBackends{}.note("n"), "");
  EXPECT_EQ((EndedBackends{.found = 1}.note("n")), "");  // an idle session that went by itself
  EXPECT_EQ((EndedBackends{.found = 1, .active = 1}.note("n")),
            "; its query was still running on the server and was cancelled");
  EXPECT_EQ((EndedBackends{.found = 3, .active = 2, .terminated = 1}.note("n")),
            "; 2 of its queries were still running on the server and were ended with "
            "pg_terminate_backend");
  EXPECT_EQ((EndedBackends{
                .found = 1, .active = 1, .terminated = 1, .left = 1, .error = "permission denied"}
                 .note("coldgate/s/1/9")),
            "; its query was still running on the server and was ended with pg_terminate_backend; "
            "1 of its server sessions (application_name 'coldgate/s/1/9') did not end "
            "(permission denied): later stages may be slower, end them with "
            "pg_terminate_backend()");
  // The server not reached at all: the runner tells a lost server apart itself.
  EXPECT_EQ((EndedBackends{.error = "cannot connect"}.note("n")), "");
}

TEST(WithNote, GoesAtTheEndOfTheFirstLineBeforeTheStderrTail) {
  EXPECT_EQ(with_note("timed out after 5 ms", "; n"), "timed out after 5 ms; n");
  EXPECT_EQ(with_note("exit status 1; stderr ends:\nboom", "; n"),
            "exit status 1; n; stderr ends:\nboom");
  EXPECT_EQ(with_note("x: SQLSTATE 1\nHINT: y", "; n"), "x: SQLSTATE 1; n\nHINT: y");
  EXPECT_EQ(with_note("", "; n"), "; n");
  EXPECT_EQ(with_note("a", ""), "a");
}

TEST(RunSessions, NamesTheRunAndEndsNothingWhereNoServerAnswers) {
  // Nothing listens on port 1: end_backends() finds nothing and the texts are unchanged.
  db::ConnectionInfo nowhere;
  nowhere.host = "127.0.0.1";
  nowhere.port = 1;
  RunSessions s(nowhere, "st", 1);
  EXPECT_EQ(s.end("exit status 1; stderr ends:\nboom"), "exit status 1; stderr ends:\nboom");
  EXPECT_EQ(s.env(), "PGAPPNAME=coldgate/st/1/" + k_pid);
  EXPECT_EQ(s.named(nowhere).options.at("application_name"), "coldgate/st/1/" + k_pid);
}

}  // namespace
}  // namespace coldgate::measure
