#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace coldgate::cli {

/// True when coldgate runs in CI mode: `--ci`/`--no-ci` when given, else the CI environment
/// variable is "true" or "1" (as GitHub Actions and GitLab CI set it).
bool ci_mode(std::optional<bool> flag);

/// True when ANSI colour should be used on stdout: `when` is "always", or "auto" with stdout a
/// TTY and NO_COLOR unset or empty (https://no-color.org); "never" never.
bool use_color(const std::string& when);

/// Throws Error(usage) with a hint when the config file `path` does not exist.
void require_config(const std::string& path);

/// Arguments of `coldgate canon`.
struct CanonArgs {
  std::string input = "-";                // file, or "-" for stdin
  std::string output;                     // write here atomically instead of stdout
  std::vector<std::string> ordered;       // arrays whose order matters
  std::vector<std::string> identity;      // sort-key members (default $id, id)
  std::vector<std::string> redact;        // paths replaced by "[redacted]"
  bool redact_ids = false;                // stable counters for redacted values
  bool check = false;                     // exit 1 when the input is not already canonical
  std::size_t max_depth = 100000;         // nesting limit
};
/// Prints (or writes) the canonical form; returns the exit code. Throws Error on bad input.
int run_canon(const CanonArgs& args);

/// Arguments of `coldgate diff`.
struct DiffArgs {
  std::string a;
  std::string b;
  std::size_t max_lines = 200;   // hunk lines shown, 0 = all
  std::size_t max_paths = 20;    // paths listed in the summary
  std::size_t context = 3;       // context lines
  std::string color = "auto";    // auto | always | never
  std::string output;            // also write the full diff here
};
/// Canonicalizes both documents and prints their readable diff; 0 when equal, 1 when they differ.
int run_diff(const DiffArgs& args);

/// Arguments of `coldgate accept`.
struct AcceptArgs {
  std::string config = "coldgate.yaml";
  std::vector<std::string> stages;  // empty: every stage with a pending snapshot
  std::optional<bool> ci;
};
/// Promotes pending `.new` snapshots of the config's stages; refuses in CI mode (exit 2).
int run_accept(const AcceptArgs& args);

/// Arguments of `coldgate run`.
struct RunArgs {
  std::string config = "coldgate.yaml";
  std::vector<std::string> stages;   // --stage: only these
  std::string out = "coldgate-out";  // --out: results.json, report.md, CI candidates, plans
  bool update_snapshots = false;
  std::optional<bool> ci;
  std::string baseline;  // --baseline FILE (the gate; not built yet)
  std::string shard;     // --shard I/N (not built yet)
};
/// The main job: measures every stage, writes <out>/results.json and <out>/report.md, prints
/// the Markdown table on stdout; 0 when every stage ran and every snapshot matches, else 1.
int run_run(const RunArgs& args);

}  // namespace coldgate::cli
