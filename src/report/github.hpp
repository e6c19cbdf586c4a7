#pragma once

#include <string>
#include <string_view>

#include "results/results.hpp"

namespace coldgate::report {

/// A workflow command's message escaped as GitHub's runner expects (GitHub docs, "Workflow
/// commands for GitHub Actions"; actions/toolkit `escapeData`): `%` → `%25`, CR → `%0D`,
/// LF → `%0A`, so data cannot end the command or start another one.
std::string escape_command_data(std::string_view text);

/// A workflow command's property value (`file=`, `title=`): escape_command_data plus `:` → `%3A`
/// and `,` → `%2C` (actions/toolkit `escapeProperty`).
std::string escape_command_property(std::string_view text);

/// GitHub annotations for a run, one workflow command per line: `::error` per regression,
/// failed stage and snapshot that is not match/updated (with `file=<snapshot path>`),
/// `::warning` per slower metric and for an environment that differs from the baseline.
/// Empty when there is nothing to flag.
std::string annotations(const results::Results& results);

/// A fresh random token for `::stop-commands::<token>` … `::<token>::`, which keeps the
/// runner from reading workflow commands in the report's data while it is printed (GitHub
/// docs, "Stopping and starting workflow commands").
std::string stop_commands_token();

}  // namespace coldgate::report
