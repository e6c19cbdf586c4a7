#pragma once

// A command stage's `settings`, applied to the sessions its clients open: through PGOPTIONS
// (libpq clients), or as the role's settings in the stage's database for the length of a run
// (`settings_via: role`, for drivers that ignore PGOPTIONS).

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "db/connection_info.hpp"
#include "measure/server_journal.hpp"

namespace coldgate::measure {

/// The PGOPTIONS value for `settings`: "-c name=value" each, separated by a space, with every
/// whitespace character and backslash of a value escaped by a backslash, as libpq's `options`
/// wants ("-c search_path=a,\ b"). "" for no settings.
std::string pgoptions(const std::map<std::string, std::string>& settings);

/// True for the settings whose ALTER ROLE … SET value is a quoted list (GUC_LIST_QUOTE:
/// search_path, temp_tablespaces, the *_preload_libraries, unix_socket_directories); the name
/// is compared without regard to case.
bool is_list_quoted_setting(const std::string& name);

/// Puts the current role's settings in `database.dbname` back to `before` (SET the stored entry,
/// or RESET), in one transaction on a fresh connection. Throws Error (db::translate for a
/// statement the server refuses; infrastructure when it cannot be reached).
void put_back_role_settings(const db::ConnectionInfo& database, const RoleSettings& before);

/// A command stage's settings for one cold run. With `settings_via: pgoptions` it only adds
/// "PGOPTIONS=…" to the child's environment. With `role` it sets them as the stage role's
/// defaults in the stage's database — `ALTER ROLE CURRENT_USER IN DATABASE <db> SET name = …`,
/// what pg_db_role_setting held for those names read first, all in one transaction — and puts
/// those names back as they were when the run is over: restore() on the normal path, the
/// destructor on any other (an exception, an interrupt). Meanwhile every new session of that
/// role in that database gets them. On a server that outlives the run, what it found is
/// journalled first (Journal::role_settings), so that the next command puts it back after a
/// SIGKILL.
class CommandSettings {
 public:
  /// Applies `stage.settings` (nothing when there are none) as `stage.settings_via` says, on a
  /// fresh connection to `database` for `role`; appends to `env` ("K=V" entries) for
  /// `pgoptions`. With `role` and a `journal_dir` (measure::journal_dir; empty: none) the
  /// journal is written under its lock before the change. Throws Error(gate_failed) "stage
  /// <name>: settings_via: role: SQLSTATE …" for a statement the server refuses (unknown
  /// setting, bad value, permission), Error(infrastructure) when the server cannot be reached
  /// or the journal cannot be written.
  CommandSettings(const config::Stage& stage, const db::ConnectionInfo& database,
                  std::vector<std::string>& env,
                  const std::filesystem::path& journal_dir = {});
  /// restore() when it has not run; a failure is a warning on stderr (never throws).
  ~CommandSettings();
  CommandSettings(const CommandSettings&) = delete;
  CommandSettings& operator=(const CommandSettings&) = delete;

  /// Puts the role's settings for the stage's names back: the value the role had in that
  /// database before, else RESET; then removes the journal. Once; a no-op for `pgoptions`.
  /// Throws Error(gate_failed) naming the stage and the statement to run by hand when it cannot
  /// (the journal stays: the next command on that server tries again).
  void restore();

 private:
  std::string m_where;                            // "stage <name>: settings_via: role"
  db::ConnectionInfo m_database;                  // where the role's settings were changed
  std::string m_role;                             // current_user there (for messages)
  std::string m_dbname;                           // current_database() there
  RoleSettings m_before;                          // what the role had for each name applied
  Journal m_journal;                              // of m_before, on a server that outlives us
  bool m_applied = false;  // role settings changed and not yet restored
};

}  // namespace coldgate::measure
