// db::owner_tag / owner_tag_gone: what a later run reads to tell a database copy left by a run
// that is gone from one whose run still works with it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "db/cluster_registry.hpp"

namespace coldgate::db {
namespace {

TEST(OwnerTag, NamesTheBootNamespaceProcessAndItsStart) {
  std::string tag = owner_tag();
  EXPECT_EQ(tag.rfind("boot=", 0), 0u) << tag;
  EXPECT_NE(tag.find(" pid_ns=" + pid_namespace() + " "), std::string::npos) << tag;
  EXPECT_NE(tag.find(" pid=" + std::to_string(::getpid()) + " start=" +
                     std::to_string(process_start_time(::getpid()))),
            std::string::npos)
      << tag;
}

TEST(OwnerTag, IsGoneOnlyWhenItsProcessOfThisMachineEnded) {
  EXPECT_FALSE(owner_tag_gone(owner_tag()));  // we run

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string tag = owner_tag();
    [[maybe_unused]] ssize_t n = ::write(fds[1], tag.data(), tag.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string tag;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) tag.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_NE(tag.find(" pid=" + std::to_string(child) + " "), std::string::npos) << tag;
  EXPECT_TRUE(owner_tag_gone(tag)) << tag;

  // Our PID with another start time: the PID was reused, the owner is gone.
  std::string self = owner_tag();
  std::string reused = self.substr(0, self.rfind("start=")) + "start=1";
  EXPECT_TRUE(owner_tag_gone(reused)) << reused;

  // Another machine or boot, another namespace, or no tag: not ours to judge.
  std::string other_boot = "boot=00000000-0000-0000-0000-000000000000" + tag.substr(tag.find(' '));
  EXPECT_FALSE(owner_tag_gone(other_boot)) << other_boot;
  std::string other_ns = tag;
  other_ns.replace(other_ns.find("pid_ns=") + 7, pid_namespace().size(), "pid:[1]");
  EXPECT_FALSE(owner_tag_gone(other_ns)) << other_ns;
  EXPECT_FALSE(owner_tag_gone(""));
  EXPECT_FALSE(owner_tag_gone("made by hand"));
  EXPECT_FALSE(owner_tag_gone(tag.substr(0, tag.find(" start="))));  // no start time
}

}  // namespace
}  // namespace coldgate::db
