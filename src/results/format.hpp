#pragma once

#include <string>

namespace coldgate::results {

/// A value with its unit for humans: ms as "812.0 ms" / "4.20 ms" / "1.91 s", bytes as "12.3 MiB",
/// counts as integers with thousands separators ("1,404"). The gate's reasons and every report use
/// it.
std::string format_value(double value, const std::string& unit);

/// A failed stage's error on one line, for the terminal, junit.xml's `message` and the table:
/// its first line and, when a stderr excerpt follows ("…; stderr ends:"), its last
/// util::cause_line (an error severity, an exception's heading) or the line util::stderr_excerpt
/// kept before the tail, else the tail's last line that states something —
/// context lines (LINE, DETAIL, HINT, CONTEXT, STATEMENT, QUERY, also behind a server log's
/// prefix), indented ones (a caret, a traceback frame) and usage pointers ("Type '… help' for
/// usage.") are passed over.
std::string failure_summary(const std::string& error);

struct Stopped;

/// Why the stages of a run that stopped were not run, as the reports show it beside each:
/// "not run: setup failed", "not run: the build failed", "not run: config error", "not run:
/// the server did not start", "not run: infrastructure error", "not run: interrupted".
std::string not_run_reason(const Stopped& stopped);

/// A head/base ratio for humans: "10.4×", "2.31×", "0.41×", "123×".
std::string format_ratio(double ratio);

}  // namespace coldgate::results
