#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "canon/canon.hpp"

namespace coldgate::canon {

/// JSON value kinds, in the canonical cross-type order null < false < true < number < string <
/// array < object (docs/architecture.md "Canonical JSON").
enum class Kind : std::uint8_t { null, false_, true_, number, string, array, object };

/// One JSON value, 16 bytes. A container's children are contiguous in Document::nodes, so a
/// document is a flat vector with no per-node allocation and no recursion on destruction.
struct Node {
  static constexpr std::uint32_t k_key_len_bits = 25;
  static constexpr std::uint32_t k_max_key_bytes = (1u << k_key_len_bits) - 1;
  // Flag bits above the key length.
  static constexpr std::uint32_t k_key_escape = 1u << 25;    // member name needs escaping
  static constexpr std::uint32_t k_value_escape = 1u << 26;  // string value needs escaping
  static constexpr std::uint32_t k_ordered = 1u << 27;       // array keeps its order
  static constexpr std::uint32_t k_placeholder = 1u << 28;   // a redaction placeholder string

  std::uint32_t key = 0;  // member name: offset into Document::text (children of objects only)
  std::uint32_t bits = 0;  // kind (top 3 bits), flags, member name length (low 25 bits)
  std::uint32_t a = 0;     // string/number: text offset; container: index of first child
  std::uint32_t b = 0;     // string/number: text length in bytes; container: child count

  Kind kind() const { return static_cast<Kind>(bits >> 29); }
  void set_kind(Kind kind) { bits = (bits & ~(7u << 29)) | (static_cast<std::uint32_t>(kind) << 29); }
  std::uint32_t key_size() const { return bits & k_max_key_bytes; }
  bool has(std::uint32_t flag) const { return (bits & flag) != 0; }
  bool is_container() const { return kind() == Kind::array || kind() == Kind::object; }
};
static_assert(sizeof(Node) == 16);

/// A parsed JSON document: flat node vector; strings, member names and canonical number texts
/// are read from the parsed input where they appear there verbatim, else from `text`. Numbers
/// are stored already normalized.
struct Document {
  std::vector<Node> nodes;  // children blocks in close order; the root is `root`
  /// The parsed JSON, when nodes point into it (the fast parser); must outlive the Document.
  /// Text offsets below input.size() are in it, the others in `text` at offset - input.size().
  std::string_view input;
  std::string text;         // UTF-8 bytes referenced by nodes that are not in `input`
  std::uint32_t root = 0;   // index of the top-level value

  /// The byte at text offset `offset` (see `input`).
  const char* at(std::uint32_t offset) const {
    return offset < input.size() ? input.data() + offset : text.data() + (offset - input.size());
  }
  /// Text offset of the next byte appended to `text`.
  std::uint32_t end_offset() const { return static_cast<std::uint32_t>(input.size() + text.size()); }
  std::string_view key(const Node& node) const { return {at(node.key), node.key_size()}; }
  std::string_view value(const Node& node) const { return {at(node.a), node.b}; }
};

/// Parses `json` (RFC 8259, UTF-8, no BOM) into a Document, numbers normalized exactly. Throws
/// Error(usage) with `where` = `<source>: byte N` on any invalid input, including duplicate keys
/// and nesting deeper than options.max_depth; never recurses on depth. The Document may point
/// into `json` (Document::input): keep `json` alive as long as it.
Document parse_document(std::string_view json, const Options& options, std::string_view source);

/// parse_document's fast path (fast_parser.cpp): on input it accepts (exactly RFC 8259 JSON with
/// RFC 3629 UTF-8, within max_input_bytes and max_depth) fills `document` with the tree
/// parse_document_reference builds, pointing into `json` (which must outlive it), and returns
/// true; otherwise returns false, never throws Error, and leaves `document` unspecified.
bool parse_document_fast(std::string_view json, const Options& options, Document& document);

/// parse_document's reference path over nlohmann's SAX parser (parser.cpp): same contract as
/// parse_document, and the source of all its error messages.
Document parse_document_reference(std::string_view json, const Options& options,
                                  std::string_view source);

/// Applies `ordered` and `redact` and sorts every object and unordered array bottom-up, in
/// place (docs/architecture.md "Canonical JSON" order). Throws Error(usage) on a duplicate member name (`where` =
/// `<source>: byte N` of the second occurrence, found by re-reading `json`).
void arrange_document(Document& document, const Options& options, std::string_view json,
                      std::string_view source);

/// Re-reads `json` tracking member names per object and throws Error(usage) at the first
/// duplicate key (`<source>: byte N` of its opening quote); called once arrange found one.
[[noreturn]] void report_duplicate_key(std::string_view json, const Options& options,
                                       std::string_view source);

/// Exact byte size of the canonical text of `document` (already arranged).
std::size_t canonical_size(const Document& document);

/// Appends the canonical text of the arranged `document` to `out` (two-space indent, LF, one
/// final newline).
void write_canonical(const Document& document, std::string& out);
/// The same, with `size` = canonical_size(document) already known.
void write_canonical(const Document& document, std::string& out, std::size_t size);
/// The same text handed to `sink` in order, in pieces of about 256 KiB (never all at once).
void write_canonical(const Document& document, const std::function<void(std::string_view)>& sink);

/// True when `s` contains a byte append_json_string would escape.
bool needs_escape(std::string_view s);

}  // namespace coldgate::canon
