#pragma once

#include <filesystem>
#include <string>

namespace coldgate::testing {

/// Golden files: a test compares what it made, byte for byte, with a file kept in the source
/// tree, or rewrites that file. COLDGATE_UPDATE_GOLDEN alone decides which, for every golden
/// test:
///
///   unset, empty or 0  compare;
///   1                  rewrite the files (then review the diff before committing);
///   anything else      the test fails, naming the accepted values (a typo such as `yes` or
///                      `true` must not silently compare, nor `0` silently rewrite).
///
/// Rewriting is refused under CI=true (or CI=1, as coldgate reads it): the test fails and
/// compares instead. Goldens are rewritten on a developer's machine and reviewed; in CI a
/// rewrite would make every golden test pass whatever the output.

/// True when golden files are to be rewritten. Fails the current test, and returns false, for
/// a value not listed above or for 1 under CI.
bool updating_goldens();

/// Compares `actual` with the golden file `file` (an absolute path, normally under
/// source_dir()) or, when updating_goldens(), writes `actual` there.
void expect_golden(const std::filesystem::path& file, const std::string& actual);

}  // namespace coldgate::testing
