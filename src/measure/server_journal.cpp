#include "measure/server_journal.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "db/connection.hpp"
#include "measure/command_settings.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::measure {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "";
}

// The value of `key` in an owner tag ("boot=… pid_ns=… pid=… start=…").
std::string tag_word(const std::string& tag, const std::string& key) {
  std::istringstream in(tag);
  std::string word;
  while (in >> word) {
    if (word.rfind(key + "=", 0) == 0) return word.substr(key.size() + 1);
  }
  return "";
}

// The journal's owner is gone: it no longer runs, or it ran on this host before the last boot
// (a crash is a SIGKILL too). Another host's journal (a shared home) is not ours to judge.
bool owner_gone(const json& j) {
  const std::string tag = j.value("owner", "");
  if (db::owner_tag_gone(tag)) return true;
  const std::string boot = tag_word(tag, "boot");
  return !boot.empty() && boot != tag_word(db::owner_tag(), "boot") &&
         j.value("host", "") == host_name() && !host_name().empty();
}

bool same_server(const json& j, const db::ConnectionInfo& info) {
  return j.value("server_host", "") == info.host && j.value("port", 0) == info.port &&
         j.value("user", "") == info.user;
}

struct Found {
  fs::path path;
  json entry;
  bool gone = false;
};

std::vector<Found> read_journals(const fs::path& dir) {
  std::vector<Found> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".json") continue;
    try {
      json j = json::parse(util::read_file(e.path()));
      out.push_back({e.path(), j, owner_gone(j)});
    } catch (const std::exception&) {
      // Half a journal cannot be: it is written atomically. Not ours: left alone.
    }
  }
  return out;
}

// Puts back one journal's role settings on `server` (its database as the journal names it).
std::string undo(const json& j, const db::ConnectionInfo& server) {
  db::ConnectionInfo info = server;
  info.dbname = j.at("database").get<std::string>();
  RoleSettings before;
  std::string names;
  for (const auto& [name, was] : j.at("before").items()) {
    before[name] = was.is_null() ? std::nullopt
                                 : std::optional(std::pair(was.at(0).get<std::string>(),
                                                           was.at(1).get<std::string>()));
    names += (names.empty() ? "" : ", ") + name;
  }
  put_back_role_settings(db::with_client_defaults(info), before);
  return fmt::format("the settings of role {} in database {} ({})", j.value("role", info.user),
                     info.dbname, names);
}

}  // namespace

fs::path journal_dir(const db::Provider& provider) {
  return provider.name() == "external" ? db::default_cache_dir() / "server-journal" : fs::path();
}

Journal Journal::role_settings(const fs::path& dir, const db::ConnectionInfo& database,
                               const std::string& role, const RoleSettings& before) {
  Journal j;
  if (dir.empty()) return j;
  json was = json::object();
  for (const auto& [name, stored] : before) {
    was[name] = stored ? json::array({stored->first, stored->second}) : json(nullptr);
  }
  const std::string key = util::sha256_hex(fmt::format("role_settings\n{}\n{}\n{}\n{}", database.host,
                                                       database.port, database.user,
                                                       database.dbname))
                              .substr(0, 16);
  // Never the password: who and where only.
  json entry = {{"kind", "role_settings"},
                {"key", key},
                {"owner", db::owner_tag()},
                {"host", host_name()},
                {"written_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count()},
                {"server_host", database.host},
                {"port", database.port},
                {"user", database.user},
                {"database", database.dbname},
                {"role", role},
                {"before", was}};
  j.m_path = dir / fmt::format("{}-{}.json", key, ::getpid());
  util::write_file_atomic(j.m_path, entry.dump(2) + "\n", 0600);
  return j;
}

void Journal::done() noexcept {
  if (m_path.empty()) return;
  std::error_code ec;
  fs::remove(m_path, ec);
  m_path.clear();
}

JournalLock::JournalLock(const fs::path& dir) {
  if (!dir.empty()) m_lock.emplace(dir / ".lock");
}

int undo_left_by_killed_runs(const fs::path& dir, const db::ConnectionInfo& server,
                             const std::function<void(const std::string&)>& say) noexcept {
  int undone = 0;
  try {
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return 0;
    JournalLock lock(dir);
    std::vector<Found> found = read_journals(dir);
    // Per key, the newest journal a live run holds.
    std::map<std::string, long long> live_since;
    for (const auto& f : found) {
      if (f.gone) continue;
      long long& newest = live_since[f.entry.value("key", "")];
      newest = std::max(newest, f.entry.value("written_ns", 0LL));
    }
    std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
      return a.entry.value("written_ns", 0LL) > b.entry.value("written_ns", 0LL);
    });
    for (const auto& f : found) {
      if (!f.gone || !same_server(f.entry, server)) continue;
      auto live = live_since.find(f.entry.value("key", ""));
      if (live != live_since.end() && live->second > f.entry.value("written_ns", 0LL)) continue;
      const std::string who = tag_word(f.entry.value("owner", ""), "pid");
      try {
        std::string what = undo(f.entry, server);
        fs::remove(f.path, ec);
        ++undone;
        say(fmt::format("put back what a killed coldgate (pid {}) had left on {}: {}", who,
                        server.display(), what));
      } catch (const std::exception& e) {
        std::string why = e.what();
        if (const auto* err = dynamic_cast<const Error*>(&e)) why = err->message();
        say(fmt::format("warning: could not put back the role settings a killed coldgate (pid "
                        "{}) left on {} (journal {}): {}; the next command tries again",
                        who, server.display(), f.path.string(), why.substr(0, why.find('\n'))));
      }
    }
  } catch (const std::exception&) {
    // Best effort: the command itself must not fail over what another run left.
  }
  return undone;
}

}  // namespace coldgate::measure
