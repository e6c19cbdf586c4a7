// The migration over the data scales: how its time and the stalls it causes grow with the
// data (classed on the blocks read, not on the noisy times), projected to production's size,
// and judged at the largest scale.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "migrate/findings.hpp"
#include "migrate/migrate.hpp"
#include "results/format.hpp"
#include "results/growth.hpp"

namespace coldgate::migrate {
namespace {

using results::Migration;
using results::MigrationFinding;
using results::MigrationFindingKind;
using results::MigrationGrowth;
using results::MigrationSeverity;

// The longest statements at the load scale whose growth is shown.
constexpr std::size_t k_fitted_statements = 5;

// A figure whose time stays below this at every scale costs production nothing worth a row of
// the report (a bookkeeping insert of 0.25 → 0.70 ms): not shown.
constexpr double k_fitted_floor_ms = 10;

bool worth_fitting(const MigrationGrowth& g) {
  return std::any_of(g.values_ms.begin(), g.values_ms.end(),
                     [](const std::optional<double>& v) { return v && *v >= k_fitted_floor_ms; });
}

std::string scale_list(const std::vector<double>& scales) {
  std::string out;
  for (double s : scales) out += (out.empty() ? "" : ", ") + fmt::format("{:g}", s);
  return out;
}

std::string values_text(const MigrationGrowth& g) {
  std::string out;
  for (const auto& v : g.values_ms) {
    out += (out.empty() ? "" : " → ") + (v ? results::format_value(*v, "ms") : std::string("—"));
  }
  return out;
}

// Catalog reads move by a page or two between runs of the same statement.
constexpr double k_blocks_slack = 2;

// The time and the shared blocks of the statements of `m` whose text is `query`, summed;
// nullopt where `m` was not measured or did not run it (its blocks: also where not recorded).
std::pair<std::optional<double>, std::optional<double>> statement_at(const Migration* m,
                                                                     const std::string& query) {
  std::optional<double> ms, blocks;
  if (!m) return {ms, blocks};
  bool blocks_everywhere = true;
  for (const auto& s : m->statements) {
    if (s.query != query) continue;
    ms = ms.value_or(0) + s.exec_ms;
    blocks_everywhere = blocks_everywhere && s.blocks;
    if (s.blocks) blocks = blocks.value_or(0) + *s.blocks;
  }
  return {ms, blocks_everywhere ? blocks : std::nullopt};
}

// The shared blocks of all the statements of `m`; nullopt without any, or where one lacks them.
std::optional<double> total_blocks(const Migration* m) {
  if (!m || m->statements.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& s : m->statements) {
    if (!s.blocks) return std::nullopt;
    sum += *s.blocks;
  }
  return sum;
}

const results::MigrationTable* table_in(const Migration* m, const std::string& name) {
  if (!m) return nullptr;
  for (const auto& t : m->tables) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace

void add_scales(Migration& m, const std::vector<double>& scales,
                const std::vector<const Migration*>& at, std::optional<double> production_scale,
                const config::MigrationGate& gate) {
  if (scales.size() < 2 || at.size() != scales.size()) return;
  m.scales = scales;
  m.production_scale = production_scale;
  const Migration* largest = at.back();
  // The class from the blocks, the time projected from them: the time at the largest scale that
  // has both, times the blocks' projected growth from there.
  auto fit = [&](MigrationGrowth g) {
    if (!worth_fitting(g)) return;
    g.blocks.resize(scales.size());
    results::GrowthFit f = results::fit_growth(scales, g.blocks, production_scale, k_blocks_slack);
    g.exponent = f.exponent;
    g.growth = f.growth;
    for (std::size_t i = scales.size(); f.projected && i-- > 0;) {
      if (!g.values_ms[i] || !g.blocks[i] || *g.blocks[i] <= 0) continue;
      g.projected_ms = *g.values_ms[i] * std::max(*f.projected, 0.0) / *g.blocks[i];
      break;
    }
    m.growth.push_back(std::move(g));
  };
  {
    MigrationGrowth wall{.what = "wall time", .counted = "all statements"};
    for (const auto* x : at) {
      wall.values_ms.push_back(x ? std::optional<double>(x->wall_ms) : std::nullopt);
      wall.blocks.push_back(total_blocks(x));
    }
    fit(std::move(wall));
  }
  std::size_t fitted = 0;
  for (const auto& s : m.statements) {  // longest first
    if (fitted++ >= k_fitted_statements) break;
    MigrationGrowth g{.what = "statement `" + s.query + "`", .counted = "its own"};
    for (const auto* x : at) {
      const auto [ms, blocks] = statement_at(x, s.query);
      g.values_ms.push_back(ms);
      g.blocks.push_back(blocks);
    }
    fit(std::move(g));
  }
  std::vector<std::string> tables;
  for (const auto& t : m.tables) {
    if (t.probed) tables.push_back(t.name);
  }
  // Per table: the reads' and the writes' longest wait over the scales, counted by the blocks of
  // the statement that took its lock at the largest scale.
  for (const auto& name : tables) {
    const auto* there = table_in(largest, name);
    const std::string cause = there ? there->lock_statement : std::string();
    bool known = !cause.empty();
    for (const auto* x : at) known = known && (!x || statement_at(x, cause).second);
    for (bool writes : {true, false}) {
      MigrationGrowth g{.what = fmt::format("{} of {} waited", writes ? "writes" : "reads", name),
                        .table = name,
                        .counted = known ? "statement `" + cause + "`" : "all statements"};
      for (const auto* x : at) {
        const auto* t = table_in(x, name);
        g.values_ms.push_back(t && t->probed ? std::optional<double>(writes ? t->write_stall_ms
                                                                            : t->read_stall_ms)
                                             : std::nullopt);
        g.blocks.push_back(known ? statement_at(x, cause).second : total_blocks(x));
      }
      fit(std::move(g));
    }
  }
  // Judged at the largest scale: the deterministic findings are its own.
  std::vector<MigrationFinding> kept;
  for (auto& f : m.findings) {
    if (f.kind == MigrationFindingKind::lock_without_timeout) kept.push_back(std::move(f));
  }
  if (largest) {
    for (const auto& f : largest->findings) {
      if (f.kind != MigrationFindingKind::rewrite && f.kind != MigrationFindingKind::index_build &&
          f.kind != MigrationFindingKind::validation) {
        continue;
      }
      MigrationFinding x = f;
      x.message += fmt::format(" (at scale {:g}, the largest)", scales.back());
      kept.push_back(std::move(x));
    }
  }
  const double max_stall_ms = static_cast<double>(gate.max_stall.count());
  for (const auto& g : m.growth) {
    if (g.table.empty() || !g.values_ms.back()) continue;
    const bool projected = production_scale && g.projected_ms;
    const double judged = projected ? *g.projected_ms : *g.values_ms.back();
    if (judged <= max_stall_ms) continue;
    // A rewrite or index build of the table is the stall's cause and says how long it was.
    if (std::any_of(kept.begin(), kept.end(),
                    [&](const MigrationFinding& x) { return explains_stall(x, g.table); })) {
      continue;
    }
    MigrationFinding f;
    f.kind = MigrationFindingKind::stall;
    f.table = g.table;
    if (const auto* t = table_in(largest, g.table)) {
      f.rows = t->rows;
      f.lock = t->lock;
      f.statement = t->lock_statement;
    }
    f.measured_ms = judged;
    f.message = fmt::format(
        "{} {} over scales {}{}{} (gate.migration.max_stall {})", g.what, values_text(g),
        scale_list(scales),
        g.growth == results::GrowthClass::none ? "" : fmt::format(": {} in the data", results::to_string(g.growth)),
        projected ? fmt::format("; ≈ {} at production's size (scale {:g}, a projection)",
                                results::format_value(*g.projected_ms, "ms"), *production_scale)
                  : "",
        results::format_value(max_stall_ms, "ms"));
    f.fix = k_stall_fix;
    auto same = std::find_if(kept.begin(), kept.end(), [&](const MigrationFinding& x) {
      return x.kind == MigrationFindingKind::stall && x.table == g.table;
    });
    if (same == kept.end()) {
      kept.push_back(std::move(f));
    } else if (judged > same->measured_ms) {
      *same = std::move(f);  // the table's reads and writes: one finding, the longer wait's
    }
  }
  m.findings = std::move(kept);
  regressions_first(m.findings);
}

}  // namespace coldgate::migrate
