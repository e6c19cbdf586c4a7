// Starting a child (process.cpp waits for it): posix_spawn, fork/exec where it cannot, into a
// new process group; a measured child (own_peak_rss) through coldgate-exec (coldgate_exec.c),
// so that its peak RSS is its own and not ours.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "util/error.hpp"
#include "util/process.hpp"
#include "util/process_detail.hpp"

extern char** environ;

namespace coldgate::util {

using detail::close_fd;
using detail::track;
using detail::untrack;

namespace {

// Builds "K=V" strings: our environment with `unset` removed and `add` applied on top.
std::vector<std::string> build_env(const std::vector<std::string>& add,
                                   const std::vector<std::string>& unset) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    vars[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  for (const auto& name : unset) vars.erase(name);
  for (const auto& kv : add) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

// The descriptor coldgate-exec writes its report to: its argv[1], dup2'd there by the spawn.
constexpr int k_report_fd = 3;

bool executable_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// coldgate-exec: beside our own binary (the build folder), where the package installs it
// relative to ours (bin/ → libexec/coldgate/), or in the build folder this was compiled in (the
// test executables under tests/). Empty, and said once on stderr, when none is there.
const std::string& exec_helper() {
  static const std::string found = [] {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    std::vector<std::filesystem::path> places;
    if (!ec) {
      places.push_back(self.parent_path() / "coldgate-exec");
      places.push_back((self.parent_path() / COLDGATE_EXEC_FROM_BINDIR).lexically_normal());
    }
    places.emplace_back(COLDGATE_EXEC_BUILD_PATH);
    for (const auto& p : places) {
      if (executable_file(p)) return p.string();
    }
    std::string looked;
    for (const auto& p : places) looked += (looked.empty() ? "" : ", ") + p.string();
    std::fprintf(stderr,
                 "coldgate: warning: coldgate-exec not found (looked at %s): stages start without "
                 "it, so a stage's peak_rss_bytes may be coldgate's own peak; reinstall coldgate\n",
                 looked.c_str());
    return std::string();
  }();
  return found;
}

}  // namespace

std::optional<std::filesystem::path> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0) return std::filesystem::path(name);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    auto colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    auto candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
    std::error_code ec;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate, ec)) {
      return candidate;
    }
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

Process::Process(const SpawnOptions& options)
    : m_max_capture(options.max_capture_bytes),
      m_finish_when_interrupted(options.finish_when_interrupted) {
  if (options.argv.empty()) throw Error(ExitCode::infrastructure, "spawn", "empty command");
  if (options.kill_escaped) {
    // Before the child exists, so none of its descendants can be orphaned to init first.
    m_kill_escaped = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
  }
  try {
    start(options);
  } catch (...) {
    if (m_kill_escaped) ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
    throw;
  }
}

// Everything a child needs, prepared before fork: only async-signal-safe calls after it.
struct Launch {
  const SpawnOptions& options;
  std::string program;
  std::string exe;
  std::vector<std::string> env_s;
  std::vector<char*> envp;
  std::vector<std::string> argv_s;
  std::vector<char*> argv;
  std::string stdin_path;
  std::string stdout_path;
  std::string stderr_path;
  std::string cwd;
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  int exec_pipe[2] = {-1, -1};  // the fork path's child reports a failed step through it
  int report_pipe[2] = {-1, -1};  // coldgate-exec's report (own_peak_rss)

  explicit Launch(const SpawnOptions& o) : options(o) {}
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;
  ~Launch() {
    for (int* p : {out_pipe, err_pipe, exec_pipe, report_pipe}) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
  }
  [[noreturn]] void fail(const char* what) const {
    throw Error(ExitCode::infrastructure, program, fmt::format("{}: {}", what, std::strerror(errno)));
  }
};

namespace {

void prepare(Launch& l) {
  const SpawnOptions& o = l.options;
  l.program = o.argv.front();
  auto exe = find_program(l.program);
  if (!exe) {
    throw Error(ExitCode::infrastructure, l.program,
                l.program.find('/') == std::string::npos ? "command not found in PATH"
                                                         : "not found or not executable");
  }
  l.exe = exe->string();
  std::vector<std::string> add = o.env;
  // Every descendant inherits the tag, so a child started just before a SIGKILL of ours — its
  // record not yet written — or one that left its group is still found (kill_recorded_groups).
  if (std::string tag = detail::recorded_in_entry(); !tag.empty()) add.push_back(std::move(tag));
  l.env_s = build_env(add, o.env_unset);
  for (auto& e : l.env_s) l.envp.push_back(e.data());
  l.envp.push_back(nullptr);
  l.argv_s = o.argv;
  for (auto& a : l.argv_s) l.argv.push_back(a.data());
  l.argv.push_back(nullptr);
  l.stdin_path = o.stdin_path.empty() ? "/dev/null" : o.stdin_path.string();
  l.stdout_path = o.stdout_path.string();
  l.stderr_path = o.stderr_path.string();
  l.cwd = o.cwd.string();
  if (o.capture_stdout && ::pipe2(l.out_pipe, O_CLOEXEC) != 0) l.fail("pipe");
  if (o.capture_stderr && ::pipe2(l.err_pipe, O_CLOEXEC) != 0) l.fail("pipe");
  if (::pipe2(l.exec_pipe, O_CLOEXEC) != 0) l.fail("pipe");
}

// The forked child: each step as posix_spawn's file actions do it, then execve. A failing step
// reports its number and errno through exec_pipe and exits 127.
[[noreturn]] void exec_child(const Launch& l) {
  const SpawnOptions& o = l.options;
  auto die = [&](int step) {
    int payload[2] = {step, errno};
    [[maybe_unused]] ssize_t n = ::write(l.exec_pipe[1], payload, sizeof payload);
    ::_exit(127);
  };
  ::setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  int in = ::open(l.stdin_path.c_str(), O_RDONLY);
  if (in < 0 || ::dup2(in, 0) < 0) die(1);
  if (o.capture_stdout) {
    if (::dup2(l.out_pipe[1], 1) < 0) die(2);
  } else if (!l.stdout_path.empty()) {
    int fd = ::open(l.stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0 || ::dup2(fd, 1) < 0) die(2);
  }
  if (o.capture_stderr) {
    if (::dup2(l.err_pipe[1], 2) < 0) die(3);
  } else if (!l.stderr_path.empty()) {
    int fd = ::open(l.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0 || ::dup2(fd, 2) < 0) die(3);
  }
  if (o.gid) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(*o.gid) != 0) die(4);
  }
  if (o.uid && ::setuid(*o.uid) != 0) die(4);
  if (!l.cwd.empty() && ::chdir(l.cwd.c_str()) != 0) die(5);
  ::execve(l.exe.c_str(), l.argv.data(), l.envp.data());
  die(6);
  ::_exit(127);  // die() does not return; the compiler cannot see it through the lambda
}

}  // namespace

void Process::start(const SpawnOptions& options) {
  Launch launch(options);
  prepare(launch);
  // Fast path, as ninja's subprocess-posix: posix_spawn, which glibc runs with
  // CLONE_VM|CLONE_VFORK, so starting a child does not copy our page tables (it shows in the
  // wall time of short stages). It cannot switch users; when it fails, the fork path repeats
  // the same steps to name the one that failed.
  if (!options.uid && !options.gid) {
    // A measured child goes through coldgate-exec. One we start ourselves begins with our peak
    // RSS as its own: execve keeps the larger of the process's maxrss and the old address
    // space's high-water mark, and under vfork that address space is ours (under fork, a copy
    // of our current one). One forked by the small coldgate-exec begins from that one's.
    const std::string& helper = options.own_peak_rss ? exec_helper() : std::string();
    if (start_spawned(launch, helper)) return;
  }
  start_forked(launch);
}

bool Process::start_spawned(Launch& l, const std::string& helper) {
  const SpawnOptions& o = l.options;
  // With the helper: `coldgate-exec 3 EXE ARGV…`, its report pipe's write end as its fd 3. The
  // end is moved above the low descriptors first, so that no file action below overwrites it.
  std::vector<std::string> helper_s;
  std::vector<char*> helper_argv;
  if (!helper.empty()) {
    if (::pipe2(l.report_pipe, O_CLOEXEC) != 0) l.fail("pipe");
    int high = ::fcntl(l.report_pipe[1], F_DUPFD_CLOEXEC, 10);
    if (high < 0) l.fail("pipe");
    close_fd(l.report_pipe[1]);
    l.report_pipe[1] = high;
    helper_s = {helper, std::to_string(k_report_fd), l.exe};
    for (auto& a : helper_s) helper_argv.push_back(a.data());
    helper_argv.insert(helper_argv.end(), l.argv.begin(), l.argv.end());  // with its nullptr
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attr);
  ::posix_spawn_file_actions_addopen(&actions, 0, l.stdin_path.c_str(), O_RDONLY, 0);
  if (o.capture_stdout) {
    ::posix_spawn_file_actions_adddup2(&actions, l.out_pipe[1], 1);
  } else if (!l.stdout_path.empty()) {
    ::posix_spawn_file_actions_addopen(&actions, 1, l.stdout_path.c_str(),
                                       O_WRONLY | O_CREAT | O_APPEND, 0644);
  }
  if (o.capture_stderr) {
    ::posix_spawn_file_actions_adddup2(&actions, l.err_pipe[1], 2);
  } else if (!l.stderr_path.empty()) {
    ::posix_spawn_file_actions_addopen(&actions, 2, l.stderr_path.c_str(),
                                       O_WRONLY | O_CREAT | O_APPEND, 0644);
  }
  if (!helper.empty()) ::posix_spawn_file_actions_adddup2(&actions, l.report_pipe[1], k_report_fd);
  if (!l.cwd.empty()) ::posix_spawn_file_actions_addchdir_np(&actions, l.cwd.c_str());
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE}) sigaddset(&defaults, sig);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
  ::posix_spawnattr_setpgroup(&attr, 0);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &defaults);
  m_start = std::chrono::steady_clock::now();
  pid_t spawned = -1;
  int rc = helper.empty() ? ::posix_spawn(&spawned, l.exe.c_str(), &actions, &attr, l.argv.data(),
                                          l.envp.data())
                          : ::posix_spawn(&spawned, helper.c_str(), &actions, &attr,
                                          helper_argv.data(), l.envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  if (rc != 0) return false;
  ::setpgid(spawned, spawned);  // as in the fork path: no race with an early killpg
  m_pid = spawned;
  track(m_pid);
  if (!helper.empty()) await_helper_exec(l);
  adopt_pipes(l.out_pipe, l.err_pipe);
  return true;
}

void Process::await_helper_exec(Launch& l) {
  close_fd(l.report_pipe[1]);  // coldgate-exec's now
  m_report_fd = std::exchange(l.report_pipe[0], -1);
  // Its first line, "exec 0" or "exec <errno>", comes once its child has exec'd or failed to.
  std::array<char, 256> buf;
  while (m_report.find('\n') == std::string::npos) {
    ssize_t n = ::read(m_report_fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    m_report.append(buf.data(), static_cast<std::size_t>(n));
  }
  int err = -1;
  if (std::sscanf(m_report.c_str(), "exec %d", &err) == 1 && err == 0) {
    ::fcntl(m_report_fd, F_SETFL, ::fcntl(m_report_fd, F_GETFL) | O_NONBLOCK);
    return;
  }
  int status = 0;
  while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
  }
  untrack(m_pid);
  m_pid = -1;
  close_fd(m_report_fd);
  m_report.clear();
  if (err > 0) {
    throw Error(ExitCode::infrastructure, l.program,
                fmt::format("cannot start (exec): {}", std::strerror(err)));
  }
  throw Error(ExitCode::infrastructure, l.program,
              fmt::format("cannot start: coldgate-exec ended before it did ({}); reinstall coldgate",
                          ExitStatus{.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                                     .signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0}
                              .describe()));
}

void Process::take_report(ExitStatus& result) {
  if (m_report_fd < 0) return;
  // coldgate-exec has been reaped: all it wrote is in the pipe.
  std::array<char, 256> buf;
  for (;;) {
    ssize_t n = ::read(m_report_fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    m_report.append(buf.data(), static_cast<std::size_t>(n));
  }
  close_fd(m_report_fd);
  // Its own peak is ours from when it started: without its report (it was killed), none is known.
  result.peak_rss_bytes = 0;
  std::istringstream lines(std::exchange(m_report, std::string()));
  for (std::string line; std::getline(lines, line);) {
    int status = 0;
    long long maxrss_kib = 0;
    if (std::sscanf(line.c_str(), "exit %d %lld", &status, &maxrss_kib) != 2) continue;
    result.peak_rss_bytes = maxrss_kib * 1024;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
}

void Process::start_forked(Launch& l) {
  m_start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid < 0) l.fail("fork");
  if (pid == 0) exec_child(l);
  ::setpgid(pid, pid);  // also in the parent: no race with an early killpg
  m_pid = pid;
  track(m_pid);
  close_fd(l.exec_pipe[1]);
  int payload[2] = {0, 0};
  ssize_t n;
  do {
    n = ::read(l.exec_pipe[0], payload, sizeof payload);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof payload)) {  // exec succeeded: the pipe closed empty
    adopt_pipes(l.out_pipe, l.err_pipe);
    return;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  untrack(pid);
  m_pid = -1;
  static constexpr const char* k_steps[] = {"", "stdin", "stdout", "stderr", "switch user",
                                            "working folder", "exec"};
  std::string what = k_steps[payload[0] >= 1 && payload[0] <= 6 ? payload[0] : 6];
  if (payload[0] == 5) what += " " + l.cwd;
  throw Error(ExitCode::infrastructure, l.program,
              fmt::format("cannot start ({}): {}", what, std::strerror(payload[1])));
}

void Process::adopt_pipes(int out_pipe[2], int err_pipe[2]) {
  close_fd(out_pipe[1]);  // the child's ends: it has its own copies now
  close_fd(err_pipe[1]);
  m_out_fd = std::exchange(out_pipe[0], -1);  // ours now, not the launch's to close
  m_err_fd = std::exchange(err_pipe[0], -1);
  for (int fd : {m_out_fd, m_err_fd}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
}


}  // namespace coldgate::util
