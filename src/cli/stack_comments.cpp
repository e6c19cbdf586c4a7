// Placeholder until `coldgate stack --comment` lands: every call fails loudly.
#include "cli/stack_command.hpp"

#include "util/error.hpp"

namespace coldgate::cli {

void comment_stack(const StackArgs&, const std::vector<report::StackEntry>&, const std::string&) {
  throw Error(ExitCode::usage, "stack", "not built yet");
}

}  // namespace coldgate::cli
