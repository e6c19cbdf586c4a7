#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace coldgate::canon {

/// How a document is canonicalized (docs/architecture.md "Canonical JSON"). Paths are JSON Pointer
/// patterns (RFC 6901) whose segments may be `*` (any one member name or array index) or `**`
/// (any number of segments, including none), e.g. `/log`, `/items/*/tags`, `/**/updated_at`.
struct Options {
  /// Arrays at these paths keep their order; every other array is sorted.
  std::vector<std::string> ordered;
  /// Object elements of an array sort by the first of these members present (numbers
  /// numerically, then strings), then by canonical text.
  std::vector<std::string> identity{"$id", "id"};
  /// Values at these paths are replaced by "[redacted]".
  std::vector<std::string> redact;
  /// With redact: equal redacted values get counters instead of "[redacted]": "[<name>-N]",
  /// e.g. "[uuid-1]", one counter per name (the nearest member name on the path; "redacted" at
  /// the root). The result depends neither on member order nor on the order of unordered
  /// arrays, and canonicalizing it again changes nothing. How numbers are chosen:
  /// 1. Values already of the form "[<name>-N]" (N in 1..999999999, no leading zero) keep N.
  /// 2. Arrays are ordered with every placeholder reading alike; elements equal in that order
  ///    (differing only in redacted values) are then ordered by the original values, ranked per
  ///    name: null < false < true < numbers (numerically) < strings (by code point) < arrays <
  ///    objects (by compact canonical text). Values are never compared across names.
  /// 3. Each other value gets, at its first appearance in that order, the smallest N not yet
  ///    taken for its name (kept numbers from 1. are taken from the start).
  /// 4. Arrays are sorted again with the final placeholders, compared as strings like any
  ///    others (so "[id-10]" sorts before "[id-2]").
  /// Hence the structure decides the numbering where it can: replacing the redacted values by
  /// others (fresh UUIDs on every run) changes the snapshot only through the order of array
  /// elements that differ in nothing but redacted values, e.g. ["x","y","x"] → 1,1,2 but
  /// ["y","x","y"] → 1,2,2 (x < y in both).
  bool redact_ids = false;
  /// Deepest nesting of arrays/objects accepted; deeper input is a DepthError while parsing,
  /// never a stack overflow. Each line of the canonical text is indented 2 bytes per level and
  /// stands for at least one input byte, so this also bounds the text at about 2 × max_depth
  /// bytes per input byte (the default, serde_json's, keeps that a small factor; 30,000 levels
  /// of `{"a":` printed 1.8 GB from 180 KB).
  std::size_t max_depth = 128;
  /// Largest input accepted, in bytes; larger input is an error before parsing.
  std::size_t max_input_bytes = std::size_t{4} << 30;
  /// Largest canonical text produced, in bytes; checked before printing (deep nesting makes the
  /// indentation grow quadratically: 100,000 levels print as ~20 GB).
  std::size_t max_output_bytes = std::size_t{4} << 30;
};

/// The error (exit 2) for nesting deeper than Options::max_depth, `where` = `<source>: byte N`
/// (the bracket that opens level max_depth + 1): a caller names its own way to raise the limit.
class DepthError : public Error {
 public:
  using Error::Error;
};

/// Canonical text of the JSON document `json`: sorted, redacted, two-space indented, LF, one
/// final newline. Throws Error(usage) with `where` = `<source>: byte N` on invalid JSON, invalid
/// UTF-8, a lone surrogate escape, a duplicate key, or nesting deeper than max_depth (a
/// DepthError). `source` names the input in messages (a file name, or "stdin").
std::string canonicalize(std::string_view json, const Options& options = {},
                         std::string_view source = "input");

/// canonicalize() handing the text to `sink` in order, in pieces of about 256 KiB, instead of
/// returning it: no buffer of the whole output. Throws as canonicalize() does, before `sink` is
/// first called; exceptions from `sink` pass through.
void canonicalize_to(std::string_view json, const Options& options, std::string_view source,
                     const std::function<void(std::string_view)>& sink);

/// True when `text` is already byte-identical to its own canonical form under `options`
/// (no BOM, no CR, sorted, two-space indent, final newline); false for invalid JSON too.
bool is_canonical(std::string_view text, const Options& options = {});

/// Canonical text of one JSON number (RFC 8259 grammar), exact, never through double: value
/// 0.d1..dk × 10^n prints plain when -6 < n <= 21, else as `d[.ddd]e[-]N` (ECMAScript
/// Number::toString thresholds, ECMA-262 §6.1.6.1.20, as in RFC 8785 §3.2.2.3, but without `+`).
/// Examples: 1.50 → 1.5, -0.0 → 0, 1E3 → 1000, 1e21 → 1e21, 1e-7 → 1e-7, 1e400 → 1e400.
/// Throws Error(usage) when `number` is not a JSON number or its exponent exceeds ±10^15.
std::string normalize_number(std::string_view number);

/// An array canonicalize() sorts by its elements' canonical text: not `ordered`, with two or more
/// object elements that have none of the `identity` members. One changed value then moves its
/// element, and every element between its old and new place differs at the same index.
struct TextSortedArray {
  std::string pointer;       // where it is in the arranged document (RFC 6901; "" the root)
  std::size_t elements = 0;  // all its elements
  std::size_t objects = 0;   // its object elements without an identity member
  /// A member present in each of those objects with a number or string value, all different,
  /// that `identity:` could name to sort them (one-kind and shortest values first, then by
  /// name); "" when none is.
  std::string member;
};

/// The arrays of `json` that canonicalize() sorts by text (see TextSortedArray), in document
/// order. Throws as canonicalize() does.
std::vector<TextSortedArray> text_sorted_arrays(std::string_view json, const Options& options);

/// True when `text` is exactly one JSON number (RFC 8259 grammar: no `+`, no leading zeros, no
/// NaN or Infinity) whose exponent is within ±10^15.
bool is_json_number(std::string_view text);

/// Appends `s` as a JSON string literal (quotes included), escaping only '"', '\\' and
/// U+0000..U+001F (short forms \b \t \n \f \r, else \u00xx lowercase), as the canonical
/// form writes strings; the bytes are copied as they are (UTF-8 is not checked).
void append_json_string(std::string_view s, std::string& out);

/// Checks that a path pattern is well-formed (starts with '/', or is "" for the whole document
/// as in RFC 6901; RFC 6901 escapes valid);
/// throws Error(usage) with `where` naming the pattern otherwise.
void validate_pattern(std::string_view pattern);

}  // namespace coldgate::canon
