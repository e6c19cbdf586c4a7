#include "config/yaml_errors.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "util/error.hpp"

namespace coldgate::config::detail {
namespace {

// Records where each document starts and ignores the rest.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The line holding byte `pos` (without its newline) and the offset it starts at.
std::pair<std::string_view, std::size_t> line_at(std::string_view yaml, std::size_t pos) {
  std::size_t begin = pos == 0 ? std::string_view::npos : yaml.rfind('\n', pos - 1);
  begin = begin == std::string_view::npos ? 0 : begin + 1;
  const std::size_t end = std::min(yaml.find('\n', begin), yaml.size());
  return {yaml.substr(begin, end - begin), begin};
}

// For yaml-cpp's "illegal map value" on a line `key: some: text`: a plain value cannot hold
// ': ', and quoting it is the fix, so the hint is the value quoted. "" when the line is not of
// that shape (the mark is not past a first ': ').
std::string quote_hint(std::string_view yaml, const YAML::Mark& mark) {
  if (mark.is_null() || mark.pos < 0 || static_cast<std::size_t>(mark.pos) > yaml.size()) return "";
  std::size_t pos = static_cast<std::size_t>(mark.pos);
  const auto [line, begin] = line_at(yaml, pos);
  std::size_t sep = line.find(": ");
  if (sep == std::string_view::npos || begin + sep >= pos) return "";
  std::string_view value = line.substr(sep + 2);
  if (std::size_t comment = value.find(" #"); comment != std::string_view::npos)
    value = value.substr(0, comment);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r'))
    value.remove_suffix(1);
  if (value.empty() || value.find(": ") == std::string_view::npos) return "";
  std::string quoted;
  if (value.find_first_of("\"\\") == std::string_view::npos) {
    quoted = "\"" + std::string(value) + "\"";
  } else {  // single quotes take everything literally but a quote, which is doubled
    quoted = "'";
    for (char c : value) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    quoted += "'";
  }
  return "; a plain value cannot hold ': ' — quote the value: " + quoted;
}

// The innermost '[' (or '{') before `end` that no ']' ('}') closes: its byte offset, or npos.
// Quoted scalars and comments are skipped, as the scanner skips them.
std::size_t unclosed_flow(std::string_view yaml, std::size_t end, char open) {
  std::vector<std::pair<char, std::size_t>> opened;
  for (std::size_t i = 0; i < end && i < yaml.size(); ++i) {
    const char c = yaml[i];
    if (c == '#' && (i == 0 || yaml[i - 1] == ' ' || yaml[i - 1] == '\t' || yaml[i - 1] == '\n')) {
      while (i < end && yaml[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      // A quote opens a scalar only where a value starts, not inside a plain one (it's).
      const char before = i == 0 ? '\n' : yaml[i - 1];
      if (std::string_view(" \t\n[{,:-").find(before) == std::string_view::npos) continue;
      for (++i; i < end; ++i) {
        if (c == '"' && yaml[i] == '\\') {
          ++i;
        } else if (yaml[i] == c) {
          if (c == '\'' && i + 1 < end && yaml[i + 1] == '\'') {
            ++i;
          } else {
            break;
          }
        }
      }
    } else if (c == '[' || c == '{') {
      opened.emplace_back(c, i);
    } else if ((c == ']' || c == '}') && !opened.empty()) {
      opened.pop_back();
    }
  }
  for (auto it = opened.rbegin(); it != opened.rend(); ++it)
    if (it->first == open) return it->second;
  return std::string_view::npos;
}

}  // namespace

// YAML 1.2 §5.1 allows no C0 control but tab, LF and CR, and no DEL, in a stream; yaml-cpp does
// not check (its scanner reads a NUL as the end of input). Refused first, at their place.
void reject_control_characters(std::string_view yaml, const std::string& file) {
  int line = 1;
  int column = 1;
  for (char ch : yaml) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      throw usage_error(Location{file, line, column}.str(),
                        fmt::format("invalid YAML: control character U+{:04X} is not allowed "
                                    "(YAML 1.2 §5.1); remove it",
                                    c));
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++column;  // columns count characters, not UTF-8 continuation bytes
    }
  }
}

// yaml-cpp 0.7 meets a ',' outside a flow collection at document level (", x", "[a]\n, x") by
// returning an endless run of empty documents that never consume it, so YAML::LoadAll never
// returns (found by fuzz/fuzz_config.cpp). A first pass walks the documents and stops where
// one starts at the same place as the one before; returns that place, or nothing.
std::optional<YAML::Mark> stuck_document(const std::string& yaml) {
  std::istringstream in(yaml);
  YAML::Parser parser(in);
  DocumentStarts starts;
  while (parser.HandleNextDocument(starts)) {
    const auto& m = starts.marks;
    if (m.size() >= 2 && m[m.size() - 1].pos == m[m.size() - 2].pos) return m.back();
  }
  return std::nullopt;
}

Location yaml_error_location(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return {file, 0, 0};
  return {file, mark.line + 1, mark.column + 1};
}

// Where yaml-cpp's syntax error is fixed and what to do, one line: an unclosed '[' or '{' at its
// own place; a line with no ':' that ran on into the next key (`provider local`) at that line;
// an illegal ': ' inside a plain value with the value quoted (quote_hint); otherwise the place
// yaml-cpp gives, with the indentation to check.
std::pair<Location, std::string> yaml_syntax_error(std::string_view yaml, const std::string& file,
                                                   const YAML::Exception& e) {
  const Location at = yaml_error_location(file, e.mark);
  const std::string what = "invalid YAML: " + e.msg;
  if (e.mark.is_null() || e.mark.pos < 0) return {at, what};
  const std::size_t pos = std::min(static_cast<std::size_t>(e.mark.pos), yaml.size());
  auto place = [&](std::size_t offset) {
    const std::size_t begin = line_at(yaml, offset).second;
    const int number = static_cast<int>(std::count(yaml.begin(), yaml.begin() + begin, '\n')) + 1;
    return Location{file, number, static_cast<int>(offset - begin) + 1};
  };
  if (e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW || e.msg == YAML::ErrorMsg::END_OF_MAP_FLOW) {
    const bool seq = e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW;
    const std::size_t open = unclosed_flow(yaml, pos, seq ? '[' : '{');
    if (open != std::string_view::npos) {
      return {place(open), fmt::format("invalid YAML: this '{}' is not closed; close it with '{}', "
                                       "or quote the value if it is text",
                                       seq ? '[' : '{', seq ? ']' : '}')};
    }
  }
  if (e.msg == YAML::ErrorMsg::MAP_VALUE) {
    if (std::string hint = quote_hint(yaml, e.mark); !hint.empty()) return {at, what + hint};
    // The line before: a key without ':' is a plain scalar that continues into this line.
    std::size_t begin = line_at(yaml, pos).second;
    while (begin > 0) {
      const auto [line, start] = line_at(yaml, begin - 1);
      begin = start;
      const std::size_t first = line.find_first_not_of(" \t");
      if (first == std::string_view::npos || line[first] == '#') continue;
      if (line[first] == '-') break;  // a list item's text may hold spaces and no ':'
      std::string_view text = line.substr(first);
      if (std::size_t comment = text.find(" #"); comment != std::string_view::npos)
        text = text.substr(0, comment);
      while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
      const std::size_t space = text.find(' ');
      if (text.find(':') != std::string_view::npos || space == std::string_view::npos ||
          text.find_first_of("\"'[{") != std::string_view::npos) {
        break;
      }
      return {place(start + first),
              fmt::format("invalid YAML: '{}' has no ':', so it runs on into the next line; "
                          "write '{}: {}'",
                          text, text.substr(0, space), text.substr(space + 1))};
    }
  }
  if (e.msg == YAML::ErrorMsg::MAP_VALUE || e.msg == YAML::ErrorMsg::END_OF_MAP ||
      e.msg == YAML::ErrorMsg::END_OF_SEQ) {
    return {at, what + "; check this line's indentation: a key lines up with the other keys of "
                       "its mapping, a list item's keys with the key after its '- '"};
  }
  return {at, what};
}

}  // namespace coldgate::config::detail
