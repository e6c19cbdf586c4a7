#pragma once

#include <filesystem>
#include <ostream>

#include "results/results.hpp"
#include "util/fs.hpp"

namespace coldgate::report {

/// Writes a run's outputs into `out_dir`, each atomically (util::write_file_atomic):
/// results.json, report.md (at most k_max_report_bytes), report-full.md when report.md was cut
/// (a stale one is removed otherwise) and junit.xml. Then appends report.md to the file named
/// by $GITHUB_STEP_SUMMARY when set (unless `to_step_summary` is false: `stack` puts its summary
/// there instead), and prints report.md to `out` as a terminal shows it
/// (Markdown::terminal: `>` not `&gt;`); with GITHUB_ACTIONS=true
/// the report is printed between `::stop-commands::` markers and followed by the annotations
/// (report::annotations). `base` is the baseline results when there is one, else null. Throws
/// Error(infrastructure) naming the file when a write fails.
void write_outputs(const results::Results& results, const results::Results* base,
                   const std::filesystem::path& out_dir, std::ostream& out,
                   bool to_step_summary = true);

/// Appends `markdown` to the file named by $GITHUB_STEP_SUMMARY when it is set (GitHub's runner
/// shows it on the job's page); a no-op otherwise. Throws Error(infrastructure) naming the file
/// when the append fails.
void append_to_step_summary(const std::string& markdown);

/// Removes from `out_dir` what `run`, `ab` and `stack` write there, so that nothing an earlier
/// command left (a plan of another base, a stale pr-number, an earlier ab's base/) passes for
/// this run's output if this one stops early: results.json, report.md, report-full.md,
/// junit.xml, pr-number, explain/*.json; ab's base/ (results.json, explain/*.json) and
/// ab/*-build.log; stack's stack/summary.md, stack/build/*.log and per commit
/// stack/<k>-<ref>/ (its reports, explain/*.json, snapshots/); the `*.tmp-XXXXXX` files a killed
/// writer left in those folders and in cache/ (util::remove_abandoned_temp_files: one still
/// being written stays); also the CI-mode snapshot candidates under snapshots/ when
/// `whole_run` (a `--stage`/`--shard` run keeps the other stages' pending candidates). A folder
/// goes once it is empty. cache/'s entries, git worktrees (ab/base, ab/head,
/// stack/worktrees/: the next ab or stack removes a gone owner's) and anything else stay.
/// Never throws.
void clear_outputs(const std::filesystem::path& out_dir, bool whole_run) noexcept;

/// Takes `<out_dir>/.lock` (util::FileLock; `out_dir` is created) for the whole of a command
/// that writes into `out_dir` — `run`, `ab`, `stack`, `compare` — so that a second coldgate
/// given the same folder neither removes the first's outputs (clear_outputs), worktrees or
/// candidates nor writes over them: it stops at once with Error(infrastructure) `<out_dir>: in use
/// by another coldgate (coldgate run, pid N, started YYYY-MM-DD HH:MM:SS UTC); wait for it to end
/// or pass --out DIR`. `command` ("run") names ours in the file for that message. The kernel
/// releases the lock when we end, SIGKILL included: no stale lock.
util::FileLock lock_outputs(const std::filesystem::path& out_dir, const std::string& command);

}  // namespace coldgate::report
