#pragma once

#include <string>

#include "results/migration.hpp"

namespace coldgate::report {

/// The pull request's migration as Markdown, for report.md and the comment before the stages:
/// a heading, the regressions and warnings (each: what was measured, the statement, the fix),
/// then one row per pre-existing table it touched — `| Table | Rows | Lock (held) | Reads
/// waited | Writes waited | Rewrite |` — and its statements folded; a safe migration is one ✅
/// line with its figures. Schema drift, when found, is listed first.
std::string migration_section(const results::Migration& m);

}  // namespace coldgate::report
