#include "ab/sides.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "gate/decide.hpp"
#include "gate/gate.hpp"
#include "measure/environment.hpp"
#include "migrate/migrate.hpp"
#include "session/scales.hpp"
#include "session/session.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

namespace coldgate::ab {
namespace fs = std::filesystem;
namespace {

// A pending candidate's old and new place.
struct SnapshotFix {
  std::string from;
  std::string to;
};

// Every occurrence of `from` in `text` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (auto pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

// ", ends: <line> | <line> | <line>": a build log's last lines for a one-line message, after
// ", says: <line>" when the line that says why comes before them (npm prints its usage text
// after its error); "" when the log is empty or gone.
std::string log_ending(const fs::path& log) {
  std::error_code ec;
  std::string text;
  try {
    if (fs::exists(log, ec)) text = util::read_file(log);
  } catch (const Error&) {
    return "";  // unreadable: the message names the log all the same
  }
  std::string tail = util::tail_lines(text, 3);
  std::string joined;
  for (std::size_t start = 0; start <= tail.size();) {
    std::size_t nl = std::min(tail.find('\n', start), tail.size());
    std::string line(util::trim(std::string_view(tail).substr(start, nl - start)));
    if (!line.empty()) joined += (joined.empty() ? "" : " | ") + line;
    start = nl + 1;
  }
  if (joined.empty()) return "";
  const std::string cause = util::build_log_cause(text, 3);
  return (cause.empty() ? std::string(", ends: ") : ", says: " + cause + "; ends: ") + joined;
}

}  // namespace

std::string short_sha(const std::string& sha) {
  return sha.substr(0, 12);
}

std::string side_label(const Side& side) {
  return side.label.empty() ? fmt::format("{} {}", side.name, short_sha(side.commit)) : side.label;
}

fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  return ec ? fs::absolute(path).lexically_normal() : p;
}

config::Config side_config(const fs::path& file, const std::string& head_text, const Side& side) {
  std::error_code ec;
  try {
    if (fs::exists(file, ec)) return config::load(file);
    return config::parse(head_text, file);
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    throw Error(ExitCode::infrastructure, fmt::format("{} {}", side.name, short_sha(side.commit)),
                "its config does not load: " + e.message());
  }
}

void build(const Side& side, const fs::path& log, measure::Progress& progress) {
  if (side.config.build.empty()) return;
  std::error_code ec;
  fs::remove(log, ec);
  fs::create_directories(log.parent_path(), ec);
  for (const auto& command : side.config.build) {
    progress.line(fmt::format("build {} {}: {}", side.name, short_sha(side.commit), command));
    util::SpawnOptions o;
    o.argv = {"/bin/sh", "-c", command};
    o.cwd = side.config.base_dir;
    o.capture_stdout = false;
    o.capture_stderr = false;
    o.stdout_path = log;
    o.stderr_path = log;
    o.env = {"COLDGATE_AB_SIDE=" + side.name, "COLDGATE_AB_COMMIT=" + side.commit};
    auto t0 = std::chrono::steady_clock::now();
    util::RunOutput out;
    try {
      out = util::run(o);
    } catch (const Error& e) {
      // An interrupted build leaves no half a log behind.
      if (e.code() == ExitCode::interrupted) fs::remove(log, ec);
      throw;
    }
    if (out.status.ok()) {
      progress.line(fmt::format(
          "build {} done ({:.1f} s)", side.name,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
      continue;
    }
    throw BuildFailure(side.build_failure, {side_label(side), command, out.status.describe(),
                                            util::display_path(log), log_ending(log)});
  }
}

Error judged_build_failure(const BuildFailure& change, const std::string& base_label,
                           const BuildFailure* base_failure) {
  if (!base_failure) {
    return Error(change.code(), change.where(),
                 fmt::format("{}; {} builds, so the pull request breaks the build", change.what(),
                             base_label));
  }
  const BuildFailure::Facts& c = change.facts();
  const BuildFailure::Facts& b = base_failure->facts();
  const std::string how =
      b.command == c.command
          ? fmt::format("and {} fails the same way ({})", base_label, b.status)
          : fmt::format("and {} does not build either (`{}` failed, {})", base_label, b.command,
                        b.status);
  return Error(
      ExitCode::infrastructure, fmt::format("build of {} and {}", c.side, base_label),
      fmt::format("`{}` failed ({}) {}, so it is not the pull request's doing: check what the "
                  "build needs on this machine — each side is a fresh git worktree without the "
                  "checkout's untracked files (node_modules/, a virtualenv, vendor/bundle), so "
                  "the `build:` steps must install them (npm ci, pip install -r "
                  "requirements.txt, bundle install); logs {} and {}{}",
                  c.command, c.status, how, c.log, b.log, c.ending));
}

BaseDatabase::BaseDatabase(const db::Provider& provider, const std::string& name, bool create)
    : m_provider(provider), m_name(name) {
  try {
    db::Connection admin(provider.connection_info());
    std::string quoted = admin.raw().quote_name(name);
    admin.exec("DROP DATABASE IF EXISTS " + quoted);
    if (create) admin.exec("CREATE DATABASE " + quoted);
    m_created = create;
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    if (auto full = db::disk_full(e, provider)) throw *full;
    throw Error(ExitCode::infrastructure, "database",
                fmt::format("cannot create the base side's database {} ({}); coldgate ab needs "
                            "a role that may CREATE DATABASE",
                            name, e.message()));
  }
  m_info = provider.connection_info();
  m_info.dbname = name;
}

BaseDatabase::~BaseDatabase() {
  if (!m_created) return;
  try {
    db::Connection admin(m_provider.connection_info());
    admin.exec("DROP DATABASE IF EXISTS " + admin.raw().quote_name(m_name));
  } catch (...) {  // best effort: the server may be gone already
  }
}

void BaseDatabase::take_over(const std::string& from) {
  try {
    db::Connection admin(admin_info());
    std::string quoted = admin.raw().quote_name(from);
    admin.exec("ALTER DATABASE " + quoted + " RENAME TO " + admin.raw().quote_name(m_name));
    m_created = true;
    admin.exec("CREATE DATABASE " + quoted);
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    if (auto full = db::disk_full(e, m_provider)) throw *full;
    throw Error(ExitCode::infrastructure, "database",
                fmt::format("cannot rename base's database {} to {} ({}); coldgate ab needs a "
                            "role that may CREATE DATABASE",
                            from, m_name, e.message()));
  }
}

db::ConnectionInfo BaseDatabase::admin_info() const {
  db::ConnectionInfo info = m_provider.connection_info();
  info.dbname = "postgres";
  return info;
}

bool loads_elsewhere(const config::Config& cfg) {
  return std::any_of(cfg.setup.begin(), cfg.setup.end(), [&](const config::SetupStep& s) {
    return !s.database.empty() && s.database != cfg.database.name;
  });
}

std::vector<std::optional<config::Stage>> base_stages(const config::Config& head,
                                                      const config::Config& other) {
  std::vector<std::optional<config::Stage>> out;
  for (const auto& h : head.stages) {
    auto it = std::find_if(other.stages.begin(), other.stages.end(),
                           [&](const config::Stage& b) { return b.name == h.name; });
    if (it == other.stages.end()) {
      out.emplace_back();
      continue;
    }
    config::Stage s = *it;
    s.runs = h.runs;
    s.warm = h.warm;
    s.cold = h.cold;
    s.isolation = h.isolation;
    s.timeout = h.timeout;
    s.gate = h.gate;
    out.emplace_back(std::move(s));
  }
  return out;
}

results::Results new_results(const std::string& config_name, const config::Config& cfg,
                             const results::Environment& env, const std::string& commit,
                             const std::string& branch) {
  results::Results r;
  r.tool_version = COLDGATE_VERSION;
  r.started_at = measure::utc_now();
  r.config = config_name;
  r.title = cfg.report.title;
  r.git.commit = commit;
  r.git.branch = branch;
  r.environment = env;
  return r;
}

bool all_ran(const results::Results& r) {
  return std::none_of(r.stages.begin(), r.stages.end(), [](const auto& s) { return s.failed(); });
}

namespace {

// The root of the checkout `worktree` was added from, by its `.git` file ("gitdir:
// <repo>/.git/worktrees/<name>"); empty when it does not say.
fs::path checkout_of(const fs::path& worktree) {
  std::ifstream in(worktree / ".git");
  std::string line;
  if (!std::getline(in, line) || !line.starts_with("gitdir: ")) return {};
  const fs::path gitdir = fs::path(line.substr(8)).lexically_normal();
  const fs::path admin = gitdir.parent_path();  // <repo>/.git/worktrees
  if (admin.filename() != "worktrees" || admin.parent_path().filename() != ".git") return {};
  return admin.parent_path().parent_path();
}

}  // namespace

std::string accept_command(const fs::path& config) {
  if (config.lexically_normal() == "coldgate.yaml") return "coldgate accept";
  return "coldgate accept -c " + config.string();
}

void strip_worktree(results::Results& r, const fs::path& worktree) {
  const std::string prefix = util::display_path(worktree) + "/";
  const fs::path checkout = checkout_of(worktree);
  for (auto& s : r.stages) {
    if (!s.snapshot) continue;
    SnapshotFix fix{s.snapshot->pending, replaced(s.snapshot->pending, prefix, "")};
    if (!fix.from.empty() && fix.from != fix.to) {
      std::error_code ec;
      fs::create_directories(fs::path(fix.to).parent_path(), ec);
      for (const char* ext : {"", ".diff"}) {
        if (fs::exists(fix.from + ext, ec)) fs::rename(fix.from + ext, fix.to + ext, ec);
      }
      // fs::remove() removes only empty folders: stops at the first one still in use.
      for (fs::path dir = fs::path(fix.from).parent_path(); !dir.empty() && fs::remove(dir, ec);
           dir = dir.parent_path()) {
      }
      s.snapshot->message = replaced(s.snapshot->message, fix.from, fix.to);
      s.snapshot->pending = fix.to;
    }
    const std::string in_worktree = s.snapshot->path;
    s.snapshot->path = replaced(in_worktree, prefix, "");
    // The message is read where the command ran: the checkout's file as reached from there.
    if (!checkout.empty() && in_worktree.starts_with(prefix)) {
      s.snapshot->message = replaced(s.snapshot->message, in_worktree,
                                     util::display_path(checkout / s.snapshot->path));
    }
    s.snapshot->message = replaced(s.snapshot->message, prefix, "");
    s.snapshot->diff = replaced(s.snapshot->diff, prefix, "");
  }
}

std::string first_changes(const std::vector<std::string>& dirty) {
  std::string list;
  for (std::size_t i = 0; i < dirty.size() && i < 5; ++i) list += (i ? ", " : "") + dirty[i];
  if (dirty.size() > 5) list += fmt::format(", … ({} in all)", dirty.size());
  return list;
}

void interleave(const std::vector<measure::StageMeasurer*>& measurers) {
  auto pending = [&] {
    return std::any_of(measurers.begin(), measurers.end(),
                       [](const measure::StageMeasurer* m) { return m && !m->done(); });
  };
  while (pending()) {
    for (auto* m : measurers) {
      if (m) m->run_once();
    }
  }
}

std::vector<ExtraRuns> decide(const std::vector<measure::StageMeasurer*>& measurers,
                              const std::vector<StagePair>& pairs, const std::string& stage,
                              measure::Progress& progress) {
  std::vector<ExtraRuns> out(pairs.size());
  for (;;) {
    std::vector<bool> more(measurers.size(), false);
    bool any = false;
    for (std::size_t j = 0; j < pairs.size(); ++j) {
      const StagePair& p = pairs[j];
      measure::StageMeasurer* b = measurers[p.base];
      measure::StageMeasurer* h = measurers[p.head];
      const int budget = p.gate->max_extra_runs;
      if (!b || !h || b->extra_runs() >= budget || h->extra_runs() >= budget) continue;
      std::vector<std::string> names = gate::undecided_metrics(h->partial(), b->partial(), *p.gate);
      if (names.empty()) continue;
      std::vector<std::string>& seen = out[j].metrics;
      if (seen.empty()) {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        progress.line(fmt::format(
            "stage {}{}: {} near the threshold: more cold runs of both sides, interleaved (at "
            "most {} each)",
            stage, p.label, list, budget));
      }
      for (auto& n : names) {
        if (std::find(seen.begin(), seen.end(), n) == seen.end()) seen.push_back(std::move(n));
      }
      more[p.base] = more[p.head] = true;
      any = true;
    }
    if (!any) break;
    for (std::size_t k = 0; k < measurers.size(); ++k) {
      if (!more[k]) continue;
      measurers[k]->add_runs(1);
      measurers[k]->run_once();
    }
  }
  for (std::size_t j = 0; j < pairs.size(); ++j) {
    if (out[j].metrics.empty()) continue;
    out[j].base = measurers[pairs[j].base]->extra_runs();
    out[j].head = measurers[pairs[j].head]->extra_runs();
    progress.line(fmt::format("stage {}{}: decided after {}", stage, pairs[j].label,
                              out[j].base == out[j].head
                                  ? fmt::format("{} more run{} each", out[j].head,
                                                out[j].head == 1 ? "" : "s")
                                  : fmt::format("{} more runs of head and {} of base",
                                                out[j].head, out[j].base)));
  }
  return out;
}

void note_extra_runs(results::GateResult& gate, const std::string& stage,
                     const ExtraRuns& extra) {
  if (extra.head == 0 && extra.base == 0) return;
  const std::string said =
      extra.base == extra.head
          ? fmt::format("; decided after {} more run{} each", extra.head,
                        extra.head == 1 ? "" : "s")
          : fmt::format("; decided after {} more run{} of head and {} of base", extra.head,
                        extra.head == 1 ? "" : "s", extra.base);
  for (auto& v : gate.metrics) {
    if (v.stage != stage ||
        std::find(extra.metrics.begin(), extra.metrics.end(), v.metric) == extra.metrics.end()) {
      continue;
    }
    v.extra_runs = extra.head;
    v.reason += said;
  }
}

void note_cached(results::GateResult& gate, const results::Results& head,
                 const results::Results& base, const config::Config& head_config,
                 const std::string& cached) {
  const gate::Thresholds thresholds = gate::Thresholds::from(head_config);
  auto find = [](const results::Results& r, const std::string& name) -> const results::StageResult* {
    for (const auto& s : r.stages) {
      if (s.name == name) return &s;
    }
    return nullptr;
  };
  for (auto& v : gate.metrics) {
    const config::Gate& g = thresholds.for_stage(v.stage);
    if (g.max_extra_runs <= 0) continue;
    const results::StageResult* hs = find(head, v.stage);
    const results::StageResult* bs = find(base, v.stage);
    const results::Metric* hm = hs ? hs->find(v.metric) : nullptr;
    const results::Metric* bm = bs ? bs->find(v.metric) : nullptr;
    if (!hm || !bm || !gate::undecided(v, *hm, *bm, g)) continue;
    v.reason += fmt::format(
        "; near its threshold, but {} came from the cache: no extra runs (--no-cache measures "
        "both sides interleaved)",
        cached);
  }
}

std::optional<results::Migration> measure_migration(session::Session& session, const Side& change,
                                                    const Side& below,
                                                    const db::ConnectionInfo& below_db,
                                                    const db::ConnectionInfo& change_db,
                                                    measure::Progress& progress, bool try_fixes) {
  const config::Config& cfg = change.config;
  if (cfg.migrate.empty()) return std::nullopt;
  migrate::Plan plan;
  plan.migrate = cfg.migrate;
  if (!plan.migrate.sql_dir.empty()) {
    plan.files = migrate::new_sql_files(cfg.migrate, below.config.migrate);
  }
  plan.env = cfg.env;
  plan.base_dir = cfg.base_dir;
  plan.gate = cfg.migration_gate;
  plan.timeout = cfg.default_timeout;
  plan.who = side_label(change);
  auto say = [&](const std::string& line) { progress.line(line); };
  auto m = migrate::measure(session.provider(), below_db, change_db, plan, say);
  if (!m) {
    progress.line(fmt::format("migrate: {}'s migration changed nothing on {}'s data",
                              side_label(change), side_label(below)));
    return m;
  }
  if (cfg.scales.size() >= 2) {
    // The same migration on below's data at each further scale: how what it costs grows.
    std::vector<std::optional<results::Migration>> at;
    plan.lock_check = false;
    for (std::size_t i = 1; i < cfg.scales.size(); ++i) {
      const double scale = cfg.scales[i];
      session::ScaleDatabase database(session.provider(), below_db, scale);
      try {
        session.setup(below.config, below.name, database.info(), nullptr, scale);
      } catch (const Error& e) {
        if (e.code() != ExitCode::gate_failed) throw;
        throw Error(ExitCode::infrastructure,
                    fmt::format("setup ({}) at scale {}", side_label(below), fmt::format("{:g}", scale)),
                    e.message() + "; the migration cannot be measured at that scale");
      }
      at.push_back(migrate::measure(session.provider(), database.info(), std::nullopt, plan, say));
    }
    std::vector<const results::Migration*> points{&*m};
    for (const auto& x : at) points.push_back(x ? &*x : nullptr);
    migrate::add_scales(*m, cfg.scales, points, cfg.production_scale, cfg.migration_gate);
  }
  for (const auto& f : m->findings) {
    progress.line(fmt::format("migrate: {}: {}", to_string(f.severity), f.message));
  }
  for (const auto& d : m->drift) progress.line("migrate: schema drift: " + d);
  if (try_fixes) {
    plan.lock_check = false;
    m->trials = migrate::try_fixes(session.provider(), below_db, *m, plan, say);
  }
  return m;
}

}  // namespace coldgate::ab
