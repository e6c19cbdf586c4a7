#include "canon/canon.hpp"

#include <utility>

#include "canon/document.hpp"
#include "canon/number.hpp"
#include "util/error.hpp"

namespace coldgate::canon {

namespace {

// Parses and arranges `json`; returns the document and its canonical size in bytes, checked
// against max_output_bytes.
std::pair<Document, std::size_t> arranged(std::string_view json, const Options& options,
                                          std::string_view source) {
  Document document = parse_document(json, options, source);
  arrange_document(document, options, json, source);
  const std::size_t size = canonical_size(document);
  if (size > options.max_output_bytes) {
    throw usage_error(std::string(source),
                      "canonical text would be " + std::to_string(size) + " bytes, more than " +
                          std::to_string(options.max_output_bytes) +
                          " (max_output_bytes); is the nesting unreasonably deep?");
  }
  return {std::move(document), size};
}

}  // namespace

std::string canonicalize(std::string_view json, const Options& options, std::string_view source) {
  const auto [document, size] = arranged(json, options, source);
  std::string out;
  write_canonical(document, out, size);
  return out;
}

void canonicalize_to(std::string_view json, const Options& options, std::string_view source,
                     const std::function<void(std::string_view)>& sink) {
  const auto [document, size] = arranged(json, options, source);
  write_canonical(document, sink);
}

bool is_canonical(std::string_view text, const Options& options) {
  try {
    Document document = parse_document(text, options, "input");
    arrange_document(document, options, text, "input");
    const std::size_t size = canonical_size(document);
    if (size != text.size()) return false;
    std::string out;
    write_canonical(document, out, size);
    return out == text;
  } catch (const Error&) {
    return false;
  }
}

bool is_json_number(std::string_view text) {
  std::string ignored;
  return normalize_number_to(text, ignored) == NumberStatus::ok;
}

std::string normalize_number(std::string_view number) {
  std::string out;
  switch (normalize_number_to(number, out)) {
    case NumberStatus::ok:
      return out;
    case NumberStatus::exponent_out_of_range:
      throw usage_error("number " + std::string(number), "exponent beyond ±10^15");
    case NumberStatus::invalid:
      break;
  }
  throw usage_error("number " + std::string(number), "not a JSON number (RFC 8259)");
}

}  // namespace coldgate::canon
