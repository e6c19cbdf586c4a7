#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace coldgate::canon {

/// A compiled path pattern: a JSON Pointer (RFC 6901, `~0` = `~`, `~1` = `/`) whose segments
/// may be `*` (exactly one segment) or `**` (zero or more segments).
struct Pattern {
  enum class Step : std::uint8_t { literal, any_one, any_many };
  struct Segment {
    Step step = Step::literal;
    std::string name;                      // literal member name, unescaped
    std::int64_t index = -1;               // the name as an array index, or -1 when it is not one
  };
  std::vector<Segment> segments;
};

/// Compiles `pattern`; throws Error(usage) with `where` = `pattern "<text>"` when malformed.
Pattern compile_pattern(std::string_view pattern);

/// A set of patterns matched against paths one step at a time (a small NFA).
class PatternSet {
 public:
  /// A position inside one pattern.
  struct State {
    std::uint32_t pattern;
    std::uint32_t position;
  };

  PatternSet() = default;
  /// Compiles `patterns` (throws like compile_pattern).
  explicit PatternSet(const std::vector<std::string>& patterns);

  bool empty() const { return m_patterns.empty(); }
  /// Appends to `out` the states at the document root.
  void start(std::vector<State>& out) const;
  /// Appends to `states` the states after stepping from states[begin, end) into member `name`
  /// (index < 0) or array element `index`.
  void step(std::vector<State>& states, std::size_t begin, std::size_t end, std::string_view name,
            std::int64_t index) const;
  /// True when one of the states completes its pattern.
  bool matches(const State* states, std::size_t count) const;

 private:
  void add(std::uint32_t pattern, std::uint32_t position, std::vector<State>& out,
           std::size_t from) const;
  std::vector<Pattern> m_patterns;
};

}  // namespace coldgate::canon
