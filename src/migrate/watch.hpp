#pragma once
// What is measured beside a running migration: the locks its sessions hold (sampled from
// pg_locks) and the stall probes reading and writing tables see; and the lock_timeout check.
// Internal to the migrate module.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "db/connection.hpp"
#include "db/connection_info.hpp"

namespace coldgate::migrate {

/// Milliseconds from `t0` to now on the steady clock.
double ms_since(std::chrono::steady_clock::time_point t0);

/// A pre-existing table the probes read and write.
struct ProbeTable {
  std::int64_t oid = 0;
  std::string name;  // schema.table, quoted
};

/// The strongest lock the migration's sessions were seen holding on one relation.
struct LockSeen {
  int rank = 0;          // 1 AccessShareLock … 8 AccessExclusiveLock (the conflict table's order)
  std::string mode;      // "ShareLock"
  double first_ms = 0;   // since the migration started, when that mode was first seen
  double last_ms = 0;    // … and last seen
  std::string statement; // what its session ran when it was first seen
};

/// The rank of a pg_locks mode in PostgreSQL's table of lock modes (1–8); 0 for another name.
int lock_rank(const std::string& mode);

/// One probe: a connection of its own that runs `sql` again and again (a pause between) until
/// stopped, keeping the longest it took: the wait a client of the application would see.
class Probe {
 public:
  /// Connects now (before the migration starts); throws Error(infrastructure).
  Probe(const db::ConnectionInfo& database, std::string sql);
  ~Probe();
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;
  /// Starts the loop on a thread of its own.
  void start();
  /// Ends the loop (after the statement in flight) and joins; returns the longest, ms.
  double stop();
  /// The backend's pid, to leave out of what the migration's sessions are.
  int pid() const { return m_pid; }

 private:
  void loop();
  db::Connection m_conn;
  std::string m_sql;
  int m_pid = 0;
  std::thread m_thread;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  double m_longest_ms = 0;
};

/// Samples, from a connection of its own to the migration's database, the relation locks every
/// session but `own_pids` holds there.
class LockSampler {
 public:
  explicit LockSampler(const db::ConnectionInfo& database);
  /// One sample at `now_ms` (since the migration started). Throws Error(infrastructure).
  void sample(double now_ms, const std::vector<int>& own_pids);
  /// What the migration's sessions wait for now, one line ("AccessExclusiveLock on
  /// public.orders, held by pid 12 (`SELECT …`)"), "" when none waits. Never throws.
  std::string waiting(const std::vector<int>& own_pids);
  /// Ends the migration's sessions (pg_terminate_backend): a migration past its timeout.
  void terminate(const std::vector<int>& own_pids);
  /// Per relation oid, the strongest lock seen.
  const std::map<std::int64_t, LockSeen>& locks() const { return m_locks; }
  int pid() const { return m_pid; }

 private:
  db::Connection m_conn;
  int m_pid = 0;
  std::map<std::int64_t, LockSeen> m_locks;
};

/// What the lock_timeout check found.
struct LockCheck {
  bool queued = false;       // a strong lock request of the migration waited behind ours
  bool unbounded = false;    // … and still waited after max_lock_wait
  double waited_ms = 0;      // how long it was seen waiting
  std::string mode;          // the mode it asked for
  std::int64_t table = 0;    // the relation's oid
  std::string statement;     // the statement that asked
};

/// Runs `migration` (blocking; its failure is expected and ignored) against `database` while a
/// connection holds ROW EXCLUSIVE on every table of `hold` in an open transaction, as a long
/// write transaction of the application would. When a lock request of the migration that
/// conflicts with writers (SHARE or stronger) waits on it, waits at most `max_lock_wait`: a
/// request still waiting then has no lock_timeout below it. Then ends the migration's sessions.
/// Throws Error(infrastructure) when the server is lost, Error(interrupted).
LockCheck check_lock_timeout(const db::ConnectionInfo& database, const std::vector<ProbeTable>& hold,
                             const std::function<void()>& migration,
                             std::chrono::milliseconds max_lock_wait,
                             std::chrono::milliseconds timeout);

}  // namespace coldgate::migrate
