// A coldgate SIGKILLed while it copies a freshly built cluster template into the cache
// (`<cache>/templates/<key>.tmp-<pid>`, renamed into place once whole: 30 MB and more) leaves that
// copy. The next coldgate command, whichever it is (here `canon`, which starts no server),
// removes it, since no one holds the template's lock any more.
//
// The moment is held rather than hit: a `cp` first on PATH copies as cp does and then, for a
// template's temp copy only, says so and waits until it is killed, so coldgate is still waiting
// for it when the test sends SIGKILL (to coldgate alone, or to its whole process group).
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support/faults.hpp"
#include "support/support.hpp"
#include "util/process.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

struct TemplateCopyFaults : ::testing::Test {
  void SetUp() override {
    f.dir.write("coldgate.yaml",
                "version: 1\ndatabase: { provider: local }\n"
                "stages: [ { name: q, query: 'select 1' } ]\n");
    f.dir.write("doc.json", "{\"b\": 1, \"a\": 2}\n");
    // A template of our own to build: the fault tests' shared one is there already.
    fs::remove(templates);
    fs::create_directories(templates);
    const std::string real_cp = fs::exists("/usr/bin/cp") ? "/usr/bin/cp" : "/bin/cp";
    f.dir.write("bin/cp", fmt::format("#!/bin/sh\n"
                                      "{} \"$@\" || exit $?\n"
                                      "for last; do :; done\n"
                                      "case \"$last\" in\n"
                                      "  */templates/*.tmp-*) echo $$ > {}; exec sleep 3600;;\n"
                                      "esac\n",
                                      real_cp, held.string()));
    fs::permissions(f.dir / "bin/cp", fs::perms::owner_all | fs::perms::group_read |
                                          fs::perms::group_exec | fs::perms::others_read |
                                          fs::perms::others_exec);
  }

  // The `<key>.tmp-*` entries of the template cache.
  std::vector<std::string> temp_copies() const {
    std::vector<std::string> out;
    for (const auto& e : entries_of(templates)) {
      if (fs::path(e).filename().string().find(".tmp-") != std::string::npos) out.push_back(e);
    }
    return out;
  }

  // The PID the held `cp` wrote, or 0.
  pid_t held_cp() const {
    return static_cast<pid_t>(std::atol(read_all(held).c_str()));
  }

  // `db up` SIGKILLed (alone, or its whole group) while its `cp` of the new template into the
  // cache waits; then `coldgate canon`, which must remove that copy.
  void killed_while_copying(bool whole_group) {
    const char* path = std::getenv("PATH");
    Running r = f.start({"db", "up"}, {"PATH=" + (f.dir / "bin").string() + ":" +
                                       (path ? path : "/usr/bin:/bin")});
    ASSERT_TRUE(wait_for([&] { return held_cp() > 0 || r.process->wait_exited(0ms); }, 300s))
        << "no template copy within 300 s";
    ASSERT_GT(held_cp(), 0) << "db up ended first:\n" << read_all(r.err);
    const std::vector<std::string> left = temp_copies();
    ASSERT_EQ(left.size(), 1u) << list(left);
    EXPECT_NE(left.front().find(fmt::format(".tmp-{}", r.process->pid())), std::string::npos)
        << left.front();
    ASSERT_EQ(::kill(whole_group ? -r.process->pid() : r.process->pid(), SIGKILL), 0);
    std::string err;
    EXPECT_EQ(r.finish(&err), 128 + SIGKILL) << err;
    std::cout << "[ fault    ] SIGKILL to " << (whole_group ? "the group of " : "")
              << "db up while it copied the template into " << left.front() << std::endl;

    auto canon = run_coldgate({"canon", "doc.json"}, f.dir.path(), "",
                              {"TMPDIR=" + f.tmp.string(), "XDG_CACHE_HOME=" + f.cache.string()});
    EXPECT_EQ(canon.exit_code, 0) << canon.err;
    EXPECT_EQ(list(temp_copies()), " none") << "the killed run's template copy, after canon";
    // The held cp is the killed run's, which the next command that starts a server ends.
    if (const pid_t cp = held_cp(); cp > 0) ::kill(cp, SIGKILL);
  }

  FaultFolder f;
  fs::path templates = f.cache / "coldgate" / "templates";
  fs::path held = f.dir / "cp.held";
};

TEST_F(TemplateCopyFaults, KilledRunsTemplateCopyGoesWithTheNextCommand) {
  killed_while_copying(false);
}

TEST_F(TemplateCopyFaults, GroupKilledRunsTemplateCopyGoesWithTheNextCommand) {
  killed_while_copying(true);
}

}  // namespace
}  // namespace coldgate
