#include "report/escape.hpp"

#include <gtest/gtest.h>

namespace coldgate::report {
namespace {

const std::string zwsp = "\xE2\x80\x8B";

TEST(ReportEscape, MarkdownTextCannotBreakATableOrCarryHtml) {
  EXPECT_EQ(md_text("config-load"), "config-load");
  EXPECT_EQ(md_text("wall_ms"), "wall_ms");
  EXPECT_EQ(md_text("a|b"), "a\\|b");
  EXPECT_EQ(md_text("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(md_text("x\ny\r\nz"), "x y z");
  EXPECT_EQ(md_text("*bold* _em_ [l](u) `c` ~s~ \\"),
            "\\*bold\\* \\_em\\_ \\[l\\](u) \\`c\\` \\~s\\~ \\\\");
  EXPECT_EQ(md_text("&amp;"), "&amp;amp;");
  EXPECT_EQ(md_text("<!-- coldgate:report:x -->"), "&lt;!-- coldgate:report:x --&gt;");
}

TEST(ReportEscape, ForATerminalTheCharactersStayPlain) {
  {
    ReaderScope terminal(Reader::terminal);
    EXPECT_EQ(md_text("a < b & c > d"), "a < b & c > d");
    EXPECT_EQ(md_text("&amp; a|b *x*"), "&amp; a\\|b \\*x\\*");  // backslash escapes stay
    EXPECT_EQ(html_text("\"q\" <b> & @octocat"), "\"q\" <b> & @" + zwsp + "octocat");
    EXPECT_EQ(md_bracket('['), "[");
    EXPECT_EQ(md_bracket(']'), "]");
    EXPECT_EQ(xml_text("<a & b>"), "&lt;a &amp; b&gt;");  // XML stays XML
    {
      ReaderScope github(Reader::github);  // scopes nest
      EXPECT_EQ(md_text("a < b"), "a &lt; b");
    }
    EXPECT_EQ(md_text("a < b"), "a < b");
  }
  EXPECT_EQ(md_text("a < b & c > d"), "a &lt; b &amp; c &gt; d");
  EXPECT_EQ(html_text("\"q\" <b> &"), "&quot;q&quot; &lt;b&gt; &amp;");
  EXPECT_EQ(md_bracket('['), "&#91;");
  EXPECT_EQ(md_bracket(']'), "&#93;");
}

TEST(ReportEscape, MentionsAreBrokenWithAZeroWidthSpace) {
  EXPECT_EQ(md_text("ping @octocat"), "ping @" + zwsp + "octocat");
  EXPECT_EQ(md_text("@org/team"), "@" + zwsp + "org/team");
  EXPECT_EQ(md_text("a @ b"), "a @ b");
  EXPECT_EQ(html_text("@octocat <b>"), "@" + zwsp + "octocat &lt;b&gt;");
}

TEST(ReportEscape, CodeSpansOutgrowTheBackticksInside) {
  EXPECT_EQ(md_code("snapshots/a.json"), "`snapshots/a.json`");
  EXPECT_EQ(md_code("a`b"), "``a`b``");
  EXPECT_EQ(md_code("`x`"), "`` `x` ``");
  EXPECT_EQ(md_code("a|b", true), "`a\\|b`");
  EXPECT_EQ(md_code("a|b"), "`a|b`");
  EXPECT_EQ(md_code("two\nlines"), "`two lines`");
  EXPECT_EQ(md_code(""), "` `");
}

TEST(ReportEscape, FencesOutgrowTheBackticksInside) {
  EXPECT_EQ(md_fence("plain"), "```\nplain\n```\n");
  EXPECT_EQ(md_fence("-a\n+b\n", "diff"), "```diff\n-a\n+b\n```\n");
  EXPECT_EQ(md_fence("```\n</details>\n"), "````\n```\n</details>\n````\n");
}

TEST(ReportEscape, ColdgateTextKeepsItsCodeSpans) {
  EXPECT_EQ(md_with_code("consider `SET LOCAL jit = off` for @x"),
            "consider `SET LOCAL jit = off` for @" + zwsp + "x");
  EXPECT_EQ(md_with_code("one ` unpaired"), "one \\` unpaired");
  EXPECT_EQ(md_with_code("table `a|b` <i>"), "table `a|b` &lt;i&gt;");
}

TEST(ReportEscape, InvalidUtf8AndControlsAreReplaced) {
  EXPECT_EQ(valid_utf8("ok é ✓ 🔴"), "ok é ✓ 🔴");
  EXPECT_EQ(valid_utf8("a\xFF"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(valid_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(valid_utf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // truncated
  EXPECT_EQ(valid_utf8(std::string("a\0b\x1b[31m\tc\n", 11)), "a b [31m\tc\n");
}

TEST(ReportEscape, XmlTextAndAttributes) {
  EXPECT_EQ(xml_text("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
  EXPECT_EQ(xml_text("l1\nl2"), "l1\nl2");
  EXPECT_EQ(xml_text("l1\nl2\tx", true), "l1&#10;l2&#9;x");
  EXPECT_EQ(xml_text("]]>\x01"), "]]&gt; ");
}

TEST(ReportEscape, Utf8PrefixNeverSplitsACharacter) {
  EXPECT_EQ(utf8_prefix("abc", 5), "abc");
  EXPECT_EQ(utf8_prefix("ab✓", 4), "ab");
  EXPECT_EQ(utf8_prefix("ab✓", 5), "ab✓");
}

}  // namespace
}  // namespace coldgate::report
