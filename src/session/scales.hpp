#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "db/connection_info.hpp"
#include "db/provider.hpp"
#include "measure/runner.hpp"
#include "results/results.hpp"

namespace coldgate::session {

class Session;

/// The database of one extra data scale: `<stages database>_scale<s>` ("coldgate_scale4",
/// "coldgate_scale0_5"), made empty (one a killed run left is dropped first) and dropped again
/// when this ends; owned (db::owned_database_name, then db::owned_comment) from the moment it
/// exists, so that a killed run's is dropped by the next session on its server. Throws Error(infrastructure) naming the database when the role may not
/// create it, Error(interrupted).
class ScaleDatabase {
 public:
  ScaleDatabase(const db::Provider& provider, const db::ConnectionInfo& stages, double scale);
  ~ScaleDatabase();
  ScaleDatabase(const ScaleDatabase&) = delete;
  ScaleDatabase& operator=(const ScaleDatabase&) = delete;
  /// Where setup loads this scale and the stages run on it.
  const db::ConnectionInfo& info() const { return m_info; }

 private:
  const db::Provider& m_provider;
  db::ConnectionInfo m_info;
  bool m_created = false;
};

/// Measures `stages` at every extra scale of `cfg` (config::Config::extra_scales): for each, a
/// ScaleDatabase set up by `session` at that scale (its steps recorded in `into->setup` as
/// "scale 4: <label>"), profiled and kept for `isolation:` as the stages' database is, then
/// every stage that lists the scale run on it as in `ctx` (no snapshot check: the snapshot is
/// the load scale's). `measured[i]` is stages[i] at the load scale; each stage with two scales
/// or more gets its growth (results::stage_growth with cfg.production_scale); a stage that
/// fails at a scale fails ("at scale 4: …"). `who` prefixes the progress ("base"). Throws as
/// Session::setup (a step that fails at a scale is named with it), Error(infrastructure),
/// Error(interrupted).
void measure_at_scales(Session& session, const config::Config& cfg,
                       const std::vector<config::Stage>& stages, const measure::RunContext& ctx,
                       const std::vector<results::StageResult*>& measured, results::Results* into,
                       const std::string& who = "");

/// measure_at_scales for one side of `ab` or `stack`, whose commit may lack some stages
/// (nullopt): the present ones, in order, are `into.stages` in order. Does nothing when none
/// of them lists an extra scale. Throws as measure_at_scales.
void measure_present_at_scales(Session& session, const config::Config& cfg,
                               const std::vector<std::optional<config::Stage>>& stages,
                               const measure::RunContext& ctx, results::Results& into,
                               const std::string& who);

}  // namespace coldgate::session
