#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gate/gate.hpp"
#include "results/format.hpp"
#include "results/growth.hpp"
#include "results/plan.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace coldgate::gate {
namespace {

using namespace coldgate::results;

std::string count(double v) {
  return format_value(v, "count");
}

// One side of a pair, per call.
StatementSide side_of(const StatementSum& sum) {
  auto per_call = [&](double v) { return sum.calls > 0 ? v / sum.calls : 0.0; };
  StatementSide s{sum.queryid, sum.calls, per_call(sum.rows), std::nullopt, per_call(sum.plan_ms),
                  per_call(sum.exec_ms)};
  if (sum.has_blocks) s.blocks_per_call = per_call(sum.blocks);
  if (sum.plan) {
    s.plan_shape_id = sum.plan->shape_id;
    s.execution_blocks_per_call = execution_blocks(sum.plan->json);
  }
  return s;
}

// Texts pair statements when both sides recorded the whole text's hash; results of versions
// that did not are paired by their shortened text on both sides, so that nothing is "new"
// only because the base is older.
bool has_text_ids(const StageResult& s) {
  return std::all_of(s.queries.begin(), s.queries.end(),
                     [](const QueryStats& q) { return !q.text_id.empty(); });
}

std::string key_of(const QueryStats& q, bool by_id) {
  return by_id ? "#" + q.text_id : "q:" + q.query;
}

// "reads 1,937 blocks per call instead of 4 (484×)"
std::string ratio_text(double h, double b) {
  return b > 0 ? format_ratio(h / b) : "from 0";
}

int rank(Verdict v) {
  switch (v) {
    case Verdict::regression: return 0;
    case Verdict::added: return 1;
    case Verdict::removed: return 2;
    case Verdict::faster: return 3;
    case Verdict::slower: return 4;
    case Verdict::same: return 5;
  }
  return 5;
}

struct Judged {
  Verdict verdict = Verdict::same;
  std::vector<std::string> why;  // regressions' and improvements' reasons, then the rest
};

void judge_calls(double b, double h, const config::Gate& g, Judged& j) {
  const double delta = h - b;
  const double need = g.min_query_delta;
  if (delta >= need && (b <= 0 || h / b >= g.max_query_ratio)) {
    j.verdict = Verdict::regression;
    j.why.insert(j.why.begin(),
                 fmt::format("runs {} times per run instead of {} ({}, +{} ≥ min_query_delta {})",
                             count(h), count(b), ratio_text(h, b), count(delta),
                             g.min_query_delta));
  } else if (-delta >= need && h * g.max_query_ratio <= b) {
    if (j.verdict != Verdict::regression) j.verdict = Verdict::faster;
    j.why.push_back(fmt::format("runs {} times per run instead of {} ({} fewer)", count(h),
                                count(b), count(-delta)));
  } else if (delta != 0) {
    j.why.push_back(fmt::format(
        "calls {} → {}: {}", count(b), count(h),
        std::fabs(delta) < need
            ? fmt::format("{:+g} is under min_query_delta {}", delta, g.min_query_delta)
            : fmt::format("{} is under max_query_ratio {:g}", ratio_text(h, b),
                          g.max_query_ratio)));
  }
}

// The blocks rule's verdict alone: regression, faster or same.
Verdict blocks_verdict(double b, double h, const config::Gate& g) {
  const double delta = h - b;
  if (delta >= g.min_blocks_delta && (b <= 0 || h / b >= g.max_blocks_ratio))
    return Verdict::regression;
  if (-delta >= g.min_blocks_delta && h * g.max_blocks_ratio <= b) return Verdict::faster;
  return Verdict::same;
}

// `in` names the figures when they are the plans' ("" for pg_stat_statements' per call).
void judge_blocks(double b, double h, const config::Gate& g, Judged& j, const char* in = "") {
  const double delta = h - b;
  const Verdict verdict = blocks_verdict(b, h, g);
  if (verdict == Verdict::regression) {
    j.verdict = Verdict::regression;
    j.why.insert(j.why.begin(),
                 fmt::format("reads {} blocks per call instead of {}{} ({}, +{} ≥ "
                             "min_blocks_delta {:g}): an index it used is not used any more, or "
                             "each call reads more rows",
                             count(std::round(h)), count(std::round(b)), in, ratio_text(h, b),
                             count(std::round(delta)), g.min_blocks_delta));
  } else if (verdict == Verdict::faster) {
    if (j.verdict != Verdict::regression) j.verdict = Verdict::faster;
    j.why.push_back(fmt::format("reads {} blocks per call instead of {}{}", count(std::round(h)),
                                count(std::round(b)), in));
  } else if (std::round(delta) != 0) {
    j.why.push_back(fmt::format(
        "blocks per call {} → {}{}: {}", count(std::round(b)), count(std::round(h)), in,
        std::fabs(delta) < g.min_blocks_delta
            ? fmt::format("{:+g} is under min_blocks_delta {:g}", std::round(delta),
                          g.min_blocks_delta)
            : fmt::format("{} is under max_blocks_ratio {:g}", ratio_text(h, b),
                          g.max_blocks_ratio)));
  }
}

// One statement's growth on one side (StageGrowth::statements), by the fits' names.
using GrowthOf = std::map<std::string, const GrowthFit*>;

struct GrowthFigure {
  const char* name;   // StatementSide::growth's key
  const char* label;  // as the reason says it
};
constexpr GrowthFigure k_growth_figures[] = {
    {"calls", "calls per run"}, {"rows_per_call", "rows per call"}, {"blocks_per_call", "blocks per call"}};

std::string with_data(GrowthClass growth) {
  return growth == GrowthClass::constant ? "stay constant" : "grow " + growth_adverb(growth) + " with the data";
}

std::map<std::string, GrowthClass> classes(const GrowthOf& g) {
  std::map<std::string, GrowthClass> out;
  for (const auto& [name, fit] : g) {
    if (fit->growth != GrowthClass::none) out[name] = fit->growth;
  }
  return out;
}

// A class worse than base's over the same scales is `gate.growth`'s verdict (a lost index makes
// blocks per call linear, a new per-row statement makes calls linear); a better one is faster.
void judge_growth(const GrowthOf& b, const GrowthOf& h, const config::Gate& g, Judged& j,
                  std::string& change) {
  for (const auto& f : k_growth_figures) {
    auto bi = b.find(f.name), hi = h.find(f.name);
    if (bi == b.end() || hi == h.end()) continue;
    const GrowthFit& bf = *bi->second;
    const GrowthFit& hf = *hi->second;
    const GrowthClass br = bf.growth, hr = hf.growth;
    if (br == GrowthClass::none || hr == GrowthClass::none || br == hr) continue;
    change += fmt::format("{}{}: {} → {}", change.empty() ? "" : "; ", f.label, to_string(br), to_string(hr));
    if (hr > br && g.growth != config::GrowthGate::off) {
      std::string why = fmt::format("{} {} ({}) instead of {} ({})", f.label, with_data(hr), growth_values(hf),
                                    br == GrowthClass::constant ? "staying constant" : "growing " + growth_adverb(br),
                                    growth_values(bf));
      if (g.growth == config::GrowthGate::fail) {
        j.verdict = Verdict::regression;
        j.why.insert(j.why.begin(), why + " (gate.growth: fail)");
      } else {
        if (j.verdict != Verdict::regression) j.verdict = Verdict::slower;
        j.why.push_back(why + " (gate.growth: warn)");
      }
    } else if (hr < br) {
      if (j.verdict == Verdict::same) j.verdict = Verdict::faster;
      j.why.push_back(fmt::format("{} {} ({}) instead of growing {} ({})", f.label, with_data(hr),
                                  growth_values(hf), to_string(br), growth_values(bf)));
    }
  }
}

// What identifies a node across the two plans: its shape's members (results::plan_shape) without
// its place, so that an alias an ORM renamed is not a change.
std::string node_key(const PlanNode& n) {
  return n.node_type + "|" + n.join_type + "|" + n.index + "|" + n.schema + "." + n.relation;
}

bool is_scan(const PlanNode& n) {
  return n.node_type.size() >= 4 && n.node_type.compare(n.node_type.size() - 4, 4, "Scan") == 0;
}

// The nodes of `from` that `other` lacks (as a multiset of node_key), scans first, each group
// in plan order.
std::vector<const PlanNode*> unmatched(const std::vector<PlanNode>& from,
                                       const std::vector<PlanNode>& other) {
  std::map<std::string, int> left;
  for (const auto& n : other) ++left[node_key(n)];
  std::vector<const PlanNode*> out;
  for (const auto& n : from) {
    auto it = left.find(node_key(n));
    if (it != left.end() && it->second > 0) {
      --it->second;
    } else {
      out.push_back(&n);
    }
  }
  std::stable_partition(out.begin(), out.end(), [](const PlanNode* n) { return is_scan(*n); });
  return out;
}

// "Seq Scan on public.Comments (149,997 rows removed by filter)": the rows the node threw
// away over all its loops (EXPLAIN prints them per loop).
std::string new_node_text(const PlanNode& n) {
  const double loops = std::max(n.loops, 1.0);
  const double filter = std::round(n.rows_removed_by_filter * loops);
  const double join = std::round(n.rows_removed_by_join_filter * loops);
  std::string out = node_label(n);
  if (filter > 0 && join > 0) {
    out += fmt::format(" ({} rows removed by filter, {} by join filter)", count(filter),
                       count(join));
  } else if (filter > 0) {
    out += fmt::format(" ({} rows removed by filter)", count(filter));
  } else if (join > 0) {
    out += fmt::format(" ({} rows removed by join filter)", count(join));
  }
  return out;
}

std::string node_list(const std::vector<const PlanNode*>& nodes, bool added) {
  std::string out;
  const std::size_t n = std::min(nodes.size(), k_plan_change_nodes);
  for (std::size_t i = 0; i < n; ++i) {
    out += (i ? ", " : "") + (added ? new_node_text(*nodes[i]) : node_label(*nodes[i]));
  }
  if (nodes.size() > n) out += fmt::format(", … {} more", nodes.size() - n);
  return out;
}

// The relations in the order the plan reads them: "public.a, public.b".
std::string relation_order(const std::vector<PlanNode>& nodes) {
  std::string out;
  for (const auto& n : nodes) {
    if (n.relation.empty()) continue;
    out += (out.empty() ? "" : ", ") + (n.schema.empty() ? n.relation : n.schema + "." + n.relation);
  }
  return out;
}

}  // namespace

std::string plan_change(const std::vector<PlanNode>& base, const std::vector<PlanNode>& head) {
  if (plan_shape(base) == plan_shape(head)) return "";
  auto lost = unmatched(base, head);
  auto added = unmatched(head, base);
  if (!lost.empty() && !added.empty()) {
    return node_list(lost, false) + " → " + node_list(added, true);
  }
  if (!added.empty()) return "added " + node_list(added, true);
  if (!lost.empty()) return "dropped " + node_list(lost, false);
  // The same nodes, placed otherwise: another join order, or the same tables nested otherwise.
  std::string b = relation_order(base), h = relation_order(head);
  if (b != h) return fmt::format("join order {} → {}", b, h);
  return "the same nodes, nested otherwise";
}

namespace {

// The plan change of one statement, when both sides have a plan and their shapes differ.
std::string plan_change_of(const StatementPlan* b, const StatementPlan* h) {
  if (!b || !h || b->shape_id == h->shape_id) return "";
  try {
    return plan_change(plan_nodes(b->json, "base plan"), plan_nodes(h->json, "head plan"));
  } catch (const Error& e) {
    // Shown, never gated: an unreadable plan in a results file loses the detail, not the run.
    return fmt::format("shape {} → {} (a plan is not readable: {})", b->shape_id, h->shape_id,
                       e.message());
  }
}

// What a new statement's stage did with its other statements: the change of the stage's
// statements per run, and the statements whose calls fell most, "`text` (211 → 31), …".
struct StageCalls {
  double delta = 0;
  std::string fell;
};

// A statement's text cut for a reason line: its first 60 bytes, whole UTF-8 characters.
std::string short_text(const std::string& q) {
  std::string_view kept = util::utf8_prefix(q, 60);
  return kept.size() == q.size() ? q : std::string(kept) + "…";
}

StatementVerdict pair(const std::string& stage, const StatementSum* b, const StatementSum* h, const config::Gate& g,
                      const GrowthOf& b_growth, const GrowthOf& h_growth, const StageCalls& stage_calls) {
  StatementVerdict v;
  v.stage = stage;
  v.query = h ? h->query : b->query;
  if (b) {
    v.base = side_of(*b);
    v.base->growth = classes(b_growth);
  }
  if (h) {
    v.head = side_of(*h);
    v.head->growth = classes(h_growth);
  }
  if (!b) {
    const double calls = v.head->calls;
    // A new statement that takes the place of others (a join that eager loading brought in,
    // where a lookup ran per row) is the fix of an N+1, not one: it gates only when the
    // stage as a whole runs min_query_delta statements more per run.
    const bool many = calls >= g.min_query_delta;
    const bool in_place = many && stage_calls.delta < g.min_query_delta;
    v.verdict = many && !in_place ? Verdict::regression : Verdict::added;
    if (!many) {
      v.reason = fmt::format("new statement, {} call{} per run: under min_query_delta {}",
                             count(calls), calls == 1 ? "" : "s", g.min_query_delta);
    } else if (!in_place) {
      v.reason = fmt::format("new statement: runs {} times per run (≥ min_query_delta {})",
                             count(calls), g.min_query_delta);
    } else {
      const std::string& fell = stage_calls.fell;
      const double d = stage_calls.delta;
      const std::string stage_change =
          d < 0    ? fmt::format("{} statement{} fewer per run", count(-d), d == -1 ? "" : "s")
          : d == 0 ? std::string("as many statements per run")
                   : fmt::format("{} statement{} more per run, under min_query_delta {}",
                                 count(d), d == 1 ? "" : "s", g.min_query_delta);
      v.reason = fmt::format("new statement: runs {} times per run, in place of others: the "
                             "stage runs {}{}",
                             count(calls), stage_change, fell.empty() ? "" : "; fell: " + fell);
    }
    // Few calls at the first scale, but more with the data: a new N+1 that grows.
    auto calls_growth = h_growth.find("calls");
    if (calls_growth != h_growth.end() && calls_growth->second->growth >= GrowthClass::linear &&
        g.growth != config::GrowthGate::off) {
      const GrowthFit& f = *calls_growth->second;
      v.growth_change = "calls per run: new, " + std::string(to_string(f.growth));
      std::string why = fmt::format("new statement whose calls per run {} ({}): an N+1 that grows (gate.growth: {})",
                                    with_data(f.growth), growth_values(f),
                                    g.growth == config::GrowthGate::fail ? "fail" : "warn");
      if (g.growth == config::GrowthGate::fail) {
        v.verdict = Verdict::regression;
        v.reason = why + "; " + v.reason;
      } else {
        if (v.verdict != Verdict::regression) v.verdict = Verdict::slower;
        v.reason += "; " + why;
      }
    }
    return v;
  }
  if (!h) {
    const double calls = v.base->calls;
    v.verdict = calls >= g.min_query_delta ? Verdict::faster : Verdict::removed;
    v.reason = fmt::format("no longer run (base ran it {} time{} per run)", count(calls),
                           calls == 1 ? "" : "s");
    return v;
  }
  v.plan_change = plan_change_of(b->plan, h->plan);
  Judged j;
  judge_calls(v.base->calls, v.head->calls, g, j);
  // pg_stat_statements counts planning's blocks with the statement's (track_planning): a fresh
  // backend's first plan over a table reads its catalog rows, so a statement's blocks per call
  // rise when an earlier statement that paid them is gone. The captured plans' blocks are the
  // execution's alone: judged when both sides have them.
  // Plain doubles, not optionals: GCC 12 at -O3 takes an optional's payload after this
  // function's inlining for maybe uninitialized (-Wmaybe-uninitialized).
  double b_exec = 0, h_exec = 0;
  bool plans_have_blocks = false;
  if (b->plan && h->plan) {
    const std::optional<double> be = execution_blocks(b->plan->json);
    const std::optional<double> he = execution_blocks(h->plan->json);
    plans_have_blocks = be.has_value() && he.has_value();
    b_exec = be.value_or(0);
    h_exec = he.value_or(0);
  }
  const bool has_stats_blocks = v.base->blocks_per_call && v.head->blocks_per_call;
  if (plans_have_blocks) {
    judge_blocks(b_exec, h_exec, g, j, " in its plan's execution");
    // The table's cells show pg_stat_statements' figures: a reason that quotes other figures
    // says which is which, or a reader sees "8 → 254 blocks/call" beside "253 instead of 3".
    // A statement with nothing to say keeps its one-line "on both sides".
    const bool quotes_other_figures =
        !j.why.empty() && has_stats_blocks &&
        (std::round(*v.base->blocks_per_call) != std::round(b_exec) ||
         std::round(*v.head->blocks_per_call) != std::round(h_exec));
    if (has_stats_blocks &&
        (blocks_verdict(*v.base->blocks_per_call, *v.head->blocks_per_call, g) !=
             blocks_verdict(b_exec, h_exec, g) ||
         quotes_other_figures)) {
      j.why.push_back(fmt::format(
          "pg_stat_statements' blocks per call {} → {} count planning's catalog reads too (a "
          "fresh backend's first plan over a table), so the plans' execution is judged",
          count(std::round(*v.base->blocks_per_call)),
          count(std::round(*v.head->blocks_per_call))));
    }
  } else if (has_stats_blocks) {
    judge_blocks(*v.base->blocks_per_call, *v.head->blocks_per_call, g, j);
  }
  judge_growth(b_growth, h_growth, g, j, v.growth_change);
  v.verdict = j.verdict;
  for (const auto& w : j.why) v.reason += (v.reason.empty() ? "" : "; ") + w;
  if (v.reason.empty()) {
    v.reason = fmt::format(
        "{} call{} per run{}", count(v.head->calls), v.head->calls == 1 ? "" : "s",
        plans_have_blocks
            ? fmt::format(", {} blocks per call in its plan's execution, on both sides",
                          count(std::round(h_exec)))
        : has_stats_blocks ? fmt::format(", {} blocks per call, on both sides",
                                         count(std::round(*v.head->blocks_per_call)))
                           : std::string(", on both sides"));
  }
  return v;
}

// The key a diagnosis is known by on its side: stage, kind and, for one statement, its text
// (queryids differ between databases). An index or a statistics finding is about a table and
// its columns, and carried by whichever statement of the stage met it first, which need not be
// the same one on both sides: those are known by table and columns.
std::string diagnosis_key(const Diagnosis& d, const Results& side) {
  std::string key = d.stage + "\n" + std::string(to_string(d.kind)) + "\n";
  if (d.kind == DiagnosisKind::missing_index || d.kind == DiagnosisKind::misestimate) {
    auto table = d.facts.find("table");
    auto columns = d.facts.find("columns");
    if (table != d.facts.end() && columns != d.facts.end())
      return key + "on " + table->second + " (" + columns->second + ")";
  }
  if (d.queryid.empty()) return key;
  for (const auto& s : side.stages) {
    if (s.name != d.stage) continue;
    for (const auto& q : s.queries) {
      if (q.queryid == d.queryid) return key + q.query;
    }
  }
  return key + d.query;
}

}  // namespace

std::vector<StatementVerdict> compare_statements(const StageResult& head, const StageResult& base,
                                                 const config::Gate& g) {
  if (!g.statements || head.queries.empty() || base.queries.empty()) return {};
  const bool by_id = has_text_ids(head) && has_text_ids(base);
  std::map<std::string, StatementSum> b_sums, h_sums;
  std::vector<std::string> order;  // head's keys by time, then base's own
  for (const auto& q : head.queries) {
    std::string k = key_of(q, by_id);
    if (!h_sums.count(k)) order.push_back(k);
    h_sums[k].add(q);
  }
  for (const auto& q : base.queries) {
    std::string k = key_of(q, by_id);
    if (!h_sums.count(k) && !b_sums.count(k)) order.push_back(k);
    b_sums[k].add(q);
  }
  // Growth is compared only over the same scales: other scales are other data.
  std::map<std::string, GrowthOf> b_growth, h_growth;
  if (head.growth && base.growth && head.growth->scales == base.growth->scales) {
    auto index = [&](const StageGrowth& sg, std::map<std::string, GrowthOf>& into) {
      for (const auto& st : sg.statements) {
        const std::string k = by_id ? "#" + st.text_id : "q:" + st.query;
        into[k] = {{"calls", &st.calls}, {"rows_per_call", &st.rows_per_call},
                   {"blocks_per_call", &st.blocks_per_call}};
      }
    };
    index(*base.growth, b_growth);
    index(*head.growth, h_growth);
  }
  auto growth = [](const std::map<std::string, GrowthOf>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? GrowthOf{} : it->second;
  };
  // The stage's statements per run on each side, from the same tables the pairs are.
  StageCalls stage_calls;
  std::vector<std::pair<double, std::string>> fell;  // (calls fewer, "`text` (b → h)")
  for (const auto& [k, sum] : h_sums) stage_calls.delta += sum.calls;
  for (const auto& [k, sum] : b_sums) {
    stage_calls.delta -= sum.calls;
    auto h = h_sums.find(k);
    const double now = h == h_sums.end() ? 0 : h->second.calls;
    if (now < sum.calls) {
      fell.emplace_back(sum.calls - now, fmt::format("`{}` ({} → {})", short_text(sum.query),
                                                     count(sum.calls), count(now)));
    }
  }
  std::stable_sort(fell.begin(), fell.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < fell.size() && i < 2; ++i)
    stage_calls.fell += (i ? ", " : "") + fell[i].second;
  if (fell.size() > 2) stage_calls.fell += fmt::format(", … {} more", fell.size() - 2);
  std::vector<StatementVerdict> out;
  for (const auto& k : order) {
    auto b = b_sums.find(k);
    auto h = h_sums.find(k);
    out.push_back(pair(head.name, b == b_sums.end() ? nullptr : &b->second,
                       h == h_sums.end() ? nullptr : &h->second, g, growth(b_growth, k),
                       growth(h_growth, k), stage_calls));
  }
  std::stable_sort(out.begin(), out.end(), [](const StatementVerdict& a, const StatementVerdict& b) {
    return rank(a.verdict) < rank(b.verdict);
  });
  return out;
}

void mark_diagnoses(Results& head, const Results& base, const Thresholds& thresholds) {
  std::erase_if(head.diagnoses, [](const Diagnosis& d) { return d.change == DiagnosisChange::gone; });
  std::set<std::string> in_head;
  std::map<std::string, const Diagnosis*> in_base;
  for (const auto& d : base.diagnoses) {
    if (d.change != DiagnosisChange::gone) in_base.emplace(diagnosis_key(d, base), &d);
  }
  // An N+1 base had at 20 calls and head at 320 is this pull request's regression as much as a
  // new one: folded under "also in base", it would hide behind base's.
  auto grew = [&](const Diagnosis& h, const Diagnosis& b) {
    auto hc = h.data.find("calls");
    auto bc = b.data.find("calls");
    if (hc == h.data.end() || bc == b.data.end()) return false;
    const config::Gate& g = thresholds.for_stage(h.stage);
    return hc->second - bc->second >= g.min_query_delta &&
           (bc->second <= 0 || hc->second / bc->second >= g.max_query_ratio);
  };
  std::set<std::string> head_stages;
  for (const auto& s : head.stages) {
    if (!s.failed()) head_stages.insert(s.name);
  }
  for (auto& d : head.diagnoses) {
    std::string key = diagnosis_key(d, head);
    in_head.insert(key);
    auto b = in_base.find(key);
    d.change = b == in_base.end()           ? DiagnosisChange::added
               : grew(d, *b->second) ? DiagnosisChange::worse
                                     : DiagnosisChange::also_in_base;
    if (d.change == DiagnosisChange::worse) d.data["base_calls"] = b->second->data.at("calls");
  }
  // What base had and head lost, in a stage head measured: the pull request fixed it.
  for (const auto& d : base.diagnoses) {
    if (d.change == DiagnosisChange::gone || !head_stages.count(d.stage)) continue;
    if (in_head.count(diagnosis_key(d, base))) continue;
    Diagnosis gone = d;
    gone.change = DiagnosisChange::gone;
    head.diagnoses.push_back(std::move(gone));
  }
}

}  // namespace coldgate::gate
