// libFuzzer target for the canonicalizer (docs/architecture.md "Canonical JSON"). Properties, on
// every input the canonicalizer accepts (anything else must be a coldgate::Error(usage)):
//  1. idempotent: canon(canon(x)) == canon(x), and is_canonical(canon(x));
//  2. layout-blind: canon(compact(x)) == canon(pretty(x)) == canon(x), where compact/pretty
//     re-serialize x token by token from its own text (whitespace between tokens removed, or
//     re-indented with tabs and CRLF), so numbers keep their exact digits — a re-serialization
//     through nlohmann would route floats through double and change the document itself;
//  3. nlohmann agrees: when nlohmann parses x into a tree without floating-point numbers
//     (integers and everything else round-trip exactly there), canon(nlohmann.dump()) == canon(x);
//  4. the fast parser and the nlohmann-SAX reference parser build the same document whenever
//     the fast parser accepts.
// The first byte picks one of four option sets (default, redact_ids, all arrays ordered,
// identity + redact), so one corpus covers them all.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "canon/canon.hpp"
#include "canon/document.hpp"
#include "util/error.hpp"

namespace {

namespace canon = coldgate::canon;

canon::Options options_for(unsigned char selector) {
  canon::Options o;
  switch (selector % 4) {
    case 1:
      o.redact = {"/**/id", "/**/uuid"};
      o.redact_ids = true;
      break;
    case 2:
      o.ordered = {"/**"};
      break;
    case 3:
      o.identity = {"name", "key"};
      o.redact = {"/*/updated_at", "/**/b"};
      break;
    default:
      break;
  }
  return o;
}

// x (valid JSON) with the whitespace between tokens removed, or re-laid-out: a newline (CRLF)
// and tab indentation after every '{', '[' and ',', before every '}' and ']', and " : " around
// member colons. String literals are copied byte for byte.
std::string relayout(std::string_view x, bool pretty) {
  std::string out;
  int depth = 0;
  auto newline = [&] {
    out += "\r\n";
    out.append(static_cast<std::size_t>(depth > 0 ? depth : 0), '\t');
  };
  for (std::size_t i = 0; i < x.size(); ++i) {
    const char c = x[i];
    if (c == '"') {
      const std::size_t start = i++;
      while (i < x.size() && x[i] != '"') i += x[i] == '\\' ? 2 : 1;
      out.append(x.substr(start, i - start + 1));
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (!pretty) {
      out += c;
      continue;
    }
    if (c == '}' || c == ']') {
      --depth;
      newline();
      out += c;
    } else if (c == '{' || c == '[') {
      out += c;
      ++depth;
      newline();
    } else if (c == ',') {
      out += c;
      newline();
    } else if (c == ':') {
      out += " : ";
    } else {
      out += c;
    }
  }
  return out;
}

bool has_float(const nlohmann::json& j) {
  // Iterative: the tree may be as deep as the input allows.
  std::vector<const nlohmann::json*> todo{&j};
  while (!todo.empty()) {
    const nlohmann::json* v = todo.back();
    todo.pop_back();
    if (v->is_number_float()) return true;
    if (v->is_structured())
      for (const auto& child : *v) todo.push_back(&child);
  }
  return false;
}

[[noreturn]] void fail() { std::abort(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view x(reinterpret_cast<const char*>(data), size);
  const canon::Options options = options_for(size > 0 ? data[0] : 0);

  // 4. Fast parser vs reference, compared through their canonical texts.
  {
    canon::Document fast;
    if (canon::parse_document_fast(x, options, fast)) {
      canon::Document reference = canon::parse_document_reference(x, options, "fuzz");
      std::string fast_text;
      std::string reference_text;
      bool fast_ok = true;
      bool reference_ok = true;
      try {
        canon::arrange_document(fast, options, x, "fuzz");
        canon::write_canonical(fast, fast_text);
      } catch (const coldgate::Error&) {
        fast_ok = false;
      }
      try {
        canon::arrange_document(reference, options, x, "fuzz");
        canon::write_canonical(reference, reference_text);
      } catch (const coldgate::Error&) {
        reference_ok = false;
      }
      if (fast_ok != reference_ok || fast_text != reference_text) fail();
    }
  }

  std::string c;
  try {
    c = canon::canonicalize(x, options, "fuzz");
  } catch (const coldgate::Error& e) {
    if (e.code() != coldgate::ExitCode::usage) fail();
    return 0;
  }
  // 1. Idempotent.
  if (canon::canonicalize(c, options, "canon") != c) fail();
  if (!canon::is_canonical(c, options)) fail();
  // 2. Layout does not matter.
  if (canon::canonicalize(relayout(x, false), options, "compact") != c) fail();
  if (canon::canonicalize(relayout(x, true), options, "pretty") != c) fail();
  // 3. nlohmann's re-serialization, where it is exact.
  const auto tree = nlohmann::json::parse(x, nullptr, /*allow_exceptions=*/false);
  if (!tree.is_discarded() && !has_float(tree)) {
    if (canon::canonicalize(tree.dump(), options, "nlohmann") != c) fail();
  }
  return 0;
}
