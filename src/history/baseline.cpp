#include "history/baseline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "ab/git.hpp"
#include "util/error.hpp"

namespace coldgate::history {
namespace {

// How far back in the ancestry select() looks for records: far enough for any main
// branch's recent history, bounded so a huge repository answers in a second.
constexpr int k_max_walk = 20000;

// One statement of one record's table: the entries that share its key summed (two queryids of
// one text — two roles, two schemas on a search_path — are one statement, as the gate sums them).
struct Entry {
  std::string queryid;  // the id with the most calls
  std::string query;
  double top_calls = -1;
  int count = 0;
  double calls = 0, rows = 0, plan_ms = 0, exec_ms = 0, jit_ms = 0, jit_functions = 0;
  std::optional<double> blocks;
  std::optional<double> blocks_per_call;
  double block_reads = 0;  // Σ blocks_per_call × calls, for entries that share a key
  bool every_per_call = true;

  void add(const results::QueryStats& q) {
    if (q.calls > top_calls) {
      top_calls = q.calls;
      queryid = q.queryid;
      query = q.query;
    }
    ++count;
    calls += q.calls;
    rows += q.rows;
    plan_ms += q.plan_ms;
    exec_ms += q.exec_ms;
    jit_ms += q.jit_ms;
    jit_functions += q.jit_functions;
    if (q.blocks) blocks = blocks.value_or(0) + *q.blocks;
    if (q.blocks_per_call) {
      block_reads += *q.blocks_per_call * q.calls;
      blocks_per_call = q.blocks_per_call;
    } else {
      every_per_call = false;
    }
  }
  // What one call reads, when every entry said it and the statement was called: one entry's
  // own figure as recorded, several weighted by their calls.
  std::optional<double> per_call() const {
    if (!every_per_call || calls <= 0) return std::nullopt;
    return count == 1 ? blocks_per_call : std::optional<double>(block_reads / calls);
  }
};

// A record's statement table by key.
struct Table {
  std::map<std::string, Entry> entries;
  bool has_blocks = false;  // some entry recorded blocks: a missing statement read 0 of them
};

// The baseline's statement table of one stage, from `points` (newest first, failed stages
// left out): per statement — its text_id, else its shortened text — the median over the
// records that have a statement table of each figure. A record whose table lacks the statement
// ran it 0 times; a record without a table says nothing. blocks_per_call is the median over the
// records that called it. A statement whose median calls are 0 is left out: most records did
// not run it. Sorted as results.json sorts a stage's table: plan + execution time, highest first.
std::vector<results::QueryStats> statement_table(const std::vector<const StagePoint*>& points) {
  // An older record's statement without a text_id takes the one its text has in the other
  // records, when exactly one: so that it pairs with the newer records' statement.
  std::map<std::string, std::set<std::string>> ids_of_text;
  for (const StagePoint* p : points) {
    if (!p->queries) continue;
    for (const auto& q : *p->queries) {
      if (!q.text_id.empty()) ids_of_text[q.query].insert(q.text_id);
    }
  }
  auto key_of = [&](const results::QueryStats& q) {
    if (!q.text_id.empty()) return "#" + q.text_id;
    auto it = ids_of_text.find(q.query);
    if (it != ids_of_text.end() && it->second.size() == 1) return "#" + *it->second.begin();
    return "q:" + q.query;
  };
  std::vector<Table> tables;
  std::vector<std::string> order;  // the newest record's keys first, then older ones' own
  for (const StagePoint* p : points) {
    if (!p->queries) continue;
    Table& t = tables.emplace_back();
    for (const auto& q : *p->queries) {
      std::string key = key_of(q);
      auto [it, added] = t.entries.try_emplace(key);
      it->second.add(q);
      t.has_blocks = t.has_blocks || q.blocks.has_value();
      if (added && std::find(order.begin(), order.end(), key) == order.end()) order.push_back(key);
    }
  }
  std::vector<results::QueryStats> out;
  for (const auto& key : order) {
    std::vector<double> calls, rows, plan, exec, jit, functions, blocks, per_call;
    const Entry* newest = nullptr;
    for (const Table& t : tables) {
      auto it = t.entries.find(key);
      if (it == t.entries.end()) {
        for (auto* v : {&calls, &rows, &plan, &exec, &jit, &functions}) v->push_back(0);
        if (t.has_blocks) blocks.push_back(0);
        continue;
      }
      const Entry& e = it->second;
      if (!newest) newest = &e;
      calls.push_back(e.calls);
      rows.push_back(e.rows);
      plan.push_back(e.plan_ms);
      exec.push_back(e.exec_ms);
      jit.push_back(e.jit_ms);
      functions.push_back(e.jit_functions);
      if (e.blocks) blocks.push_back(*e.blocks);
      if (auto x = e.per_call()) per_call.push_back(*x);
    }
    results::QueryStats q;
    q.calls = results::median(calls);
    if (!newest || q.calls <= 0) continue;
    q.text_id = key.front() == '#' ? key.substr(1) : std::string();
    q.query = newest->query;
    q.queryid = newest->queryid;
    q.rows = results::median(rows);
    q.plan_ms = results::median(plan);
    q.exec_ms = results::median(exec);
    q.jit_ms = results::median(jit);
    q.jit_functions = results::median(functions);
    if (!blocks.empty()) q.blocks = results::median(blocks);
    if (!per_call.empty()) q.blocks_per_call = results::median(per_call);
    out.push_back(std::move(q));
  }
  std::stable_sort(out.begin(), out.end(), [](const results::QueryStats& a,
                                              const results::QueryStats& b) {
    return a.time_ms() > b.time_ms();
  });
  return out;
}

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
    s.queries = statement_table(points);
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
