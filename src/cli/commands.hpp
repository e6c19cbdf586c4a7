#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "snapshot/snapshot.hpp"

namespace coldgate::cli {

/// True when coldgate runs in CI mode: `--ci`/`--no-ci` when given, else the CI environment
/// variable is "true" or "1" (as GitHub Actions and GitLab CI set it).
bool ci_mode(std::optional<bool> flag);

/// True when ANSI colour should be used on stdout: `when` is "always", or "auto" with stdout a
/// TTY and NO_COLOR unset or empty (https://no-color.org); "never" never.
bool use_color(const std::string& when);

/// Throws Error(usage) with a hint when the config file `path` does not exist.
void require_config(const std::string& path);

/// Loads the config at `path` (require_config's hint when it does not exist) and, unless
/// `allow_outside`, refuses snapshot paths outside its repository (config::require_paths_inside).
config::Config load_snapshot_config(const std::string& path, bool allow_outside);

/// The snapshot claims of the config's stages that have a snapshot, in config order.
std::vector<snapshot::Claim> snapshot_claims(const config::Config& cfg);

/// How messages tell the user to accept: "coldgate accept", plus "-c PATH" when `config_path`
/// is not ./coldgate.yaml.
std::string accept_command(const std::string& config_path);

/// Arguments of `coldgate canon`.
struct CanonArgs {
  std::string input = "-";                // file, or "-" for stdin
  std::string output;                     // write here atomically instead of stdout
  std::vector<std::string> ordered;       // arrays whose order matters
  std::vector<std::string> identity;      // sort-key members (default $id, id)
  std::vector<std::string> redact;        // paths replaced by "[redacted]"
  bool redact_ids = false;                // stable counters for redacted values
  bool check = false;                     // exit 1 when the input is not already canonical
  std::size_t max_depth = canon::Options{}.max_depth;  // nesting limit
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
  bool allow_outside = false;       // --allow-outside: snapshot paths may leave the repository
  /// --from DIR: the candidates a run wrote under DIR/snapshots/ (`run --ci`, `ab`) instead of
  /// the `.new` files beside the snapshots; "" = beside them.
  std::string from;
};
/// Promotes pending `.new` snapshots of the config's stages (or a run's candidates under
/// `--from DIR`); refuses in CI mode (exit 2).
int run_accept(const AcceptArgs& args);

/// Where accept and review take the candidates from (`--from`, snapshot::Source); throws
/// Error(usage) at --from when DIR is not a folder.
snapshot::Source candidate_source(const AcceptArgs& args, const config::Config& cfg);

/// Arguments of `coldgate run`.
struct RunArgs {
  std::string config = "coldgate.yaml";
  std::vector<std::string> stages;   // --stage: only these
  std::string out = "coldgate-out";  // --out: results.json, report.md, CI candidates, plans
  bool update_snapshots = false;
  std::optional<bool> ci;
  std::string baseline;  // --baseline FILE: results.json to gate against; or history[:N]
  std::string store;     // --store: the history store of --baseline history (over history.store)
  bool allow_no_baseline = false;  // --allow-no-baseline: no recorded result is not an error
  std::string shard;     // --shard I/N: every N-th stage starting at the I-th
  bool allow_outside = false;  // --allow-outside: snapshot paths may leave the repository
  bool comment = false;  // --comment: then post the PR comment (cli/comment_command.hpp)
  bool try_remedies = false;  // --try: measure the remedies of each diagnosed stage
};
/// The main job: measures every stage, writes <out>/results.json and <out>/report.md, prints
/// the Markdown table on stdout; 0 when every stage ran, every snapshot matches and (with
/// --baseline) nothing regressed, else 1. A bad baseline or --shard fails before measuring
/// (exit 2); differing environments under require_same_environment exit 3 after results.json
/// is written. With --comment (or report.comment: true in CI mode where a forge is detected)
/// the report is posted as the PR comment afterwards: when that fails the run's exit code stands
/// if the gate failed, else the comment's error (exit 3) does; a read-only fork token warns.
int run_run(const RunArgs& args);

/// Arguments of `coldgate compare`.
struct CompareArgs {
  std::string base;                  // baseline results.json
  std::string head;                  // head results.json
  std::string config;                // -c: thresholds; "" = ./coldgate.yaml when it exists
  std::string out = "coldgate-out";  // --out: results.json (head + gate block), report.md
};
/// Gates HEAD against BASE: writes <out>/results.json and <out>/report.md, prints the report;
/// 0 when the gate passes, 1 when it fails. Throws Error(usage) for unreadable, malformed or
/// wrong-schema files and bad samples; Error(infrastructure) under require_same_environment.
int run_compare(const CompareArgs& args);

/// Arguments of `coldgate merge`.
struct MergeArgs {
  std::vector<std::string> inputs;  // results.json of each shard
  std::string output;               // -o: the merged file, written atomically
  std::string config;               // -c: stage order; "" = ./coldgate.yaml when it exists
  bool force = false;               // merge different commits or environments
};
/// Joins sharded results (gate::merge) into args.output; 0, or throws Error(usage).
int run_merge(const MergeArgs& args);

}  // namespace coldgate::cli
