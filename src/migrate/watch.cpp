#include "migrate/watch.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <exception>

#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::migrate {
namespace {

using Clock = std::chrono::steady_clock;

// "{1,2,3}": an int[] parameter.
std::string pid_array(const std::vector<int>& pids) {
  std::string out = "{";
  for (std::size_t i = 0; i < pids.size(); ++i) out += (i ? "," : "") + std::to_string(pids[i]);
  return out + "}";
}

// coldgate's own sessions beside a migration are left out of pg_stat_statements when the role
// may say so (a superuser, as on coldgate's own servers); elsewhere their texts are told apart
// by the "coldgate-" aliases they carry.
void quiet(db::Connection& conn) {
  try {
    conn.exec("SET pg_stat_statements.track = 'none'", "migration");
  } catch (const Error&) {
  }
}

// pg_stat_activity's text of a statement as pg_stat_statements shows it: no trailing `;`.
std::string statement_text(std::string text) {
  while (!text.empty() && (text.back() == ';' || std::isspace(static_cast<unsigned char>(text.back()))))
    text.pop_back();
  std::size_t start = text.find_first_not_of(" \t\r\n");
  return start == std::string::npos ? "" : text.substr(start);
}

int backend_pid(db::Connection& conn) {
  return conn.exec("SELECT pg_backend_pid()", "migration")[0][0].as<int>();
}

// The migration's sessions: client backends on this database that are not ours.
constexpr const char* k_theirs =
    "a.datname = current_database() AND a.backend_type = 'client backend' AND "
    "a.pid <> ALL($1::int[])";

}  // namespace

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int lock_rank(const std::string& mode) {
  static const std::array<const char*, 8> k_modes = {
      "AccessShareLock", "RowShareLock",          "RowExclusiveLock", "ShareUpdateExclusiveLock",
      "ShareLock",       "ShareRowExclusiveLock", "ExclusiveLock",    "AccessExclusiveLock"};
  for (std::size_t i = 0; i < k_modes.size(); ++i) {
    if (mode == k_modes[i]) return static_cast<int>(i) + 1;
  }
  return 0;
}

Probe::Probe(const db::ConnectionInfo& database, std::string sql)
    : m_conn(db::with_client_defaults(database)), m_sql(std::move(sql)) {
  quiet(m_conn);
  m_pid = backend_pid(m_conn);
}

Probe::~Probe() { stop(); }

void Probe::start() { m_thread = std::thread([this] { loop(); }); }

double Probe::stop() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
  return m_longest_ms;
}

void Probe::loop() {
  for (;;) {
    const auto t0 = Clock::now();
    bool failed = false;
    try {
      m_conn.exec(m_sql, "migration: probe");
    } catch (...) {
      // The table renamed or dropped under it, the session ended: it waited all the same.
      failed = true;
    }
    const double took = ms_since(t0);
    std::unique_lock<std::mutex> lock(m_mutex);
    m_longest_ms = std::max(m_longest_ms, took);
    if (failed || m_stop) return;
    // A pause between tries keeps the probes' own locks from standing in the migration's way
    // (their cost: docs/BENCHMARKS.md, "migration probes"); a wait longer than it is seen whole.
    if (m_wake.wait_for(lock, std::chrono::milliseconds(20), [this] { return m_stop; })) return;
  }
}

LockSampler::LockSampler(const db::ConnectionInfo& database)
    : m_conn(db::with_client_defaults(database)) {
  quiet(m_conn);
  m_pid = backend_pid(m_conn);
}

void LockSampler::sample(double now_ms, const std::vector<int>& own_pids) {
  auto rows = m_conn.exec_params(
      fmt::format("SELECT l.relation::bigint AS \"coldgate-sample\", l.mode, coalesce(a.query, '') "
                  "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.granted AND "
                  "l.locktype = 'relation' AND l.database = (SELECT oid FROM pg_database WHERE "
                  "datname = current_database()) AND {}",
                  k_theirs),
      {pid_array(own_pids)}, "migration: locks");
  for (const auto& row : rows) {
    const std::int64_t oid = row[0].as<std::int64_t>();
    const std::string mode = row[1].as<std::string>();
    const int rank = lock_rank(mode);
    LockSeen& seen = m_locks[oid];
    if (rank > seen.rank) {
      seen = LockSeen{rank, mode, now_ms, now_ms, statement_text(row[2].as<std::string>())};
    } else if (rank == seen.rank) {
      seen.last_ms = now_ms;
    }
  }
}

std::string LockSampler::waiting(const std::vector<int>& own_pids) {
  try {
    auto rows = m_conn.exec_params(
        fmt::format("SELECT l.mode AS \"coldgate-wait\", coalesce(l.relation::regclass::text, "
                    "l.locktype), pg_blocking_pids(a.pid)::text, coalesce(a.query, '') FROM "
                    "pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted WHERE {}",
                    k_theirs),
        {pid_array(own_pids)}, "migration: locks");
    if (rows.empty()) return "";
    return fmt::format("`{}` waited for {} on {}, held by pid {}", rows[0][3].as<std::string>(),
                       rows[0][0].as<std::string>(), rows[0][1].as<std::string>(),
                       rows[0][2].as<std::string>());
  } catch (const Error&) {
    return "";
  }
}

void LockSampler::terminate(const std::vector<int>& own_pids) {
  try {
    m_conn.exec_params(fmt::format("SELECT pg_terminate_backend(a.pid) AS \"coldgate-end\" FROM "
                                   "pg_stat_activity a WHERE {}",
                                   k_theirs),
                       {pid_array(own_pids)}, "migration");
  } catch (const Error&) {
  }
}

LockCheck check_lock_timeout(const db::ConnectionInfo& database, const std::vector<ProbeTable>& hold,
                             const std::function<void()>& migration,
                             std::chrono::milliseconds max_lock_wait,
                             std::chrono::milliseconds timeout) {
  db::Connection holder(db::with_client_defaults(database));
  quiet(holder);
  const int holder_pid = backend_pid(holder);
  LockSampler watcher(database);
  const std::vector<int> ours{holder_pid, watcher.pid()};
  holder.exec("BEGIN", "migration: lock check");
  for (const auto& t : hold) {
    holder.exec("LOCK TABLE " + t.name + " IN ROW EXCLUSIVE MODE", "migration: lock check");
  }
  std::atomic<bool> done{false};
  std::thread runner([&] {
    try {
      migration();
    } catch (...) {
      // A lock_timeout that fired, or the session we ended: what is judged is the wait.
    }
    done = true;
  });
  struct Join {
    std::thread& t;
    ~Join() {
      if (t.joinable()) t.join();
    }
  } join{runner};
  LockCheck out;
  bool held = true;
  auto release = [&] {
    if (!held) return;
    held = false;
    try {
      holder.exec("ROLLBACK", "migration: lock check");
    } catch (const Error&) {
    }
  };
  const auto t0 = Clock::now();
  std::optional<Clock::time_point> since;
  while (!done) {
    if (util::interrupted()) {
      release();
      watcher.terminate(ours);
      util::throw_if_interrupted();
    }
    if (held) {
      auto rows = holder.exec_params(
          "SELECT l.mode AS \"coldgate-check\", coalesce(l.relation, 0)::bigint, l.locktype, "
          "coalesce(a.query, '') FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid AND NOT "
          "l.granted WHERE a.datname = current_database() AND a.pid <> ALL($1::int[]) AND "
          "$2::int = ANY(pg_blocking_pids(a.pid))",
          {pid_array(ours), std::to_string(holder_pid)}, "migration: lock check");
      if (rows.empty()) {
        if (since) {  // it waited on us and stopped waiting: its lock_timeout fired
          out.waited_ms = ms_since(*since);
          release();
          watcher.terminate(ours);
        }
      } else {
        const std::string mode = rows[0][0].as<std::string>();
        if (rows[0][2].as<std::string>() != "relation" || lock_rank(mode) < lock_rank("ShareLock")) {
          // CREATE INDEX CONCURRENTLY waits for our transaction to end, queuing no one.
          release();
        } else {
          if (!since) {
            since = Clock::now();
            out.queued = true;
            out.mode = mode;
            out.table = rows[0][1].as<std::int64_t>();
            out.statement = statement_text(rows[0][3].as<std::string>());
          }
          if (Clock::now() - *since >= max_lock_wait) {
            out.unbounded = true;
            out.waited_ms = ms_since(*since);
            release();
            watcher.terminate(ours);
          }
        }
      }
    }
    if (Clock::now() - t0 > timeout) {
      release();
      watcher.terminate(ours);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  release();
  return out;
}

}  // namespace coldgate::migrate
