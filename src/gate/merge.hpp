#pragma once

#include <string>
#include <utility>
#include <vector>

#include "results/results.hpp"

namespace coldgate::gate {

/// One results file to merge: its name as given (for messages) and its contents.
using NamedResults = std::pair<std::string, results::Results>;

/// How merge() joins results.
struct MergeOptions {
  bool force = false;                    // merge results of different commits or environments
  std::vector<std::string> stage_order;  // config order of the stages; empty: order of appearance
};

/// Joins the results of sharded runs (`coldgate run --shard I/N`) into one: stages in
/// `stage_order` (those it lacks after them, in order of appearance), setup, commit and
/// environment of the first file, the earliest start and the latest finish, obsolete snapshots
/// and diagnoses of all files, and the gate blocks when every file has one against the same
/// baseline (else none). Throws Error(usage) naming the files: no input, a stage in two files,
/// and — unless options.force — different commits or environments (PostgreSQL major version,
/// provider, CPU model).
results::Results merge(const std::vector<NamedResults>& inputs, const MergeOptions& options);

}  // namespace coldgate::gate
