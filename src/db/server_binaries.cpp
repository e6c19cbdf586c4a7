#include "db/server_binaries.hpp"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <set>

#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate::db {

namespace fs = std::filesystem;

namespace {

bool executable(const fs::path& p) {
  return ::access(p.c_str(), X_OK) == 0;
}

// What identifies a server binary's file: another build or package has another inode, size or
// time. "" when it cannot be read.
std::string file_identity(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return "";
  return fmt::format("{} {} {} {}.{:09}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                     st.st_mtim.tv_nsec);
}

// `<cache>/versions/<hash of the path>`: "<identity>\n<postgres --version>", so a run does not
// start the server program only to ask its version (~25 ms) while the file is the same.
fs::path version_file(const fs::path& cache_dir, const fs::path& postgres) {
  return cache_dir / "versions" / util::sha256_hex(postgres.string()).substr(0, 16);
}

// `postgres --version` of a candidate folder (from `cache_dir` when it holds this file's);
// nullopt when it has no usable server.
std::optional<ServerBinaries> probe(const fs::path& bindir, const fs::path& cache_dir) {
  if (!executable(bindir / "postgres") || !executable(bindir / "initdb")) return std::nullopt;
  const fs::path postgres = bindir / "postgres";
  const std::string identity = cache_dir.empty() ? "" : file_identity(postgres);
  if (!identity.empty()) {
    try {
      const std::string cached = util::read_file(version_file(cache_dir, postgres));
      const auto nl = cached.find('\n');
      if (nl != std::string::npos && cached.substr(0, nl) == identity) {
        const std::string text = cached.substr(nl + 1);
        if (const int major = parse_major(text); major != 0) return ServerBinaries{bindir, major, text};
      }
    } catch (const Error&) {
      // Not cached (yet): asked below.
    }
  }
  try {
    auto r = util::run({.argv = {postgres.string(), "--version"}}, std::chrono::milliseconds(10000));
    if (!r.status.ok()) return std::nullopt;
    std::string text = r.out;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    int major = parse_major(text);
    if (major == 0) return std::nullopt;
    if (!identity.empty() && file_identity(postgres) == identity) {
      try {
        util::write_file_atomic(version_file(cache_dir, postgres), identity + "\n" + text);
      } catch (const Error&) {
        // A cache that cannot be written costs the next run this question again, nothing more.
      }
    }
    return ServerBinaries{bindir, major, text};
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;  // a SIGINT ends the command, not the candidate
    return std::nullopt;
  }
}

// True for postgresql-common's /usr/bin/pg_config (Debian, Ubuntu): a shell script that runs the
// newest /usr/lib/postgresql/*/bin/pg_config, so its answer is one of packaged_bindirs() and
// running it (a shell, ls and tail: ~25 ms) adds no candidate when those were found.
bool packaged_wrapper(const fs::path& pg_config) {
  std::error_code ec;
  const fs::path real = fs::canonical(pg_config, ec);
  if (ec || real != "/usr/bin/pg_config") return false;
  try {
    return util::read_file_prefix(real, 2) == "#!";
  } catch (const Error&) {
    return false;
  }
}

std::optional<fs::path> pg_config_bindir(bool have_packaged) {
  const auto pg_config = util::find_program("pg_config");
  if (!pg_config || (have_packaged && packaged_wrapper(*pg_config))) return std::nullopt;
  try {
    auto r = util::run({.argv = {"pg_config", "--bindir"}}, std::chrono::milliseconds(10000));
    if (!r.status.ok()) return std::nullopt;
    std::string dir = r.out;
    while (!dir.empty() && (dir.back() == '\n' || dir.back() == ' ')) dir.pop_back();
    return dir.empty() ? std::nullopt : std::optional<fs::path>(dir);
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;  // a SIGINT ends the command, not the candidate
    return std::nullopt;
  }
}

// Folders matching /usr/lib/postgresql/*/bin and /usr/pgsql-*/bin.
std::vector<fs::path> packaged_bindirs() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec))
    out.push_back(e.path() / "bin");
  for (const auto& e : fs::directory_iterator("/usr", ec)) {
    if (e.path().filename().string().rfind("pgsql-", 0) == 0) out.push_back(e.path() / "bin");
  }
  return out;
}

}  // namespace

int parse_major(const std::string& version_text) {
  static const std::regex k_version(R"(\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?)");
  std::smatch m;
  if (!std::regex_search(version_text, m, k_version)) return 0;
  return std::stoi(m[1].str());
}

ServerBinaries server_binaries_in(const fs::path& bindir, std::optional<int> version,
                                  const std::string& where, const fs::path& cache_dir) {
  auto found = probe(bindir, cache_dir);
  if (!found) {
    throw Error(ExitCode::usage, where,
                fmt::format("database.bindir: {} has no runnable postgres and initdb; point it at "
                            "the bin folder of a PostgreSQL installation",
                            bindir.string()));
  }
  if (version && found->major != *version) {
    throw Error(ExitCode::usage, where,
                fmt::format("database.bindir: {} holds PostgreSQL {}, not the {} database.version "
                            "asks for; change one of them",
                            bindir.string(), found->major, *version));
  }
  return *found;
}

ServerBinaries find_server_binaries(std::optional<int> version, const std::string& where,
                                    const fs::path& cache_dir) {
  std::vector<fs::path> candidates;
  std::string searched;
  if (version) {
    candidates.push_back(fmt::format("/usr/lib/postgresql/{}/bin", *version));
    candidates.push_back(fmt::format("/usr/pgsql-{}/bin", *version));
    searched = fmt::format("/usr/lib/postgresql/{0}/bin, /usr/pgsql-{0}/bin", *version);
  } else {
    auto dirs = packaged_bindirs();
    candidates.insert(candidates.end(), dirs.begin(), dirs.end());
    searched = "/usr/lib/postgresql/*/bin, /usr/pgsql-*/bin";
  }
  std::error_code ec;
  const bool have_packaged =
      std::any_of(candidates.begin(), candidates.end(),
                  [&](const fs::path& d) { return fs::exists(d / "postgres", ec); });
  if (auto d = pg_config_bindir(have_packaged)) candidates.push_back(*d);
  if (auto p = util::find_program("postgres")) candidates.push_back(p->parent_path());
  searched += ", pg_config --bindir, PATH";

  std::optional<ServerBinaries> best;
  std::set<fs::path> seen;
  for (const auto& dir : candidates) {
    std::error_code ec;
    // The same binary may be reached twice (a /usr/local/bin/postgres symlink, say).
    fs::path canon = fs::weakly_canonical(dir / "postgres", ec);
    if (!seen.insert(ec ? dir : canon).second) continue;
    auto found = probe(dir, cache_dir);
    if (!found) continue;
    if (version) {
      if (found->major == *version) return *found;
    } else if (!best || found->major > best->major) {
      best = found;
    }
  }
  if (best) return *best;
  if (version) {
    throw Error(ExitCode::infrastructure, where,
                fmt::format("database.version: no PostgreSQL {0} server binaries found "
                            "(searched: {1}); install postgresql-{0}, set database.bindir to the "
                            "bin folder of a PostgreSQL {0}, or change database.version",
                            *version, searched));
  }
  throw Error(ExitCode::infrastructure, where,
              fmt::format("database: no PostgreSQL server binaries found (searched: {}); install "
                          "the PostgreSQL server (e.g. postgresql-15) or use provider: external",
                          searched));
}

}  // namespace coldgate::db
