// libFuzzer target: config::parse on any bytes yields a Config or a coldgate::Error(usage) whose
// `where` names the file (and, past the file level, a line and column); any other exception,
// crash or sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/config.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  try {
    coldgate::config::parse(yaml, "/fuzz/coldgate.yaml");
  } catch (const coldgate::Error& e) {
    if (e.code() != coldgate::ExitCode::usage) std::abort();
    // A located error: "coldgate.yaml" or "coldgate.yaml:L:C", never an unnamed one.
    if (e.where().rfind("/fuzz/coldgate.yaml", 0) != 0) std::abort();
  }
  return 0;
}
