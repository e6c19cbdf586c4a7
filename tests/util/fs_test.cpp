#include "util/fs.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "support/support.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::util {
namespace {

using coldgate::testing::TempDir;

TEST(WriteFileAtomic, CreatesParentsAndLeavesNoTempFile) {
  TempDir dir;
  auto target = dir / "a/b/out.json";
  write_file_atomic(target, "{}\n");
  EXPECT_EQ(read_file(target), "{}\n");
  int entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(target.parent_path())) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST(WriteFileAtomic, ReplacesExistingFileWhole) {
  TempDir dir;
  auto target = dir.write("f", std::string(100000, 'x'));
  write_file_atomic(target, "short");
  EXPECT_EQ(read_file(target), "short");
}

TEST(WriteFileAtomic, UnwritableFolderThrowsAndKeepsOldFile) {
  TempDir dir;
  auto file = dir.write("plain", "old");
  try {
    write_file_atomic(file / "child.json", "new");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::infrastructure);
    EXPECT_NE(e.message().find("plain"), std::string::npos) << e.message();
  }
  EXPECT_EQ(read_file(file), "old");
}

TEST(WriteFileAtomic, TheModeIsTheOneAskedForWhateverTheUmask) {
  TempDir dir;
  auto mode_of = [](const std::filesystem::path& p) {
    struct stat st{};
    EXPECT_EQ(::stat(p.c_str(), &st), 0);
    return st.st_mode & 0777;
  };
  mode_t old = ::umask(0);
  write_file_atomic(dir / "public", "x");
  write_file_atomic(dir / "secret", "password", 0600);
  write_file_atomic(dir / "group", "x", 0640);
  ::umask(old);
  EXPECT_EQ(mode_of(dir / "public"), 0644u);
  EXPECT_EQ(mode_of(dir / "secret"), 0600u);
  EXPECT_EQ(mode_of(dir / "group"), 0640u);
  // Replacing a 0644 file with a secret leaves no reader of the secret behind.
  write_file_atomic(dir / "public", "password", 0600);
  EXPECT_EQ(mode_of(dir / "public"), 0600u);
}

// A temp file nobody holds locked is a killed writer's: removed. One whose writer holds its
// flock, as write_file_atomic does from creation to rename, stays; so do other names.
TEST(RemoveAbandonedTempFiles, RemovesOnlyTempFilesNoWriterHolds) {
  TempDir dir;
  dir.write("results.json.tmp-Ab12Cd", "{\"half");
  auto written = dir.write("report.md.tmp-Xy34Zw", "# being written");
  dir.write("results.json", "{}\n");
  dir.write("notes.tmp-toolong", "x");
  dir.write("sub/cache.json.tmp-Qq11Rr", "{");  // not below the folder
  int fd = ::open(written.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  EXPECT_EQ(remove_abandoned_temp_files(dir.path()), 1);
  EXPECT_FALSE(std::filesystem::exists(dir / "results.json.tmp-Ab12Cd"));
  EXPECT_TRUE(std::filesystem::exists(written));
  EXPECT_TRUE(std::filesystem::exists(dir / "results.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "notes.tmp-toolong"));
  EXPECT_TRUE(std::filesystem::exists(dir / "sub/cache.json.tmp-Qq11Rr"));
  ::close(fd);  // the writer is gone
  EXPECT_EQ(remove_abandoned_temp_files(dir.path()), 1);
  EXPECT_FALSE(std::filesystem::exists(written));
  EXPECT_EQ(remove_abandoned_temp_files(dir / "missing"), 0);
}

TEST(IsTempFileName, TheNamesOfWriteFileAtomic) {
  EXPECT_TRUE(is_temp_file_name("results.json.tmp-Ab12Cd"));
  EXPECT_FALSE(is_temp_file_name(".tmp-Ab12Cd"));
  EXPECT_FALSE(is_temp_file_name("results.json.tmp-Ab12C"));
  EXPECT_FALSE(is_temp_file_name("results.json"));
}

TEST(ReadFile, MissingFileNamesThePath) {
  try {
    read_file("/nonexistent/coldgate/x.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "/nonexistent/coldgate/x.json: cannot read file: No such file or directory");
    EXPECT_EQ(e.code(), ExitCode::usage);
  }
}

TEST(ReadFilePrefix, TheHeadOfALongFileAllOfAShortOneAndAFolderRefused) {
  TempDir dir;
  auto file = dir.write("dump.sql", "CREATE DATABASE shop;\n\\connect shop\n");
  EXPECT_EQ(read_file_prefix(file, 15), "CREATE DATABASE");
  EXPECT_EQ(read_file_prefix(file, 1 << 20), "CREATE DATABASE shop;\n\\connect shop\n");
  try {
    read_file_prefix(dir.path(), 10);
    FAIL() << "read a folder";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), dir.path().string() + ": is a folder; expected a file");
    EXPECT_EQ(e.code(), ExitCode::usage);
  }
}

TEST(Sha256, KnownVectors) {
  // FIPS 180-4 examples.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// flock locks an open file description: a second open() of the same file, in this process or
// another, is refused while the first holds it.
TEST(FileLock, ASecondTryIsRefusedWhileTheFirstHoldsItAndSucceedsAfter) {
  TempDir dir;
  const auto file = dir / "out/.lock";  // the folder is created
  {
    auto first = FileLock::try_lock(file);
    ASSERT_TRUE(first.has_value());
    first->describe("a much longer first description\n");
    first->describe("short\n");  // replaces it whole
    EXPECT_EQ(read_file(file), "short\n");
    EXPECT_FALSE(FileLock::try_lock(file).has_value());
    FileLock moved = std::move(*first);  // the lock goes with the descriptor
    first.reset();
    EXPECT_FALSE(FileLock::try_lock(file).has_value());
  }
  EXPECT_TRUE(FileLock::try_lock(file).has_value());
}

// A holder that is SIGKILLed runs no destructor: the kernel drops its lock all the same.
TEST(FileLock, TheKernelReleasesTheLockOfAKilledHolder) {
  TempDir dir;
  const auto file = dir / ".lock";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    FileLock held(file);
    char c = 'x';
    if (::write(ready[1], &c, 1) != 1) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);  // the child holds the lock now
  ::close(ready[0]);
  EXPECT_FALSE(FileLock::try_lock(file).has_value());
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(FileLock::try_lock(file).has_value());
}

// The descriptor is close-on-exec: a child started while the lock is held (a server, a stage
// command) does not keep it once its parent lets go.
TEST(FileLock, AChildProgramDoesNotInheritTheLock) {
  TempDir dir;
  const auto file = dir / ".lock";
  auto lock = FileLock::try_lock(file);
  ASSERT_TRUE(lock.has_value());
  Process sleeper({.argv = {"sleep", "60"}});
  lock.reset();
  EXPECT_TRUE(FileLock::try_lock(file).has_value());
  sleeper.signal_group(SIGKILL);
  sleeper.wait(std::chrono::seconds(10));
}

}  // namespace
}  // namespace coldgate::util
