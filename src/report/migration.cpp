#include "report/migration.hpp"

#include <fmt/core.h>

#include "report/escape.hpp"
#include "results/format.hpp"

namespace coldgate::report {
namespace {

using results::format_value;
using results::MigrationSeverity;

std::string ms(double v) { return format_value(v, "ms"); }
std::string bytes(std::uint64_t v) { return format_value(static_cast<double>(v), "bytes"); }

std::string cut(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "…";
}

}  // namespace

std::string migration_section(const results::Migration& m) {
  std::string out = "\n### Migration\n\n";
  std::size_t regressions = 0, warnings = 0;
  for (const auto& f : m.findings) {
    (f.severity == MigrationSeverity::regression ? regressions : warnings)++;
  }
  const std::string figures = fmt::format(
      "{} on a copy of base's data: {}, WAL {}, database {} → {}", md_with_code(m.source), ms(m.wall_ms),
      bytes(m.wal_bytes), bytes(m.size_before_bytes), bytes(m.size_after_bytes));
  if (regressions == 0 && m.drift.empty()) {
    out += fmt::format("✅ The migration is safe: {}{}.\n", figures,
                       warnings ? fmt::format("; {} warning{}", warnings, warnings == 1 ? "" : "s")
                                : "");
  } else {
    out += fmt::format("❌ {}{}{}. Measured: {}.\n", regressions ? fmt::format("{} regression{}",
                                                                               regressions, regressions == 1 ? "" : "s")
                                                             : "",
                       regressions && !m.drift.empty() ? ", " : "",
                       m.drift.empty() ? "" : "schema drift", figures);
  }
  if (!m.files.empty()) {
    std::string files;
    for (const auto& f : m.files) files += (files.empty() ? "" : ", ") + md_code(f);
    out += "\nFiles applied: " + files + ".\n";
  }
  if (!m.drift.empty()) {
    out += "\n**Schema drift**: the upgraded database differs from head's fresh setup (a model "
           "changed without its migration, or a migration edited after it ran):\n\n";
    for (const auto& d : m.drift) out += "- " + md_with_code(cut(d, 400)) + "\n";
  }
  for (const auto& f : m.findings) {
    out += fmt::format("\n- {} **{}** — {}", f.severity == MigrationSeverity::regression ? "❌" : "⚠️",
                       to_string(f.kind), md_with_code(cut(f.message, 600)));
    if (!f.fix.empty()) out += "\n  Fix: " + md_with_code(f.fix);
    out += "\n";
  }
  if (!m.trials.empty()) {
    out += "\n**Fixes tried** (`--try`): the statement alone, then the fix, each on a fresh copy of "
           "base's data with the probes beside it; the statement alone waits apart from the rest "
           "of the migration, so its figures differ from the table's above.\n\n"
           "| Finding | Fix tried | Writes waited | Reads waited | Lock seen | Verdict |\n"
           "|---|---|---:|---:|---|---|\n";
    auto lock_of = [](const std::optional<results::MigrationTrialSide>& side) {
      return !side ? std::string("—") : side->lock.empty() ? std::string("none seen") : md_text(side->lock);
    };
    for (const auto& t : m.trials) {
      std::string fix;
      for (const auto& s : t.fix) fix += (fix.empty() ? "" : "; ") + s;
      const std::string finding = fmt::format("{} on {}", to_string(t.kind), md_code(t.table, true));
      if (t.fix.empty()) {
        out += fmt::format("| {} | — | — | — | — | not tried: {} |\n", finding, md_text(t.not_tried));
        continue;
      }
      std::string verdict = !t.error.empty() ? "failed: " + md_text(cut(t.error, 200))
                            : t.fixed        ? std::string("✅ fixed")
                            : t.after        ? fmt::format("❌ not fixed ({} regression{} left)",
                                                           t.after->regressions,
                                                           t.after->regressions == 1 ? "" : "s")
                                             : std::string("—");
      auto pair = [&](double results::MigrationTrialSide::*field) {
        return fmt::format("{} → {}", t.before ? ms(*t.before.*field) : std::string("—"),
                           t.after ? ms(*t.after.*field) : std::string("—"));
      };
      out += fmt::format("| {} | {} | {} | {} | {} → {} | {} |\n", finding, md_code(cut(fix, 400), true),
                         pair(&results::MigrationTrialSide::write_stall_ms),
                         pair(&results::MigrationTrialSide::read_stall_ms), lock_of(t.before),
                         lock_of(t.after), verdict);
    }
  }
  if (!m.tables.empty()) {
    if (m.scales.size() >= 2) {
      out += fmt::format("\nThe tables at scale ×{:g}, where setup loads the data; the verdicts "
                         "above are made at ×{:g}, the largest:\n",
                         m.scales.front(), m.scales.back());
    }
    out += "\n| Table | Rows | Lock seen (held) | Reads waited | Writes waited | Rewrite |\n"
           "|---|---:|---|---:|---:|---|\n";
    for (const auto& t : m.tables) {
      out += fmt::format(
          "| {} | {} | {} | {} | {} | {} |\n", md_code(t.name, true), format_value(t.rows, "count"),
          t.lock.empty()         ? std::string("— (none seen; sampled every ~10 ms)")
          : t.lock_held_ms <= 0 ? fmt::format("{} (seen once: under ~10 ms)", md_text(t.lock))
                                 : fmt::format("{} ({})", md_text(t.lock), ms(t.lock_held_ms)),
          t.probed ? ms(t.read_stall_ms) : "not probed", t.probed ? ms(t.write_stall_ms) : "not probed",
          t.rewritten ? fmt::format("yes, {} → {}", bytes(t.bytes_before), bytes(t.bytes_after)) : "no");
    }
  }
  if (!m.growth.empty()) {
    std::string header = "| Over the data scales |";
    std::string rule = "|---|";
    for (double scale : m.scales) {
      header += fmt::format(" ×{:g} |", scale);
      rule += "---:|";
    }
    header += " Growth |";
    rule += "---|";
    if (m.production_scale) {
      header += fmt::format(" ×{:g} (production, projected) |", *m.production_scale);
      rule += "---:|";
    }
    out += "\n" + header + "\n" + rule + "\n";
    for (const auto& g : m.growth) {
      std::string row = "| " + md_with_code(cut(g.what, 160)) + " |";
      for (const auto& v : g.values_ms) row += " " + (v ? ms(*v) : std::string("—")) + " |";
      // The class is the blocks' (a count the machine's load does not move): shown beside it.
      std::string counts;
      for (const auto& b : g.blocks) {
        counts += (counts.empty() ? "" : " → ") + (b ? format_value(*b, "count") : std::string("—"));
      }
      row += " " + (g.growth == results::GrowthClass::none ? std::string("—") : std::string(to_string(g.growth))) +
             (counts.empty() ? "" : fmt::format(" (blocks {})", counts)) + " |";
      if (m.production_scale) row += " " + (g.projected_ms ? "≈ " + ms(*g.projected_ms) : std::string("—")) + " |";
      out += row + "\n";
    }
  }
  if (!m.statements.empty()) {
    out += fmt::format("\n<details><summary>{} statement{} of the migration</summary>\n\n"
                       "| Statement | Calls | Time | Blocks | WAL |\n|---|---:|---:|---:|---:|\n",
                       m.statements.size(), m.statements.size() == 1 ? "" : "s");
    std::size_t shown = 0;
    for (const auto& s : m.statements) {
      if (++shown > 30) break;
      out += fmt::format("| {} | {} | {} | {} | {} |\n", md_code(cut(s.query, 200), true),
                         format_value(static_cast<double>(s.calls), "count"), ms(s.exec_ms),
                         s.blocks ? format_value(*s.blocks, "count") : "—",
                         s.wal_bytes ? bytes(*s.wal_bytes) : "—");
    }
    out += "\n</details>\n";
  }
  if (m.lock_check) {
    out += "\nThe lock_timeout check ran the migration again on a second copy while an open "
           "transaction held ROW EXCLUSIVE on each table above.\n";
  }
  return out;
}

}  // namespace coldgate::report
