// Placeholder until the stack summary lands.
#include "report/stack.hpp"

#include "util/error.hpp"

namespace coldgate::report {

std::string stack_summary(const std::vector<StackEntry>&, const std::string&) {
  throw Error(ExitCode::infrastructure, "stack", "the stack summary is not built yet");
}

}  // namespace coldgate::report
