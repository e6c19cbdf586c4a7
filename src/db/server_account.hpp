#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace coldgate::db {

/// The unprivileged account initdb and postgres run as (PostgreSQL refuses to run as root).
struct ServerAccount {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;
};

/// nullopt when we are not root (the server runs as us). As root: the `postgres` system user
/// when present, else `coldgate`, created with useradd(8) on first use. Throws
/// Error(infrastructure) when no account can be had.
std::optional<ServerAccount> server_account();

/// chown -R (lchown, no symlink following) of `path` to `account`; no-op for nullopt.
/// Throws Error(infrastructure) naming the path.
void give_to(const std::filesystem::path& path, const std::optional<ServerAccount>& account);

}  // namespace coldgate::db
