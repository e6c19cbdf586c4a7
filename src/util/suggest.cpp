#include "util/suggest.hpp"

#include <algorithm>
#include <numeric>

namespace coldgate::util {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (!best || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  if (!best) return std::nullopt;
  std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  bool prefix = !word.empty() && best->compare(0, word.size(), word) == 0;
  if (best_distance <= limit) return best;
  if (prefix) return best;
  // A prefix match may not be the closest by distance ("ac" → "accept" vs "ab"): look for one.
  for (const auto& c : candidates) {
    if (!word.empty() && word.size() >= 2 && c.compare(0, word.size(), word) == 0) return c;
  }
  return std::nullopt;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto c = closest(word, candidates);
  return c ? " (did you mean '" + *c + "'?)" : std::string();
}

}  // namespace coldgate::util
