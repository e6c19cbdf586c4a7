#include "canon/pattern.hpp"

#include <charconv>

#include "canon/canon.hpp"
#include "util/error.hpp"

namespace coldgate::canon {
namespace {

[[noreturn]] void bad_pattern(std::string_view pattern, const std::string& what) {
  throw usage_error("pattern \"" + std::string(pattern) + "\"", what);
}

}  // namespace

Pattern compile_pattern(std::string_view pattern) {
  Pattern compiled;
  if (pattern.empty()) return compiled;  // RFC 6901: the empty pointer is the whole document
  if (pattern[0] != '/') {
    bad_pattern(pattern, "a path pattern is a JSON Pointer and starts with '/' (e.g. /items/*/id)");
  }
  std::size_t i = 1;
  while (true) {
    const std::size_t end = std::min(pattern.find('/', i), pattern.size());
    const std::string_view raw = pattern.substr(i, end - i);
    Pattern::Segment segment;
    if (raw == "*") {
      segment.step = Pattern::Step::any_one;
    } else if (raw == "**") {
      segment.step = Pattern::Step::any_many;
    } else {
      for (std::size_t k = 0; k < raw.size(); ++k) {
        if (raw[k] != '~') {
          segment.name.push_back(raw[k]);
        } else if (k + 1 < raw.size() && (raw[k + 1] == '0' || raw[k + 1] == '1')) {
          segment.name.push_back(raw[++k] == '0' ? '~' : '/');
        } else {
          bad_pattern(pattern, "'~' must be followed by 0 or 1 (RFC 6901: ~0 is '~', ~1 is '/')");
        }
      }
      const std::string& name = segment.name;
      const bool index = !name.empty() && name.size() <= 18 && (name == "0" || name[0] != '0') &&
                         name.find_first_not_of("0123456789") == std::string::npos;
      if (index) std::from_chars(name.data(), name.data() + name.size(), segment.index);
    }
    compiled.segments.push_back(std::move(segment));
    if (end == pattern.size()) break;
    i = end + 1;
  }
  return compiled;
}

void validate_pattern(std::string_view pattern) { compile_pattern(pattern); }

PatternSet::PatternSet(const std::vector<std::string>& patterns) {
  for (const std::string& pattern : patterns) m_patterns.push_back(compile_pattern(pattern));
}

void PatternSet::add(std::uint32_t pattern, std::uint32_t position, std::vector<State>& out,
                     std::size_t from) const {
  // Adds the state and, across `**` (which may match nothing), the states after it.
  const auto& segments = m_patterns[pattern].segments;
  while (true) {
    bool seen = false;
    for (std::size_t k = from; k < out.size(); ++k) {
      if (out[k].pattern == pattern && out[k].position == position) seen = true;
    }
    if (!seen) out.push_back({pattern, position});
    if (position < segments.size() && segments[position].step == Pattern::Step::any_many) {
      ++position;
    } else {
      return;
    }
  }
}

void PatternSet::start(std::vector<State>& out) const {
  const std::size_t from = out.size();
  for (std::uint32_t p = 0; p < m_patterns.size(); ++p) add(p, 0, out, from);
}

void PatternSet::step(std::vector<State>& out, std::size_t from, std::size_t to,
                      std::string_view name, std::int64_t index) const {
  const std::size_t begin = out.size();
  for (std::size_t k = from; k < to; ++k) {
    const State state = out[k];
    const auto& segments = m_patterns[state.pattern].segments;
    if (state.position >= segments.size()) continue;
    const Pattern::Segment& segment = segments[state.position];
    switch (segment.step) {
      case Pattern::Step::any_many:
        add(state.pattern, state.position, out, begin);
        break;
      case Pattern::Step::any_one:
        add(state.pattern, state.position + 1, out, begin);
        break;
      case Pattern::Step::literal:
        if (index < 0 ? segment.name == name : segment.index == index) {
          add(state.pattern, state.position + 1, out, begin);
        }
        break;
    }
  }
}

bool PatternSet::matches(const State* states, std::size_t count) const {
  for (std::size_t k = 0; k < count; ++k) {
    if (states[k].position == m_patterns[states[k].pattern].segments.size()) return true;
  }
  return false;
}

}  // namespace coldgate::canon
