#pragma once

#include <optional>
#include <string>

#include "results/results.hpp"

namespace coldgate::gate {

/// One statement's blocks per call on both sides, as the gate judged them.
struct JudgedBlocks {
  double base = 0;
  double head = 0;
  /// True: the captured plans' execution (StatementSide::execution_blocks_per_call); false:
  /// pg_stat_statements' figures, which count planning's catalog reads too.
  bool plans = false;
};

/// The blocks per call the gate judges for `v`: its plans' execution when both sides have it,
/// else pg_stat_statements' blocks_per_call; nullopt when a side is missing or has neither.
std::optional<JudgedBlocks> judged_blocks(const results::StatementVerdict& v);

/// What a pull request improved, for its verdict line: the statements judged faster with their
/// blocks per call and calls per run (base → head, ranges over those statements: "4 statements
/// faster: blocks per call 6,412 → 10–53"), the metrics judged faster ("2 metrics faster (page
/// wall_ms 0.31×, …)") and the diagnoses it fixed ("missing index on article (\"authorId\")
/// fixed"), joined by "; "; "" when nothing improved or nothing was compared.
std::string improvements(const results::Results& r);

}  // namespace coldgate::gate
