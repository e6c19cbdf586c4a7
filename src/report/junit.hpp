#pragma once

#include <string>

#include "results/results.hpp"

namespace coldgate::report {

/// junit.xml for CI test tabs, in the JUnit XML dialect GitHub reporters and GitLab read
/// (GitLab docs, "Unit test reports"; the Ant JUnit schema): `<testsuites>` with one
/// `<testsuite>` per stage (head stages, then stages only the baseline has); in it one
/// `<testcase>` per gated metric (results.gate; without a gate, one passing testcase per
/// measured metric with its median in `<system-out>`), one named `snapshot` (attribute `file`)
/// per snapshot, and a `run` testcase with `<error>` when the stage failed. A regression or a
/// snapshot that is not match/updated is a `<failure>` with the message; slower/faster/new/removed
/// pass with the verdict in `<system-out>`. A run that stopped (results.stopped) first has a
/// `setup` testsuite — each step as run, passing, and the failed one (attribute `file` when the
/// error names one) as a `<failure>` (exit code 1) or `<error>` with "STEP at WHERE: error" —
/// or, when it stopped elsewhere, a `coldgate` testsuite whose testcase is named by the phase
/// with the verdict; each stage it did not run is a testsuite with a `run` testcase
/// `<skipped message="not run: setup failed"/>`. All text XML-escaped; ends with a newline.
std::string junit_xml(const results::Results& results);

}  // namespace coldgate::report
