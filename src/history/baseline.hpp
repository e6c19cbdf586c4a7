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

/// The records a history baseline uses: the newest `n` of `records` that are ancestors of
/// `head_commit` (git's topological order from head, head itself left out), on `branch` when it
/// is not ""; outside a git checkout, or for a head git does not know, the newest by commit date.
/// Returned oldest first.
std::vector<Record> select(std::vector<Record> records, const std::filesystem::path& repo,
                           const std::string& head_commit, const std::string& branch, int n);

/// A baseline made of `used` (non-empty) for gate::compare: per stage and metric the median of
/// the records' medians, with a range covering all their samples — cold samples {min of all,
/// median of medians, max of all}, so the gate's median and range rules read it as documented.
/// Stages failed in a record are left out of it; stage settings, kind, cold mode, runs and warm,
/// the environment and git facts are the newest record's.
results::Results baseline_results(const std::vector<Record>& used);

/// The trend for the report: the used commits, and per stage of `head` its wall_ms (else its
/// first metric) median per used record and in head.
results::HistoryTrend trend(const std::vector<Record>& used, const results::Results& head,
                            const std::string& store, int asked);

}  // namespace coldgate::history
