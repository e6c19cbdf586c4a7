#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "canon/canon.hpp"
#include "diff/flatten.hpp"

// Pairing of the elements of arrays sorted by `identity:` (internal to the diff module): the
// path summary's merge-join walks both documents in document order, and canon sorts such an
// array's object elements by their identity value, so comparing elements by that value instead
// of their index keeps the walk in order and pairs an element with the one of the same identity.
namespace coldgate::diff::detail {

/// Where an array element stands in its array's canonical order, for pairing: elements of two
/// documents with equal keys are the same element. Ordered like canon sorts (group, then kind,
/// then value), `n` telling apart elements equal in the rest.
struct ElementKey {
  /// 0 a non-object element, or any element of an array not paired by identity (`n` is then its
  /// index); 1 an object with an identity member; 2 an object without one.
  std::uint8_t group = 0;
  /// Group 1: the kind of the identity value, in canon's order: 0 null, 1 false, 2 true,
  /// 3 number, 4 string, 5 array, 6 object.
  std::uint8_t kind = 0;
  /// Group 1: a number's canonical text, a string's decoded bytes; "" for the other kinds.
  std::string value;
  /// Position among the array's earlier elements of the same group and kind (and value, for a
  /// number or string): 0 for the first.
  std::size_t n = 0;
};

/// Three-way comparison (<0, 0, >0) of two element keys in canon's element order.
int compare_keys(const ElementKey& a, const ElementKey& b);

/// One array of a document whose elements are paired by identity.
struct KeyedArray {
  std::vector<ElementKey> keys;  // one per element, in document order (strictly increasing)
  std::string member;            // the identity member of its first object that has one
};

/// Paired arrays by their JSON Pointer in the document (RFC 6901).
using KeyedArrays = std::unordered_map<std::string, KeyedArray>;

/// The arrays of canonical text `canonical` (arranged under `arrangement`) whose elements are
/// paired by identity: not `ordered`, with an object element that has an identity member, and
/// whose elements are in identity order (a document arranged under other rules is not: its
/// arrays stay paired by index). Empty when `canonical` is not canonical JSON. One key per
/// element of those arrays in memory.
KeyedArrays keyed_arrays(std::string_view canonical, const canon::Options& arrangement);

/// One step of a pairing path: a member name, or an array element by its key.
struct PairSegment {
  bool is_index = false;
  std::string key;                     // !is_index: the member name
  ElementKey element;                  // is_index
  const KeyedArray* array = nullptr;  // is_index: the paired array it is in; null when by index
};

/// A side's current path as pairing segments, kept up to date with its Flattener's path.
class PairPath {
 public:
  /// `arrays` (the side's keyed_arrays) must outlive this.
  explicit PairPath(const KeyedArrays& arrays) : m_arrays(arrays) {}
  /// Moves to `path` (the Flattener's current one), recomputing only the steps that changed.
  void update(const std::vector<Segment>& path);
  /// The pairing segments of the path last given to update().
  const std::vector<PairSegment>& segments() const { return m_segments; }
  /// The JSON Pointer of the first `depth` steps of that path.
  const std::string& pointer_to(std::size_t depth) const { return m_prefix[depth]; }

 private:
  const KeyedArrays& m_arrays;
  std::vector<Segment> m_path;
  std::vector<std::string> m_prefix{std::string()};  // m_prefix[d]: pointer of m_path[0, d)
  std::vector<PairSegment> m_segments;
};

/// Document order of two pairing paths, as detail::compare() orders positional ones.
int compare(const std::vector<PairSegment>& a, const std::vector<PairSegment>& b);

/// Appends one pairing step to `out` so that equal steps of either document append equal text.
void append_pair_segment(const PairSegment& segment, std::string& out);

}  // namespace coldgate::diff::detail
