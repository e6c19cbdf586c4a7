#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/results.hpp"

namespace coldgate::results {

/// The class of a growth exponent k: constant (k < 0.2: flat, or logarithmic as an index's
/// depth), sublinear (< 0.7), linear (< 1.5), quadratic (< 2.5), superquadratic.
GrowthClass growth_class(double exponent);

/// Fits count ≈ offset + coefficient · scale^exponent to `values` (one per scale of `scales`,
/// ascending, all > 0; nullopt where not measured). Counts whose spread is within 10% of their
/// largest value, or within `slack` (blocks move by a page or two between runs), are constant.
/// Two scales give the exponent of their ratio (offset 0); three or more also fit the offset, a
/// part that does not grow (a fresh backend's catalog reads), so that it does not hide a
/// linear term: the exponent that leaves the smallest relative error, searched over [0, 4].
/// Fewer than two counts above 0 give no exponent, unless every count is 0 (constant).
/// `projected` is the fit at `production_scale` when one is given.
GrowthFit fit_growth(const std::vector<double>& scales, std::vector<std::optional<double>> values,
                     std::optional<double> production_scale, double slack = 0);

/// A stage's growth from its results at each scale: `at[i]` is the stage measured at
/// `scales[i]` (nullptr: that scale was not measured, its values nullopt). Statements are
/// paired across scales by text_id (their shortened text when a side lacks it), ids sharing a
/// text summed; a statement missing at a measured scale ran 0 times there. Statements come
/// costliest (time) at the largest measured scale first. Times are projected from the counts
/// (a statement's time at the largest scale that ran it × its calls · blocks per call at
/// production_scale over those there; the stage's database time at the largest scale plus what
/// its statements add; its wall time the same, or, when more, the largest scale's plus its wall
/// time per statement — the least-squares slope over the scales — times the statements added),
/// not from a fit of the noisy times.
StageGrowth stage_growth(const std::vector<double>& scales, const std::vector<const StageResult*>& at,
                         std::optional<double> production_scale);

/// `growth` as an adverb: "sublinearly", "linearly", "quadratically", "faster than
/// quadratically" (superquadratic); "not at all" for constant, "" for none.
std::string growth_adverb(GrowthClass growth);

/// "24 → 96 → 384" (counts as the report shows them; "–" where not measured).
std::string growth_values(const GrowthFit& fit);

}  // namespace coldgate::results
