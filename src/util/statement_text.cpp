#include "util/statement_text.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

namespace coldgate::util {
namespace {

// Where each parenthesis depth-0 character of `text` is: quoted names ("…"), literals ('…')
// and parenthesised parts are not; `top[i]` is true for a character at the statement's top level.
std::vector<bool> top_level(std::string_view text) {
  std::vector<bool> top(text.size(), false);
  int depth = 0;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      depth = std::max(0, depth - 1);
    } else {
      top[i] = depth == 0;
    }
  }
  return top;
}

// The position of the keyword `word` (upper case, with a space either side) at the top level
// from `from` on; npos when there is none.
std::size_t top_keyword(std::string_view text, const std::vector<bool>& top, std::string_view word,
                        std::size_t from) {
  for (std::size_t i = from; i + word.size() + 2 <= text.size(); ++i) {
    if (text[i] != ' ' || !top[i] || text[i + word.size() + 1] != ' ') continue;
    bool same = true;
    for (std::size_t k = 0; k < word.size() && same; ++k) {
      same = std::toupper(static_cast<unsigned char>(text[i + 1 + k])) == word[k];
    }
    if (same) return i;
  }
  return std::string_view::npos;
}

bool starts_with_word(std::string_view text, std::string_view word) {
  if (text.size() <= word.size() || text[word.size()] != ' ') return false;
  for (std::size_t k = 0; k < word.size(); ++k) {
    if (std::toupper(static_cast<unsigned char>(text[k])) != word[k]) return false;
  }
  return true;
}

}  // namespace

std::string elide_statement_lists(const std::string& text) {
  const std::vector<bool> top = top_level(text);
  if (starts_with_word(text, "SELECT")) {
    std::size_t from = top_keyword(text, top, "FROM", 6);
    if (from != std::string::npos && from > 7 + k_short_select_list)
      return text.substr(0, 7) + "…" + text.substr(from);
    return text;
  }
  if (starts_with_word(text, "INSERT")) {
    // Each parenthesised list at depth 1 becomes "(…)".
    std::string out;
    int depth = 0;
    char quote = 0;
    for (char c : text) {
      if (quote) {
        if (depth == 0) out += c;
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') quote = c;
      if (c == '(' && depth++ == 0) out += "(…";
      if (c == ')' && depth > 0) --depth;
      if (depth == 0) out += c;
    }
    return out;
  }
  return text;
}

ParameterUse parameter_use(std::string_view text) {
  bool any = false;
  for (std::size_t at = text.find('$'); at != std::string_view::npos; at = text.find('$', at + 1)) {
    if (at + 1 >= text.size() || !std::isdigit(static_cast<unsigned char>(text[at + 1]))) continue;
    any = true;
    std::size_t k = at;
    while (k > 0 && std::isspace(static_cast<unsigned char>(text[k - 1]))) --k;
    if (k > 0 && (text[k - 1] == '=' || text[k - 1] == '(' || text[k - 1] == ',')) {
      return ParameterUse::lookup;
    }
  }
  return any ? ParameterUse::other : ParameterUse::none;
}

}  // namespace coldgate::util
