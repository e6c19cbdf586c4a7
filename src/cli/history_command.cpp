// Placeholder until the commands land: every call fails loudly.
#include "cli/history_command.hpp"

#include "util/error.hpp"

namespace coldgate::cli {

int run_history_record(const HistoryArgs&) {
  throw Error(ExitCode::usage, "history record", "not built yet");
}

int run_history_page(const HistoryArgs&) {
  throw Error(ExitCode::usage, "history page", "not built yet");
}

}  // namespace coldgate::cli
