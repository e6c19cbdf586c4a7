#pragma once
// What `coldgate ab` and `coldgate stack` share: the sides of an interleaved measurement (one
// commit each: worktree, config, build, database on the one server) and what is done to their
// results. Internal to the ab module.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ab/git.hpp"
#include "config/config.hpp"
#include "db/connection.hpp"
#include "db/provider.hpp"
#include "measure/progress.hpp"
#include "measure/runner.hpp"
#include "results/results.hpp"
#include "util/error.hpp"

namespace coldgate::session {
class Session;
}

namespace coldgate::ab {

/// The first 12 hex digits of a commit, as progress lines and messages name it.
std::string short_sha(const std::string& sha);

/// `path` with symlinks resolved as far as it exists (/tmp vs /private/tmp, bind mounts).
std::filesystem::path resolved(const std::filesystem::path& path);

/// One side of an interleaved measurement: its commit, checkout, config and database.
struct Side {
  std::string name;  // "base" | "head" (ab), "1-s1" (stack): progress, COLDGATE_AB_SIDE
  std::string commit;
  std::unique_ptr<Worktree> worktree;
  config::Config config;
  std::optional<db::ConnectionInfo> database;  // nullopt: the provider's own
  /// What a failing `build:` command is: gate_failed for a change under review (it does not
  /// build), infrastructure for a base (there is nothing to compare against).
  ExitCode build_failure = ExitCode::infrastructure;
  /// How messages name the side, commit included: "pull request 2 (feature-2 1a2b3c4d5e6f)";
  /// "" names it by `name` and short commit ("head 1a2b3c4d5e6f").
  std::string label;
};

/// How messages name `side`: its label, else its name and short commit.
std::string side_label(const Side& side);

/// A `build:` command of one side that failed: the Error build() throws, with its parts kept
/// for judging whether the other side fails the same way.
class BuildFailure : public Error {
 public:
  /// Facts of a failed build command, as messages show them.
  struct Facts {
    std::string side;     // side_label(): "head 1a2b3c4d5e6f"
    std::string command;  // the `build:` command as configured
    std::string status;   // how it ended: "exit status 1", "killed by SIGKILL"
    std::string log;      // its log file, as messages name it
    std::string ending;   // ", ends: <line> | <line>" (its log's last lines), or ""
  };
  BuildFailure(ExitCode code, Facts facts)
      : Error(code, "build of " + facts.side,
              "`" + facts.command + "` failed (" + facts.status + "); log " + facts.log +
                  facts.ending),
        m_facts(std::move(facts)) {}
  /// What failed, where and how.
  const Facts& facts() const noexcept { return m_facts; }

 private:
  Facts m_facts;
};

/// Loads `side`'s copy of the config: its own `file` when the commit has it, else `head_text`
/// re-rooted there (relative paths then resolve inside that side's worktree). Throws
/// Error(infrastructure) naming the side when it does not load, Error(interrupted).
config::Config side_config(const std::filesystem::path& file, const std::string& head_text,
                           const Side& side);

/// Runs `side`'s `build:` commands with /bin/sh -c in its copy of the config's folder (env
/// COLDGATE_AB_SIDE, COLDGATE_AB_COMMIT); output to `log`. A failing command throws
/// BuildFailure(side.build_failure) at `build of <side_label>` naming the command, how it ended,
/// the log and its last lines; Error(interrupted) on SIGINT/SIGTERM.
void build(const Side& side, const std::filesystem::path& log, measure::Progress& progress);

/// The error for a change whose build failed (`change`) once its base was built too:
/// `base_failure` is base's BuildFailure, or nullptr when the base builds. When the base builds,
/// `change` with "<base> builds, so the change breaks the build" appended (its exit code kept);
/// when it fails too, Error(infrastructure) at `build of <change side> and <base side>` saying the
/// base fails the same way (or at which command), so it is not the change's doing, and what to
/// check: dependencies the `build:` steps must install in a fresh worktree.
Error judged_build_failure(const BuildFailure& change, const std::string& base_label,
                           const BuildFailure* base_failure);

/// Another commit's database on the one server: dropped when the run ends (the local and
/// container providers remove the whole server anyway; an external server keeps no leftover).
/// Made empty for that commit's setup to load, or by take_over() of the database its setup
/// made itself. Throws Error(infrastructure) when the role may not CREATE DATABASE.
class BaseDatabase {
 public:
  BaseDatabase(const db::Provider& provider, const std::string& name, bool create);
  ~BaseDatabase();
  /// Renames database `from`, as this commit's setup left it, to this one, and leaves an empty
  /// `from` for the next setup (unless that setup makes its own). Throws Error(infrastructure).
  void take_over(const std::string& from);
  BaseDatabase(const BaseDatabase&) = delete;
  BaseDatabase& operator=(const BaseDatabase&) = delete;
  const db::ConnectionInfo& info() const { return m_info; }

 private:
  // The server's `postgres` database: not the one to rename.
  db::ConnectionInfo admin_info() const;

  const db::Provider& m_provider;
  std::string m_name;
  db::ConnectionInfo m_info;
  bool m_created = false;
};

/// True when a setup step of `cfg` loads from another database than the stages' (psql's
/// `database:`): a script that drops and creates the stages' database and `\c`s into it.
bool loads_elsewhere(const config::Config& cfg);

/// The stages `other` measures: its own definition of each of `head`'s stages (its files,
/// query, command) with head's runs, warm, cold mode, timeout and gate, so the cold runs pair
/// up. A stage `other` does not have is nullopt (measured on head only: verdict `new`).
std::vector<std::optional<config::Stage>> base_stages(const config::Config& head,
                                                      const config::Config& other);

/// Empty results of one commit, started now.
results::Results new_results(const std::string& config_name, const config::Config& cfg,
                             const results::Environment& env, const std::string& commit,
                             const std::string& branch);

/// True when no stage of `r` failed (what may go into the cache).
bool all_ran(const results::Results& r);

/// Paths in results measured in `worktree`, which is gone after the run, named as the
/// checkout's own (snapshots/x.json, not coldgate-out/ab/head/snapshots/x.json): the snapshot's
/// path and its diff from the repository's root, its message's paths from the current folder
/// (app/snapshots/x.json is snapshots/x.json from app/); pending candidates
/// (<dir>/snapshots/<worktree>/…) moved to <dir>/snapshots/… as `coldgate run --ci` puts them.
void strip_worktree(results::Results& r, const std::filesystem::path& worktree);

/// How `ab`'s and `stack`'s snapshot messages say to accept a candidate: `coldgate accept`,
/// with `-c FILE` when `config` (as the user passed it) is not ./coldgate.yaml.
std::string accept_command(const std::filesystem::path& config);

/// The first few uncommitted changes for a message: "M a.sql, ?? b.sql, … (7 in all)".
std::string first_changes(const std::vector<std::string>& dirty);

/// `change`'s migration (its `migrate:`) measured on a copy of `below_db`, the database `below`'s
/// setup loaded, and its schema compared with `change_db` (the change's fresh setup); with
/// `scales:` in the change's config, `below`'s data is set up again at each further scale (a
/// session::ScaleDatabase each, dropped after) and the migration measured there too, then
/// migrate::add_scales. nullopt when the change has no `migrate:` or its migration changed
/// nothing. Throws what migrate::measure throws; a setup of `below` that fails at a scale is
/// Error(infrastructure) at "setup (<below> …) at scale <s>". With `try_fixes` (`--try`), each
/// regression's fix is then measured on copies of `below_db` (migrate::try_fixes).
std::optional<results::Migration> measure_migration(session::Session& session, const Side& change,
                                                    const Side& below,
                                                    const db::ConnectionInfo& below_db,
                                                    const db::ConnectionInfo& change_db,
                                                    measure::Progress& progress, bool try_fixes);

/// One stage of several commits, round-robin: run 1 of each measurer in order, then run 2 of
/// each, … until all are done (a null entry is skipped: a commit without the stage).
void interleave(const std::vector<measure::StageMeasurer*>& measurers);

/// Two sides of one stage that the gate will judge, head against base: indexes into the
/// measurers given to decide(), and head's gate for that stage.
struct StagePair {
  std::size_t base = 0;
  std::size_t head = 0;
  const config::Gate* gate = nullptr;
  std::string label;  // after the stage's name in progress lines: "" (ab), " (1-s1 on 0-main)"
};

/// What decide() did for one pair: the time metrics whose verdict was undecided
/// (gate::undecided) before a run, and the cold runs each side made past the stage's `runs`.
struct ExtraRuns {
  std::vector<std::string> metrics;  // empty: decided on the stage's own runs
  int base = 0;
  int head = 0;
};

/// After interleave(): time verdicts that noise does not decide. While a pair's verdict of a
/// time metric is undecided on the samples so far (gate::undecided_metrics) and both its sides
/// have made fewer than gate.max_extra_runs runs past the stage's `runs`, one more cold run of
/// every side of such pairs, in the measurers' order (base, head, base, head, …); it stops as
/// soon as no pair is undecided. A null measurer (a cached side, a commit without the stage)
/// makes its pairs decided as they are. Returns one entry per pair; progress lines say which
/// metrics were near and how it ended. Throws as StageMeasurer::run_once() does.
std::vector<ExtraRuns> decide(const std::vector<measure::StageMeasurer*>& measurers,
                              const std::vector<StagePair>& pairs, const std::string& stage,
                              measure::Progress& progress);

/// After gate::compare: each verdict of `extra.metrics` in `stage` gets `extra_runs` (head's)
/// and its reason "; decided after N more runs each" ("… N more runs of head and M of base"
/// in a stack where they differ). Nothing when no extra run was made.
void note_extra_runs(results::GateResult& gate, const std::string& stage,
                     const ExtraRuns& extra);

/// After gate::compare of a pair one side of which (`cached`: "base", "head" or "both
/// sides") came from the cache and cannot be measured again: each time verdict that
/// gate::undecided holds for on the final samples, in a stage whose max_extra_runs is above 0,
/// gets "; near its threshold, but <cached> came from the cache: no extra runs (--no-cache
/// measures both sides interleaved)".
void note_cached(results::GateResult& gate, const results::Results& head,
                 const results::Results& base, const config::Config& head_config,
                 const std::string& cached);

}  // namespace coldgate::ab
