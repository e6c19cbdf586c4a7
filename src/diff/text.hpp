#pragma once

#include <cstddef>
#include <string>
#include <string_view>

// Small text helpers shared by the diff module's renderers (internal).
namespace coldgate::diff::detail {

/// `text` cut to at most `max_chars` code points, the last one being `…` when it was cut;
/// never splits a UTF-8 sequence.
std::string shorten(std::string_view text, std::size_t max_chars = 80);

/// `n` in decimal with `,` between groups of three digits: 12345 → "12,345".
std::string with_commas(std::size_t n);

}  // namespace coldgate::diff::detail
