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
/// pass with the verdict in `<system-out>`. All text XML-escaped; ends with a newline.
std::string junit_xml(const results::Results& results);

}  // namespace coldgate::report
