#pragma once

// The server side of a measured run: its client sessions carry a per-run application_name, so
// that a run which times out or is interrupted leaves no query executing on the server (a
// killed client's backend keeps running its statement until it next talks to the client).

#include <chrono>
#include <string>

#include "db/connection_info.hpp"

namespace coldgate::measure {

/// Longest application_name the server keeps (NAMEDATALEN - 1 bytes; it cuts longer ones).
inline constexpr std::size_t k_max_application_name = 63;

/// The application_name of one measured run's client sessions, "coldgate/<stage>/<run>/<pid>"
/// (pid: this coldgate process), at most k_max_application_name bytes: a stage name too long to
/// fit is cut and ends with "~" and 8 hex digits of a hash of the whole name.
std::string run_application_name(const std::string& stage, int run);

/// What end_backends() found and did.
struct EndedBackends {
  int found = 0;       // backends listed with the name when it looked
  int active = 0;      // of them, running a statement then (state 'active' or a fastpath call)
  int terminated = 0;  // still listed after the cancel's wait: sent pg_terminate_backend
  int left = 0;        // still listed when the terminate's wait ran out too
  std::string error;   // "" or why looking or signalling failed (cannot connect, permission)
  /// A clause for a run's error message ("; its query was still running on the server and was
  /// cancelled"); "" when no statement was running and nothing is left (also when the server
  /// could not be reached at all).
  std::string note(const std::string& application_name) const;
};

/// On a fresh connection to `server` (connect_timeout 5 s): pg_cancel_backend() for every
/// backend pg_stat_activity lists with `application_name`; those still listed after
/// `cancel_wait` get pg_terminate_backend(); returns once none is listed, or after
/// `terminate_wait` more (EndedBackends::left then counts them). Never throws: a failure is in
/// EndedBackends::error.
EndedBackends end_backends(const db::ConnectionInfo& server, const std::string& application_name,
                           std::chrono::milliseconds cancel_wait = std::chrono::seconds(1),
                           std::chrono::milliseconds terminate_wait = std::chrono::seconds(5));

/// `error` (a run's failure text) with `note` at the end of its first line (what the report
/// shows as the reason), before a "; stderr ends:" there.
std::string with_note(std::string error, const std::string& note);

/// The client sessions of one measured run (a probe or a command), named by
/// run_application_name(). Call end() when the run failed (timeout, signal, exit status), after
/// its processes are gone. The destructor calls end_backends() itself when an exception unwinds
/// through the run (Error(interrupted)) and end() did not run; it never throws.
class RunSessions {
 public:
  /// `server` is where the run's clients connect (the stage's database).
  RunSessions(db::ConnectionInfo server, const std::string& stage, int run);
  ~RunSessions();
  RunSessions(const RunSessions&) = delete;
  RunSessions& operator=(const RunSessions&) = delete;

  /// The run's application_name.
  const std::string& application_name() const { return m_name; }
  /// `info` with application_name set to the run's (for the probe's conninfo).
  db::ConnectionInfo named(db::ConnectionInfo info) const;
  /// "PGAPPNAME=<name>", for a command's environment (libpq clients take it as their
  /// application_name unless they set one themselves).
  std::string env() const { return "PGAPPNAME=" + m_name; }
  /// Ends the run's backends left on the server (end_backends()); returns with_note(`error`,
  /// EndedBackends::note()).
  std::string end(std::string error);

 private:
  db::ConnectionInfo m_server;
  std::string m_name;
  int m_exceptions = 0;  // std::uncaught_exceptions() when constructed
  bool m_ended = false;
};

}  // namespace coldgate::measure
