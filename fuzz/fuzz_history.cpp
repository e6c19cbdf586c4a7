// libFuzzer target: history::from_json (the history file reader, which `history page` and
// `run --baseline history` run on every file of a store anyone can push to) on any bytes yields
// a Record or a coldgate::Error(usage) naming the file; a Record it accepts writes and reads
// back to the same text (to_json ∘ from_json is a fixed point after one round).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "history/record.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  namespace history = coldgate::history;
  try {
    const std::string once = history::to_json(history::from_json(text, "fuzz.json"));
    const std::string twice = history::to_json(history::from_json(once, "fuzz-again.json"));
    if (once != twice) std::abort();
  } catch (const coldgate::Error& e) {
    if (e.code() != coldgate::ExitCode::usage) std::abort();
    if (e.where().rfind("fuzz.json", 0) != 0) std::abort();
  }
  return 0;
}
