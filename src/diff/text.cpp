#include "diff/text.hpp"

namespace coldgate::diff::detail {

namespace {

bool is_continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

}  // namespace

std::string shorten(std::string_view text, std::size_t max_chars) {
  if (max_chars == 0) return {};
  // Byte offset where code point number `max_chars - 1` starts, and whether there are more
  // than `max_chars` code points at all.
  std::size_t points = 0;
  std::size_t cut = text.size();
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_continuation(static_cast<unsigned char>(text[i]))) continue;
    if (points == max_chars - 1) cut = i;
    if (++points > max_chars) {
      std::string out(text.substr(0, cut));
      out += "…";
      return out;
    }
  }
  return std::string(text);
}

std::string with_commas(std::size_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace coldgate::diff::detail
