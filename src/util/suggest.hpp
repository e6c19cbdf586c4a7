#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coldgate::util {

/// Edit distance between two byte strings: insert, delete, substitute and swap of two adjacent
/// bytes cost 1 each (optimal string alignment distance).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` by edit distance, ignoring ASCII case, when it is close enough
/// to be a likely typo (distance ≤ max(1, length/3) and below the candidate's length), else the
/// first candidate `word` is a prefix of (2+ letters); nullopt otherwise. Ties: first wins.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" for the closest candidate, or "" when none is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace coldgate::util
