#pragma once

#include <string>

namespace coldgate::results {

/// A value with its unit for humans: ms as "812.0 ms" / "4.20 ms" / "1.91 s", bytes as "12.3 MiB",
/// counts as integers with thousands separators ("1,404"). The gate's reasons and every report use
/// it.
std::string format_value(double value, const std::string& unit);

/// A head/base ratio for humans: "10.4×", "2.31×", "0.41×", "123×".
std::string format_ratio(double ratio);

}  // namespace coldgate::results
