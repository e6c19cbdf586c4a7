#include "util/fs.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>


#include "support/support.hpp"
#include "util/error.hpp"

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

}  // namespace
}  // namespace coldgate::util
