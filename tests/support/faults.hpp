#pragma once

// What the fault tests share: reading /proc to find what a coldgate process and its children
// are doing, waiting for a phase without sleeping blindly, a coldgate started in the background
// with its output in files, and the leftover checks run after every fault.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "support/support.hpp"
#include "util/process.hpp"

namespace coldgate::testing {

/// The whole file, or what could be read of it ("" when it cannot be opened): a /proc file of a
/// process that just ended fails with ESRCH.
std::string read_all(const std::filesystem::path& p);

/// /proc/<pid>/<what>.
std::filesystem::path proc(pid_t pid, const char* what);

/// A process's command line, one entry per argument (empty when it is gone).
std::vector<std::string> argv_of(pid_t pid);

/// `argv` joined with single spaces.
std::string joined(const std::vector<std::string>& argv);

/// Every PID in /proc.
std::vector<pid_t> all_pids();

/// Parent PID from /proc/<pid>/stat (field 4), or 0 when the process is gone.
pid_t parent_of(pid_t pid);

/// The processes whose parent is `pid`.
std::vector<pid_t> children_of(pid_t pid);

/// True when `p` is `dir` or lies under it (lexically).
bool under(const std::filesystem::path& p, const std::filesystem::path& dir);

/// Live processes (not us, not zombies) whose working folder or command line lies under `dir`,
/// as "PID (command line)": a server of the run (its postmaster has `-D <dir>/tmp/…`, its
/// backends work in the data folder), a probe (its request file is in the run's temp folder),
/// a stage or build command, git working in a worktree.
std::vector<std::string> processes_under(const std::filesystem::path& dir);

/// `items` one per line, indented, or " none": for `EXPECT_EQ(list(x), " none")`.
std::string list(const std::vector<std::string>& items);

/// Polls `done` every 5 ms until true or `limit` passes; returns its last value.
bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit);

/// The postmaster `coldgate` runs as its child (local provider), or 0.
pid_t server_of(pid_t coldgate);

/// True when `coldgate` has a `coldgate probe` child (or grandchild under coldgate-exec): a cold
/// run is being measured.
bool has_probe_child(pid_t coldgate);

/// True when a backend of the server whose postmaster is `postmaster` runs a statement whose
/// command tag is `command` ("SELECT", "EXPLAIN"): its process title, "postgres: coldgate:
/// postgres coldgate 127.0.0.1(41234) SELECT" (over TCP) or "… [local] SELECT" (the Unix
/// socket), names it while the statement runs.
bool backend_runs(pid_t postmaster, const std::string& command);

/// True when every live child of `coldgate` has its record in the `children/` folder of a work
/// folder in `tmp` (util::record_children_in). A child's record is written just after it
/// started, so only from then on is what a SIGKILL of coldgate leaves running the next
/// command's to end: fault tests that SIGKILL coldgate while a command of it runs wait for it.
bool children_recorded(pid_t coldgate, const std::filesystem::path& tmp);

/// "SIGINT", "SIGTERM", "SIGKILL" (else "?").
const char* sig_name(int sig);

/// Stops the server whose postmaster is `postmaster` as an operator would, from outside:
/// `pg_ctl stop -m immediate -D <its data folder>` from the postmaster's own bin folder, as the
/// data folder's owner (runuser) when that is not us; waits (≤ 60 s) until the postmaster is
/// gone. Returns "" then, else what went wrong (for ASSERT_EQ(…, "")). pg_ctl's own status is
/// not the judge: once the postmaster is gone its owner may remove the data folder before
/// pg_ctl's last poll, and pg_ctl then exits 1 with "directory … does not exist".
std::string stop_server_immediately(pid_t postmaster);

/// What every fault test asserts once coldgate ended: no process under `project`
/// (processes_under) and nothing in `tmp`, the private TMPDIR it ran with (its temp and cluster
/// folders). Failures name `why`.
void expect_nothing_left(const std::filesystem::path& project, const std::filesystem::path& tmp,
                         const std::string& why);

/// Fails the current test for each file under `dir` (recursively) that is not whole:
/// results.json that does not read as results, another .json that does not parse, and unless
/// `tmp_allowed` a `*.tmp-XXXXXX` of an unfinished atomic write.
void expect_whole_files(const std::filesystem::path& dir, bool tmp_allowed = false);

/// A coldgate started in the background; stdout and stderr go to files the test reads while it
/// runs.
struct Running {
  std::unique_ptr<util::Process> process;
  std::filesystem::path out;  // its stdout
  std::filesystem::path err;  // its stderr
  /// True when its stderr so far contains `text`.
  bool said(const std::string& text) const;
  /// Waits (≤ `limit`) for the end; returns the exit code, 128 + signal when killed, -1 when it
  /// did not end; stderr in `*err` when given.
  int finish(std::string* err = nullptr,
             std::chrono::milliseconds limit = std::chrono::seconds(180));
};

/// The argument after `flag` on `pid`'s command line ("-D": a postmaster's data folder, "-p":
/// its port), or "" when there is none.
std::string option_of(pid_t pid, const std::string& flag);

/// A PID no process has now: a child that ran `true` and was reaped.
pid_t dead_pid();

/// Makes `<parent>/<name>/` with an `owner` file as db::mark_owner writes it, naming `pid`
/// started at `start` (clock ticks) in PID namespace `ns`: a killed run's leftover (a dead PID)
/// or a live owner's folder (ours) for the stale clean-up to judge.
std::filesystem::path plant_owned_dir(const std::filesystem::path& parent, const std::string& name,
                                      pid_t pid, long long start, const std::string& ns);

/// Starts `COLDGATE_BINARY args…` in `cwd` with `TMPDIR=tmp` and no CI variables (plus `env`,
/// "K=V"); output files `<cwd>/stdout-N.txt` and `stderr-N.txt`, N counting starts.
Running start_coldgate(const std::filesystem::path& cwd, const std::filesystem::path& tmp,
                       const std::vector<std::string>& args,
                       const std::vector<std::string>& env = {});

/// What directly sits in `dir` (files and folders), as paths: "TMPDIR is empty" is
/// `EXPECT_EQ(list(entries_of(tmp)), " none")`. Empty when `dir` does not exist.
std::vector<std::string> entries_of(const std::filesystem::path& dir);

/// How one signal delivery went.
struct Delivered {
  bool reached = false;       // the state was seen while coldgate ran, and the signal was sent
  bool ended_before = false;  // coldgate had ended before the signal: it ran to its own end
  int code = -1;              // its exit code (Running::finish)
  std::string err;            // its stderr
};

/// Waits until `reached()` or the end of `r`, then — when the state was reached — sends `sig`
/// at once (no delay: the state is what places the signal), waits for the end and prints one
/// line: `what`, whether it was delivered or coldgate had ended before, the exit code.
/// A coldgate that ends before the state is `ended_before` and, unless `may_end` (a phase that
/// does not wait for the test, such as writing the results), a test failure with its stderr.
/// Neither within 120 s is a failure too; `r` is then stopped with SIGKILL.
Delivered deliver_at(Running& r, const std::function<bool()>& reached, int sig,
                     const std::string& what, bool may_end = false);

/// A fault test's folder: `tmp/`, the TMPDIR of every coldgate it starts (made usable by the
/// server account), and `cache/`, their XDG_CACHE_HOME, so that another coldgate on the machine
/// is neither counted nor cleaned up, and none of theirs is ours. Only the cluster templates
/// (`cache/coldgate/templates`, a symlink) are shared by the fault tests of one build, so that
/// initdb runs once, not in every test.
struct FaultFolder {
  FaultFolder();
  TempDir dir;
  std::filesystem::path tmp = dir / "tmp";
  std::filesystem::path cache = dir / "cache";
  /// start_coldgate() in `dir` with our TMPDIR and XDG_CACHE_HOME (plus `env`).
  Running start(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) const;
  /// True while `r` starts its local server: its cluster folder (`tmp/coldgate-pg-*`, the
  /// template being copied in, then the server starting) is there with its registry marker
  /// (`cache/coldgate/runs/<folder>.run`, written just after the folder, which is how the next
  /// command finds a SIGKILLed one's), what it runs is recorded (children_recorded: the `cp`
  /// of the template) and it has not said "ready".
  bool starting_server(const Running& r) const;
  /// True while `r`'s postmaster runs but `r` has not said "ready": a `postgres -D
  /// tmp/coldgate-pg-*/data` child, recorded (children_recorded) and named by its registry
  /// marker. (`postgres --version`, run before, is not one.)
  bool postmaster_starting(const Running& r) const;
  /// The checks after a fault: testing::expect_nothing_left (no process under `dir`, `tmp/`
  /// empty) and expect_whole_files of `cache/` (no unfinished temp file, journals whole).
  void expect_nothing_left(const std::string& why) const;
};

/// A tmpfs of `size` ("64k", "120m") mounted on `where` while alive, its root of `mode`
/// ("0755"; "1777" for a TMPDIR every user writes in): a full disk for the fault tests (needs
/// root, as the suite in CI). Unmounted (lazily) by the destructor.
class SmallTmpfs {
 public:
  SmallTmpfs(const std::filesystem::path& where, const std::string& size = "64k",
             const std::string& mode = "0755");
  ~SmallTmpfs();
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;
  /// True when the mount succeeded; else error() says why.
  bool mounted() const { return m_mounted; }
  const std::string& error() const { return m_error; }

 private:
  std::filesystem::path m_where;
  bool m_mounted = false;
  std::string m_error;
};

}  // namespace coldgate::testing
