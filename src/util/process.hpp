#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace coldgate::util {

struct Launch;  // what a start needs, prepared before fork (spawn.cpp)

/// What to start and how. POSIX-only (Linux): the child runs in its own process group so a
/// timeout or an interrupt can kill everything it started.
struct SpawnOptions {
  std::vector<std::string> argv;      // argv[0] is looked up in PATH when it has no '/'
  std::filesystem::path cwd;          // empty: inherit
  std::vector<std::string> env;       // "K=V" entries added to (or replacing in) our environment
  std::vector<std::string> env_unset; // names removed from the environment
  std::filesystem::path stdin_path;   // empty: /dev/null
  bool capture_stdout = true;         // false: inherit our stdout
  bool capture_stderr = true;         // false: inherit our stderr
  std::filesystem::path stdout_path;  // when set (and not captured): append stdout to this file
  std::filesystem::path stderr_path;  // likewise for stderr
  std::optional<uid_t> uid;           // switch to this user (and gid) before exec; needs root
  std::optional<gid_t> gid;
  std::size_t max_capture_bytes = 64u << 20;  // captured bytes kept per stream; the rest dropped
  /// For clean-up commands (`docker rm -f`): a SIGINT/SIGTERM to us neither signals nor aborts
  /// this child; wait() still honours the timeout.
  bool finish_when_interrupted = false;
  /// For stage and setup commands: also kill what the child leaves behind outside its process
  /// group (a daemon that called setsid(), a double fork). While the child runs we are a child
  /// subreaper (prctl PR_SET_CHILD_SUBREAPER, Linux ≥ 3.4), so its orphaned descendants are
  /// re-parented to us instead of init; when it ends (exit, timeout, interrupt) they get SIGKILL
  /// and are reaped. Only one such child at a time (the subreaper flag is process-wide).
  bool kill_escaped = false;
  /// For measured children (stage commands, the probe): started through coldgate-exec, which
  /// forks and execs them, so that their peak RSS (ExitStatus::peak_rss_bytes, and their own
  /// getrusage) is their process tree's and not ours — a child we start ourselves begins with
  /// our peak. Without coldgate-exec (not found: said once on stderr) they start as others do.
  bool own_peak_rss = false;
};

/// How a child ended and what it cost, from wait4(2)'s rusage.
struct ExitStatus {
  int exit_code = -1;          // exit status when exited normally, else -1
  int signal = 0;              // terminating signal, 0 when it exited
  bool timed_out = false;      // killed by us at the timeout
  double timeout_ms = 0;       // the timeout that was passed, when timed_out
  double wall_ms = 0;          // spawn to reap, milliseconds (steady clock)
  double user_ms = 0;          // user CPU time of the child and its reaped descendants
  double sys_ms = 0;           // system CPU time likewise
  std::int64_t peak_rss_bytes = 0;  // ru_maxrss × 1024 (Linux reports KiB); own_peak_rss: the
                                    // program's, 0 when coldgate-exec was killed before it said
  /// True when the child exited with status 0 and was not killed.
  bool ok() const { return exit_code == 0 && signal == 0 && !timed_out; }
  /// "exit status 3", "killed by SIGKILL", "timed out after 2000 ms" (the limit, not the wall time).
  std::string describe() const;
};

/// A running child process in its own process group. Move-only; the destructor kills the whole
/// group (SIGKILL) and reaps the child if the caller did not wait for it.
class Process {
 public:
  /// Starts argv; throws Error(infrastructure) naming argv[0] when it cannot be started
  /// (not found, not executable, fork failure).
  explicit Process(const SpawnOptions& options);
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  /// PID of the child (also its process group id). -1 once reaped.
  pid_t pid() const { return m_pid; }

  /// Waits for the child to end, reading captured output meanwhile. At `timeout` the whole
  /// group gets SIGTERM, then SIGKILL after `grace`; on SIGINT/SIGTERM to us (see
  /// interrupted()) likewise, then throws Error(interrupted). Leaves no member of the group.
  ExitStatus wait(std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                  std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

  /// Waits up to `timeout` (counted from now) for the child to exit, without reaping it and
  /// whatever interrupts arrive; true when it has exited (or was reaped already). For
  /// long-running children such as a server being shut down; wait() then reaps it.
  bool wait_exited(std::chrono::milliseconds timeout) const;

  /// Sends `sig` to the child's whole process group (no-op once reaped).
  void signal_group(int sig) const;

  /// Captured standard output (valid after wait()).
  const std::string& out() const { return m_out; }
  /// Captured standard error (valid after wait()).
  const std::string& err() const { return m_err; }

 private:
  void reset();
  // The constructor's body: spawns the child (posix_spawn, else fork/exec).
  void start(const SpawnOptions& options);
  // posix_spawn of a prepared launch, through `helper` (coldgate-exec) unless it is empty; false
  // when it could not (the fork path then names why).
  bool start_spawned(struct Launch& launch, const std::string& helper);
  // After coldgate-exec started: waits for its child's exec; throws naming why it failed.
  void await_helper_exec(struct Launch& launch);
  // Once coldgate-exec is reaped: its child's status and peak RSS from its report, into `result`.
  void take_report(ExitStatus& result);
  // fork/exec of a prepared launch, switching users when asked; throws naming the failed step.
  void start_forked(struct Launch& launch);
  // For kill_escaped: kills and reaps the orphans left, then stops being a subreaper.
  void sweep_escaped();
  // After a successful start: closes the child's pipe ends, keeps ours non-blocking.
  void adopt_pipes(int out_pipe[2], int err_pipe[2]);
  pid_t m_pid = -1;       // child PID; -1 when reaped or moved from
  int m_out_fd = -1;      // read end of the stdout pipe; -1 when not captured or closed
  int m_err_fd = -1;      // read end of the stderr pipe; -1 when not captured or closed
  int m_report_fd = -1;   // read end of coldgate-exec's report; -1 without it
  std::string m_report;   // what it reported so far
  std::size_t m_max_capture = 0;
  bool m_finish_when_interrupted = false;  // SpawnOptions::finish_when_interrupted
  bool m_kill_escaped = false;             // SpawnOptions::kill_escaped, until swept
  std::chrono::steady_clock::time_point m_start;
  std::string m_out;
  std::string m_err;
};

/// SIGKILLs and reaps every child of this process that no live Process owns (orphans re-parented
/// to us as subreaper), then their children re-parented in turn, until none is left; returns how
/// many. Process::wait() calls it for kill_escaped children.
int kill_untracked_children();

/// Result of run(): the exit status and the captured streams.
struct RunOutput {
  ExitStatus status;
  std::string out;
  std::string err;
};

/// Starts `options`, waits (with `timeout`), returns status and output. Throws like Process.
RunOutput run(const SpawnOptions& options,
              std::optional<std::chrono::milliseconds> timeout = std::nullopt);

/// The last `max_lines` lines of `text` (for "stderr tail" messages), without a final newline.
std::string tail_lines(const std::string& text, std::size_t max_lines);

/// Full path of `name` found in PATH (or `name` itself when it contains '/'); nullopt if absent.
std::optional<std::filesystem::path> find_program(const std::string& name);

/// Start time of `pid` (field 22 of /proc/<pid>/stat, clock ticks since boot); -1 when the
/// process does not exist or is a zombie. With the PID it names one process, whatever reuse.
long long process_start_time(pid_t pid);

/// The environment variable every child started while recording (record_children_in) gets, set
/// to the records folder: kill_recorded_groups() finds by it what no record names.
inline constexpr const char* k_recorded_in_env = "COLDGATE_RECORDED_IN";

/// From now on, records every child a Process starts — its PID, which is also its process
/// group, and its start time — as the file `<dir>/<pid>`, removed when the child is reaped, so
/// that after a SIGKILL of ours the next command can end what we had started (a setup or stage
/// command, initdb, the server) with kill_recorded_groups(). An empty `dir` stops recording.
/// Returns the folder recorded in before, for the caller to put back.
std::filesystem::path record_children_in(const std::filesystem::path& dir);

/// SIGKILLs the process group of each child recorded in `dir` (record_children_in) that is
/// still there — its leader with the recorded start time, or, the leader gone, members of its
/// group (a group's ID is not given to a new process while the group lives) — waits (≤ 5 s)
/// until no live member is left, and removes the records. Then SIGKILLs every other process
/// whose environment still holds k_recorded_in_env=`dir`: a child whose record the SIGKILL came
/// before, a daemon that left its group (setsid). Returns how many groups and such processes it
/// killed; never throws. Only a process that dropped the variable is beyond it.
int kill_recorded_groups(const std::filesystem::path& dir) noexcept;

/// Installs SIGINT/SIGTERM handlers that record the signal instead of killing us, so waits
/// unwind in order (destructors stop servers and remove temp dirs). Idempotent.
void install_interrupt_handlers();

/// The signal received since install_interrupt_handlers(), or 0.
int interrupted();

/// A descriptor that becomes readable when a SIGINT/SIGTERM arrives (for poll(2) beside other
/// input); -1 before install_interrupt_handlers() or when its pipe could not be made.
int interrupt_fd();

/// Throws Error(interrupted) when a SIGINT/SIGTERM has arrived.
void throw_if_interrupted();

}  // namespace coldgate::util
