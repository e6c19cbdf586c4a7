// libFuzzer target: results::from_json (the results.json reader) on any bytes yields Results or
// a coldgate::Error(usage) naming the source; a Results it accepts serializes and reads back
// to the same text (to_json ∘ from_json is a fixed point after one round).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "results/json.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  namespace results = coldgate::results;
  try {
    const std::string once = results::to_json(results::from_json(text, "fuzz.json"));
    const std::string twice = results::to_json(results::from_json(once, "fuzz-again.json"));
    if (once != twice) std::abort();
  } catch (const coldgate::Error& e) {
    if (e.code() != coldgate::ExitCode::usage) std::abort();
    if (e.where().rfind("fuzz.json", 0) != 0) std::abort();
  }
  return 0;
}
