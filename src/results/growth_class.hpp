#pragma once
// The class of a growth over the data scales, shared by the stages' growth (results.hpp) and the
// migration's (migration.hpp).

#include <optional>
#include <string_view>

namespace coldgate::results {

/// The class of a growth exponent k (results::growth_class), from best to worst: the order is
/// the rank a gate compares. constant (k < 0.2: flat, or logarithmic as an index's depth),
/// sublinear (< 0.7), linear (< 1.5), quadratic (< 2.5), superquadratic; none: no fit (fewer
/// than two counts above 0), below every class and never judged.
enum class GrowthClass { none, constant, sublinear, linear, quadratic, superquadratic };

/// "constant", "sublinear", "linear", "quadratic", "superquadratic"; "" for none (results.json
/// writes null, or "" where it always did).
std::string_view to_string(GrowthClass growth);

/// The class named `text` (as to_string writes it); nullopt for "" and any other text.
std::optional<GrowthClass> growth_class_from(std::string_view text);

}  // namespace coldgate::results
