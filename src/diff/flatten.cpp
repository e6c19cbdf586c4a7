#include "diff/flatten.hpp"

#include <algorithm>

namespace coldgate::diff::detail {

namespace {

void append_utf8(std::string& out, unsigned long cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool parse_hex4(std::string_view s, std::size_t at, unsigned long& out) {
  if (at + 4 > s.size()) return false;
  out = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    char c = s[i];
    out <<= 4;
    if (c >= '0' && c <= '9')
      out |= static_cast<unsigned long>(c - '0');
    else if (c >= 'a' && c <= 'f')
      out |= static_cast<unsigned long>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      out |= static_cast<unsigned long>(c - 'A' + 10);
    else
      return false;
  }
  return true;
}

// Decodes the JSON string starting at content[0] == '"'; sets `end` just past its closing quote.
bool decode_string(std::string_view content, std::string& out, std::size_t& end) {
  out.clear();
  for (std::size_t i = 1; i < content.size(); ++i) {
    char c = content[i];
    if (c == '"') {
      end = i + 1;
      return true;
    }
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i >= content.size()) return false;
    switch (content[i]) {
      case '"':
        out.push_back('"');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '/':
        out.push_back('/');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        unsigned long cp = 0;
        if (!parse_hex4(content, i + 1, cp)) return false;
        i += 4;
        unsigned long low = 0;
        if (cp >= 0xD800 && cp < 0xDC00 && i + 2 < content.size() && content[i + 1] == '\\' &&
            content[i + 2] == 'u' && parse_hex4(content, i + 3, low) && low >= 0xDC00 &&
            low < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        }
        append_utf8(out, cp);
        break;
      }
      default:
        return false;
    }
  }
  return false;
}

}  // namespace

std::string decoded_string(std::string_view literal) {
  std::string out;
  std::size_t end = 0;
  if (!decode_string(literal, out, end)) out.assign(literal);
  return out;
}

Flattener::Event Flattener::fail() {
  if (m_error_line == 0) m_error_line = std::max<std::size_t>(m_line, 1);
  m_pos = m_text.size();
  return Event::end;
}

// Reads one line: a member (node), the closing line of a container, or the end of the text.
Flattener::Event Flattener::read_line() {
  if (m_error_line != 0) return Event::end;
  if (m_pos >= m_text.size()) {
    if (!m_root_seen || !m_frames.empty()) return fail();  // empty or truncated document
    return Event::end;
  }
  std::size_t eol = m_text.find('\n', m_pos);
  if (eol == std::string_view::npos) eol = m_text.size();
  std::string_view line = m_text.substr(m_pos, eol - m_pos);
  m_pos = eol + 1;
  ++m_line;
  if (m_root_seen && m_frames.empty()) return fail();  // text after the root value
  if (line.empty() || line.back() == '\r') return fail();

  std::size_t indent = line.find_first_not_of(' ');
  if (indent == std::string_view::npos) return fail();
  std::string_view content = line.substr(indent);
  bool more = !m_frames.empty() && content.back() == ',';  // a sibling follows
  if (more) content.remove_suffix(1);

  if (content == "}" || content == "]") {
    if (m_frames.empty() || indent != 2 * (m_frames.size() - 1) ||
        m_frames.back().is_array != (content == "]") || m_frames.back().count == 0) {
      return fail();
    }
    m_frames.pop_back();
    if (more && m_frames.empty()) return fail();
    return Event::close;
  }

  if (indent != 2 * m_frames.size()) return fail();
  if (m_frames.empty()) {
    if (m_root_seen) return fail();
    m_root_seen = true;
    m_path.clear();
  } else {
    m_path.resize(m_frames.size() - 1);
    Frame& frame = m_frames.back();
    Segment seg;
    if (frame.is_array) {
      seg.is_index = true;
      seg.index = frame.count;
    } else {
      std::size_t end = 0;
      if (content.empty() || content[0] != '"' || !decode_string(content, seg.key, end) ||
          content.substr(end, 2) != ": ") {
        return fail();
      }
      content.remove_prefix(end + 2);
    }
    ++frame.count;
    m_path.push_back(std::move(seg));
  }
  if (content.empty() || content[0] == ' ') return fail();

  m_value = {};
  if (content == "{" || content == "[") {
    m_kind = content == "[" ? NodeKind::array : NodeKind::object;
    m_frames.push_back(Frame{m_kind == NodeKind::array, 0});
  } else {
    m_kind = NodeKind::leaf;
    m_value = content;
  }
  return Event::node;
}

bool Flattener::next() {
  for (;;) {
    switch (read_line()) {
      case Event::node:
        return true;
      case Event::close:
        continue;
      case Event::end:
        return false;
    }
  }
}

SubtreeSize Flattener::skip_subtree() {
  SubtreeSize size;
  if (m_kind == NodeKind::leaf) return size;
  const std::size_t outer = m_frames.size() - 1;  // open containers outside this subtree
  for (;;) {
    Event event = read_line();
    if (event == Event::end) return size;
    if (event == Event::close) {
      if (m_frames.size() == outer) return size;
      continue;
    }
    if (m_path.size() == outer + 1) ++size.children;
    if (m_kind == NodeKind::leaf) ++size.leaves;
  }
}

void append_segment(const Segment& seg, std::string& out) {
  out.push_back('/');
  if (seg.is_index) {
    out += std::to_string(seg.index);
    return;
  }
  for (char c : seg.key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out.push_back(c);
  }
}

std::string pointer(const std::vector<Segment>& path) {
  std::string out;
  for (const Segment& seg : path) append_segment(seg, out);
  return out;
}

int compare(const std::vector<Segment>& a, const std::vector<Segment>& b) {
  std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const Segment& x = a[i];
    const Segment& y = b[i];
    if (x.is_index != y.is_index) return x.is_index ? -1 : 1;  // only on a type change
    if (x.is_index) {
      if (x.index != y.index) return x.index < y.index ? -1 : 1;
    } else if (int c = x.key.compare(y.key); c != 0) {
      return c;
    }
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

}  // namespace coldgate::diff::detail
