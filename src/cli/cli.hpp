#pragma once

namespace coldgate::cli {

/// Parses the command line and runs the subcommand; returns the process exit code
/// (docs/architecture.md "Exit codes"). Throws coldgate::Error for `main` to print.
int main(int argc, char** argv);

}  // namespace coldgate::cli
