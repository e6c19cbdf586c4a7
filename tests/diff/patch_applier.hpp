#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// A tiny applier of unified diffs (what patch(1) does, strictly: context must match exactly),
// to check that diff::unified output turns a into b.
namespace coldgate::diff::testing {

inline std::vector<std::string> split_keep_newlines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    std::size_t end = eol == std::string_view::npos ? text.size() : eol + 1;
    lines.emplace_back(text.substr(pos, end - pos));
    pos = end;
  }
  return lines;
}

// Reads "s" or "s,l" of a hunk header at `pos` (l = 1 when left out).
inline bool parse_range(const std::string& h, std::size_t& pos, unsigned long& start,
                        unsigned long& len) {
  auto number = [&](unsigned long& out) {
    std::size_t begin = pos;
    out = 0;
    while (pos < h.size() && h[pos] >= '0' && h[pos] <= '9') out = out * 10 + (h[pos++] - '0');
    return pos > begin;
  };
  if (!number(start)) return false;
  len = 1;
  if (pos < h.size() && h[pos] == ',') {
    ++pos;
    return number(len);
  }
  return true;
}

/// `a` patched with `diff`; nullopt when the diff does not apply or its headers lie.
inline std::optional<std::string> apply_unified(std::string_view a, std::string_view diff) {
  std::vector<std::string> in = split_keep_newlines(a);
  std::vector<std::string> patch = split_keep_newlines(diff);
  std::string out;
  std::size_t next_a = 0;     // 0-based index of the next unconsumed line of a
  std::size_t out_lines = 0;  // lines written to out
  std::size_t i = 0;
  if (patch.size() < 2 || patch[0].rfind("--- ", 0) != 0 || patch[1].rfind("+++ ", 0) != 0) {
    return diff.empty() ? std::optional<std::string>(std::string(a)) : std::nullopt;
  }
  i = 2;
  while (i < patch.size()) {
    unsigned long sa = 0, la = 1, sb = 0, lb = 1;
    const std::string& h = patch[i];
    std::size_t pos = 0;
    if (h.rfind("@@ -", 0) != 0) return std::nullopt;
    pos = 4;
    if (!parse_range(h, pos, sa, la) || h.compare(pos, 2, " +") != 0) return std::nullopt;
    pos += 2;
    if (!parse_range(h, pos, sb, lb) || h.compare(pos, 3, " @@") != 0) return std::nullopt;
    ++i;
    // Body entries; a "\ No newline" line strips the newline of the entry before it.
    struct Entry {
      char op;
      std::string text;
    };
    std::vector<Entry> body;
    std::size_t seen_a = 0, seen_b = 0;
    while (i < patch.size() && (seen_a < la || seen_b < lb || patch[i][0] == '\\')) {
      const std::string& l = patch[i];
      if (l[0] == '\\') {
        if (body.empty() || body.back().text.empty() || body.back().text.back() != '\n')
          return std::nullopt;
        body.back().text.pop_back();
      } else if (l[0] == ' ' || l[0] == '-' || l[0] == '+') {
        body.push_back(Entry{l[0], l.substr(1)});
        if (l[0] != '+') ++seen_a;
        if (l[0] != '-') ++seen_b;
      } else {
        return std::nullopt;
      }
      ++i;
    }
    if (seen_a != la || seen_b != lb) return std::nullopt;
    std::size_t start = la == 0 ? sa : sa - 1;  // 0-based first line of a in the hunk
    if (start < next_a || start > in.size()) return std::nullopt;
    for (; next_a < start; ++next_a, ++out_lines) out += in[next_a];
    if ((lb == 0 ? sb : sb - 1) != out_lines) return std::nullopt;  // the + side's header lies
    for (const Entry& e : body) {
      if (e.op != '-') ++out_lines;
      if (e.op == '+') {
        out += e.text;
        continue;
      }
      if (next_a >= in.size() || in[next_a] != e.text) return std::nullopt;
      if (e.op == ' ') out += e.text;
      ++next_a;
    }
  }
  for (; next_a < in.size(); ++next_a) out += in[next_a];
  return out;
}

}  // namespace coldgate::diff::testing
