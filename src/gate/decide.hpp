#pragma once
// Time verdicts that noise does not decide: which verdicts lie so near their threshold that
// `ab` and `stack` measure both sides again (gate.max_extra_runs) before they judge.

#include <string>
#include <vector>

#include "config/config.hpp"
#include "results/results.hpp"

namespace coldgate::gate {

/// True when `v`, the verdict compare() gave a time metric (`_ms`) from `head`'s and `base`'s
/// samples under `g`, lies near its threshold, so that a few runs more or less could turn it:
/// both sides have cold samples, base's median is above 0, head's median is at least half of
/// min_delta above base's, and either
///   - the ratio lies between max_ratio / 2 and 2 × max_ratio (both included), or
///   - the ratio is at least warn_ratio and the two sides' cold ranges overlap (head's fastest
///     run no slower than base's slowest).
/// Never for a count (db_queries) or any other metric, a verdict with one side only (`new`,
/// `removed`), or without a ratio.
bool undecided(const results::MetricVerdict& v, const results::Metric& head,
               const results::Metric& base, const config::Gate& g);

/// The time metrics of one stage whose verdict is undecided() now: compare()'s verdicts of
/// `head` against `base` (the samples so far) under `g`, in compare()'s order. Empty when either
/// side failed or a sample is not a valid number.
std::vector<std::string> undecided_metrics(const results::StageResult& head,
                                           const results::StageResult& base,
                                           const config::Gate& g);

}  // namespace coldgate::gate
