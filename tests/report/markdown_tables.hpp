// Reading report.md as a reviewer's eye does: its lines, and a table's rows split into cells.
// Header-only: the test glob compiles *_test.cpp files only.
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace coldgate::report::tables {

/// `text`'s lines, without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// The cells of a table row, split at the pipes that are not backslash-escaped, each without
/// the one space either side.
inline std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string cell;
  for (std::size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '|' && row[i - 1] != '\\') {
      out.push_back(cell.substr(1, cell.size() - 2));
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return out;
}

/// The body rows of the first table whose header line starts with `header`.
inline std::vector<std::vector<std::string>> table(const std::string& md, std::string_view header) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> lines = lines_of(md);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].starts_with(header)) continue;
    for (std::size_t k = i + 2; k < lines.size() && lines[k].starts_with("|"); ++k)
      rows.push_back(cells(lines[k]));
    break;
  }
  return rows;
}

}  // namespace coldgate::report::tables
