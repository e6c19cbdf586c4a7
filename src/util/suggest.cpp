#include "util/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace coldgate::util {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions ("canno" → "canon" is 1),
  // the commonest typo. Three rolling rows: the transposition looks two rows back.
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  std::iota(prev.begin(), prev.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], prev2[j - 2] + 1);
      }
    }
    std::swap(prev2, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates) {
  auto lower = [](std::string_view v) {
    std::string out(v);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  const std::string w = lower(word);
  // Close enough: one edit for short words, one per three letters for longer ones, and never
  // a distance that rewrites the whole candidate; else a candidate the word starts.
  const std::size_t limit = std::max<std::size_t>(1, w.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(w, lower(c));
    if (d < best_distance && d < c.size()) {
      best = c;
      best_distance = d;
    }
  }
  if (best || w.size() < 2) return best;
  for (const auto& c : candidates) {
    if (lower(c).compare(0, w.size(), w) == 0) return c;
  }
  return std::nullopt;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto c = closest(word, candidates);
  return c ? " (did you mean '" + *c + "'?)" : std::string();
}

}  // namespace coldgate::util
