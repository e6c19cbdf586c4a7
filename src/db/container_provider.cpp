// The container provider: every engine call goes through the docker/podman CLI (util::run), so
// the same code drives Docker, podman, and podman's Docker-compatible service.
#include "db/container_provider.hpp"

#include <fmt/core.h>
#include <libpq-fe.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "db/profile.hpp"
#include "db/local_provider.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::db {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr auto k_call_timeout = 60s;    // inspect, port, ps, logs, run -d
constexpr auto k_pull_timeout = 10min;  // a real pull of a postgres image
constexpr auto k_remove_timeout = 30s;  // rm -f -v
constexpr int k_restart_stop_s = 10;    // `restart -t`: fast shutdown before SIGKILL
constexpr auto k_state_every = 1s;      // readiness: `inspect` interval when `wait` failed
constexpr std::size_t k_log_lines = 20;

std::string random_hex(int n) {
  std::random_device rd;  // /dev/urandom on Linux
  std::string out;
  for (int i = 0; i < n; ++i) out += "0123456789abcdef"[rd() % 16];
  return out;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string trim_end(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

util::SpawnOptions engine_options(const fs::path& engine, std::vector<std::string> args,
                                  const std::vector<std::string>& env) {
  args.insert(args.begin(), engine.string());
  return util::SpawnOptions{.argv = std::move(args), .env = env};
}

// "`podman image inspect postgres:15`" for messages: the program's name, not its path.
std::string show_call(const fs::path& engine, const std::vector<std::string>& args) {
  std::string s = "`" + engine.filename().string();
  for (const auto& a : args) s += " " + a;
  return s + "`";
}

// Runs a clean-up command to its end even after SIGINT/SIGTERM to us: an interrupted `rm -f`
// would leave the container running. True when it succeeded.
bool run_uninterruptible(util::SpawnOptions opts, std::chrono::milliseconds timeout) {
  opts.finish_when_interrupted = true;
  return util::run(opts, timeout).status.ok();
}

}  // namespace

ContainerOptions ContainerOptions::from(const config::Database& database) {
  ContainerOptions o;
  o.engine = database.engine;
  o.image = database.image;
  o.version = database.version;
  o.run_args = database.run_args;
  o.dbname = database.name;
  // Every run is profiled through pg_stat_statements unless the config turns it off.
  o.settings = database.settings;
  o.profile = database.profile;
  o.where = database.where.file.empty() ? "" : database.where.str();
  for (const auto& [name, where] : database.settings_where) o.settings_where[name] = where.str();
  return o;
}

int image_major(const std::string& env_lines, const std::string& image,
                std::optional<int> version) {
  std::istringstream lines(env_lines);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("PG_MAJOR=", 0) == 0) {
      int major = std::atoi(line.c_str() + 9);
      if (major > 0) return major;
    }
  }
  // "postgres:17", "postgres:16-alpine", "registry:5000/postgres:18.1": the tag after the last
  // '/', its leading digits.
  auto slash = image.rfind('/');
  auto colon = image.find(':', slash == std::string::npos ? 0 : slash);
  if (colon != std::string::npos && colon + 1 < image.size() &&
      std::isdigit(static_cast<unsigned char>(image[colon + 1]))) {
    return std::atoi(image.c_str() + colon + 1);
  }
  return version.value_or(0);
}

fs::path find_engine(const std::string& engine, const std::string& where) {
  if (!engine.empty()) {
    if (auto p = util::find_program(engine)) return *p;
    std::string other = engine == "docker" ? "podman" : "docker";
    throw Error(ExitCode::infrastructure, where,
                fmt::format("database.engine: {} not found on PATH; install it or set engine: {}",
                            engine, other));
  }
  for (const char* name : {"docker", "podman"}) {
    if (auto p = util::find_program(name)) return *p;
  }
  throw Error(ExitCode::infrastructure, where,
              "database.engine: neither docker nor podman found on PATH; install one or use "
              "provider: local");
}

int remove_stale_containers(const fs::path& engine, const std::vector<std::string>& engine_env) {
  try {
    auto ps = util::run(engine_options(engine,
                                       {"ps", "-a", "-q", "--no-trunc", "--filter",
                                        std::string("label=") + k_run_label},
                                       engine_env),
                        k_call_timeout);
    if (!ps.status.ok()) return 0;
    std::vector<std::string> args = {"inspect", "--format",
                                     "{{.Id}}|{{index .Config.Labels \"coldgate.owner\"}}|"
                                     "{{index .Config.Labels \"coldgate.owner_start\"}}|"
                                     "{{index .Config.Labels \"coldgate.host\"}}"};
    std::istringstream ids(ps.out);
    std::string id;
    while (ids >> id) args.push_back(id);
    if (args.size() == 3) return 0;
    // A container removed meanwhile makes inspect fail for it but still print the others.
    auto inspect = util::run(engine_options(engine, args, engine_env), k_call_timeout);

    std::vector<std::string> stale = {"rm", "-f", "-v"};
    std::istringstream lines(inspect.out);
    std::string line;
    const std::string self = host_name();
    while (std::getline(lines, line)) {
      std::vector<std::string> f;
      std::istringstream fields(line);
      for (std::string x; std::getline(fields, x, '|');) f.push_back(x);
      if (f.size() != 4 || f[0].empty() || f[3] != self) continue;  // not ours to judge
      pid_t owner = static_cast<pid_t>(std::atol(f[1].c_str()));
      if (owner <= 0) continue;
      if (process_start_time(owner) == std::atoll(f[2].c_str())) continue;  // owner still runs
      stale.push_back(f[0]);
    }
    if (stale.size() == 3) return 0;
    return run_uninterruptible(engine_options(engine, stale, engine_env), k_remove_timeout)
               ? static_cast<int>(stale.size() - 3)
               : 0;
  } catch (const std::exception&) {
    return 0;  // an interrupt or a missing engine surfaces in the caller's next step
  }
}

ContainerProvider::ContainerProvider(ContainerOptions options)
    : m_options(std::move(options)),
      m_image(m_options.image.empty() ? fmt::format("postgres:{}", m_options.version.value_or(15))
                                      : m_options.image),
      m_run_id(random_hex(12)) {}

ContainerProvider::~ContainerProvider() {
  stop();
}

void ContainerProvider::start() {
  const std::string& where = m_options.where;
  m_engine = find_engine(m_options.engine, where);
  const auto& env = m_options.engine_env;
  auto call = [&](std::vector<std::string> args, std::chrono::milliseconds timeout) {
    return util::run(engine_options(m_engine, std::move(args), env), timeout);
  };
  try {
    m_stale_removed = remove_stale_containers(m_engine, env);

    // The image: local, else pulled once (`run` would pull too, but mixes the pull's errors
    // with its own).
    auto inspect = call({"image", "inspect", "--format", "{{.Id}}", m_image}, k_call_timeout);
    if (!inspect.status.ok()) {
      std::string err = lower(inspect.err);
      bool missing = err.find("no such image") != std::string::npos ||
                     err.find("image not known") != std::string::npos ||
                     err.find("not found") != std::string::npos;
      if (!missing) {
        throw Error(ExitCode::infrastructure, where,
                    fmt::format("database.engine: {} failed ({}); is the {} service running "
                                "(DOCKER_HOST)?\n{}",
                                show_call(m_engine, {"image", "inspect", m_image}),
                                inspect.status.describe(), m_engine.filename().string(),
                                util::tail_lines(inspect.err, k_log_lines)));
      }
      auto pull = call({"pull", m_image}, k_pull_timeout);
      if (!pull.status.ok()) {
        throw Error(ExitCode::infrastructure, where,
                    fmt::format("image {} not found locally and could not be pulled; build or "
                                "pull it first\n{}",
                                m_image, util::tail_lines(pull.err + pull.out, k_log_lines)));
      }
    }
    // The server's major decides which profile settings it accepts (14+: compute_query_id).
    int major = 0;
    if (m_options.profile) {
      auto env_of = call({"image", "inspect", "--format", "{{range .Config.Env}}{{println .}}{{end}}",
                          m_image},
                         k_call_timeout);
      major = image_major(env_of.status.ok() ? env_of.out : "", m_image, m_options.version);
    }

    // The official image's interface: env for user/password/database, arguments to postgres.
    // The password travels in the engine's environment (`-e NAME` copies it), not in argv.
    std::string password = random_hex(24);
    pid_t self = ::getpid();
    // clang-format off
    std::vector<std::string> run = {
        "run", "-d",
        "--name", container_name(),
        "--label", std::string(k_run_label) + "=" + m_run_id,
        "--label", fmt::format("coldgate.owner={}", self),
        "--label", fmt::format("coldgate.owner_start={}", process_start_time(self)),
        "--label", "coldgate.host=" + host_name(),
        "-p", "127.0.0.1::5432",
        "-e", "POSTGRES_PASSWORD",
        "-e", "POSTGRES_USER=postgres",
        "-e", "POSTGRES_DB=" + m_options.dbname,
        "-e", "POSTGRES_INITDB_ARGS=--no-sync",  // throwaway data: 2-3 s less to first start
        // The data is thrown away, so `rm -f` may kill at once: podman's rm honours the stop
        // timeout (10 s by default), and during init the entrypoint, PID 1, ignores SIGINT.
        "--stop-timeout", "0"};
    // clang-format on
    run.insert(run.end(), m_options.run_args.begin(), m_options.run_args.end());
    run.push_back(m_image);
    std::map<std::string, std::string> settings = fast_settings();
    for (const auto& [k, v] : m_options.profile ? with_profile_settings(m_options.settings, major, true)
                                                : m_options.settings) {
      settings[k] = v;
    }
    for (const auto& [k, v] : settings) {
      run.push_back("-c");
      run.push_back(k + "=" + v);
    }
    util::SpawnOptions opts = engine_options(m_engine, run, env);
    opts.env.push_back("POSTGRES_PASSWORD=" + password);
    m_created = true;  // from here on stop() removes the name, even if `run` is interrupted
    auto r = util::run(opts, k_call_timeout);
    if (!r.status.ok()) {
      throw Error(
          ExitCode::infrastructure, where,
          fmt::format("database: `{} run … {}` failed ({}):\n{}", m_engine.filename().string(),
                      m_image, r.status.describe(), util::tail_lines(r.err, k_log_lines)));
    }
    m_info = ConnectionInfo{.host = "127.0.0.1",
                            .port = read_port(),
                            .user = "postgres",
                            .password = password,
                            .dbname = m_options.dbname};
    wait_until_ready("start");
  } catch (...) {
    stop();
    throw;
  }
}

int ContainerProvider::read_port() const {
  std::vector<std::string> args = {"port", container_name(), "5432/tcp"};
  auto r = util::run(engine_options(m_engine, args, m_options.engine_env), k_call_timeout);
  // "127.0.0.1:40123" (one line per published address; we publish one).
  std::string first = trim_end(r.out.substr(0, r.out.find('\n')));
  auto colon = first.rfind(':');
  int port = colon == std::string::npos ? 0 : std::atoi(first.c_str() + colon + 1);
  if (!r.status.ok() || port <= 0) {
    throw Error(
        ExitCode::infrastructure, m_options.where,
        fmt::format("database: {} gave no host port ({}): {}{}", show_call(m_engine, args),
                    r.status.describe(), trim_end(r.out), util::tail_lines(r.err, k_log_lines)));
  }
  return port;
}

std::string ContainerProvider::logs_tail(std::size_t lines) const noexcept {
  try {
    auto r = util::run(
        engine_options(m_engine, {"logs", "--tail", std::to_string(lines), container_name()},
                       m_options.engine_env),
        k_call_timeout);
    // The container's stdout and stderr come back on ours; postgres logs to stderr.
    return util::tail_lines(r.out + r.err, lines);
  } catch (const std::exception& e) {
    return fmt::format("(no log: {})", e.what());
  }
}

std::optional<std::string> ContainerProvider::read_log(std::uint64_t from) const {
  if (!m_created) return std::nullopt;
  auto r = util::run(engine_options(m_engine, {"logs", container_name()}, m_options.engine_env),
                     k_call_timeout);
  if (!r.status.ok()) {
    throw Error(ExitCode::infrastructure, "database",
                fmt::format("{} logs {}: {}", m_engine.filename().string(), container_name(),
                            util::tail_lines(r.err, 5)));
  }
  // The container's stdout and stderr come back on ours apart; postgres logs to stderr (the
  // entrypoint's own lines go to stdout), so offsets into stderr stay put as it grows.
  return from < r.err.size() ? r.err.substr(from) : std::string();
}

// Ready = the configured database accepts a login over the published port. The official
// image's entrypoint runs its init-time server with listen_addresses='' (Unix socket only) and
// then restarts it, so a TCP login can only reach the final server; a login (not just PQping)
// also proves POSTGRES_DB exists. Meanwhile the container's state is checked, so a container
// that exits is reported at once with its log, not after the timeout.
void ContainerProvider::wait_until_ready(const char* phase) {
  std::string conninfo = with_client_defaults(m_info).conninfo() + " connect_timeout=2";
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + m_options.ready_timeout;
  auto next_state_check = start + k_state_every;
  std::vector<std::string> state_args = {"inspect", "--format",
                                         "{{.State.Status}} {{.State.ExitCode}}", container_name()};
  // `<engine> wait` ends when the container stops: one idle process instead of an `inspect`
  // every second competing with initdb for the CPU. When it ends, `inspect` says why; if the
  // container still runs (wait itself failed), polling takes over.
  std::optional<util::Process> waiter;
  try {
    util::SpawnOptions opts =
        engine_options(m_engine, {"wait", container_name()}, m_options.engine_env);
    opts.capture_stdout = opts.capture_stderr = false;
    opts.stdout_path = opts.stderr_path = "/dev/null";
    waiter.emplace(opts);
  } catch (const Error&) {
    // polling it is
  }
  for (;;) {
    util::throw_if_interrupted();
    if (PQping(conninfo.c_str()) == PQPING_OK) {
      PGconn* conn = PQconnectdb(conninfo.c_str());
      bool ok = PQstatus(conn) == CONNECTION_OK;
      PQfinish(conn);
      if (ok) return;  // `waiter` is killed and reaped by its destructor
    }
    auto now = std::chrono::steady_clock::now();
    bool check_state = false;
    if (waiter && waiter->wait_exited(std::chrono::milliseconds(0))) {
      waiter.reset();  // reaps it
      check_state = true;
    } else if (!waiter && now >= next_state_check) {
      check_state = true;
    }
    if (check_state) {
      next_state_check = now + k_state_every;
      auto r =
          util::run(engine_options(m_engine, state_args, m_options.engine_env), k_call_timeout);
      std::istringstream state(r.out);
      std::string status;
      int exit_code = 0;
      state >> status >> exit_code;
      if (!r.status.ok()) {
        throw Error(ExitCode::infrastructure, m_options.where,
                    fmt::format("database: container {} vanished during {}: {}", container_name(),
                                phase, util::tail_lines(r.err, k_log_lines)));
      }
      if (status != "running" && status != "created") {
        const std::string log = logs_tail(k_log_lines);
        if (auto refused = refused_setting(log, m_options.settings_where)) throw *refused;
        throw Error(ExitCode::infrastructure, m_options.where,
                    fmt::format("database: container {} ({}) exited during {} (exit status "
                                "{}); last {} lines of its log:\n{}",
                                container_name(), m_image, phase, exit_code, k_log_lines, log));
      }
    }
    if (now > deadline) {
      throw Error(
          ExitCode::infrastructure, m_options.where,
          fmt::format("database: PostgreSQL in container {} ({}) did not accept "
                      "connections on 127.0.0.1:{} within {} ms; last {} lines of its "
                      "log:\n{}",
                      container_name(), m_image, m_info.port, m_options.ready_timeout.count(),
                      k_log_lines, logs_tail(k_log_lines)));
    }
    std::this_thread::sleep_for(50ms);
  }
}

void ContainerProvider::restart() {
  if (!m_created) {
    throw Error(ExitCode::infrastructure, "database", "restart: container is not running");
  }
  std::vector<std::string> args = {"restart", "-t", std::to_string(k_restart_stop_s),
                                   container_name()};
  auto r = util::run(engine_options(m_engine, args, m_options.engine_env),
                     std::chrono::seconds(k_restart_stop_s) + k_call_timeout);
  if (!r.status.ok()) {
    throw Error(
        ExitCode::infrastructure, m_options.where,
        fmt::format("database: {} failed ({}):\n{}\nlast {} lines of its log:\n{}",
                    show_call(m_engine, args), r.status.describe(),
                    util::tail_lines(r.err, k_log_lines), k_log_lines, logs_tail(k_log_lines)));
  }
  m_info.port = read_port();  // podman may publish on another host port after a restart
  wait_until_ready("restart");
}

void ContainerProvider::stop() noexcept {
  if (!m_created) return;
  m_created = false;
  try {
    util::SpawnOptions opts =
        engine_options(m_engine, {"rm", "-f", "-v", container_name()}, m_options.engine_env);
    opts.capture_stdout = opts.capture_stderr = false;
    opts.stdout_path = opts.stderr_path = "/dev/null";
    run_uninterruptible(opts, k_remove_timeout);
  } catch (...) {
    // Best effort: a container left behind is removed by the next run's start().
  }
}

}  // namespace coldgate::db
