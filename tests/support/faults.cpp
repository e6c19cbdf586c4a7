#include "support/faults.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "results/json.hpp"

namespace coldgate::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string read_all(const fs::path& p) {
  std::string out;
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

fs::path proc(pid_t pid, const char* what) { return fs::path("/proc") / std::to_string(pid) / what; }

std::vector<std::string> argv_of(pid_t pid) {
  std::string raw = read_all(proc(pid, "cmdline"));
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < raw.size()) {
    auto end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    out.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string joined(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

std::vector<pid_t> all_pids() {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string name = e.path().filename().string();
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
      out.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return out;
}

// The kernel may lack the children files: the parent comes from stat.
pid_t parent_of(pid_t pid) {
  std::string stat = read_all(proc(pid, "stat"));
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  char state = 0;
  long ppid = 0;
  return rest >> state >> ppid ? static_cast<pid_t>(ppid) : 0;
}

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  for (pid_t p : all_pids()) {
    if (parent_of(p) == pid) out.push_back(p);
  }
  return out;
}

bool under(const fs::path& p, const fs::path& dir) {
  std::string s = p.string(), d = dir.string();
  return s == d || s.rfind(d + "/", 0) == 0;
}

std::vector<std::string> processes_under(const fs::path& dir) {
  std::vector<std::string> out;
  for (pid_t pid : all_pids()) {
    if (pid == ::getpid()) continue;
    std::string status = read_all(proc(pid, "stat"));
    auto close = status.rfind(')');
    if (close == std::string::npos || close + 2 >= status.size() || status[close + 2] == 'Z') continue;
    std::error_code ec;
    fs::path cwd = fs::read_symlink(proc(pid, "cwd"), ec);
    std::string cmd = joined(argv_of(pid));
    if ((!ec && under(cwd, dir)) || cmd.find(dir.string() + "/") != std::string::npos) {
      out.push_back(std::to_string(pid) + " (" + cmd + ")");
    }
  }
  return out;
}

std::string list(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += "\n  " + i;
  return s.empty() ? " none" : s;
}

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
}

pid_t server_of(pid_t coldgate) {
  for (pid_t c : children_of(coldgate)) {
    auto argv = argv_of(c);
    if (!argv.empty() && fs::path(argv[0]).filename() == "postgres") return c;
  }
  return 0;
}

bool has_probe_child(pid_t coldgate) {
  for (pid_t c : children_of(coldgate)) {
    auto argv = argv_of(c);
    if (argv.size() > 1 && argv[1] == "probe") return true;
    // Started through coldgate-exec (util::SpawnOptions::own_peak_rss): the probe is its child.
    if (!argv.empty() && fs::path(argv[0]).filename() == "coldgate-exec" && has_probe_child(c)) {
      return true;
    }
  }
  return false;
}

bool backend_runs(pid_t postmaster, const std::string& command) {
  if (postmaster <= 0) return false;
  for (pid_t c : children_of(postmaster)) {
    // A TCP client's backend reads "… 127.0.0.1(41234) SELECT", one on the Unix socket (coldgate's
    // own connections to its local cluster) "… [local] SELECT".
    const std::string title = joined(argv_of(c));
    if (title.find(") " + command) != std::string::npos || title.find("[local] " + command) != std::string::npos)
      return true;
  }
  return false;
}

bool children_recorded(pid_t coldgate, const fs::path& tmp) {
  std::set<std::string> recorded;
  std::error_code ec;
  for (const auto& work : fs::directory_iterator(tmp, ec)) {
    std::error_code ec2;
    for (const auto& e : fs::directory_iterator(work.path() / "children", ec2)) {
      const std::string text = read_all(e.path());  // "start=<ticks>\n" once written whole
      if (text.rfind("start=", 0) == 0 && text.ends_with("\n")) {
        recorded.insert(e.path().filename().string());
      }
    }
  }
  for (pid_t c : children_of(coldgate)) {
    const std::string stat = read_all(proc(c, "stat"));
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z') continue;
    if (!recorded.count(std::to_string(c))) return false;
  }
  return true;
}

const char* sig_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGKILL ? "SIGKILL" : "?";
}

std::string stop_server_immediately(pid_t postmaster) {
  auto argv = argv_of(postmaster);
  auto d = std::find(argv.begin(), argv.end(), "-D");
  if (d == argv.end() || d + 1 == argv.end()) {
    return "no -D in the command line of " + std::to_string(postmaster) + ": " + joined(argv);
  }
  fs::path data_dir = *(d + 1);
  std::error_code ec;
  fs::path pg_ctl = fs::read_symlink(proc(postmaster, "exe"), ec).parent_path() / "pg_ctl";
  struct stat st {};
  if (ec || ::stat(data_dir.c_str(), &st) != 0) return "cannot read " + data_dir.string();
  std::vector<std::string> stop{pg_ctl.string(), "stop", "-m", "immediate", "-D", data_dir.string()};
  if (st.st_uid != ::getuid()) {
    passwd* pw = ::getpwuid(st.st_uid);
    if (pw == nullptr) return "no account of uid " + std::to_string(st.st_uid);
    stop.insert(stop.begin(), {"runuser", "-u", pw->pw_name, "--"});
  }
  auto stopped = util::run({.argv = stop}, 60s);
  if (!wait_for([&] { return !fs::exists(proc(postmaster, "exe")); }, 60s)) {
    return "the postmaster " + std::to_string(postmaster) + " still runs: " +
           stopped.status.describe() + " " + stopped.err;
  }
  return "";
}

void expect_nothing_left(const fs::path& project, const fs::path& tmp, const std::string& why) {
  SCOPED_TRACE(why);
  EXPECT_EQ(list(processes_under(project)), " none") << "processes left";
  EXPECT_EQ(list(entries_of(tmp)), " none") << "temp folders left";
}

void expect_whole_files(const fs::path& dir, bool tmp_allowed) {
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    std::string name = e.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) {
      EXPECT_TRUE(tmp_allowed) << "temp file left: " << e.path();
      continue;
    }
    std::string text = read_all(e.path());
    if (name == "results.json") {
      EXPECT_NO_THROW(results::from_json(text, e.path().string())) << e.path();
    } else if (e.path().extension() == ".json") {
      EXPECT_TRUE(nlohmann::json::accept(text)) << "not whole JSON: " << e.path();
    }
  }
}

bool Running::said(const std::string& text) const {
  return read_all(err).find(text) != std::string::npos;
}

int Running::finish(std::string* err_text, std::chrono::milliseconds limit) {
  util::ExitStatus s = process->wait(limit);
  if (err_text) *err_text = read_all(err);
  return s.timed_out ? -1 : s.signal ? 128 + s.signal : s.exit_code;
}

std::string option_of(pid_t pid, const std::string& flag) {
  auto argv = argv_of(pid);
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it != argv.end() && it + 1 != argv.end() ? *(it + 1) : "";
}

pid_t dead_pid() {
  util::Process p({.argv = {"true"}});
  pid_t pid = p.pid();
  p.wait();
  return pid;
}

fs::path plant_owned_dir(const fs::path& parent, const std::string& name, pid_t pid,
                         long long start, const std::string& ns) {
  fs::path dir = parent / name;
  fs::create_directories(dir);
  std::ofstream(dir / "owner") << "owner_pid=" << pid << "\nowner_start=" << start
                               << "\npid_ns=" << ns << "\n";
  return dir;
}

Running start_coldgate(const fs::path& cwd, const fs::path& tmp, const std::vector<std::string>& args,
                       const std::vector<std::string>& env) {
  static int count = 0;
  ++count;
  std::vector<std::string> argv{COLDGATE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  Running r;
  r.out = cwd / ("stdout-" + std::to_string(count) + ".txt");
  r.err = cwd / ("stderr-" + std::to_string(count) + ".txt");
  util::SpawnOptions o{.argv = argv,
                       .cwd = cwd,
                       .env = {"TMPDIR=" + tmp.string(), "CI=", "GITHUB_ACTIONS="},
                       .capture_stdout = false,
                       .capture_stderr = false,
                       .stdout_path = r.out,
                       .stderr_path = r.err};
  o.env.insert(o.env.end(), env.begin(), env.end());
  r.process = std::make_unique<util::Process>(o);
  return r;
}

std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().string());
  return out;
}

Delivered deliver_at(Running& r, const std::function<bool()>& reached, int sig,
                     const std::string& what, bool may_end) {
  Delivered d;
  const bool either = wait_for([&] { return reached() || r.process->wait_exited(0ms); }, 120s);
  if (!either) {
    r.process->signal_group(SIGKILL);
    d.code = r.finish(&d.err);
    ADD_FAILURE() << what << ": neither reached the state nor ended within 120 s; stderr:\n"
                  << d.err;
    return d;
  }
  d.ended_before = r.process->wait_exited(0ms);
  if (d.ended_before) {
    d.code = r.finish(&d.err);
    if (!may_end) {
      ADD_FAILURE() << what << ": coldgate ended before the state; exit " << d.code
                    << ", stderr:\n" << d.err;
    }
  } else {
    d.reached = true;
    ::kill(r.process->pid(), sig);  // not reaped yet (wait_exited does not reap): still its PID
    d.code = r.finish(&d.err);
  }
  std::cout << "[ fault    ] " << what << ": "
            << (d.ended_before ? "coldgate had ended before the signal" : "delivered") << ", exit "
            << d.code << std::endl;
  return d;
}

FaultFolder::FaultFolder() {
  make_server_tmpdir(dir, tmp);
  // Built under its lock by whichever test needs it first (db::materialize_cluster).
  fs::path templates = fs::path(COLDGATE_BINARY).parent_path() / "fault-test-templates";
  fs::create_directories(templates);
  fs::create_directories(cache / "coldgate");
  fs::create_directory_symlink(templates, cache / "coldgate" / "templates");
}

Running FaultFolder::start(const std::vector<std::string>& args,
                           const std::vector<std::string>& env) const {
  std::vector<std::string> all{"XDG_CACHE_HOME=" + cache.string()};
  all.insert(all.end(), env.begin(), env.end());
  return start_coldgate(dir.path(), tmp, args, all);
}

bool FaultFolder::starting_server(const Running& r) const {
  for (const auto& e : entries_of(tmp)) {
    if (e.find("/coldgate-pg-") == std::string::npos) continue;
    const fs::path marker = cache / "coldgate" / "runs" / (fs::path(e).filename().string() + ".run");
    return fs::exists(marker) && !r.said(") ready in ") && children_recorded(r.process->pid(), tmp);
  }
  return false;
}

bool FaultFolder::postmaster_starting(const Running& r) const {
  if (r.said(") ready in ")) return false;
  const pid_t coldgate = r.process->pid();
  for (pid_t c : children_of(coldgate)) {
    const auto argv = argv_of(c);
    if (argv.empty() || fs::path(argv[0]).filename() != "postgres") continue;
    if (std::find(argv.begin(), argv.end(), "--single") != argv.end()) continue;
    const fs::path data = option_of(c, "-D");
    if (data.empty() || !under(data, tmp)) continue;
    const fs::path marker =
        cache / "coldgate" / "runs" / (data.parent_path().filename().string() + ".run");
    return read_all(marker).find("\npostmaster_pid=" + std::to_string(c) + "\n") != std::string::npos &&
           children_recorded(coldgate, tmp);
  }
  return false;
}

void FaultFolder::expect_nothing_left(const std::string& why) const {
  testing::expect_nothing_left(dir.path(), tmp, why);
  SCOPED_TRACE(why + " (the cache)");
  expect_whole_files(cache);
}

SmallTmpfs::SmallTmpfs(const std::filesystem::path& where, const std::string& size,
                       const std::string& mode)
    : m_where(where) {
  std::filesystem::create_directories(where);
  const std::string options = "size=" + size + ",mode=" + mode;
  if (::mount("tmpfs", where.c_str(), "tmpfs", 0, options.c_str()) == 0) {
    m_mounted = true;
  } else {
    m_error = std::strerror(errno);
  }
}

SmallTmpfs::~SmallTmpfs() {
  if (m_mounted) ::umount2(m_where.c_str(), MNT_DETACH);
}

}  // namespace coldgate::testing
