#include "util/text.hpp"

#include "util/process.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace coldgate::util {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

bool starts_with_word(std::string_view line, std::string_view word) {
  if (line.size() < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != word[i]) return false;
  }
  return line.size() == word.size() || std::isspace(static_cast<unsigned char>(line[word.size()]));
}

std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b = byte(i);
  if (b < 0x80) return 1;
  std::size_t n = b >= 0xC2 && b <= 0xDF   ? 2
                  : b >= 0xE0 && b <= 0xEF ? 3
                  : b >= 0xF0 && b <= 0xF4 ? 4
                                           : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  unsigned char b1 = byte(i + 1);
  if (b == 0xE0 && b1 < 0xA0) return 0;  // overlong
  if (b == 0xED && b1 > 0x9F) return 0;  // surrogate
  if (b == 0xF0 && b1 < 0x90) return 0;  // overlong
  if (b == 0xF4 && b1 > 0x8F) return 0;  // above U+10FFFF
  return n;
}

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

namespace {

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

bool exception_name(std::string_view name) {
  return name.ends_with("Error") || name.ends_with("Exception");
}

// A dotted or `::` path at the start of `line` whose last part names an exception, followed by
// ':', Node.js's " [CODE]" or the end of the line.
bool exception_heading(std::string_view line) {
  if (line.starts_with("Uncaught ")) line.remove_prefix(9);
  std::size_t i = 0, part = 0;
  while (true) {
    part = i;
    while (i < line.size() && name_char(line[i])) ++i;
    if (i == part) return false;
    if (i + 1 < line.size() && line[i] == '.' && name_char(line[i + 1])) {
      ++i;
    } else if (i + 2 < line.size() && line[i] == ':' && line[i + 1] == ':' && name_char(line[i + 2])) {
      i += 2;
    } else {
      break;
    }
  }
  std::string_view rest = line.substr(i);
  return exception_name(line.substr(part, i - part)) &&
         (rest.empty() || rest.front() == ':' || rest.starts_with(" ["));
}

// Ruby's uncaught exception: "app.rb:3:in `<main>': undefined method … (NoMethodError)", a frame
// ("file:line:in") that ends with the exception's class in parentheses.
bool ruby_heading(std::string_view line) {
  std::size_t in = line.find(":in ");
  if (in == std::string_view::npos || line.find(' ') < in || !line.ends_with(')')) return false;
  std::size_t open = line.rfind(" (");
  if (open == std::string_view::npos || open + 3 >= line.size()) return false;
  std::string_view name = line.substr(open + 2, line.size() - open - 3);
  if (!std::isupper(static_cast<unsigned char>(name.front()))) return false;
  for (char c : name) {
    if (!name_char(c) && c != ':') return false;
  }
  return true;
}

// npm's message on an error line ("npm ERR! …" up to npm 9, "npm error …" from npm 10); ""
// for another line and for one that says nothing of why (its code, paths, the log's place,
// the generic "command failed" of a script).
std::string_view npm_error_message(std::string_view line) {
  for (std::string_view prefix : {"npm ERR!", "npm error"}) {
    if (!line.starts_with(prefix)) continue;
    std::string_view m = trim(line.substr(prefix.size()));
    for (std::string_view noise : {"code ", "errno ", "syscall ", "path ", "dest ", "signal ",
                                   "command ", "Error: command failed", "Lifecycle script ",
                                   "A complete log ", "Log files were not written", "in workspace",
                                   "at location"}) {
      if (m.starts_with(noise)) return std::string_view();
    }
    return m;
  }
  return {};
}

}  // namespace

bool cause_line(std::string_view line) {
  for (std::string_view s : {"ERROR:", "FATAL:", "PANIC:"}) {
    std::size_t at = line.find(s);
    // "ERROR:" inside a word ("NOERROR:") is no severity.
    if (at != std::string_view::npos && (at == 0 || line[at - 1] == ' ' || line[at - 1] == ':'))
      return true;
  }
  if (line.empty() || line.front() == ' ' || line.front() == '\t') return false;
  // "error: " as git, compilers and node-postgres's uncaught DatabaseError print it.
  return line.starts_with("error: ") || line.starts_with("fatal: ") || exception_heading(line) ||
         ruby_heading(line) || line.starts_with("Exception in thread ") ||
         line.starts_with("Unhandled exception. ") || line.starts_with("Unhandled Exception: ");
}

std::string stderr_excerpt(const std::string& err, std::size_t max_lines) {
  std::string tail = tail_lines(err, max_lines);
  std::string_view all(err);
  while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) all.remove_suffix(1);
  std::string_view before = all.substr(0, all.size() - tail.size());
  std::string_view cause;
  std::size_t cause_end = 0;
  bool in_traceback = false;  // past a Python traceback's heading, among its indented frames
  for (std::size_t at = 0; at < before.size();) {
    std::size_t nl = before.find('\n', at);
    std::size_t end = nl == std::string_view::npos ? before.size() : nl;
    std::string_view line = before.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with("Traceback (most recent call last):")) {
      in_traceback = true;
    } else if (in_traceback && !line.empty() && line.front() != ' ' && line.front() != '\t') {
      in_traceback = false;  // the exception the traceback ends with
      cause = line, cause_end = end;
    } else if (!in_traceback && cause_line(line)) {
      cause = line, cause_end = end;
    }
    at = end + 1;
  }
  if (cause.empty()) return tail;
  std::size_t left_out = 0;
  for (std::size_t i = cause_end; i < before.size(); ++i) left_out += before[i] == '\n';
  // The cause is the line just before the tail: one more line of tail says it all.
  if (left_out <= 1) return tail_lines(err, max_lines + 1);
  return fmt::format("{}\n[… {} lines …]\n{}", cause, left_out - 1, tail);
}

bool omission_line(std::string_view line) {
  return line.starts_with("[… ") && line.ends_with(" lines …]");
}

std::string build_log_cause(std::string_view log, std::size_t tail) {
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at < log.size();) {
    std::size_t nl = std::min(log.find('\n', at), log.size());
    std::string_view line = log.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    at = nl + 1;
  }
  while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
  const std::size_t before = lines.size() > tail ? lines.size() - tail : 0;
  std::string_view cause;
  for (std::size_t i = 0; i < before; ++i) {
    const std::string_view line = lines[i];
    if (cause_line(line) || line.find(": error: ") != std::string_view::npos ||
        line.find(": error TS") != std::string_view::npos) {
      cause = line;
    }
  }
  if (cause.empty()) {
    for (std::size_t i = 0; i < before && cause.empty(); ++i) {
      if (!npm_error_message(lines[i]).empty()) cause = lines[i];
    }
  }
  cause = trim(cause);
  std::string_view kept = utf8_prefix(cause, 240);
  return kept.size() < cause.size() ? std::string(kept) + "…" : std::string(kept);
}

bool says_disk_full(std::string_view text) {
  for (std::string_view s : {"No space left on device", "Disk quota exceeded", "SQLSTATE 53100",
                             "53100:"}) {
    if (text.find(s) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace coldgate::util
