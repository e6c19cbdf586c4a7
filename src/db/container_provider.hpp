#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "db/provider.hpp"

namespace coldgate::db {

/// How to run a server in a container.
struct ContainerOptions {
  std::string engine;                           // "docker" | "podman"; "": docker, else podman
  std::string image;                            // "": postgres:<version or 15>
  std::optional<int> version;                   // default image tag
  std::vector<std::string> run_args;            // appended to `run` before the image
  std::string dbname = "coldgate";              // POSTGRES_DB
  std::map<std::string, std::string> settings;  // `-c k=v`, over fast_settings()
  /// Preload what the server-side profile needs (with_profile_settings() for the image's major:
  /// its PG_MAJOR, else its tag, else `version`).
  bool profile = false;
  std::vector<std::string> engine_env;          // "K=V" added for every engine call (DOCKER_HOST)
  std::chrono::milliseconds ready_timeout{60'000};  // run/restart to accepting connections
  std::string where;                                // config location for messages ("file:l:c")
  std::map<std::string, std::string> settings_where;  // `settings` names → "file:l:c"
  /// Options from the config's `database:` block.
  static ContainerOptions from(const config::Database& database);
};

/// Labels every container of ours carries: `coldgate.run=<run id>` plus the owner's PID, its
/// start time (/proc/<pid>/stat field 22) and host name, so a later run can tell a leftover of
/// a SIGKILLed run from a live one.
inline constexpr const char* k_run_label = "coldgate.run";

/// The PostgreSQL major an image runs: PG_MAJOR from `env_lines` (its `Config.Env`, one
/// "K=V" a line, as the official image sets it), else the leading digits of its tag
/// ("postgres:16-alpine" → 16), else `version`, else 0 (not known).
int image_major(const std::string& env_lines, const std::string& image,
                std::optional<int> version);

/// A PostgreSQL server in a container run with the docker or podman CLI, using the official
/// `postgres` image's interface (POSTGRES_PASSWORD, POSTGRES_DB, `-c k=v` arguments), published
/// on 127.0.0.1 only at a random host port. Removed (`rm -f -v`) by stop() / the destructor; a
/// container of a SIGKILLed run is removed by the next start() (see remove_stale_containers()).
class ContainerProvider : public Provider {
 public:
  explicit ContainerProvider(ContainerOptions options);
  ~ContainerProvider() override;

  std::string name() const override { return "container"; }
  /// Finds the engine, removes stale containers, checks (or pulls) the image, runs the
  /// container and waits until the configured database accepts a login. Throws
  /// Error(infrastructure): engine missing, image missing, container exited (with its log tail),
  /// not ready within ready_timeout.
  void start() override;
  /// `<engine> restart -t 10`, reads the host port again (podman may change it) and waits until
  /// ready; connection_info() then names the new port. Throws Error(infrastructure).
  void restart() override;
  /// `<engine> rm -f -v` (the anonymous data volume goes too); completes even after
  /// SIGINT/SIGTERM; safe to call twice; never throws.
  void stop() noexcept override;
  /// TCP 127.0.0.1:<published port>, user postgres with the run's random password.
  const ConnectionInfo& connection_info() const override { return m_info; }
  /// Containers of this host whose coldgate run is gone, removed by start().
  int stale_servers_removed() const override { return m_stale_removed; }

  /// The engine program in use (valid after start()).
  const std::filesystem::path& engine() const { return m_engine; }
  /// Random id of this run: the `coldgate.run` label and the container name's suffix.
  const std::string& run_id() const { return m_run_id; }
  /// `coldgate-<run id>`.
  std::string container_name() const { return "coldgate-" + m_run_id; }
  /// The image in use, e.g. "postgres:15".
  const std::string& image() const { return m_image; }

 private:
  int read_port() const;                     // `port <name> 5432/tcp`; throws
  void wait_until_ready(const char* phase);  // login with retry; throws with the log tail
  std::string logs_tail(std::size_t lines) const noexcept;

 public:
  /// `<engine> logs` of the container (postgres logs to stderr) from byte `from` on.
  std::optional<std::string> read_log(std::uint64_t from) const override;

 private:
  ContainerOptions m_options;
  std::filesystem::path m_engine;  // resolved program; empty before start()
  std::string m_image;
  std::string m_run_id;
  int m_stale_removed = 0;  // remove_stale_containers() at start()
  bool m_created = false;  // a container named container_name() may exist: stop() removes it
  ConnectionInfo m_info;
};

/// The engine program for `database.engine` ("" = docker, else podman, whichever is on PATH).
/// Throws Error(infrastructure) "database.engine: docker not found on PATH; install it or set
/// engine: podman" (and the converse), or "neither docker nor podman found on PATH…".
std::filesystem::path find_engine(const std::string& engine, const std::string& where);

/// Removes (`rm -f -v`) every container labelled coldgate.run on this host whose owner process
/// is gone (PID not alive, or alive with another start time). Returns how many it removed.
/// Never throws: clean-up is best effort and must not fail a run.
int remove_stale_containers(const std::filesystem::path& engine,
                            const std::vector<std::string>& engine_env);

}  // namespace coldgate::db
