// Unified diff output (the format of GNU diff -u / git diff) over detail::edit_script.
#include <fmt/core.h>

#include <algorithm>

#include "diff/diff.hpp"
#include "diff/edit_script.hpp"
#include "diff/text.hpp"

namespace coldgate::diff {

namespace {

constexpr std::string_view k_red = "\x1b[31m";
constexpr std::string_view k_green = "\x1b[32m";
constexpr std::string_view k_cyan = "\x1b[36m";
constexpr std::string_view k_reset = "\x1b[0m";

// Collects output lines up to the cap and counts the ones past it.
class Sink {
 public:
  explicit Sink(const Options& options)
      : m_out(fmt::format("--- {}\n+++ {}\n", options.label_a, options.label_b)),
        m_options(options) {}

  // One diff line: `prefix` then `line` (which may end in '\n'; a last line without one gets
  // the "\ No newline at end of file" marker of diff(1)).
  void line(char prefix, std::string_view line) {
    bool newline = !line.empty() && line.back() == '\n';
    if (newline) line.remove_suffix(1);
    if (take()) {
      std::string_view color = prefix == '-' ? k_red : prefix == '+' ? k_green : std::string_view{};
      bool paint = m_options.color && !color.empty();
      if (paint) m_out += color;
      m_out.push_back(prefix);
      m_out += line;
      if (paint) m_out += k_reset;
      m_out.push_back('\n');
    }
    if (!newline && take()) m_out += "\\ No newline at end of file\n";
  }

  void hunk_header(const std::string& header) {
    if (!take()) return;
    if (m_options.color) {
      m_out += k_cyan;
      m_out += header;
      m_out += k_reset;
    } else {
      m_out += header;
    }
    m_out.push_back('\n');
  }

  std::string finish() {
    if (m_options.max_lines != 0 && m_count > m_options.max_lines) {
      m_out +=
          fmt::format("… diff cut at {} lines ({} more)", detail::with_commas(m_options.max_lines),
                      detail::with_commas(m_count - m_options.max_lines));
      if (!m_options.full_diff_path.empty()) {
        m_out += "; full diff: ";
        m_out += m_options.full_diff_path;
      }
      m_out.push_back('\n');
    }
    return std::move(m_out);
  }

 private:
  // Counts one more line; true when it is still within the cap.
  bool take() {
    ++m_count;
    return m_options.max_lines == 0 || m_count <= m_options.max_lines;
  }

  std::string m_out;
  const Options& m_options;
  std::size_t m_count = 0;  // hunk lines produced, shown or not
};

// "l,n" of a hunk header as diff(1) writes it: ",n" left out when n is 1, and the line before
// the hunk (0 at the top) when n is 0.
std::string range_text(std::size_t pos, std::size_t len) {
  if (len == 1) return std::to_string(pos + 1);
  return fmt::format("{},{}", len == 0 ? pos : pos + 1, len);
}

}  // namespace

std::string unified(std::string_view a, std::string_view b, const Options& options) {
  if (a == b) return {};
  const std::vector<std::string_view> lines_a = detail::split_lines(a);
  const std::vector<std::string_view> lines_b = detail::split_lines(b);
  const std::vector<detail::Change> changes = detail::edit_script(lines_a, lines_b);
  if (changes.empty()) return {};

  Sink sink(options);
  const std::size_t context = options.context_lines;
  std::size_t first = 0;
  while (first < changes.size()) {
    // A hunk: changes whose equal gaps are at most 2·context lines.
    std::size_t last = first;
    while (last + 1 < changes.size() &&
           changes[last + 1].a_pos - (changes[last].a_pos + changes[last].a_len) <= 2 * context) {
      ++last;
    }
    const detail::Change& head = changes[first];
    const detail::Change& tail = changes[last];
    std::size_t before = std::min(context, head.a_pos);  // equal lines precede head on both sides
    std::size_t tail_end_a = tail.a_pos + tail.a_len;
    std::size_t after = std::min(context, lines_a.size() - tail_end_a);
    std::size_t start_a = head.a_pos - before;
    std::size_t start_b = head.b_pos - before;
    std::size_t len_a = tail_end_a + after - start_a;
    std::size_t len_b = tail.b_pos + tail.b_len + after - start_b;
    sink.hunk_header(
        fmt::format("@@ -{} +{} @@", range_text(start_a, len_a), range_text(start_b, len_b)));

    std::size_t ia = start_a;
    for (std::size_t k = first; k <= last; ++k) {
      const detail::Change& c = changes[k];
      for (; ia < c.a_pos; ++ia) sink.line(' ', lines_a[ia]);
      for (std::size_t i = 0; i < c.a_len; ++i) sink.line('-', lines_a[c.a_pos + i]);
      for (std::size_t j = 0; j < c.b_len; ++j) sink.line('+', lines_b[c.b_pos + j]);
      ia = c.a_pos + c.a_len;
    }
    for (; ia < tail_end_a + after; ++ia) sink.line(' ', lines_a[ia]);
    first = last + 1;
  }
  return sink.finish();
}

}  // namespace coldgate::diff
