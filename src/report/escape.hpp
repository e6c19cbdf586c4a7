#pragma once

#include <string>
#include <string_view>

#include "util/text.hpp"

namespace coldgate::report {

/// Who reads the escaped text: GitHub, which renders Markdown and HTML (the default), or a
/// terminal, which shows every character as written.
enum class Reader { github, terminal };

/// While alive, md_text, html_text and md_bracket on this thread write for `reader`; scopes nest
/// and the previous reader comes back at the end. For a terminal, `& < > "` and `[ ]` stay plain
/// characters (`&gt;` would be printed as is, and there is no HTML to keep out); the backslash
/// escapes stay, since a terminal shows the Markdown's source.
class ReaderScope {
 public:
  explicit ReaderScope(Reader reader);
  ~ReaderScope();
  ReaderScope(const ReaderScope&) = delete;
  ReaderScope& operator=(const ReaderScope&) = delete;

 private:
  Reader m_previous;
};

/// `[` or `]` for free text in a table cell or `<summary>`: a character reference (`&#91;`) for
/// GitHub, so no `](url)` can form, escaped or not; the bracket itself for a terminal.
std::string_view md_bracket(char bracket);

/// `text` as valid UTF-8: each byte of an invalid sequence becomes U+FFFD (Unicode 15, §3.9),
/// and control characters other than tab and newline become a space.
std::string valid_utf8(std::string_view text);

/// Text from data (stage names, SQL errors, paths) as inline GitHub Markdown on one line:
/// backslash, backtick, `*`, `[`, `]`, `~`, `|` and a word-boundary `_` backslash-escaped (GFM
/// spec, "Backslash escapes"), `& < >` as entities so no HTML gets through (plain for a
/// terminal: ReaderScope), newlines as spaces, and `@name` broken with U+200B so it mentions
/// nobody.
std::string md_text(std::string_view text);

/// A GFM code span of `text` on one line: delimited by one backtick more than the longest
/// backtick run inside (GFM spec, "Code spans"); `|` as `\|` when `in_table`.
std::string md_code(std::string_view text, bool in_table = false);

/// A fenced code block of `text` (which keeps its lines): the fence is one backtick longer than
/// any backtick run in `text`, so no line of it can close the block (GFM spec, "Fenced code
/// blocks"); ends with a newline.
std::string md_fence(std::string_view text, std::string_view info = "");

/// A line written by coldgate that may hold code spans (diagnosis messages): the parts outside
/// backticks as md_text, the parts inside as md_code; an unpaired backtick is escaped.
std::string md_with_code(std::string_view text);

/// Text for an HTML element or attribute (`<summary>`): `& < > "` as entities (plain for a
/// terminal: ReaderScope), newlines as spaces, `@name` broken as in md_text.
std::string html_text(std::string_view text);

/// Text for XML character data or a double-quoted attribute (XML 1.0 §2.4, §3.3.3): valid_utf8
/// (which also removes the C0 controls XML 1.0 §2.2 forbids), `& < > " '` as entities, newlines
/// kept in data and written `&#10;` in attributes so they survive attribute normalization.
std::string xml_text(std::string_view text, bool attribute = false);

using util::utf8_prefix;

}  // namespace coldgate::report
