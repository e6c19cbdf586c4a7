// POSIX process handling once a child runs (spawn.cpp starts it): pidfd + poll to wait without
// busy-looping, wait4 for rusage, group kills on timeout or interrupt, (kill_escaped) a
// child-subreaper window that catches what escapes the group, the children's records and the
// interrupt handlers.
#include "util/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <utility>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "util/error.hpp"
#include "util/process_detail.hpp"

namespace coldgate::util {

using detail::close_fd;
using detail::track;
using detail::untrack;

namespace {

std::atomic<int> g_interrupt_signal{0};
int g_interrupt_pipe[2] = {-1, -1};  // written by the handler so poll() wakes up

void on_interrupt(int sig) {
  int expected = 0;
  g_interrupt_signal.compare_exchange_strong(expected, sig);
  if (g_interrupt_pipe[1] >= 0) {
    char c = 1;
    [[maybe_unused]] ssize_t n = ::write(g_interrupt_pipe[1], &c, 1);
  }
}

// PIDs of the children that live Process objects own: kill_untracked_children() spares them.
std::mutex g_tracked_mutex;
std::set<pid_t> g_tracked;

std::filesystem::path g_record_dir;  // record_children_in(); guarded by g_tracked_mutex

// A child's record: one small write, no fsync (it matters only while the machine runs).
void write_record(const std::filesystem::path& dir, pid_t pid) {
  std::string path = (dir / std::to_string(pid)).string();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;  // best effort: without it only a SIGKILL's clean-up misses this child
  std::string text = fmt::format("start={}\n", process_start_time(pid));
  [[maybe_unused]] ssize_t n = ::write(fd, text.data(), text.size());
  ::close(fd);
}


// The fields of /proc/<pid>/stat that process handling reads (proc(5): 3 state, 4 ppid, 5 pgrp,
// 22 starttime in clock ticks since boot).
struct ProcStat {
  char state = 0;
  long ppid = 0;
  long pgrp = 0;
  long long start = -1;
  bool live() const { return state != 'Z' && state != 'X'; }
};

// /proc/<pid>/stat parsed, or false when the process is gone or the line is malformed.
bool read_proc_stat(const std::filesystem::path& dir, ProcStat& out) {
  std::ifstream in(dir / "stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos || close + 2 > stat.size()) return false;
  std::istringstream rest(stat.substr(close + 2));
  std::string state;
  if (!(rest >> state >> out.ppid >> out.pgrp) || state.empty()) return false;
  out.state = state[0];
  std::string field;
  for (int i = 6; i <= 22 && rest >> field; ++i) {
    if (i == 22) out.start = std::atoll(field.c_str());
  }
  return out.start >= 0;
}

// Calls fn(pid, /proc/<pid>) for every process /proc lists, until fn returns false.
template <typename Fn>
void for_each_pid(Fn&& fn) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!fn(static_cast<pid_t>(std::atol(name.c_str())), e.path())) return;
  }
}

// PIDs listed in a /proc/<pid>/task/<tid>/children file (Linux ≥ 3.5 with CONFIG_PROC_CHILDREN).
bool read_children_file(const std::filesystem::path& file, std::set<pid_t>& out) {
  std::ifstream in(file);
  if (!in) return false;
  long pid = 0;
  while (in >> pid) out.insert(static_cast<pid_t>(pid));
  return true;
}

// Our children no Process owns. From each thread's children file; without those, by scanning
// the parent PID (field 4) of every /proc/<pid>/stat.
std::vector<pid_t> untracked_children() {
  namespace fs = std::filesystem;
  std::set<pid_t> children;
  std::error_code ec;
  bool listed = false;
  for (const auto& task : fs::directory_iterator("/proc/self/task", ec)) {
    listed = read_children_file(task.path() / "children", children) || listed;
  }
  if (!listed) {
    const pid_t self = ::getpid();
    for_each_pid([&](pid_t pid, const fs::path& dir) {
      ProcStat st;
      if (read_proc_stat(dir, st) && st.ppid == self) children.insert(pid);
      return true;
    });
  }
  std::lock_guard lock(g_tracked_mutex);
  std::vector<pid_t> out;
  for (pid_t pid : children) {
    if (!g_tracked.count(pid)) out.push_back(pid);
  }
  return out;
}

double to_ms(const timeval& tv) { return tv.tv_sec * 1000.0 + tv.tv_usec / 1000.0; }

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// Reads what is available from `fd` into `sink` (up to `cap` bytes kept); closes it at EOF.
void drain(int& fd, std::string& sink, std::size_t cap) {
  std::array<char, 65536> buf;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n > 0) {
      std::size_t room = sink.size() < cap ? cap - sink.size() : 0;
      sink.append(buf.data(), std::min<std::size_t>(room, static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    close_fd(fd);  // EOF or error
    return;
  }
}

}  // namespace

namespace detail {

void track(pid_t pid) {
  std::lock_guard lock(g_tracked_mutex);
  g_tracked.insert(pid);
  if (!g_record_dir.empty()) write_record(g_record_dir, pid);
}

void untrack(pid_t pid) {
  std::lock_guard lock(g_tracked_mutex);
  g_tracked.erase(pid);
  if (!g_record_dir.empty()) ::unlink((g_record_dir / std::to_string(pid)).c_str());
}

std::string recorded_in_entry() {
  std::lock_guard lock(g_tracked_mutex);
  return g_record_dir.empty() ? "" : std::string(k_recorded_in_env) + "=" + g_record_dir.string();
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace detail

std::string ExitStatus::describe() const {
  if (timed_out) return fmt::format("timed out after {:.0f} ms", timeout_ms);
  if (signal != 0) return "killed by " + signal_name(signal);
  return fmt::format("exit status {}", exit_code);
}

Process::Process(Process&& other) noexcept { *this = std::move(other); }

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    reset();
    m_pid = std::exchange(other.m_pid, -1);
    m_out_fd = std::exchange(other.m_out_fd, -1);
    m_err_fd = std::exchange(other.m_err_fd, -1);
    m_report_fd = std::exchange(other.m_report_fd, -1);
    m_report = std::move(other.m_report);
    m_max_capture = other.m_max_capture;
    m_finish_when_interrupted = other.m_finish_when_interrupted;
    m_kill_escaped = std::exchange(other.m_kill_escaped, false);
    m_start = other.m_start;
    m_out = std::move(other.m_out);
    m_err = std::move(other.m_err);
  }
  return *this;
}

Process::~Process() { reset(); }

void Process::reset() {
  if (m_pid > 0) {
    ::kill(-m_pid, SIGKILL);
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    untrack(m_pid);
    m_pid = -1;
  }
  sweep_escaped();
  close_fd(m_out_fd);
  close_fd(m_err_fd);
  close_fd(m_report_fd);
}

void Process::sweep_escaped() {
  if (!m_kill_escaped) return;
  m_kill_escaped = false;
  kill_untracked_children();
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  kill_untracked_children();  // re-parented between the sweep and the prctl
}

int kill_untracked_children() {
  int killed = 0;
  // Each round kills the current orphans; their own children are re-parented to us by the time
  // waitpid returns (exit re-parents before the zombie is reapable), so the next round sees them.
  for (int round = 0; round < 10000; ++round) {
    std::vector<pid_t> orphans = untracked_children();
    if (orphans.empty()) break;
    for (pid_t pid : orphans) ::kill(pid, SIGKILL);
    for (pid_t pid : orphans) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    killed += static_cast<int>(orphans.size());
  }
  return killed;
}

bool Process::wait_exited(std::chrono::milliseconds timeout) const {
  if (m_pid <= 0) return true;
  auto until = std::chrono::steady_clock::now() + timeout;
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, m_pid, 0));
  bool exited = false;
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      exited = true;  // ECHILD: reaped already
      break;
    }
    if (info.si_pid == m_pid) {
      exited = true;
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    until - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) break;
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
    } else {
      ::usleep(1000);
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return exited;
}

void Process::signal_group(int sig) const {
  if (m_pid > 0) ::kill(-m_pid, sig);
}

ExitStatus Process::wait(std::optional<std::chrono::milliseconds> timeout,
                         std::chrono::milliseconds grace) {
  using clock = std::chrono::steady_clock;
  ExitStatus result;
  if (m_pid <= 0) throw Error(ExitCode::infrastructure, "wait", "process already reaped");
  // glibc 2.36 declares pidfd_open without extern "C"; the raw syscall avoids that header.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, m_pid, 0));
  std::optional<clock::time_point> kill_at;  // when SIGKILL follows a SIGTERM
  std::optional<int> interrupt;
  auto deadline = timeout ? std::optional(m_start + *timeout) : std::nullopt;

  for (;;) {
    std::array<pollfd, 4> fds{};
    nfds_t count = 0;
    fds[count++] = {pidfd, POLLIN, 0};
    if (m_out_fd >= 0) fds[count++] = {m_out_fd, POLLIN, 0};
    if (m_err_fd >= 0) fds[count++] = {m_err_fd, POLLIN, 0};
    if (g_interrupt_pipe[0] >= 0 && !m_finish_when_interrupted) {
      fds[count++] = {g_interrupt_pipe[0], POLLIN, 0};
    }

    int wait_ms = pidfd >= 0 ? -1 : 1;  // without pidfd (old kernel) poll the child every 1 ms
    auto now = clock::now();
    for (auto t : {deadline, kill_at}) {
      if (!t) continue;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*t - now).count();
      left = std::max<long long>(left, 0);
      wait_ms = wait_ms < 0 ? static_cast<int>(left) : std::min(wait_ms, static_cast<int>(left));
    }
    int ready = ::poll(fds.data(), count, wait_ms);
    if (ready < 0 && errno != EINTR) break;

    if (m_out_fd >= 0) drain(m_out_fd, m_out, m_max_capture);
    if (m_err_fd >= 0) drain(m_err_fd, m_err, m_max_capture);

    if (!interrupt && !m_finish_when_interrupted && interrupted() != 0) {
      interrupt = interrupted();
      signal_group(SIGTERM);
      kill_at = clock::now() + grace;
    }
    now = clock::now();
    if (deadline && now >= *deadline && !result.timed_out) {
      result.timed_out = true;
      result.timeout_ms = static_cast<double>(timeout->count());
      signal_group(SIGTERM);
      kill_at = now + grace;
      deadline.reset();
    }
    if (kill_at && now >= *kill_at) {
      signal_group(SIGKILL);
      kill_at.reset();
    }

    int status = 0;
    rusage ru{};
    pid_t r = ::wait4(m_pid, &status, WNOHANG, &ru);
    if (r == m_pid) {
      result.wall_ms =
          std::chrono::duration<double, std::milli>(clock::now() - m_start).count();
      result.user_ms = to_ms(ru.ru_utime);
      result.sys_ms = to_ms(ru.ru_stime);
      result.peak_rss_bytes = static_cast<std::int64_t>(ru.ru_maxrss) * 1024;
      if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
      take_report(result);  // a child started through coldgate-exec: its own status and peak
      // Anything the child left in its group (a daemon that ignored SIGTERM, say) goes too.
      ::kill(-m_pid, SIGKILL);
      untrack(m_pid);
      m_pid = -1;
      break;
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  sweep_escaped();  // before reading on: an escaped daemon may hold our pipes open

  // Collect the rest of the output; a process outside the group may still hold a pipe open,
  // so this is bounded.
  auto stop_reading = clock::now() + std::chrono::milliseconds(500);
  while ((m_out_fd >= 0 || m_err_fd >= 0) && clock::now() < stop_reading) {
    std::array<pollfd, 2> fds{};
    nfds_t count = 0;
    if (m_out_fd >= 0) fds[count++] = {m_out_fd, POLLIN, 0};
    if (m_err_fd >= 0) fds[count++] = {m_err_fd, POLLIN, 0};
    ::poll(fds.data(), count, 50);
    if (m_out_fd >= 0) drain(m_out_fd, m_out, m_max_capture);
    if (m_err_fd >= 0) drain(m_err_fd, m_err, m_max_capture);
  }
  close_fd(m_out_fd);
  close_fd(m_err_fd);
  if (interrupt) {
    throw Error(ExitCode::interrupted, "", fmt::format("interrupted by {}", signal_name(*interrupt)));
  }
  return result;
}

RunOutput run(const SpawnOptions& options, std::optional<std::chrono::milliseconds> timeout) {
  Process p(options);
  RunOutput r;
  r.status = p.wait(timeout);
  r.out = p.out();
  r.err = p.err();
  return r;
}

std::string tail_lines(const std::string& text, std::size_t max_lines) {
  std::string_view v(text);
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.remove_suffix(1);
  std::size_t pos = v.size();
  for (std::size_t lines = 0; lines < max_lines && pos > 0; ++lines) {
    auto nl = v.rfind('\n', pos - 1);
    if (nl == std::string_view::npos) {
      pos = 0;
      break;
    }
    pos = nl;
    if (lines + 1 == max_lines) {
      ++pos;
      break;
    }
  }
  return std::string(v.substr(pos == 0 ? 0 : pos));
}

long long process_start_time(pid_t pid) {
  ProcStat st;
  if (!read_proc_stat(fmt::format("/proc/{}", pid), st) || !st.live()) return -1;
  return st.start;
}

std::filesystem::path record_children_in(const std::filesystem::path& dir) {
  std::lock_guard lock(g_tracked_mutex);
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
  }
  return std::exchange(g_record_dir, dir);
}

namespace {

// Live (not zombie) members of process group `pgid`, from /proc/<pid>/stat (field 5).
bool group_has_live_members(pid_t pgid) {
  bool found = false;
  for_each_pid([&](pid_t, const std::filesystem::path& dir) {
    ProcStat st;
    found = read_proc_stat(dir, st) && st.pgrp == pgid && st.live();
    return !found;
  });
  return found;
}

// Live (not zombie) processes other than us whose environment holds `entry` ("K=V") exactly.
// An unreadable environment (another user's process when we are not root) does not match.
std::vector<pid_t> processes_with_env(const std::string& entry) {
  std::vector<pid_t> found;
  const pid_t self = ::getpid();
  for_each_pid([&](pid_t pid, const std::filesystem::path& dir) {
    if (pid == self) return true;
    std::ifstream in(dir / "environ", std::ios::binary);
    for (std::string var; std::getline(in, var, '\0');) {
      if (var != entry) continue;
      ProcStat st;
      if (read_proc_stat(dir, st) && st.live()) found.push_back(pid);
      break;
    }
    return true;
  });
  return found;
}

}  // namespace

int kill_recorded_groups(const std::filesystem::path& dir) noexcept {
  int killed = 0;
  try {
    std::error_code ec;
    std::vector<pid_t> groups;
    std::vector<std::filesystem::path> records;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      records.push_back(e.path());
      const std::string name = e.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      pid_t pid = static_cast<pid_t>(std::atol(name.c_str()));
      std::ifstream in(e.path());
      std::string line;
      std::getline(in, line);
      if (pid <= 0 || line.rfind("start=", 0) != 0) continue;
      long long start = std::atoll(line.c_str() + 6);
      long long now = process_start_time(pid);
      // Its leader, or (the leader gone: no process has that PID) what is left of its group.
      bool ours = now == start || (now < 0 && group_has_live_members(pid));
      if (ours && start >= 0 && ::kill(-pid, SIGKILL) == 0) groups.push_back(pid);
    }
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (pid_t g : groups) {
      while (group_has_live_members(g) && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    killed = static_cast<int>(groups.size());
    // What the records miss: a child started in the moment before our SIGKILL, its record not
    // yet written, and whatever left its group (setsid). Each round kills what it finds; a
    // killed process forks no more, so a round that finds none ends it.
    const std::string tag = std::string(k_recorded_in_env) + "=" + dir.string();
    std::set<pid_t> untracked;
    const auto round_until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (std::vector<pid_t> left = processes_with_env(tag);
         !left.empty() && std::chrono::steady_clock::now() < round_until;
         left = processes_with_env(tag)) {
      for (pid_t p : left) {
        if (::kill(p, SIGKILL) == 0) untracked.insert(p);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    killed += static_cast<int>(untracked.size());
    for (const auto& r : records) std::filesystem::remove(r, ec);
  } catch (const std::exception&) {
    // Best effort: the caller's own clean-up goes on.
  }
  return killed;
}

void install_interrupt_handlers() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  if (::pipe2(g_interrupt_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_interrupt_pipe[0] = g_interrupt_pipe[1] = -1;
  }
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

int interrupted() { return g_interrupt_signal.load(); }

int interrupt_fd() { return g_interrupt_pipe[0]; }

void throw_if_interrupted() {
  if (int sig = interrupted()) {
    throw Error(ExitCode::interrupted, "", fmt::format("interrupted by {}", signal_name(sig)));
  }
}

}  // namespace coldgate::util
