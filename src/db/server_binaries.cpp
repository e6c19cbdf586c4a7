#include "db/server_binaries.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <set>

#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::db {

namespace fs = std::filesystem;

namespace {

bool executable(const fs::path& p) {
  return ::access(p.c_str(), X_OK) == 0;
}

// `postgres --version` of a candidate folder; nullopt when it has no usable server.
std::optional<ServerBinaries> probe(const fs::path& bindir) {
  if (!executable(bindir / "postgres") || !executable(bindir / "initdb")) return std::nullopt;
  try {
    auto r = util::run({.argv = {(bindir / "postgres").string(), "--version"}},
                       std::chrono::milliseconds(10000));
    if (!r.status.ok()) return std::nullopt;
    std::string text = r.out;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    int major = parse_major(text);
    if (major == 0) return std::nullopt;
    return ServerBinaries{bindir, major, text};
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;  // a SIGINT ends the command, not the candidate
    return std::nullopt;
  }
}

std::optional<fs::path> pg_config_bindir() {
  if (!util::find_program("pg_config")) return std::nullopt;
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
                                  const std::string& where) {
  auto found = probe(bindir);
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

ServerBinaries find_server_binaries(std::optional<int> version, const std::string& where) {
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
  if (auto d = pg_config_bindir()) candidates.push_back(*d);
  if (auto p = util::find_program("postgres")) candidates.push_back(p->parent_path());
  searched += ", pg_config --bindir, PATH";

  std::optional<ServerBinaries> best;
  std::set<fs::path> seen;
  for (const auto& dir : candidates) {
    std::error_code ec;
    // The same binary may be reached twice (a /usr/local/bin/postgres symlink, say).
    fs::path canon = fs::weakly_canonical(dir / "postgres", ec);
    if (!seen.insert(ec ? dir : canon).second) continue;
    auto found = probe(dir);
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
