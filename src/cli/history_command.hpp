#pragma once

#include <optional>
#include <string>

#include "config/config.hpp"
#include "history/store.hpp"

namespace coldgate::cli {

/// `coldgate history record|page` (docs/commands.md "history").
struct HistoryArgs {
  std::string action;                  // record | page
  std::string config = "coldgate.yaml";
  std::string store;                   // --store: overrides history.store ("" = the config's)
  std::string results = "coldgate-out/results.json";  // record: the run to record
  std::string branch;  // record: the branch recorded (default: the results'); page: only its
  bool push = false;                   // record: push the git store's branch to --remote
  std::string remote = "origin";       // git stores: the remote read beside the local branch
  std::string out;                     // page: -o DIR (written as DIR/index.html)
  std::string repo_url;                // page: commit links (default: from the remote's URL)
};

/// The store a history command uses: `--store` when given (relative to the current folder),
/// else the config's `history.store` (relative to its folder), else `git:coldgate-history`.
/// Throws Error(usage) at --store or at the config's `store:` value for a bad spec.
history::StoreSpec store_spec(const std::string& flag, const config::Config* cfg);

/// The config at `path` when the file exists; nullopt when it does not and `needed` is false
/// (--store names the store); Error(usage) with require_config's hint when it is needed.
std::optional<config::Config> history_config(const std::string& path, bool needed);

/// `history record`: reduces --results to a history record and lands it in the store (git
/// branch commit, pushed with bounded retries with --push; or a folder file). Prints where it
/// landed. Exit 2 for results that name no commit or a run that stopped; 3 when the store
/// cannot be written. Throws Error.
int run_history_record(const HistoryArgs& args);

/// `history page -o DIR`: reads every record of the store (skipping bad files with a warning
/// naming each), writes DIR/index.html atomically (the dashboard, history::page_html) and prints
/// its path. Exit 2 without -o; 3 when Chart.js (libjs-chart.js) is not installed. Throws Error.
int run_history_page(const HistoryArgs& args);

}  // namespace coldgate::cli
