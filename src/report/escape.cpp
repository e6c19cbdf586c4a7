#include "report/escape.hpp"

#include <algorithm>

#include "util/text.hpp"

namespace coldgate::report {
namespace {

// The reader of this thread's escapes (ReaderScope); GitHub unless a scope says otherwise.
thread_local Reader t_reader = Reader::github;

bool for_terminal() { return t_reader == Reader::terminal; }

constexpr std::string_view k_replacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view k_zero_width_space = "\xE2\x80\x8B";

bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Shared by md_text and html_text: a mention needs `@` followed by a name character.
bool starts_mention(std::string_view text, std::size_t i) {
  return text[i] == '@' && i + 1 < text.size() && (is_word(text[i + 1]) || text[i + 1] == '-');
}

// `text` as valid UTF-8 with newlines and tabs as spaces: what a table cell or a summary holds.
std::string flattened(std::string_view text) {
  std::string s = valid_utf8(text);
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  return s;
}

std::size_t longest_backtick_run(std::string_view text) {
  std::size_t longest = 0;
  std::size_t run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// The entity of a character that HTML and XML text both escape (& < > "), else null.
const char* markup_entity(char c) {
  switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    default: return nullptr;
  }
}

}  // namespace

ReaderScope::ReaderScope(Reader reader) : m_previous(t_reader) { t_reader = reader; }

ReaderScope::~ReaderScope() { t_reader = m_previous; }

std::string_view md_bracket(char bracket) {
  if (for_terminal()) return bracket == '[' ? "[" : "]";
  return bracket == '[' ? "&#91;" : "&#93;";
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = util::utf8_sequence_length(text, i);
    if (n == 0) {
      out += k_replacement;
      ++i;
      continue;
    }
    char c = text[i];
    if (n == 1 && c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;  // CRLF → LF
      continue;
    }
    if (n == 1 && ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == 0x7F)) {
      out += ' ';
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string md_text(std::string_view text) {
  std::string s = flattened(text);
  std::string out;
  out.reserve(s.size() + 8);
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    switch (c) {
      case '\\':
      case '`':
      case '*':
      case '[':
      case ']':
      case '~':
      case '|':
        out += '\\';
        out += c;
        break;
      case '_': {
        // Intraword underscores never emphasize (GFM spec, "Emphasis", rule 2): wall_ms stays.
        bool inside = i > 0 && i + 1 < s.size() && is_word(s[i - 1]) && is_word(s[i + 1]);
        out += inside ? "_" : "\\_";
        break;
      }
      case '&':
      case '<':
      case '>':
        if (for_terminal()) {
          out += c;
        } else {
          out += markup_entity(c);
        }
        break;
      default:
        out += c;
        if (starts_mention(s, i)) out += k_zero_width_space;
    }
  }
  return out;
}

std::string md_code(std::string_view text, bool in_table) {
  std::string s = flattened(text);
  if (in_table) {
    std::string piped;
    for (char c : s) piped += c == '|' ? std::string("\\|") : std::string(1, c);
    s = std::move(piped);
  }
  if (s.empty()) return "` `";
  std::string ticks(longest_backtick_run(s) + 1, '`');
  // One space each side is stripped by the parser; it lets the span start or end with a backtick.
  bool pad = s.front() == '`' || s.back() == '`' || (s.front() == ' ' && s.back() == ' ');
  return pad ? ticks + " " + s + " " + ticks : ticks + s + ticks;
}

std::string md_fence(std::string_view text, std::string_view info) {
  std::string s = valid_utf8(text);
  if (!s.empty() && s.back() != '\n') s += '\n';
  std::string fence(std::max<std::size_t>(3, longest_backtick_run(s) + 1), '`');
  return fence + std::string(info) + "\n" + s + fence + "\n";
}

std::string md_with_code(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t open = text.find('`', i);
    if (open == std::string_view::npos) {
      out += md_text(text.substr(i));
      break;
    }
    out += md_text(text.substr(i, open - i));
    std::size_t close = text.find('`', open + 1);
    if (close == std::string_view::npos) {
      out += md_text(text.substr(open));
      break;
    }
    out += md_code(text.substr(open + 1, close - open - 1));
    i = close + 1;
  }
  return out;
}

std::string html_text(std::string_view text) {
  std::string s = flattened(text);
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (const char* e = markup_entity(s[i]); e && !for_terminal()) {
      out += e;
    } else {
      out += s[i];
      if (starts_mention(s, i)) out += k_zero_width_space;
    }
  }
  return out;
}

std::string xml_text(std::string_view text, bool attribute) {
  std::string s = valid_utf8(text);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (const char* e = markup_entity(c)) {
      out += e;
      continue;
    }
    switch (c) {
      case '\'':
        out += "&apos;";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace coldgate::report
