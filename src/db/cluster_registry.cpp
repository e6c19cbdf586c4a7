// Markers of running throwaway clusters and the clean-up of those whose owner was SIGKILLed.
#include "db/cluster_registry.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "db/template_cache.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::db {

namespace fs = std::filesystem;

namespace {

// The whole of a /proc file, or what could be read of it: a process that exits between open and
// read makes read() fail with ESRCH, which an istreambuf_iterator over an ifstream turns into a
// thrown std::ios_base::failure (libstdc++'s basic_filebuf::underflow), and a clean-up that
// scans every process must not stop at one that just ended.
std::string read_proc_file(const fs::path& path) {
  std::string out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // end of file, or the process is gone
    }
  }
  ::close(fd);
  return out;
}

std::map<std::string, std::string> read_kv(const fs::path& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

pid_t to_pid(const std::string& s) {
  return static_cast<pid_t>(std::atol(s.c_str()));
}

// The PID on the first line of <data>/postmaster.pid, or 0.
pid_t pid_file_postmaster(const fs::path& data_dir) {
  std::ifstream in(data_dir / "postmaster.pid");
  long pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

bool alive(pid_t pid) {
  return pid > 0 && process_start_time(pid) >= 0;
}

// SIGQUIT (immediate shutdown), then SIGKILL; we are not its parent, so poll /proc.
void stop_orphan(pid_t pid) {
  ::kill(pid, SIGQUIT);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (alive(pid) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (alive(pid)) ::kill(pid, SIGKILL);
  until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (alive(pid) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

fs::path default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/')
    return fs::path(x) / "coldgate";
  if (const char* h = std::getenv("HOME"); h && *h == '/')
    return fs::path(h) / ".cache" / "coldgate";
  return fmt::format("/tmp/coldgate-cache-{}", ::getuid());
}

bool is_postmaster_of(pid_t pid, const fs::path& data_dir) {
  const std::string raw = read_proc_file(fmt::format("/proc/{}/cmdline", pid));
  std::vector<std::string> argv;
  std::size_t start = 0;
  while (start < raw.size()) {
    auto end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    argv.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  if (argv.empty() || fs::path(argv[0]).filename() != "postgres") return false;
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "-D" && fs::path(argv[i + 1]) == data_dir) return true;
  }
  return false;
}

RunMarker::RunMarker(const fs::path& cache_dir, const fs::path& run_dir, const fs::path& data_dir)
    : m_path(cache_dir / "runs" / (run_dir.filename().string() + ".run")),
      m_run_dir(run_dir),
      m_data_dir(data_dir) {
  write();
}

RunMarker::~RunMarker() {
  std::error_code ec;
  fs::remove(m_path, ec);
}

void RunMarker::set_postmaster(pid_t pid) {
  m_postmaster = pid;
  m_segments.clear();
  write();
}

void RunMarker::set_segments(const std::vector<std::string>& names) {
  m_segments = names;
  write();
}

void RunMarker::write() const {
  pid_t self = ::getpid();
  std::string segments;
  for (const auto& name : m_segments) segments += (segments.empty() ? "" : " ") + name;
  util::write_file_atomic(m_path,
                          fmt::format("owner_pid={}\nowner_start={}\npid_ns={}\npostmaster_pid={}\n"
                                      "run_dir={}\ndata_dir={}\nshm_segments={}\n",
                                      self, process_start_time(self), pid_namespace(), m_postmaster,
                                      m_run_dir.string(), m_data_dir.string(), segments));
}

namespace {

constexpr std::string_view k_shm_dir = "/dev/shm/";
constexpr std::string_view k_segment_prefix = "PostgreSQL.";

// The segment names on the lines of a /proc/<pid>/maps text: a path field that is exactly
// /dev/shm/PostgreSQL.<digits> (not "(deleted)": unlinked already).
void segments_in_maps(const std::string& maps, std::set<std::string>& out) {
  const std::string needle = std::string(k_shm_dir) + std::string(k_segment_prefix);
  std::size_t at = 0;
  while ((at = maps.find(needle, at)) != std::string::npos) {
    std::size_t eol = maps.find('\n', at);
    if (eol == std::string::npos) eol = maps.size();
    // The path field starts after the fifth field's blanks.
    if (at > 0 && maps[at - 1] == ' ') {
      std::string name = maps.substr(at + k_shm_dir.size(), eol - at - k_shm_dir.size());
      if (is_shared_memory_segment_name(name)) out.insert(name);
    }
    at = eol;
  }
}

// Every process's /proc/<pid> folder, as a PID and its path.
std::vector<std::pair<pid_t, fs::path>> proc_entries() {
  std::vector<std::pair<pid_t, fs::path>> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    out.emplace_back(static_cast<pid_t>(std::atol(pid.c_str())), e.path());
  }
  return out;
}

// The live processes that map one of `wanted`, each with the names it maps, from every
// /proc/<pid>/maps we can read.
std::map<pid_t, std::set<std::string>> segment_mappers(const std::set<std::string>& wanted) {
  std::map<pid_t, std::set<std::string>> mappers;
  std::set<std::string> found;
  for (const auto& [pid, path] : proc_entries()) {
    found.clear();
    segments_in_maps(read_proc_file(path / "maps"), found);
    for (const auto& name : found) {
      if (wanted.count(name)) mappers[pid].insert(name);
    }
  }
  return mappers;
}

// PG_DYNSHMEM_CONTROL_MAGIC (src/backend/storage/ipc/dsm.c).
constexpr std::uint32_t k_dsm_control_magic = 0x9a503d32;

// The segments in use (refcnt > 0) that the dynamic shared memory control segment
// `/dev/shm/<name>` lists, when it is one: every segment its server's processes made with
// dsm_create, also those that no process maps at the moment (a dsa area's segments are pinned:
// the statistics' outlive the backend that made them), which a reading of /proc/*/maps misses.
// PostgreSQL reads the same list to remove a crashed server's segments
// (dsm_cleanup_using_control_segment). Its layout: uint32 magic, nitems, maxitems, then
// maxitems items (aligned to 8 since 10: 24 bytes, 40 since 14; 8 bytes from offset 12 before)
// that start with uint32 handle and refcnt; the item size follows from the file's size, which
// is exactly what the postmaster asked for. Empty for any other file.
std::vector<std::string> segments_listed_in(const std::string& name) {
  std::vector<std::string> out;
  if (!is_shared_memory_segment_name(name)) return out;
  const int fd = ::open((std::string(k_shm_dir) + name).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return out;
  std::string data;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 16 &&
      st.st_size <= (64 << 20)) {
    data.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::pread(fd, data.data() + done, data.size() - done,
                                static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    data.resize(done);
  }
  ::close(fd);
  auto u32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    std::memcpy(&v, data.data() + at, sizeof v);
    return v;
  };
  if (data.size() < 16 || u32(0) != k_dsm_control_magic) return out;
  const std::uint32_t nitems = u32(4), maxitems = u32(8);
  if (maxitems == 0 || nitems > maxitems) return out;
  for (const std::size_t header : {std::size_t{16}, std::size_t{12}}) {
    const std::size_t body = data.size() - header;
    if (body % maxitems != 0 || body / maxitems < 8) continue;
    const std::size_t stride = body / maxitems;
    for (std::size_t i = 0; i < nitems; ++i) {
      const std::uint32_t handle = u32(header + i * stride), refcnt = u32(header + i * stride + 4);
      if (handle != 0 && refcnt != 0) out.push_back(fmt::format("{}{}", k_segment_prefix, handle));
    }
    break;
  }
  return out;
}

// A server process by its command line: PostgreSQL sets a backend's to "postgres: <cluster
// name>: …", the postmaster's starts with its path (…/bin/postgres).
bool is_postgres_process(pid_t pid) {
  std::string cmd = read_proc_file(fmt::format("/proc/{}/cmdline", pid));
  cmd = cmd.substr(0, cmd.find('\0'));
  const std::string_view first(cmd);
  return first.rfind("postgres", 0) == 0 || first.ends_with("/postgres");
}

}  // namespace

bool is_shared_memory_segment_name(const std::string& name) {
  if (name.size() <= k_segment_prefix.size() || name.rfind(k_segment_prefix, 0) != 0) return false;
  const std::string digits = name.substr(k_segment_prefix.size());
  return digits.size() <= 10 && digits.find_first_not_of("0123456789") == std::string::npos;
}

std::vector<std::string> shared_memory_segments_of(pid_t pid) {
  try {
    std::set<std::string> found;
    if (pid > 0) segments_in_maps(read_proc_file(fmt::format("/proc/{}/maps", pid)), found);
    return {found.begin(), found.end()};
  } catch (const std::exception&) {
    return {};
  }
}

std::vector<std::string> shared_memory_segments_of_cluster(const fs::path& data_dir) {
  std::set<std::string> found;
  try {
    std::error_code ec;
    const fs::path dir = fs::weakly_canonical(data_dir, ec);
    if (ec || dir.empty()) return {};
    for (const auto& [pid, path] : proc_entries()) {
      std::error_code cwd_ec;
      if (fs::read_symlink(path / "cwd", cwd_ec) != dir || cwd_ec) continue;
      segments_in_maps(read_proc_file(path / "maps"), found);
    }
  } catch (const std::exception&) {
    // What was found so far.
  }
  return {found.begin(), found.end()};
}

bool processes_in_cluster(const fs::path& data_dir) {
  try {
    std::error_code ec;
    const fs::path dir = fs::weakly_canonical(data_dir, ec);
    if (ec || dir.empty()) return true;
    for (const auto& [pid, path] : proc_entries()) {
      std::error_code cwd_ec;
      if (fs::read_symlink(path / "cwd", cwd_ec) == dir && !cwd_ec) return true;
    }
    return false;
  } catch (const std::exception&) {
    return true;  // not known: as if one were there
  }
}

int remove_orphaned_segments(const std::vector<std::string>& names, std::chrono::milliseconds limit,
                             std::vector<std::string>* kept) {
  int removed = 0;
  try {
    // Those still there: a server that ended cleanly removed its own, and then /proc is not read.
    std::set<std::string> left;
    for (const auto& name : names) {
      struct stat st {};
      if (is_shared_memory_segment_name(name) &&
          ::lstat((std::string(k_shm_dir) + name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        left.insert(name);
      }
    }
    if (left.empty()) return 0;
    // A control segment among them names the others its server made after it was recorded
    // (parallel queries', the statistics'): a server killed by SIGKILL leaves them all.
    for (const auto& control : std::vector<std::string>(left.begin(), left.end())) {
      for (const auto& name : segments_listed_in(control)) {
        struct stat st {};
        if (::lstat((std::string(k_shm_dir) + name).c_str(), &st) == 0 && S_ISREG(st.st_mode))
          left.insert(name);
      }
    }
    // The killed server's own processes may still map them: backends notice the postmaster's
    // death only at their next wait, later the busier the machine is. They are ended rather than
    // waited for, so that no fixed wait decides whether the segments go; a process that is not
    // a server's keeps what it maps.
    auto until = std::chrono::steady_clock::now() + limit;
    std::set<pid_t> killed;
    for (auto mappers = segment_mappers(left); !mappers.empty(); mappers = segment_mappers(left)) {
      bool waiting = false;
      for (const auto& [pid, mapped] : mappers) {
        if (!is_postgres_process(pid)) continue;
        if (killed.insert(pid).second) ::kill(pid, SIGKILL);
        waiting = true;
      }
      if (!waiting || std::chrono::steady_clock::now() >= until) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::map<std::string, std::string> mapped;  // name -> " <pid> (<command line>)" of each mapper
    for (const auto& [pid, in_use] : segment_mappers(left)) {
      std::string cmd = read_proc_file(fmt::format("/proc/{}/cmdline", pid));
      std::replace(cmd.begin(), cmd.end(), '\0', ' ');
      while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
      for (const auto& name : in_use) mapped[name] += fmt::format(" {} ({})", pid, cmd);
    }
    for (const auto& name : left) {
      const std::string path = std::string(k_shm_dir) + name;
      if (auto by = mapped.find(name); by != mapped.end()) {
        if (kept) kept->push_back(path + " (mapped by" + by->second + ")");
      } else if (::unlink(path.c_str()) == 0) {
        ++removed;
      } else if (kept) {
        kept->push_back(fmt::format("{} (unlink: {})", path, std::strerror(errno)));
      }
    }
  } catch (const std::exception&) {
    // Best effort: what is left now stays (a test run's leftovers show in /dev/shm).
  }
  return removed;
}

std::string pid_namespace() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/ns/pid", ec).string();
}

namespace {

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

}  // namespace

std::string owner_tag() {
  pid_t self = ::getpid();
  return fmt::format("boot={} pid_ns={} pid={} start={}", boot_id(), pid_namespace(), self,
                     process_start_time(self));
}

bool owner_tag_gone(const std::string& tag) {
  std::map<std::string, std::string> kv;
  std::istringstream in(tag);
  std::string word;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq != std::string::npos) kv[word.substr(0, eq)] = word.substr(eq + 1);
  }
  const std::string boot = boot_id(), ns = pid_namespace();
  pid_t pid = to_pid(kv["pid"]);
  if (boot.empty() || ns.empty() || kv["boot"] != boot || kv["pid_ns"] != ns || pid <= 0 ||
      kv["start"].empty()) {
    return false;
  }
  return process_start_time(pid) != std::atoll(kv["start"].c_str());
}

namespace {

// The boot and PID namespace of owner_tag() in 6 hex digits (FNV-1a, stable across builds):
// enough to tell this machine's names from another's that shares the server.
std::string node_code() {
  std::uint32_t h = 2166136261u;
  for (char c : boot_id() + "\n" + pid_namespace()) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return fmt::format("{:06x}", h & 0xFFFFFFu);
}

std::string base36(unsigned long long v) {
  std::string out;
  do {
    out.insert(out.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36]);
    v /= 36;
  } while (v > 0);
  return out;
}

bool all_of_chars(const std::string& s, std::string_view allowed) {
  return !s.empty() && s.find_first_not_of(allowed) == std::string::npos;
}

}  // namespace

std::string owner_name_suffix() {
  static std::mt19937 random{std::random_device{}()};
  static std::mutex random_mutex;
  std::uint32_t r;
  {
    std::lock_guard lock(random_mutex);
    r = random() & 0xFFFFFFu;
  }
  pid_t self = ::getpid();
  return fmt::format("_cg_{}_{}_{}_{:06x}", self,
                     base36(static_cast<unsigned long long>(process_start_time(self))),
                     node_code(), r);
}

bool owner_name_gone(const std::string& name) {
  const auto at = name.rfind("_cg_");
  if (at == std::string::npos) return false;
  std::vector<std::string> parts;
  std::istringstream in(name.substr(at + 4));
  for (std::string part; std::getline(in, part, '_');) parts.push_back(part);
  constexpr std::string_view digits = "0123456789", hex = "0123456789abcdef",
                             b36 = "0123456789abcdefghijklmnopqrstuvwxyz";
  if (parts.size() != 4 || !all_of_chars(parts[0], digits) || parts[0].size() > 9 ||
      !all_of_chars(parts[1], b36) || parts[1].size() > 12 || parts[2].size() != 6 ||
      !all_of_chars(parts[2], hex) || parts[3].size() != 6 || !all_of_chars(parts[3], hex) ||
      parts[2] != node_code()) {
    return false;
  }
  const pid_t pid = to_pid(parts[0]);
  if (pid <= 0 || boot_id().empty() || pid_namespace().empty()) return false;
  const long long start = process_start_time(pid);
  return start < 0 || base36(static_cast<unsigned long long>(start)) != parts[1];
}

int remove_stale_cache_temp_files(const fs::path& cache_dir) noexcept {
  int removed = remove_abandoned_template_copies(cache_dir);
  for (const char* sub : {"runs", "up", "server-journal", "versions"}) {
    removed += util::remove_abandoned_temp_files(cache_dir / sub);
  }
  return removed;
}

void mark_owner(const fs::path& dir) {
  pid_t self = ::getpid();
  util::write_file_atomic(dir / "owner",
                          fmt::format("owner_pid={}\nowner_start={}\npid_ns={}\n", self,
                                      process_start_time(self), pid_namespace()));
}

namespace {

// True when `dir` holds nothing but empty folders: a work or cluster folder made (mkdtemp) by a
// process killed before it could mark it.
bool unmarked(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (!e.is_directory(ec) || !fs::is_empty(e.path(), ec)) return false;
  }
  return !ec;
}

// The PID in a folder name `<prefix><pid>-XXXXXX` (work_dir_prefix), or 0.
pid_t pid_in_name(const std::string& name, const std::string& prefix) {
  std::size_t end = prefix.size();
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == prefix.size() || end >= name.size() || name[end] != '-') return 0;
  return to_pid(name.substr(prefix.size(), end - prefix.size()));
}

// The /dev/shm segments that the processes of the servers of the registry markers owned by
// `owner` (started at `start`) map now (shared_memory_segments_of_cluster). Read before what
// that owner left running is killed: its marker names a server's control segment only once the
// server is ready, and nothing can be read from a server's processes once they are killed.
std::vector<std::string> segments_of_servers_owned_by(pid_t owner, long long start) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& m : fs::directory_iterator(default_cache_dir() / "runs", ec)) {
    if (m.path().extension() != ".run") continue;
    auto kv = read_kv(m.path());
    if (to_pid(kv["owner_pid"]) != owner || std::atoll(kv["owner_start"].c_str()) != start)
      continue;
    const fs::path run_dir = kv["run_dir"], data_dir = kv["data_dir"];
    if (run_dir.filename().string().rfind("coldgate-pg-", 0) != 0 ||
        data_dir.parent_path() != run_dir)
      continue;
    for (auto& name : shared_memory_segments_of_cluster(data_dir)) out.push_back(std::move(name));
  }
  return out;
}

}  // namespace

std::string work_dir_prefix(const std::string& prefix) {
  return fmt::format("{}{}-", prefix, ::getpid());
}

int remove_stale_work_dirs(const fs::path& parent, const std::string& prefix,
                           int* processes_killed) {
  int removed = 0;
  std::error_code ec;
  std::vector<fs::path> doomed;  // not while iterating: removal may invalidate the iterator
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    try {
      const std::string name = e.path().filename().string();
      if (name.rfind(prefix, 0) != 0 || !e.is_directory(ec)) continue;
      if (!fs::exists(e.path() / "owner", ec)) {
        // Killed between creating and marking it: empty, named for a process that is gone.
        pid_t pid = pid_in_name(name, prefix);
        if (pid > 0 && process_start_time(pid) < 0 && unmarked(e.path())) doomed.push_back(e.path());
        continue;
      }
      auto kv = read_kv(e.path() / "owner");
      pid_t owner = to_pid(kv["owner_pid"]);
      long long start = std::atoll(kv["owner_start"].c_str());
      if (owner <= 0 || kv["pid_ns"] != pid_namespace()) continue;  // unreadable, or not ours to judge
      if (process_start_time(owner) == start) continue;                // still running
      // What it had started and left running when it was killed: before its folders go. A server
      // among it leaves its segments; those it maps are read while it lives.
      const std::vector<std::string> segments = segments_of_servers_owned_by(owner, start);
      const int killed = util::kill_recorded_groups(e.path() / "children");
      if (processes_killed) *processes_killed += killed;
      if (!segments.empty()) remove_orphaned_segments(segments);
      doomed.push_back(e.path());
    } catch (const std::exception&) {
      // Best effort, as remove_stale_clusters: the run itself must not fail here.
    }
  }
  for (const auto& p : doomed) {
    fs::remove_all(p, ec);
    if (!ec) ++removed;
  }
  return removed;
}

int remove_stale_clusters(const fs::path& cache_dir, std::vector<std::string>* kept) {
  int removed = 0;
  try {
    fs::path runs = cache_dir / "runs";
    std::error_code ec;
    if (!fs::is_directory(runs, ec)) return 0;
    util::FileLock lock(runs / ".lock");
    for (const auto& e : fs::directory_iterator(runs, ec)) {
      if (e.path().extension() != ".run") continue;
      auto kv = read_kv(e.path());
      pid_t owner = to_pid(kv["owner_pid"]);
      long long start = std::atoll(kv["owner_start"].c_str());
      if (owner > 0 && process_start_time(owner) == start) continue;  // owner still running
      // A PID of another namespace (a container sharing this cache) says nothing here; markers
      // written before pid_ns was recorded are judged as before.
      if (kv.count("pid_ns") && kv["pid_ns"] != pid_namespace()) continue;
      fs::path run_dir = kv["run_dir"], data_dir = kv["data_dir"];
      // Only ever touch folders that look like ours.
      bool ours = !run_dir.empty() && run_dir.is_absolute() &&
                  run_dir.filename().string().rfind("coldgate-pg-", 0) == 0 &&
                  data_dir.parent_path() == run_dir;
      if (ours) {
        for (pid_t pm : {pid_file_postmaster(data_dir), to_pid(kv["postmaster_pid"])}) {
          if (pm > 0 && is_postmaster_of(pm, data_dir)) stop_orphan(pm);
        }
        fs::remove_all(run_dir, ec);
        if (ec) {  // try again next time
          if (kept) kept->push_back(fmt::format("{} ({})", run_dir.string(), ec.message()));
          continue;
        }
        // A server killed by SIGKILL (its owner's group killed by remove_stale_work_dirs, the
        // SIGKILL above, anyone) leaves its dynamic shared memory segments in /dev/shm.
        std::istringstream segments(kv["shm_segments"]);
        std::vector<std::string> names;
        for (std::string name; segments >> name;) names.push_back(name);
        remove_orphaned_segments(names, std::chrono::seconds(30), kept);
      }
      fs::remove(e.path(), ec);
      ++removed;
    }
    // A cluster folder its maker was killed in before it wrote the marker.
    removed += remove_stale_work_dirs(util::temp_base(), "coldgate-pg-");
  } catch (const std::exception&) {
    // Clean-up is best effort; the run itself must not fail because of an old marker.
  }
  return removed;
}

}  // namespace coldgate::db
