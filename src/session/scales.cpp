#include "session/scales.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <memory>

#include "db/connection.hpp"
#include "db/database_template.hpp"
#include "results/growth.hpp"
#include "session/session.hpp"
#include "setup/setup.hpp"
#include "util/error.hpp"
#include "util/process.hpp"
#include "util/secrets.hpp"

namespace coldgate::session {
namespace {

// "coldgate_scale4", "coldgate_scale0_5": a name PostgreSQL keeps unquoted.
std::string scale_database_name(const std::string& stages, double scale) {
  std::string s = setup::scale_text(scale);
  std::replace(s.begin(), s.end(), '.', '_');
  std::replace(s.begin(), s.end(), '-', '_');
  std::replace(s.begin(), s.end(), '+', '_');
  return stages + "_scale" + s;
}

db::ConnectionInfo admin_info(const db::Provider& provider) {
  db::ConnectionInfo info = provider.connection_info();
  info.dbname = "postgres";
  return info;
}

bool lists(const config::Stage& stage, double scale) {
  return std::find(stage.scales.begin(), stage.scales.end(), scale) != stage.scales.end();
}

}  // namespace

ScaleDatabase::ScaleDatabase(const db::Provider& provider, const db::ConnectionInfo& stages,
                             double scale)
    : m_provider(provider), m_info(stages) {
  m_info.dbname = scale_database_name(stages.dbname, scale);
  try {
    db::Connection admin(admin_info(provider));
    const std::string quoted = admin.raw().quote_name(m_info.dbname);
    admin.exec("DROP DATABASE IF EXISTS " + quoted);
    // Owned from the moment it exists, so that the next run on a server that outlives this one
    // drops it when this run is SIGKILLed (db::tidy_left_databases): made under an owned name,
    // given the owner's comment, then renamed.
    const std::string owned = db::owned_database_name(m_info.dbname);
    const std::string quoted_owned = admin.raw().quote_name(owned);
    admin.exec("CREATE DATABASE " + quoted_owned);
    try {
      admin.exec("COMMENT ON DATABASE " + quoted_owned + " IS " +
                 admin.raw().quote(db::owned_comment(fmt::format(
                     "scale {} of {}", setup::scale_text(scale), stages.dbname))));
      admin.exec("ALTER DATABASE " + quoted_owned + " RENAME TO " + quoted);
    } catch (...) {
      try {
        admin.exec("DROP DATABASE IF EXISTS " + quoted_owned);
      } catch (...) {  // the server is lost: the next run drops it (an owned name)
      }
      throw;
    }
    m_created = true;
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    // A full disk is not a role without CREATE DATABASE: say the room there was instead.
    if (auto full = db::disk_full(
            Error(ExitCode::infrastructure, "scales",
                  fmt::format("cannot create the database {} for scale {}: {}", m_info.dbname,
                              setup::scale_text(scale), e.message())),
            provider)) {
      throw *full;
    }
    throw Error(ExitCode::infrastructure, "scales",
                fmt::format("cannot create the database {} for scale {} ({}); each data scale "
                            "gets a database of its own: use a role that may CREATE DATABASE, "
                            "or remove `scales:`",
                            m_info.dbname, setup::scale_text(scale), e.message()));
  }
}

ScaleDatabase::~ScaleDatabase() {
  if (!m_created) return;
  try {
    db::Connection admin(admin_info(m_provider));
    admin.exec("DROP DATABASE IF EXISTS " + admin.raw().quote_name(m_info.dbname));
  } catch (...) {  // best effort: the server may be gone already, and stops with the session
  }
}

void measure_at_scales(Session& session, const config::Config& cfg,
                       const std::vector<config::Stage>& stages, const measure::RunContext& ctx,
                       const std::vector<results::StageResult*>& measured, results::Results* into,
                       const std::string& who) {
  const double load = cfg.load_scale();
  const std::vector<double> extra = cfg.extra_scales(stages);
  // at[i][scale]: stage i at that scale, from this function's runs.
  std::vector<std::map<double, results::StageResult>> at(stages.size());
  const std::string prefix = who.empty() ? "" : who + ": ";
  for (std::size_t k = 0; k < extra.size(); ++k) {
    const double scale = extra[k];
    // A stage that failed on less data is not measured on more: when every stage has, the
    // further scales' setups would load data that nothing reads.
    std::vector<std::string> failed_at;  // the scales where the stages failed, in order
    bool alive = false;
    for (std::size_t i = 0; i < stages.size(); ++i) {
      if (!measured[i]) continue;
      std::string where = measured[i]->failed() ? setup::scale_text(load) : "";
      for (const auto& [s, r] : at[i]) {
        if (where.empty() && r.failed()) where = setup::scale_text(s);
      }
      if (where.empty()) {
        for (std::size_t j = k; j < extra.size(); ++j) alive = alive || lists(stages[i], extra[j]);
      } else if (std::find(failed_at.begin(), failed_at.end(), where) == failed_at.end()) {
        failed_at.push_back(where);
      }
    }
    if (!alive) {
      std::string skipped;
      for (std::size_t j = k; j < extra.size(); ++j) {
        skipped += (skipped.empty() ? "" : ", ") + setup::scale_text(extra[j]);
      }
      std::string scales;
      for (const auto& f : failed_at) scales += (scales.empty() ? "" : " or ") + f;
      if (ctx.progress) {
        ctx.progress->line(fmt::format("{}scales: every stage failed (at scale {}), so scale{} {} "
                                       "{} not set up",
                                       prefix, scales, extra.size() - k == 1 ? "" : "s", skipped,
                                       extra.size() - k == 1 ? "is" : "are"));
      }
      break;
    }
    std::vector<config::Stage> here;
    for (const auto& s : stages) {
      if (lists(s, scale)) here.push_back(s);
    }
    const std::string name = "scale " + setup::scale_text(scale);
    ScaleDatabase database(session.provider(), measure::stages_database(ctx), scale);
    session.setup(cfg, who, database.info(), into, scale);
    measure::RunContext scaled = ctx;
    scaled.database = database.info();
    scaled.check_snapshots = false;
    scaled.scale = scale;
    // What a stage writes beside its results (its EXPLAIN under explain/) is the load scale's:
    // the other scales' goes to the work folder, removed with the session.
    scaled.out_dir = ctx.work_dir / ("scale-" + database.info().dbname);
    scaled.label = ctx.label + name + ": ";
    scaled.isolation.reset();
    measure::enable_profile(scaled, cfg.database);
    if (std::string note = measure::enable_isolation(scaled, here); !note.empty() && ctx.progress) {
      ctx.progress->line(prefix + name + ": note: " + note);
    }
    for (std::size_t i = 0; i < stages.size(); ++i) {
      if (!lists(stages[i], scale) || !measured[i] || measured[i]->failed()) continue;
      util::throw_if_interrupted();
      if (ctx.progress) ctx.progress->name_stage(static_cast<int>(i) + 1, stages[i].name);
      results::StageResult r = measure::run_stage(stages[i], scaled);
      r.error = util::mask_secrets(r.error);
      at[i].emplace(scale, std::move(r));
    }
    scaled.isolation.reset();  // its template goes while the database is there
  }
  for (std::size_t i = 0; i < stages.size(); ++i) {
    results::StageResult* main = measured[i];
    if (!main || stages[i].scales.size() < 2) continue;
    std::vector<const results::StageResult*> per_scale;
    std::string errors;
    for (double scale : stages[i].scales) {
      if (scale == load) {
        per_scale.push_back(main->failed() ? nullptr : main);
        continue;
      }
      auto it = at[i].find(scale);
      if (it == at[i].end() || it->second.failed()) {
        per_scale.push_back(nullptr);
        if (it != at[i].end()) {
          errors += fmt::format("{}scale {}: {}", errors.empty() ? "" : "; ",
                                setup::scale_text(scale), it->second.error);
        }
        continue;
      }
      per_scale.push_back(&it->second);
    }
    main->growth = results::stage_growth(stages[i].scales, per_scale, cfg.production_scale);
    main->growth->error = errors;
    // A stage that fails on more data fails: a timeout or an error at scale 16 is what the
    // scales are there to find.
    if (!errors.empty() && !main->failed()) main->error = "at " + errors;
  }
}

void measure_present_at_scales(Session& session, const config::Config& cfg,
                               const std::vector<std::optional<config::Stage>>& stages,
                               const measure::RunContext& ctx, results::Results& into,
                               const std::string& who) {
  std::vector<config::Stage> present;
  std::vector<results::StageResult*> measured;
  for (const auto& s : stages) {
    if (!s || measured.size() >= into.stages.size()) continue;
    present.push_back(*s);
    measured.push_back(&into.stages[measured.size()]);
  }
  if (cfg.extra_scales(present).empty()) return;
  measure_at_scales(session, cfg, present, ctx, measured, &into, who);
}

}  // namespace coldgate::session
