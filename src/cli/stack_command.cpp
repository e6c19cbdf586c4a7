// Placeholder until `coldgate stack` lands: every call fails loudly.
#include "cli/stack_command.hpp"

#include "util/error.hpp"

namespace coldgate::cli {

int run_stack(const StackArgs&) { throw Error(ExitCode::usage, "stack", "not built yet"); }

void comment_stack(const StackArgs&, const std::vector<report::StackEntry>&, const std::string&) {
  throw Error(ExitCode::usage, "stack", "not built yet");
}

}  // namespace coldgate::cli
