#include "session/session.hpp"

#include <fmt/core.h>

#include <chrono>

#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "measure/environment.hpp"
#include "measure/server_journal.hpp"
#include "setup/setup.hpp"
#include "util/process.hpp"
#include "util/secrets.hpp"

namespace coldgate::session {

Session::Session(const config::Database& database, const std::string& work_prefix, Say say)
    : m_work(db::work_dir_prefix(work_prefix)), m_say(std::move(say)) {
  db::mark_owner(m_work.path());
  m_recorded_before = util::record_children_in(m_work.path() / "children");
  // A constructor that throws gets no destructor: the recording stops here then.
  try {
    int processes = 0;
    int folders = db::remove_stale_work_dirs(m_work.path().parent_path(), work_prefix,
                                             &processes);  // also the unmarked ones
    // The marked work folders of every other kind of command (a killed `explain`'s, before a `run`).
    folders += db::remove_stale_work_dirs(m_work.path().parent_path(), "coldgate-", &processes);
    db::remove_stale_cache_temp_files(db::default_cache_dir());
    m_provider = db::make_provider(database);
    m_environment = measure::host_environment();
    m_environment.provider = m_provider->name();
    auto t0 = std::chrono::steady_clock::now();
    m_provider->start();
    // A clean-up that happens unsaid looks like nothing was wrong: a killed run is worth
    // knowing of (a CI job cancelled mid-run, an OOM kill).
    if (const int servers = m_provider->stale_servers_removed(); servers + folders > 0) {
      std::vector<std::string> what;
      if (servers > 0) what.push_back(fmt::format("{} server{}", servers, servers == 1 ? "" : "s"));
      if (processes > 0)
        what.push_back(fmt::format("{} command{} it had started (ended)", processes,
                                   processes == 1 ? "" : "s"));
      if (folders > 0)
        what.push_back(fmt::format("{} work folder{}", folders, folders == 1 ? "" : "s"));
      std::string list;
      for (std::size_t i = 0; i < what.size(); ++i)
        list += (i == 0 ? "" : i + 1 == what.size() ? " and " : ", ") + what[i];
      m_say(fmt::format("removed what a killed coldgate command left: {}", list));
    }
    if (const auto repaired = m_provider->repaired(); !repaired.empty()) {
      std::string list;
      for (const auto& item : repaired) list += (list.empty() ? "" : "; ") + item;
      m_say("repaired what a killed coldgate command left on the server: " + list);
    }
    say_left_behind();  // a killed run's leftovers that start() could not remove
    util::add_secret(m_provider->connection_info().password);  // the local/container random one too
    m_start_conn = m_provider->take_start_connection();
    db::ServerInfo server = m_provider->server_info();
    m_environment.postgres_version = server.version;
    m_environment.postgres_version_num = server.version_num;
    m_environment.postgres_settings = server.settings;
    m_say(fmt::format("PostgreSQL {} ({}) ready in {:.1f} s", server.version, m_provider->name(),
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
    // What a killed run left on a server that outlives it: before this run reads or changes it.
    measure::undo_left_by_killed_runs(measure::journal_dir(*m_provider),
                                      m_provider->connection_info(), m_say);
  } catch (...) {
    util::record_children_in(m_recorded_before);
    throw;
  }
}

Session::~Session() {
  stop();
  util::record_children_in(m_recorded_before);
}

void Session::stop() noexcept {
  if (!m_provider || m_stopped) return;
  m_provider->stop();
  m_stopped = true;
  say_left_behind();
}

void Session::say_left_behind() noexcept {
  // Something a killed server left that we could not remove is the user's to know of.
  try {
    const auto left = m_provider->left_behind();
    for (; m_left_said < left.size(); ++m_left_said) m_say("warning: could not remove " + left[m_left_said]);
  } catch (...) {
    // Saying it failed: the clean-up itself is done.
  }
}

void Session::setup(const config::Config& cfg, const std::string& who,
                    const std::optional<db::ConnectionInfo>& target, results::Results* into,
                    std::optional<double> scale, db::OwnConnections* own) {
  if (own) own->adopt(db::maintenance_database(m_provider->connection_info()), std::move(m_start_conn));
  m_start_conn.reset();  // nobody keeps it: not a backend idle through the session
  setup::Context context{target ? *target : m_provider->connection_info(), cfg.base_dir,
                         m_provider->client_bindir(), m_provider->name() != "external",
                         scale.value_or(cfg.load_scale())};
  const std::string prefix = who.empty() ? "" : who + ": ";
  const std::string at = scale ? "scale " + setup::scale_text(*scale) + ": " : "";
  try {
    setup::run_setup(cfg.setup, context, [&](const setup::StepResult& s) {
      m_say(fmt::format("setup {}{}{} ({:.0f} ms)", prefix, at, s.label, s.wall_ms));
      if (into) into->setup.push_back({s.kind, at + s.label, s.wall_ms});
    });
  } catch (const setup::StepFailure& e) {
    if (auto full = db::disk_full(e, *m_provider)) throw setup::StepFailure(*full, at + e.label());
    if (at.empty()) throw;
    throw setup::StepFailure(e, at + e.label());
  }
  std::string warning = setup::stage_database_warning(cfg.setup, context, own);
  if (warning.empty()) return;
  m_say("warning: " + prefix + warning);
  if (into) into->warnings.push_back(prefix + warning);
}

}  // namespace coldgate::session
