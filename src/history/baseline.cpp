#include "history/baseline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <sstream>

#include "ab/git.hpp"
#include "util/error.hpp"

namespace coldgate::history {
namespace {

// How far back in the ancestry select() looks for records: far enough for any main
// branch's recent history, bounded so a huge repository answers in a second.
constexpr int k_max_walk = 20000;

}  // namespace

std::optional<int> parse_history_baseline(const std::string& text) {
  const std::string word = "history";
  if (text == word) return 5;
  if (text.rfind(word + ":", 0) != 0) return std::nullopt;
  const std::string n_text = text.substr(word.size() + 1);
  int n = 0;
  auto [end, ec] = std::from_chars(n_text.data(), n_text.data() + n_text.size(), n);
  if (ec != std::errc() || end != n_text.data() + n_text.size() || n < 1 || n > 100) {
    throw Error(ExitCode::usage, "--baseline",
                fmt::format("\"{}\": expected history or history:N with N from 1 to 100 (the "
                            "number of recorded results to take the median of)",
                            text));
  }
  return n;
}

std::vector<Record> select(std::vector<Record> records, const std::filesystem::path& repo,
                           const std::string& from_commit, const std::string& branch, int n,
                           Start start) {
  std::map<std::string, std::size_t> by_commit;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (start == Start::excluded && records[i].commit == from_commit) continue;
    if (!branch.empty() && records[i].branch != branch) continue;
    by_commit[records[i].commit] = i;
  }
  std::vector<std::size_t> picked;
  std::optional<std::string> walk;
  if (!from_commit.empty()) {
    walk = ab::git(repo, {"rev-list", "--topo-order", fmt::format("--max-count={}", k_max_walk),
                          from_commit});
  }
  if (walk) {
    // The commit's ancestry (itself first), newest first: the base branch's records reachable
    // from it, whatever their dates say.
    std::istringstream lines(*walk);
    std::string sha;
    while (static_cast<int>(picked.size()) < n && std::getline(lines, sha)) {
      if (auto it = by_commit.find(sha); it != by_commit.end()) picked.push_back(it->second);
    }
  } else {
    // No ancestry to walk (no checkout, or a commit git does not know): newest commit dates.
    for (const auto& [commit, i] : by_commit) picked.push_back(i);
    std::sort(picked.begin(), picked.end(), [&](std::size_t a, std::size_t b) {
      const auto& x = records[a];
      const auto& y = records[b];
      return std::tie(x.date, x.recorded_at, x.commit) > std::tie(y.date, y.recorded_at, y.commit);
    });
    if (static_cast<int>(picked.size()) > n) picked.resize(static_cast<std::size_t>(n));
  }
  std::vector<Record> out;
  for (auto it = picked.rbegin(); it != picked.rend(); ++it) out.push_back(std::move(records[*it]));
  return out;
}

results::Results baseline_results(const std::vector<Record>& used) {
  if (used.empty()) throw Error(ExitCode::infrastructure, "history", "no recorded results to use");
  const Record& newest = used.back();
  results::Results base;
  base.tool_version = newest.tool_version;
  base.started_at = newest.recorded_at;
  base.finished_at = newest.recorded_at;
  base.git.commit = newest.commit;
  base.git.branch = newest.branch;
  base.git.dirty_measured = false;
  base.environment = newest.environment;
  base.ci_run_url = newest.ci_run_url;

  // Stage order: the newest record's, then stages only older records have.
  std::vector<std::string> names;
  for (auto r = used.rbegin(); r != used.rend(); ++r) {
    for (const auto& s : r->stages) {
      if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
    }
  }
  for (const auto& name : names) {
    std::vector<const StagePoint*> points;
    const StagePoint* latest = nullptr;
    for (auto r = used.rbegin(); r != used.rend(); ++r) {
      const StagePoint* p = r->find(name);
      if (!p) continue;
      if (!latest) latest = p;
      if (!p->failed) points.push_back(p);
    }
    results::StageResult s;
    s.name = name;
    const StagePoint* shape = points.empty() ? latest : points.front();
    s.kind = shape->kind;
    s.cold_mode = shape->cold_mode;
    s.runs = shape->runs;
    s.warm = shape->warm;
    s.settings = shape->settings;
    if (points.empty()) {
      s.error = fmt::format("failed in every recorded result it appears in ({})",
                            used.size() == 1 ? "1 record" : fmt::format("{} records", used.size()));
      base.stages.push_back(std::move(s));
      continue;
    }
    std::vector<std::string> metric_names;
    for (const StagePoint* p : points) {
      for (const auto& [m, v] : p->metrics) {
        if (std::find(metric_names.begin(), metric_names.end(), m) == metric_names.end()) {
          metric_names.push_back(m);
        }
      }
    }
    for (const auto& m : metric_names) {
      // Cold samples when any record has them (the gate reads cold first), else warm ones.
      bool cold = false;
      std::string unit;
      for (const StagePoint* p : points) {
        if (const results::Metric* x = p->find(m)) {
          if (unit.empty()) unit = x->unit;
          cold = cold || !x->cold.empty();
        }
      }
      std::vector<double> medians;
      std::vector<double> all;
      for (const StagePoint* p : points) {
        const results::Metric* x = p->find(m);
        if (!x || x->unit != unit) continue;
        const auto& samples = cold ? x->cold : x->warm;
        if (samples.empty()) continue;
        medians.push_back(results::median(samples));
        all.insert(all.end(), samples.begin(), samples.end());
      }
      if (medians.empty()) continue;
      // {min, median of medians, max}: the gate's median is the median of medians, and its
      // range (fastest head run > slowest base run) covers every recorded sample.
      std::vector<double> summary{*std::min_element(all.begin(), all.end()),
                                  results::median(medians),
                                  *std::max_element(all.begin(), all.end())};
      results::Metric& out = s.metric(m, unit);
      (cold ? out.cold : out.warm) = std::move(summary);
    }
    base.stages.push_back(std::move(s));
  }
  return base;
}

results::HistoryTrend trend(const std::vector<Record>& used, const results::Results& head,
                            const std::string& store, int asked) {
  results::HistoryTrend t;
  t.store = store;
  t.asked = asked;
  for (const auto& r : used) t.commits.push_back({r.commit, r.subject, r.date});
  for (const auto& s : head.stages) {
    const results::Metric* hm = s.find("wall_ms");
    std::string metric = "wall_ms";
    if (!hm) {
      for (const auto& [name, m] : s.metrics) {
        if (!m.gated().empty()) {
          hm = &m;
          metric = name;
          break;
        }
      }
    }
    if (!hm) continue;
    results::HistorySeries series;
    series.stage = s.name;
    series.metric = metric;
    series.unit = hm->unit;
    for (const auto& r : used) {
      const StagePoint* p = r.find(s.name);
      const results::Metric* m = p && !p->failed ? p->find(metric) : nullptr;
      if (m && !m->gated().empty()) {
        series.medians.push_back(results::median(m->gated()));
      } else {
        series.medians.push_back(std::nullopt);
      }
    }
    if (!s.failed() && !hm->gated().empty()) series.head = results::median(hm->gated());
    t.series.push_back(std::move(series));
  }
  return t;
}

}  // namespace coldgate::history
