#pragma once

// What a run changes on a server that outlives it — an `external` one — and must put back: the
// role settings of a `settings_via: role` stage. The change is journalled under
// `<cache>/server-journal/` before it is made, with its owner (db::owner_tag) and what undoes it;
// the journal goes once the change is undone. A run killed with SIGKILL undoes nothing: the next
// command on that server does it from the journal. (A remedy trial's database copy carries its
// owner on the server itself: measure/trial.cpp.)

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "db/cluster_registry.hpp"
#include "db/connection_info.hpp"
#include "db/provider.hpp"
#include "util/fs.hpp"

namespace coldgate::measure {

/// A role's own settings in one database before a change, by the name the stage gives: the
/// stored entry (its name as pg_db_role_setting spells it, and its value), or nullopt when the
/// role had none (undone by RESET).
using RoleSettings = std::map<std::string, std::optional<std::pair<std::string, std::string>>>;

/// `<cache>/server-journal` (db::default_cache_dir) for `provider`'s changes when its server
/// outlives the run (`external`); empty for `local` and `container`, whose server goes with it.
std::filesystem::path journal_dir(const db::Provider& provider);

/// One journalled change, written (util::write_file_atomic, mode 0600) by role_settings() before
/// the change is made. Removed by done() once the change is undone; a journal whose owner ended
/// without done() — killed, or its undo failed — is undone by undo_left_by_killed_runs().
class Journal {
 public:
  /// No journal (an empty journal_dir()): done() does nothing.
  Journal() = default;
  /// The settings of role `role` in database `database.dbname`, reached as `database` says
  /// (`database.user`), are about to change from `before`: `<dir>/<key>-<pid>.json`, the key a
  /// hash of server, user and database. Throws Error(infrastructure) naming the file.
  static Journal role_settings(const std::filesystem::path& dir,
                               const db::ConnectionInfo& database, const std::string& role,
                               const RoleSettings& before);
  /// Removes the journal: the change is undone. Never throws.
  void done() noexcept;
  /// The journal's file; empty for none.
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

/// Takes `<dir>/.lock` (util::FileLock) while alive: held by undo_left_by_killed_runs() and
/// around a role-settings change, so that no run reads a role's settings half undone. Does
/// nothing for an empty `dir`. Throws Error(infrastructure) naming the lock file.
class JournalLock {
 public:
  explicit JournalLock(const std::filesystem::path& dir);

 private:
  std::optional<util::FileLock> m_lock;
};

/// Undoes the journalled changes in `dir` of runs that are gone — db::owner_tag_gone, or a
/// journal of this host from an earlier boot — on `server` only (the same host, port and user;
/// journals of other servers wait for a command on theirs). Newest first, so that a change made
/// over another killed run's change is undone before it. A journal whose owner runs is never
/// touched; nor is one older than a live run's journal of the same role and database: that run
/// found this change as "before" and puts it back when it ends, and the next command then undoes
/// this one. (A killed run's journal newer than a live run's holds that run's values as
/// "before": undoing it gives the live run its settings back.) Says each undo, or why one
/// failed (that journal stays for the next command), through `say` without "coldgate: ".
/// Returns how many it undid; never throws.
int undo_left_by_killed_runs(const std::filesystem::path& dir, const db::ConnectionInfo& server,
                             const std::function<void(const std::string&)>& say) noexcept;

}  // namespace coldgate::measure
