#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

// Line-level edit script of two texts (internal to the diff module).
namespace coldgate::diff::detail {

/// One block of changed lines: `a_len` lines of a from `a_pos` replaced by `b_len` lines of b
/// from `b_pos` (0-based). The lines between two blocks are equal on both sides.
struct Change {
  std::size_t a_pos = 0;
  std::size_t a_len = 0;
  std::size_t b_pos = 0;
  std::size_t b_len = 0;
};

/// The lines of `text`, each keeping its '\n' (the last one may lack it).
std::vector<std::string_view> split_lines(std::string_view text);

/// Changes turning lines `a` into lines `b`, in order and non-adjacent. Exact (dtl's O(NP)
/// algorithm) on small ranges; on large ones it splits at lines unique to both sides (patience
/// anchors) and, where there are none, compares paired windows of a bounded size, so time stays
/// ~O((N+M)·W) and memory O(N+M); the result is always a correct, if not always minimal, script.
std::vector<Change> edit_script(const std::vector<std::string_view>& a,
                                const std::vector<std::string_view>& b);

}  // namespace coldgate::diff::detail
