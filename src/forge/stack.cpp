// Placeholder until stack discovery lands: every call fails loudly.
#include "forge/stack.hpp"

#include "util/error.hpp"

namespace coldgate::forge {

Stack discover_stack(const Target&, const std::string&, const RetryPolicy&, const Log&) {
  throw Error(ExitCode::usage, "--github", "stack discovery is not built yet");
}

}  // namespace coldgate::forge
