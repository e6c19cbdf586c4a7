#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "db/connection_info.hpp"
#include "db/own_connections.hpp"
#include "db/provider.hpp"
#include "results/results.hpp"
#include "util/fs.hpp"

namespace coldgate::session {

/// One owner of what a command holds while it runs: its work folder under $TMPDIR, marked with
/// our PID so that the next run removes it after a SIGKILL; the server of the config's provider,
/// started, its password registered as a secret (util::add_secret: no output shows it), stopped
/// on every exit path; and the environment block of the results. `run`, `ab` (both sides),
/// `explain` and `db up` all go through it, so they keep the same promises.
class Session {
 public:
  /// Where progress lines go ("PostgreSQL 15.8 (local) ready in 1.2 s"), without "coldgate: ".
  using Say = std::function<void(const std::string&)>;

  /// Creates and marks `$TMPDIR/<work_prefix><pid>-XXXXXX`, records the children started from
  /// now on in its `children/` (util::record_children_in), removes the `$TMPDIR/coldgate-*` work
  /// folders whose owner is gone — ending what they recorded — and the cache's temp files of
  /// killed writers (db::remove_stale_cache_temp_files), then starts the server and, on one
  /// that outlives runs, puts back the role settings killed runs left there
  /// (measure::undo_left_by_killed_runs).
  /// Throws Error(infrastructure) when the folder or the server cannot be had,
  /// Error(interrupted).
  Session(const config::Database& database, const std::string& work_prefix, Say say);
  /// Stops the server (unless stop() did), records children where they were recorded before,
  /// then removes the work folder.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// The running server's provider.
  db::Provider& provider() { return *m_provider; }
  /// This run's own temp folder (removed with the session).
  const std::filesystem::path& work_dir() const { return m_work.path(); }
  /// Host (measure::host_environment), provider, and the server's version and settings.
  const results::Environment& environment() const { return m_environment; }

  /// Runs `cfg`'s setup steps, from `cfg.base_dir`, into `target` (the provider's own database
  /// when nullopt), saying each as "setup <who>: <label> (N ms)" ("setup <label> (N ms)" when
  /// `who` is empty), then setup::stage_database_warning as "warning: <who>: …". Appends each
  /// step as it finishes to `into->setup` and the warning to `into->warnings` (when `into` is
  /// given), so a failed setup keeps the steps before it. Throws as setup::run_setup
  /// (setup::StepFailure). The steps load `scale` (setup::Context::scale; cfg.load_scale() when
  /// nullopt); a scale given is named in each recorded label and in a failed step's
  /// ("scale 4: command gen.py"). With `own`, the warning's check leaves its connections there
  /// for the checks after setup (db::OwnConnections), the provider's start-up connection to the
  /// maintenance database among them; without, that one is closed.
  void setup(const config::Config& cfg, const std::string& who = "",
             const std::optional<db::ConnectionInfo>& target = {},
             results::Results* into = nullptr, std::optional<double> scale = std::nullopt,
             db::OwnConnections* own = nullptr);

  /// Stops the server now (the destructor does it otherwise) and says "warning: could not
  /// remove …" for each thing the provider left behind (Provider::left_behind). Never throws.
  void stop() noexcept;

 private:
  util::TempDir m_work;  // declared first: removed after the server stopped
  std::filesystem::path m_recorded_before;  // record_children_in() before this session
  Say m_say;
  std::unique_ptr<db::Provider> m_provider;
  std::unique_ptr<db::Connection> m_start_conn;  // the provider's, until setup() hands it on
  results::Environment m_environment;
  bool m_stopped = false;  // stop() ran: the destructor neither stops again nor warns twice
  std::size_t m_left_said = 0;  // how many of the provider's left_behind() were said
  void say_left_behind() noexcept;  // "warning: could not remove …" for each new one
};

}  // namespace coldgate::session
