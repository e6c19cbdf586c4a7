// initdb once per (version, options), copy afterwards: initdb takes ~1 s, a copy ~0.05–0.4 s
// (tmpfs–ext4), taking the spare (spare_cluster.hpp) a rename.
#include "db/template_cache.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "db/cluster_registry.hpp"
#include "db/spare_cluster.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate::db {

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::milliseconds k_tool_timeout{120000};

// A new template into the cache, once: `cp -a` keeps modes and owners (the server account's, when
// we are root) and reflinks if it can. Each start's copy out of the cache is copy_cluster_files:
// the same without a program to start and its per-file attribute calls.
void copy_tree(const fs::path& from, const fs::path& to) {
  auto r = util::run({.argv = {"cp", "-a", "--reflink=auto", from.string(), to.string()}},
                     k_tool_timeout);
  if (!r.status.ok()) {
    throw Error(ExitCode::infrastructure, to.string(),
                fmt::format("cannot copy cluster template {} ({}): {}", from.string(),
                            r.status.describe(), util::tail_lines(r.err, 5)));
  }
}

void run_initdb(const ServerBinaries& binaries, const std::optional<ServerAccount>& account,
                const fs::path& scratch_dir, const fs::path& data_dir) {
  std::vector<std::string> argv{(binaries.bindir / "initdb").string(), "-D", data_dir.string()};
  for (const auto& o : initdb_options()) argv.push_back(o);
  util::SpawnOptions opts{
      .argv = argv, .cwd = scratch_dir, .env_unset = {"PGDATA", "LANG", "LC_ALL"}};
  if (account) {
    opts.uid = account->uid;
    opts.gid = account->gid;
  }
  auto r = util::run(opts, k_tool_timeout);
  if (!r.status.ok()) {
    throw Error(ExitCode::infrastructure, "initdb",
                fmt::format("{} failed ({}):\n{}", argv[0], r.status.describe(),
                            util::tail_lines(r.err + r.out, 20)));
  }
  // The spare database: renaming it later is instant, CREATE DATABASE takes 100-300 ms.
  // Single-user mode needs no port or socket.
  fs::path sql = scratch_dir / "spare.sql";
  util::write_file_atomic(sql, fmt::format("CREATE DATABASE {}\n", k_spare_database));
  opts.argv = {(binaries.bindir / "postgres").string(),
               "--single",
               "-D",
               data_dir.string(),
               "-c",
               "fsync=off",
               "postgres"};
  opts.stdin_path = sql;
  r = util::run(opts, k_tool_timeout);
  fs::remove(sql);
  if (!r.status.ok()) {
    throw Error(
        ExitCode::infrastructure, "initdb",
        fmt::format("postgres --single (CREATE DATABASE {}) failed ({}):\n{}", k_spare_database,
                    r.status.describe(), util::tail_lines(r.err + r.out, 20)));
  }
}

}  // namespace

std::vector<std::string> initdb_options() {
  // 1 MB WAL segments: the template's pg_wal holds one, which every run copies (16 MB by
  // default, a third of the template).
  return {"--username=postgres", "--auth-local=trust", "--auth-host=scram-sha-256",
          "--encoding=UTF8",     "--locale=C",         "--no-sync",
          "--wal-segsize=1"};
}

int remove_abandoned_template_copies(const fs::path& cache_dir) noexcept {
  const fs::path templates = cache_dir / "templates";
  int removed = util::remove_abandoned_temp_files(templates);
  try {
    std::error_code ec;
    std::vector<fs::path> copies;  // not while iterating: we remove entries
    for (const auto& e : fs::directory_iterator(templates, ec)) {
      const std::string name = e.path().filename().string();
      if (name.find(".tmp-") != std::string::npos && e.is_directory(ec)) copies.push_back(e.path());
      // A spare whose template is gone (removed by hand) is not taken again: nothing reads it.
      constexpr std::string_view spare_suffix = ".spare";
      if (name.size() > spare_suffix.size() && name.ends_with(spare_suffix) &&
          !fs::exists(templates / name.substr(0, name.size() - spare_suffix.size()), ec)) {
        fs::remove_all(e.path(), ec);
        if (!ec) ++removed;
      }
    }
    for (const auto& copy : copies) {
      const std::string name = copy.filename().string();
      const fs::path lock = templates / (name.substr(0, name.rfind(".tmp-")) + ".lock");
      if (!fs::exists(lock, ec)) continue;  // no lock file: not a copy materialize_cluster() makes
      try {
        if (util::FileLock::try_lock(lock)) {  // its builder is gone: nobody builds it now
          fs::remove_all(copy, ec);
          if (!ec) ++removed;
        }
      } catch (const Error&) {  // the lock file cannot be opened: leave that copy
      }
    }
  } catch (const std::exception&) {  // best effort: what is left is removed next time
  }
  return removed;
}

std::string template_key(const ServerBinaries& binaries, const std::vector<std::string>& options) {
  std::string id =
      binaries.version_text + "\n" + binaries.bindir.string() + "\n+" + k_spare_database;
  for (const auto& o : options) id += "\n" + o;
  return fmt::format("pg{}-{}", binaries.major, util::sha256_hex(id).substr(0, 16));
}

Materialized materialize_cluster(const ServerBinaries& binaries, const fs::path& cache_dir,
                                 const std::optional<ServerAccount>& account,
                                 const fs::path& scratch_dir, const fs::path& data_dir) {
  fs::path templates = cache_dir / "templates";
  Materialized made{.template_dir = templates / template_key(binaries, initdb_options())};
  const fs::path& cached = made.template_dir;
  std::error_code ec;
  if (!fs::is_directory(cached, ec)) {
    util::FileLock lock(cached.string() + ".lock");
    if (!fs::is_directory(cached, ec)) {  // another run may have built it while we waited
      // initdb runs in the run folder (the server account may not enter our cache folder), the
      // result is copied into the cache under a temp name and renamed: readers see all or nothing.
      run_initdb(binaries, account, scratch_dir, data_dir);
      fs::path tmp = fmt::format("{}.tmp-{}", cached.string(), ::getpid());
      fs::remove_all(tmp, ec);
      fs::remove_all(spare_path(cached), ec);  // another initdb's, of a template removed by hand
      copy_tree(data_dir, tmp);
      util::rename_atomic(tmp, cached);
      return made;
    }
  }
  made.cached = true;
  made.spare = take_spare_cluster(cached, data_dir);
  if (!made.spare) copy_cluster_files(cached, data_dir);
  // A template built by another user (say, a non-root run) must belong to our server account.
  struct stat st {};
  if (account && ::stat(data_dir.c_str(), &st) == 0 && st.st_uid != account->uid) {
    give_to(data_dir, account);
  } else if (!account && ::stat(data_dir.c_str(), &st) == 0 && st.st_uid != ::getuid()) {
    throw Error(ExitCode::infrastructure, cached.string(),
                "cached cluster template belongs to another user; remove it");
  }
  return made;
}

}  // namespace coldgate::db
