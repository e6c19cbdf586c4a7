#include "report/sections.hpp"

#include <fmt/core.h>

#include "gate/gate.hpp"
#include "report/report.hpp"

namespace coldgate::report {

using namespace coldgate::results;

namespace {

// "base from cache, measured 2026-11-30 on another runner: not interleaved".
std::string cache_note(const Results& r) {
  const GateResult& g = *r.gate;
  std::string note;
  if (g.base_source == BaseSource::cache) {
    std::string date = g.base_measured_at.substr(0, g.base_measured_at.find('T'));
    std::string runner;
    if (!g.base_host.empty())
      runner = g.base_host == r.environment.host ? " on this runner" : " on another runner";
    note = "base from cache";
    if (!date.empty() || !runner.empty()) note += ", measured";
    if (!date.empty()) note += " " + md_text(capped(date, 40));
    note += runner;
  }
  if (g.head_cached) {  // stack: this pull request's commit measured by an earlier run
    std::string date = r.finished_at.substr(0, r.finished_at.find('T'));
    note += (note.empty() ? "" : "; ") + std::string("head from cache");
    if (!date.empty()) note += ", measured " + md_text(capped(date, 40));
  }
  return "ℹ️ " + note + ": not interleaved";
}

// "base: the median of 5 recorded results of `main` in `git:coldgate-history` (`a1b2c3d` …
// `e4f5a6b`), not measured in this run", with "only 3 of 5 asked were found" when fewer.
std::string history_note(const Results& r) {
  const GateResult& g = *r.gate;
  std::string of =
      g.base_git.branch.empty() ? "" : " of " + md_code(capped(one_line(g.base_git.branch), 200));
  if (!r.history || r.history->commits.empty())
    return "ℹ️ base: recorded results" + of + " from the history, not measured in this run";
  const HistoryTrend& h = *r.history;
  const std::size_t k = h.commits.size();
  std::string what =
      k == 1 ? "the recorded result" : fmt::format("the median of {} recorded results", k);
  std::string in = h.store.empty() ? "" : " in " + md_code(capped(one_line(h.store), 300));
  std::string found;
  if (h.asked > 0 && k < static_cast<std::size_t>(h.asked))
    found = fmt::format("; only {} of {} asked were found", k, h.asked);
  return fmt::format("ℹ️ base: {}{}{} ({}{}), not measured in this run", what, of, in,
                     history_range(h), found);
}

// Where the base came from when it was not measured beside head in this run (the cache, the
// history store); "" when it was (interleaved) or is a file the user gave.
std::string base_note(const Results& r) {
  if (!r.gate) return "";
  if (r.gate->base_source == BaseSource::cache || r.gate->head_cached) return cache_note(r);
  if (r.gate->base_source == BaseSource::history) return history_note(r);
  return "";
}

}  // namespace

// "`a1b2c3d` … `e4f5a6b`": the oldest and the newest commit a history baseline used.
std::string history_range(const HistoryTrend& h) {
  std::string first = md_code(short_sha(one_line(h.commits.front().commit)));
  if (h.commits.size() == 1) return first;
  return first + " … " + md_code(short_sha(one_line(h.commits.back().commit)));
}

std::string top(const Results& r) {
  std::string out = fmt::format("<!-- coldgate:report:{} -->\n## {}\n\n", marker_key(r.title),
                                md_text(capped(r.title, 200)));
  if (!r.no_baseline.empty()) {
    out +=
        fmt::format("⚠️ **no baseline: nothing was compared — measured head only** ({})\n\n",
                    md_text(capped(r.no_baseline, k_max_line_bytes)));
  }
  std::string verdict = capped(gate::verdict(r), k_max_line_bytes);
  out += fmt::format("{} **{}**\n", gate::passed(r) ? "✅" : "❌", md_text(verdict));
  if (std::string note = base_note(r); !note.empty()) out += "\n" + note + "\n";
  for (const auto& warning : r.warnings) {
    out += fmt::format("\n⚠️ {}\n", md_text(capped(one_line(warning), k_max_line_bytes)));
  }
  // ab measured the commit: the checkout's edits are not in these figures (listed in the footer).
  if (!r.git.dirty.empty() && !r.git.dirty_measured) {
    out += fmt::format("\n⚠️ {} in the checkout not measured: this is commit {} as committed "
                       "(listed at the end)\n",
                       plural(r.git.dirty.size(), "uncommitted change", "uncommitted changes"),
                       md_code(r.git.commit.substr(0, 7)));
  }
  return out;
}

}  // namespace coldgate::report
