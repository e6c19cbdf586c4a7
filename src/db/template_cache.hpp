#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "db/server_account.hpp"
#include "db/server_binaries.hpp"

namespace coldgate::db {

/// A database made in every template (with `postgres --single`), renamed to `database.name`
/// at start: a rename is instant where CREATE DATABASE costs 100-300 ms.
inline constexpr const char* k_spare_database = "coldgate_spare";

/// initdb's options for every throwaway cluster: superuser `postgres`, trust on the private
/// Unix socket and SCRAM on TCP, UTF8 with the C locale (reproducible sort order), no fsync,
/// 1 MB WAL segments (a smaller template to copy).
std::vector<std::string> initdb_options();

/// What materialize_cluster did.
struct Materialized {
  std::filesystem::path template_dir;  // `<cache>/templates/<key>`
  bool cached = false;                 // the template was there already (no initdb)
  bool spare = false;                  // the template's spare was taken (no copy)
};

/// Puts an initdb'd data folder at `data_dir` (which must not exist): the template's spare
/// (take_spare_cluster) when there is one, else a copy (`cp -a`) of the template cached under
/// `<cache>/templates/<key>` for (server version, initdb options), built first when missing —
/// initdb runs as `account` in `scratch_dir`, the result is copied into the cache as
/// `<key>.tmp-<pid>` and renamed, all under flock on `<key>.lock`, so concurrent runs build it
/// once. Throws Error(infrastructure) with initdb's output tail.
Materialized materialize_cluster(const ServerBinaries& binaries,
                                 const std::filesystem::path& cache_dir,
                                 const std::optional<ServerAccount>& account,
                                 const std::filesystem::path& scratch_dir,
                                 const std::filesystem::path& data_dir);

/// Removes the `<cache>/templates/<key>.tmp-<pid>` copies that a run killed while it put a
/// template into place left, with the temp files of writes cut short there
/// (util::remove_abandoned_temp_files): a copy only while no one holds its `<key>.lock` (then no
/// one is building that template), and a `<key>.spare` whose template is gone. Returns how many
/// it removed; never throws.
int remove_abandoned_template_copies(const std::filesystem::path& cache_dir) noexcept;

/// The cache key of (binaries, options): "pg<major>-<first 16 hex of sha256>".
std::string template_key(const ServerBinaries& binaries, const std::vector<std::string>& options);

}  // namespace coldgate::db
