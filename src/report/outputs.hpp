#pragma once

#include <filesystem>
#include <ostream>

#include "measure/results.hpp"

namespace coldgate::report {

/// Writes a run's outputs into `out_dir`, each atomically (util::write_file_atomic):
/// results.json, report.md (at most k_max_report_bytes), report-full.md when report.md was cut
/// (a stale one is removed otherwise) and junit.xml. Then appends report.md to the file named
/// by $GITHUB_STEP_SUMMARY when set, and prints report.md to `out`; with GITHUB_ACTIONS=true
/// the report is printed between `::stop-commands::` markers and followed by the annotations
/// (report::annotations). `base` is the baseline results when there is one, else null. Throws
/// Error(infrastructure) naming the file when a write fails.
void write_outputs(const measure::Results& results, const measure::Results* base,
                   const std::filesystem::path& out_dir, std::ostream& out);

}  // namespace coldgate::report
