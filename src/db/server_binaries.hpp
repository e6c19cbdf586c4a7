#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace coldgate::db {

/// A folder with PostgreSQL server programs (postgres, initdb) and their version.
struct ServerBinaries {
  std::filesystem::path bindir;
  int major = 0;             // 15
  std::string version_text;  // `postgres --version`: "postgres (PostgreSQL) 15.8 (Debian …)"
};

/// Finds server binaries: of major `version` when given, else the newest. Candidates, in order:
/// /usr/lib/postgresql/<v>/bin (Debian, Ubuntu), /usr/pgsql-<v>/bin (PGDG RPMs),
/// `pg_config --bindir` (not Debian's wrapper script when /usr/lib/postgresql has a server: its
/// answer is one of those), the folder of `postgres` on PATH. A candidate's `postgres --version`
/// is kept in `<cache_dir>/versions/` (when given) while its file stays the same. Throws
/// Error(infrastructure) with where = `where` naming what was searched when none fits.
ServerBinaries find_server_binaries(std::optional<int> version, const std::string& where,
                                    const std::filesystem::path& cache_dir = {});

/// The server binaries in `bindir` (`database.bindir`: a PostgreSQL built or unpacked by hand).
/// Throws Error(usage) — the config names what is not there — with where = `where` when it
/// holds no runnable postgres and initdb, or when `version` is given and the server there is
/// another major.
ServerBinaries server_binaries_in(const std::filesystem::path& bindir, std::optional<int> version,
                                  const std::string& where,
                                  const std::filesystem::path& cache_dir = {});

/// Major version parsed from `postgres --version` output ("… 15.8 …" → 15, "9.6.2" → 9); 0
/// when it cannot be parsed.
int parse_major(const std::string& version_text);

}  // namespace coldgate::db
