// Statements as a reviewer reads them in a table: one short line each, lines that would read
// alike lengthened where their texts differ, and the tables a statement reads for telling a
// rewritten statement from a new one.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "report/escape.hpp"
#include "report/table.hpp"
#include "util/statement_text.hpp"

namespace coldgate::report {
namespace {

// How much of the text from where two statements differ a lengthened line shows, in bytes.
constexpr std::size_t k_difference_bytes = 60;
// The longest word before the difference that a lengthened line shows with it (a keyword).
constexpr std::size_t k_context_word_bytes = 10;

// `query` on one line: valid UTF-8, runs of white space as one space, trimmed.
std::string one_line_statement(const std::string& query) {
  std::string line;
  line.reserve(query.size());
  for (char c : valid_utf8(query)) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (line.empty() || line.back() == ' ')) continue;
    line += space ? ' ' : c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// A one-line statement at most about `max_bytes`: its lists elided, then cut with " …".
std::string shortened_statement(const std::string& line, std::size_t max_bytes) {
  if (line.size() <= max_bytes) return line;
  std::string elided = util::elide_statement_lists(line);
  return elided.size() <= max_bytes ? elided : std::string(utf8_prefix(elided, max_bytes)) + " …";
}

// `text` up to about `max_bytes`, cut after a whole word and marked " …" when cut.
std::string words_up_to(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::string_view cut = utf8_prefix(text, max_bytes);
  if (std::size_t space = cut.rfind(' '); space != std::string_view::npos && space > max_bytes / 2)
    cut = cut.substr(0, space);
  return std::string(cut) + " …";
}

std::size_t common_prefix(const std::string& a, const std::string& b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// `line` (a whole one-line statement) within about `max_bytes`, showing where it differs from
// another at byte `at`: its start shortened, " … ", then from the word before the difference on
// ("… WHERE "article"."slug" = $1 LIMIT …").
std::string line_showing(const std::string& line, std::size_t at, std::size_t max_bytes) {
  // The word the difference is in, and a short word before it: a keyword (WHERE, BY) reads
  // better with what follows.
  std::size_t start = at == 0 ? std::string::npos : line.rfind(' ', at - 1);
  start = start == std::string::npos ? 0 : start + 1;
  if (start > 1) {
    std::size_t before = line.rfind(' ', start - 2);
    before = before == std::string::npos ? 0 : before + 1;
    if (start - before <= k_context_word_bytes) start = before;
  }
  std::string tail = words_up_to(std::string_view(line).substr(start), k_difference_bytes);
  if (start == 0) return tail;
  const std::size_t room = max_bytes > tail.size() + 40 ? max_bytes - tail.size() - 3 : 40;
  std::string head_text = line.substr(0, start);
  while (!head_text.empty() && head_text.back() == ' ') head_text.pop_back();
  std::string head = head_text.size() <= room ? head_text : util::elide_statement_lists(head_text);
  if (head.size() > room) head = words_up_to(head, room);
  // Nothing left out between the two parts: they join as the text does.
  if (head == head_text) return head + " " + tail;
  if (head.ends_with("…")) return head + " " + tail;
  return head + " … " + tail;
}

// Upper-case ASCII of `word`.
std::string upper(std::string_view word) {
  std::string out(word);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string statement_line(const std::string& query, std::size_t max_bytes) {
  return shortened_statement(one_line_statement(query), max_bytes);
}

std::vector<std::string> distinct_statement_lines(const std::vector<std::string>& queries,
                                                  std::size_t max_bytes) {
  const std::size_t n = queries.size();
  std::vector<std::string> full(n);
  std::vector<std::string> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    full[i] = one_line_statement(queries[i]);
    out[i] = shortened_statement(full[i], max_bytes);
  }
  // Lines that read alike, by their line: lengthened where their texts differ from the others'.
  auto alike = [&]() {
    std::map<std::string, std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < n; ++i) groups[out[i]].push_back(i);
    std::vector<std::vector<std::size_t>> out_groups;
    for (auto& [line, members] : groups) {
      std::set<std::string> texts;
      for (std::size_t i : members) texts.insert(full[i]);
      if (texts.size() > 1) out_groups.push_back(members);  // one text twice is one statement
    }
    return out_groups;
  };
  for (const auto& members : alike()) {
    for (std::size_t i : members) {
      std::size_t at = 0;
      for (std::size_t j : members) {
        if (full[j] != full[i]) at = std::max(at, common_prefix(full[i], full[j]));
      }
      out[i] = line_showing(full[i], at, max_bytes);
    }
  }
  // Texts that differ only where no line shows (past the stored text's cut, in a window both
  // share): numbered, so that each row still names one statement.
  for (const auto& members : alike()) {
    std::map<std::string, std::size_t> number;
    for (std::size_t i : members) {
      auto [it, fresh] = number.emplace(full[i], number.size() + 1);
      out[i] += fmt::format(" #{}", it->second);
    }
  }
  return out;
}

std::string statement_shape(const std::string& query) {
  static const std::set<std::string> k_before_table = {"FROM", "JOIN", "UPDATE", "INTO"};
  const std::string line = one_line_statement(query);
  std::set<std::string> tables;
  std::string verb;
  bool table_next = false;
  for (std::size_t i = 0; i < line.size();) {
    const char c = line[i];
    if (c == ' ' || c == ',' || c == '(' || c == ')' || c == ';') {
      if (c == '(' || c == ')') table_next = false;  // a subquery or a column list: no table
      ++i;
      continue;
    }
    std::size_t end = i;
    if (c == '\'') {  // a literal
      for (end = i + 1; end < line.size(); ++end) {
        if (line[end] == '\'' && (end + 1 == line.size() || line[end + 1] != '\'')) break;
        if (line[end] == '\'') ++end;
      }
      i = std::min(end + 1, line.size());
      table_next = false;
      continue;
    }
    // A name: words, quoted parts and dots ("public"."article", article).
    while (end < line.size()) {
      if (line[end] == '"') {
        std::size_t close = line.find('"', end + 1);
        end = close == std::string::npos ? line.size() : close + 1;
      } else if (line[end] == ' ' || line[end] == ',' || line[end] == '(' || line[end] == ')' ||
                 line[end] == ';') {
        break;
      } else {
        ++end;
      }
    }
    const std::string_view word = std::string_view(line).substr(i, end - i);
    if (verb.empty()) verb = upper(word);
    if (table_next) {
      std::string name(word);
      name.erase(std::remove(name.begin(), name.end(), '"'), name.end());
      tables.insert(name);
      table_next = false;
    } else {
      table_next = k_before_table.count(upper(word)) > 0;
    }
    i = end;
  }
  if (tables.empty()) return "";
  std::string key = verb;
  for (const auto& t : tables) key += " " + t;
  return key;
}

}  // namespace coldgate::report
