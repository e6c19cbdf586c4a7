#include "db/server_account.hpp"

#include <fmt/core.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::db {

namespace {

std::optional<ServerAccount> lookup(const char* name) {
  passwd pw{};
  passwd* result = nullptr;
  char buf[4096];
  if (::getpwnam_r(name, &pw, buf, sizeof buf, &result) != 0 || !result) return std::nullopt;
  return ServerAccount{pw.pw_uid, pw.pw_gid, name};
}

}  // namespace

std::optional<ServerAccount> server_account() {
  if (::geteuid() != 0) return std::nullopt;
  if (auto a = lookup("postgres")) return a;
  if (auto a = lookup("coldgate")) return a;
  auto r =
      util::run({.argv = {"useradd", "--system", "--user-group", "--no-create-home", "--home-dir",
                          "/nonexistent", "--shell", "/usr/sbin/nologin", "coldgate"}},
                std::chrono::milliseconds(30000));
  if (auto a = lookup("coldgate")) return a;
  throw Error(ExitCode::infrastructure, "database",
              fmt::format("running as root, PostgreSQL needs an unprivileged account: no "
                          "`postgres` user, and `useradd coldgate` failed ({}): {}",
                          r.status.describe(), util::tail_lines(r.err, 5)));
}

void give_to(const std::filesystem::path& path, const std::optional<ServerAccount>& account) {
  if (!account) return;
  auto change = [&](const std::filesystem::path& p) {
    if (::lchown(p.c_str(), account->uid, account->gid) != 0) {
      throw Error(ExitCode::infrastructure, p.string(),
                  fmt::format("cannot give to {}: {}", account->name, std::strerror(errno)));
    }
  };
  change(path);
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(path, ec))) return;
  for (const auto& e : std::filesystem::recursive_directory_iterator(path)) change(e.path());
}

}  // namespace coldgate::db
