#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "history/record.hpp"
#include "results/results.hpp"

namespace coldgate::history {

/// `--baseline history[:N]` as N (default 5); nullopt when `text` is not of that form. Throws
/// Error(usage) naming --baseline for `history:` followed by anything but an integer 1–100.
std::optional<int> parse_history_baseline(const std::string& text);

/// Whether select() may pick the record of the commit it starts from.
enum class Start {
  excluded,  // `run --baseline history`: a run is not its own baseline
  included,  // `ab`'s trend from its base commit: that commit's record is a main point too
};

/// The records a history baseline or trend uses: the newest `n` of `records` that are
/// ancestors of `from_commit` (git's topological order from it; the commit's own record only
/// with Start::included), on `branch` when it is not ""; outside a git checkout, or for a commit
/// git does not know, the newest by commit date. Returned oldest first.
std::vector<Record> select(std::vector<Record> records, const std::filesystem::path& repo,
                           const std::string& from_commit, const std::string& branch, int n,
                           Start start = Start::excluded);

/// A baseline made of `used` (non-empty) for gate::compare: per stage and metric the median of
/// the records' medians, with a range covering all their samples — cold samples {min of all,
/// median of medians, max of all}, so the gate's median and range rules read it as documented.
/// Stages failed in a record are left out of it; stage settings, kind, cold mode, runs and warm,
/// the environment and git facts are the newest record's. Each stage's `queries` (what
/// gate::compare_statements pairs with head's): per statement (text_id, else shortened text)
/// the median of each figure over the records that have a statement table, a table without
/// the statement counting as 0 calls; statements whose median calls are 0 are left out.
results::Results baseline_results(const std::vector<Record>& used);

/// The trend for the report: the used commits, and per stage of `head` its wall_ms (else its
/// first metric) median per used record and in head.
results::HistoryTrend trend(const std::vector<Record>& used, const results::Results& head,
                            const std::string& store, int asked);

}  // namespace coldgate::history
