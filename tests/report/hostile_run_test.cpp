// Hostile text through the real binary: a report title, a SQL error and snapshot member names
// and values full of Markdown/HTML syntax, `@mentions` and newlines cannot break a table row,
// inject HTML, ping anyone or close the report's marker comment (report.md, junit.xml).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "support/cluster.hpp"
#include "support/support.hpp"

namespace coldgate::report {
namespace {

namespace fs = std::filesystem;
using testing::run_coldgate;
using testing::slurp;
using testing::TempDir;

// The payload: table, code span, HTML, comment, link, mention and line breaks.
constexpr const char* k_hostile =
    "| x | y <script>alert(1)</script> <img src=x onerror=alert(2)> <!-- open --> "
    "@someone `tick` [link](http://evil) *b* \\n second line";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// `|` that delimit cells: not backslash-escaped, not inside a code span.
std::size_t cell_bars(const std::string& row) {
  std::size_t bars = 0;
  std::size_t code = 0;  // length of the backtick run that opened the current code span
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '\\') {
      ++i;
      continue;
    }
    if (row[i] == '`') {
      std::size_t run = 1;
      while (i + run < row.size() && row[i + run] == '`') ++run;
      if (code == 0) {
        code = run;
      } else if (run == code) {
        code = 0;
      }
      i += run - 1;
      continue;
    }
    if (row[i] == '|' && code == 0) ++bars;
  }
  return bars;
}

TEST(HostileRun, ReportAndJunitStayIntactAndInert) {
  TempDir dir;
  // SQL with E'' escapes: the value holds a real newline; the server quotes it in its error.
  std::string payload = k_hostile;
  std::string sql_literal;
  for (char c : payload) sql_literal += c == '\'' ? std::string("''") : std::string(1, c);
  dir.write("hostile.sql", "select E'" + sql_literal + "'::int\n");
  dir.write("doc.sql", "select json_build_object(E'" + sql_literal + "', E'" + sql_literal +
                           "', 'n', 2)\n");
  // The committed snapshot differs in a value: the report shows paths and a diff.
  dir.write("snapshots/doc.json", "{\n  \"n\": 1\n}\n");
  dir.write("coldgate.yaml",
            "version: 1\n"
            "database: { provider: external, url: \"${TEST_DB_URL}\" }\n"
            "defaults: { runs: 1, warm: 0 }\n"
            "report: { title: \"Evil --> <b>x</b> @someone | `t`\" }\n"
            "stages:\n"
            "  - name: sql-error\n"
            "    sql: hostile.sql\n"
            "  - name: doc\n"
            "    sql: doc.sql\n"
            "    decode: json\n"
            "    snapshot: { path: snapshots/doc.json }\n");
  const std::string url = testing::fresh_database("coldgate_hostile").url();
  auto r = run_coldgate({"run", "--no-ci", "--out", (dir / "out").string()}, dir.path(), "",
                        {"TEST_DB_URL=" + url});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const std::string md = slurp(dir / "out/report.md");
  // The payload did reach the report: the server error and the snapshot diff verbatim inside
  // fences, the title escaped.
  ASSERT_NE(md.find("invalid input syntax for type integer: \"| x | y <script>alert(1)"),
            std::string::npos)
      << md;
  ASSERT_NE(md.find(" second line: added \"| x | y <script>"), std::string::npos) << md;
  ASSERT_NE(md.find("## Evil --&gt; &lt;b&gt;x&lt;/b&gt; @\u200bsomeone \\| \\`t\\`"),
            std::string::npos)
      << md;

  bool in_fence = false;
  std::size_t fence_length = 0;
  std::size_t table_bars = 0;
  int marker_lines = 0;
  for (const std::string& line : lines_of(md)) {
    SCOPED_TRACE(line);
    // Fenced code blocks show text verbatim and inert; a closing fence is at least as long.
    const std::size_t code = line.find_first_not_of('`');
    const std::size_t run = code == std::string::npos ? line.size() : code;
    if (run >= 3) {
      if (!in_fence) {
        in_fence = true;
        fence_length = run;
      } else if (run >= fence_length && run == line.size()) {
        in_fence = false;
      }
      continue;
    }
    if (in_fence) continue;
    if (line.rfind("<!-- coldgate:report:", 0) == 0) {
      ++marker_lines;
      EXPECT_EQ(line.find("-->"), line.size() - 3);  // one comment, closed at the line's end
      continue;
    }
    EXPECT_EQ(line.find("<!--"), std::string::npos);
    EXPECT_EQ(line.find("-->"), std::string::npos);
    EXPECT_EQ(line.find("<script"), std::string::npos);
    EXPECT_EQ(line.find("<img"), std::string::npos);
    EXPECT_EQ(line.find("<b>"), std::string::npos);
    EXPECT_EQ(line.find("@someone"), std::string::npos);  // "@\u200bsomeone" pings nobody
    EXPECT_EQ(line.find("](http://evil)"), std::string::npos);
    if (line.rfind("|", 0) == 0) {
      if (table_bars == 0) table_bars = cell_bars(line);  // the header row
      EXPECT_EQ(cell_bars(line), table_bars);
    } else {
      table_bars = 0;
    }
  }
  EXPECT_FALSE(in_fence) << "a fence was left open";
  EXPECT_EQ(marker_lines, 1);

  const std::string xml = slurp(dir / "out/junit.xml");
  EXPECT_EQ(xml.find("<script"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<img"), std::string::npos) << xml;
  EXPECT_NE(xml.find("&lt;script&gt;"), std::string::npos) << xml;
  std::size_t testcases = 0;
  for (auto pos = xml.find("<testcase"); pos != std::string::npos; pos = xml.find("<testcase", pos + 1))
    ++testcases;
  // sql-error's run; doc's 8 metrics (wall, cpu, peak RSS, connect, query, decode, result
  // bytes, rows) and its snapshot: every one written, the document closes intact.
  EXPECT_EQ(testcases, 10u) << xml;
  EXPECT_EQ(
      lines_of(xml).at(1),
      "<testsuites name=\"coldgate: Evil --&gt; &lt;b&gt;x&lt;/b&gt; @someone | `t`\" tests=\"10\" "
      "failures=\"1\" errors=\"1\">");
  EXPECT_EQ(xml.size() - xml.rfind("</testsuites>\n"), std::string("</testsuites>\n").size()) << xml;
}

}  // namespace
}  // namespace coldgate::report
