#include "gate/merge.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "gate/gate.hpp"
#include "util/error.hpp"

namespace coldgate::gate {
namespace {

using namespace coldgate::results;

std::string short_commit(const std::string& commit) {
  return commit.empty() ? "(none)" : commit.substr(0, 12);
}

template <typename T>
void append_unique(std::vector<T>& to, const std::vector<T>& from) {
  for (const auto& x : from) {
    if (std::find(to.begin(), to.end(), x) == to.end()) to.push_back(x);
  }
}

// The gate blocks joined, when every input has one against the same baseline.
std::optional<GateResult> merged_gate(const std::vector<NamedResults>& inputs) {
  std::optional<GateResult> out;
  for (const auto& [name, r] : inputs) {
    if (!r.gate) return std::nullopt;
    if (!out) {
      out = *r.gate;
      continue;
    }
    if (r.gate->baseline != out->baseline) return std::nullopt;
    append_unique(out->environment_differences, r.gate->environment_differences);
    out->metrics.insert(out->metrics.end(), r.gate->metrics.begin(), r.gate->metrics.end());
    out->statements.insert(out->statements.end(), r.gate->statements.begin(),
                           r.gate->statements.end());
    append_unique(out->stages_new, r.gate->stages_new);
    append_unique(out->stages_removed, r.gate->stages_removed);
  }
  return out;
}

}  // namespace

Results merge(const std::vector<NamedResults>& inputs, const MergeOptions& options) {
  if (inputs.empty()) throw usage_error("merge", "no results files given");
  const auto& [first_name, first] = inputs.front();

  std::map<std::string, std::string> owner;  // stage → file that holds it
  for (const auto& [name, r] : inputs) {
    for (const auto& s : r.stages) {
      auto [it, inserted] = owner.emplace(s.name, name);
      if (!inserted) {
        throw usage_error(name, fmt::format("stage '{}' is also in {}; shards of one run hold "
                                            "disjoint stages (was a shard merged twice?)",
                                            s.name, it->second));
      }
    }
    if (&r == &first || options.force) continue;
    if (r.git.commit != first.git.commit) {
      throw usage_error(name, fmt::format("measured commit {}, but {} measured {}; shards of one "
                                          "run share a commit (pass --force to merge anyway)",
                                          short_commit(r.git.commit), first_name,
                                          short_commit(first.git.commit)));
    }
    std::size_t significant = 0;
    auto diffs = environment_differences(first.environment, r.environment, &significant);
    if (significant > 0) {
      std::string list;
      for (std::size_t i = 0; i < significant; ++i) list += (i ? "; " : "") + diffs[i];
      throw usage_error(name, fmt::format("measured in another environment than {} ({}); "
                                          "pass --force to merge anyway",
                                          first_name, list));
    }
  }

  Results out = first;
  out.warnings.clear();
  out.stages.clear();
  out.diagnoses.clear();
  out.obsolete_snapshots.clear();
  std::vector<const StageResult*> stages;
  for (const auto& [name, r] : inputs) {
    for (const auto& s : r.stages) stages.push_back(&s);
    if (r.started_at < out.started_at) out.started_at = r.started_at;  // RFC 3339 UTC sorts as text
    if (r.finished_at > out.finished_at) out.finished_at = r.finished_at;
    append_unique(out.obsolete_snapshots, r.obsolete_snapshots);
    append_unique(out.warnings, r.warnings);
    if (!out.stopped) out.stopped = r.stopped;  // a shard that stopped fails the whole run
    out.diagnoses.insert(out.diagnoses.end(), r.diagnoses.begin(), r.diagnoses.end());
  }
  auto rank = [&](const std::string& stage) {
    auto it = std::find(options.stage_order.begin(), options.stage_order.end(), stage);
    return static_cast<std::size_t>(it - options.stage_order.begin());  // unknown: after all
  };
  std::stable_sort(stages.begin(), stages.end(), [&](const StageResult* a, const StageResult* b) {
    return rank(a->name) < rank(b->name);
  });
  for (const auto* s : stages) out.stages.push_back(*s);
  std::stable_sort(
      out.diagnoses.begin(), out.diagnoses.end(),
      [&](const Diagnosis& a, const Diagnosis& b) { return rank(a.stage) < rank(b.stage); });
  std::sort(out.obsolete_snapshots.begin(), out.obsolete_snapshots.end());

  out.gate = merged_gate(inputs);
  if (out.gate) {
    std::stable_sort(out.gate->metrics.begin(), out.gate->metrics.end(),
                     [&](const MetricVerdict& a, const MetricVerdict& b) {
                       return rank(a.stage) < rank(b.stage);
                     });
    std::stable_sort(out.gate->statements.begin(), out.gate->statements.end(),
                     [&](const StatementVerdict& a, const StatementVerdict& b) {
                       return rank(a.stage) < rank(b.stage);
                     });
  }
  return out;
}

}  // namespace coldgate::gate
