#include "cli/db_command.hpp"

#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "config/config.hpp"
#include "db/cluster_registry.hpp"
#include "db/container_provider.hpp"
#include "session/session.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate::cli {
using db::default_cache_dir;
using db::process_start_time;

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct UpState {
  pid_t pid = 0;
  long long start = -1;
  std::string pid_ns;  // "" in state files of coldgate before it was recorded
  std::string url;
};

std::optional<UpState> read_file_state(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::map<std::string, std::string> kv;
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return UpState{static_cast<pid_t>(std::atol(kv["pid"].c_str())),
                 std::atoll(kv["start"].c_str()), kv["pid_ns"], kv["url"]};
}

bool running(const UpState& s) { return s.pid > 0 && process_start_time(s.pid) == s.start; }

// The state of the `db up` whose state file is `path`, when that `db up` still runs.
std::optional<UpState> read_state(const fs::path& path) {
  auto s = read_file_state(path);
  if (!s || !running(*s)) return std::nullopt;
  return s;
}

// The state file of this `db up`: 0600 from its creation, since the URL holds the password;
// removed when the server goes away, or by the next command when we are killed.
class StateFile {
 public:
  StateFile(fs::path path, const std::string& url) : m_path(std::move(path)) {
    util::write_file_atomic(m_path,
                            fmt::format("pid={}\nstart={}\npid_ns={}\nurl={}\n", ::getpid(),
                                        process_start_time(::getpid()), db::pid_namespace(), url),
                            0600);
  }
  ~StateFile() {
    std::error_code ec;
    fs::remove(m_path, ec);
  }
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;

 private:
  fs::path m_path;
};

// What a `db up` killed with SIGKILL left running: its cluster (the registry), its container.
// Its work folder is gone already: run_db() called remove_stale_up_states() first. Best effort,
// as every clean-up of leftovers.
void stop_leftovers(const std::string& config_path) {
  db::remove_stale_clusters(default_cache_dir());
  try {
    config::Config cfg = config::load(config_path);
    if (cfg.database.provider == config::Provider::container) {
      auto options = db::ContainerOptions::from(cfg.database);
      db::remove_stale_containers(db::find_engine(options.engine, options.where),
                                  options.engine_env);
    }
  } catch (const Error&) {
    // No config, or no engine: nothing of a container to find.
  }
}

[[noreturn]] void none_running(const std::string& config_path) {
  throw usage_error("", fmt::format("no `coldgate db up` is running for {}", config_path));
}

int up(const std::string& config_path, const fs::path& state_path) {
  if (auto s = read_state(state_path)) {
    throw usage_error("", fmt::format("`coldgate db up` for {} is already running (pid {}): {}",
                                      config_path, s->pid, s->url));
  }
  util::install_interrupt_handlers();
  // Our output may go to a pipe that closes first (`db up | head -1`): a write must then fail,
  // not kill us before the server is stopped and the state file removed.
  ::signal(SIGPIPE, SIG_IGN);
  config::Config cfg = config::load(config_path);
  config::check_setup(cfg);
  session::Session session(cfg.database, "coldgate-up-",
                           [](const std::string& line) { std::cerr << "coldgate: " << line << '\n'; });
  session.setup(cfg);
  const std::string url = session.provider().connection_info().url();
  StateFile state(state_path, url);
  std::cout << url << std::endl;
  std::cerr << "coldgate: press Ctrl-C (or run `coldgate db down`) to stop it" << std::endl;
  while (util::interrupted() == 0) std::this_thread::sleep_for(50ms);
  session.stop();
  std::cerr << "coldgate: database stopped" << std::endl;
  return 0;
}

}  // namespace

fs::path db_up_state_path(const fs::path& cache_dir, const fs::path& config_path) {
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(config_path), ec);
  if (ec) abs = fs::absolute(config_path);
  return cache_dir / "up" / (util::sha256_hex(abs.string()).substr(0, 16) + ".state");
}

int remove_stale_up_states(const fs::path& cache_dir) noexcept {
  int removed = 0;
  try {
    std::error_code ec;
    const std::string ns = db::pid_namespace();
    for (const auto& e : fs::directory_iterator(cache_dir / "up", ec)) {
      if (e.path().extension() != ".state") continue;
      auto s = read_file_state(e.path());
      if (!s || running(*s) || (!s->pid_ns.empty() && s->pid_ns != ns)) continue;
      if (fs::remove(e.path(), ec)) ++removed;
    }
    // And the work folders of killed `db up`s (their owner file names a process that is gone).
    db::remove_stale_work_dirs(util::temp_base(), "coldgate-up-");
  } catch (const std::exception&) {
    // Best effort: a file left now is removed by the next command.
  }
  return removed;
}

int run_db(const std::string& action, const std::string& config_path) {
  fs::path state_path = db_up_state_path(default_cache_dir(), config_path);
  // This config's `db up` was killed (SIGKILL: no destructor ran) when its file outlives it.
  std::optional<UpState> killed;
  if (auto s = read_file_state(state_path); s && !running(*s)) killed = s;
  remove_stale_up_states(default_cache_dir());
  db::remove_stale_cache_temp_files(default_cache_dir());
  if (action == "down" && killed) {
    stop_leftovers(config_path);
    std::cerr << fmt::format("coldgate: the `coldgate db up` of {} (pid {}) had ended without "
                             "stopping (killed?); removed its state file and what it left running",
                             config_path, killed->pid)
              << std::endl;
    return 0;
  }
  if (action == "up") return up(config_path, state_path);
  if (action == "url") {
    auto s = read_state(state_path);
    if (!s) none_running(config_path);
    std::cout << s->url << std::endl;
    return 0;
  }
  if (action == "down") {
    auto s = read_state(state_path);
    if (!s) {
      stop_leftovers(config_path);  // of a `db up` killed before it had written its state
      none_running(config_path);
    }
    ::kill(s->pid, SIGTERM);
    auto until = std::chrono::steady_clock::now() + 60s;
    while (process_start_time(s->pid) == s->start) {
      if (std::chrono::steady_clock::now() > until) {
        throw Error(ExitCode::infrastructure, "",
                    fmt::format("`coldgate db up` (pid {}) did not stop within 60 s", s->pid));
      }
      std::this_thread::sleep_for(10ms);
    }
    std::cerr << "coldgate: stopped" << std::endl;
    return 0;
  }
  throw usage_error("", fmt::format("unknown db action '{}'; use up, down or url", action));
}

}  // namespace coldgate::cli
