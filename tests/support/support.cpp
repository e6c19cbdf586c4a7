#include "support/support.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "util/process.hpp"

namespace coldgate::testing {

std::string run_git(const std::filesystem::path& dir, std::vector<std::string> args) {
  util::SpawnOptions o;
  o.argv = {"git",
            "-c",
            "user.name=coldgate test",
            "-c",
            "user.email=test@coldgate.invalid",
            "-c",
            "init.defaultBranch=base",
            "-c",
            "advice.detachedHead=false"};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.cwd = dir;
  auto out = util::run(o, std::chrono::seconds(60));
  EXPECT_TRUE(out.status.ok()) << "git " << args.front() << ": " << out.err;
  std::string s = out.out;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

void make_server_tmpdir(const TempDir& dir, const std::filesystem::path& tmp) {
  namespace fs = std::filesystem;
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read |
                                  fs::perms::group_exec | fs::perms::others_read |
                                  fs::perms::others_exec);
  fs::create_directory(tmp);
  fs::permissions(tmp, fs::perms::all | fs::perms::sticky_bit);
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : m_name(name) {
  if (const char* old = std::getenv(name)) m_old = old;
  if (value) {
    ::setenv(name, value, 1);
  } else {
    ::unsetenv(name);
  }
}

ScopedEnv::~ScopedEnv() {
  if (m_old) {
    ::setenv(m_name, m_old->c_str(), 1);
  } else {
    ::unsetenv(m_name);
  }
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/coldgate-test-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  m_path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(m_path, ec);
}

std::filesystem::path TempDir::write(const std::string& name, const std::string& contents) const {
  auto p = m_path / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << contents;
  return p;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return {};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path source_dir() { return COLDGATE_SOURCE_DIR; }

RunResult run_coldgate(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                       const std::string& input, const std::vector<std::string>& env) {
  TempDir io;
  std::vector<std::string> argv{COLDGATE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = util::run({.argv = argv, .cwd = cwd, .env = env, .stdin_path = io.write("stdin", input)});
  RunResult result;
  result.exit_code = r.status.signal ? 128 + r.status.signal : r.status.exit_code;
  result.out = std::move(r.out);
  result.err = std::move(r.err);
  return result;
}

}  // namespace coldgate::testing
