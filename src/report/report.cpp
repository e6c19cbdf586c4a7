#include "report/report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

#include "report/escape.hpp"
#include "report/migration.hpp"
#include "report/sections.hpp"
#include "report/table.hpp"

namespace coldgate::report {

using namespace coldgate::results;

std::string capped(std::string text, std::size_t max) {
  if (text.size() <= max) return text;
  return std::string(utf8_prefix(text, max)) + " …";
}

// `text` as valid UTF-8 on one line: a file name may hold a newline.
std::string one_line(std::string_view text) {
  std::string out = valid_utf8(text);
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

std::string short_sha(const std::string& sha) {
  return sha.substr(0, 7);
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", format_value(static_cast<double>(n), "count"), n == 1 ? one : many);
}

namespace {

// `item` within `budget` bytes: its code block shortened at a line boundary, or "" when even
// that does not fit.
std::string shortened(const Item& item, std::size_t budget, const std::string& full_name) {
  std::string note = fmt::format("… cut here; the whole text is in {}\n", full_name);
  std::size_t fixed = item.text.size() + item.after.size() + note.size() + item.info.size() + 64;
  if (item.body.empty() || budget < fixed + 200) return "";
  std::string_view body = utf8_prefix(item.body, budget - fixed);
  std::size_t nl = body.rfind('\n');
  body = body.substr(0, nl == std::string_view::npos ? 0 : nl + 1);
  // The fence may grow by one backtick per backtick run in `note`: it has none.
  std::string out = item.text + md_fence(std::string(body) + note, item.info) + item.after;
  return out.size() <= budget ? out : "";
}

std::string assemble(const std::string& head, const std::vector<Section>& sections,
                     const std::string& foot) {
  std::string out = head;
  for (const auto& s : sections) {
    if (s.items.empty()) continue;
    out += s.head;
    for (const auto& item : s.items) out += item.whole();
    out += s.tail;
  }
  return out + foot;
}

std::string more_note(std::size_t n, const Section& s, const std::string& full_name) {
  return fmt::format("\n_… {} more {} in {}._\n", format_value(static_cast<double>(n), "count"),
                     n == 1 ? s.what_one : s.what_many, md_code(full_name));
}

// Two passes over the sections, each keeping a prefix of its rank-sorted items: first only
// the urgent items (regressions, failures, changed snapshots; a long one shortened to a quarter
// of the limit), then the rest while room is left.
std::string cut_report(const std::string& head, std::vector<Section> sections,
                       const std::string& foot, const std::string& full_name,
                       std::size_t max_bytes) {
  std::string top =
      head + fmt::format(
                 "\n> [!NOTE]\n> This report was cut to stay under {} characters; "
                 "regressions, failures and "
                 "changed snapshots come first. The whole report is {}.\n",
                 format_value(static_cast<double>(max_bytes), "count"), md_code(full_name));
  std::size_t used = top.size() + foot.size();
  for (auto& s : sections) {
    std::stable_sort(s.items.begin(), s.items.end(),
                     [](const Item& a, const Item& b) { return a.rank < b.rank; });
    if (!s.items.empty()) used += more_note(s.items.size(), s, full_name).size();
  }
  std::vector<std::vector<std::string>> shown(sections.size());
  std::vector<bool> stopped(sections.size());
  auto pass = [&](int max_rank, std::size_t cap) {
    for (std::size_t k = 0; k < sections.size(); ++k) {
      const Section& s = sections[k];
      while (!stopped[k] && shown[k].size() < s.items.size()) {
        const Item& item = s.items[shown[k].size()];
        if (item.rank > max_rank) break;
        std::size_t open = shown[k].empty() ? s.head.size() + s.tail.size() : 0;
        std::size_t room = used + open < max_bytes ? max_bytes - used - open : 0;
        std::string text = item.whole();
        if (text.size() > std::min(room, cap))
          text = shortened(item, std::min(room, cap), full_name);
        if (text.empty()) {
          stopped[k] = true;  // keep a prefix: nothing after an item left out
          break;
        }
        used += open + text.size();
        shown[k].push_back(std::move(text));
      }
    }
  };
  pass(1, max_bytes / 4);
  pass(3, max_bytes);
  std::string out = top;
  for (std::size_t k = 0; k < sections.size(); ++k) {
    const Section& s = sections[k];
    if (s.items.empty()) continue;
    if (!shown[k].empty()) {
      out += s.head;
      for (const auto& text : shown[k]) out += text;
      out += s.tail;
    }
    if (shown[k].size() < s.items.size()) {
      out += more_note(s.items.size() - shown[k].size(), s, full_name);
    }
  }
  out += foot;
  // The caps above keep this from happening; a report over the limit would not post at all.
  if (out.size() > max_bytes) out = std::string(utf8_prefix(out, max_bytes - 2)) + "\n";
  return out;
}

}  // namespace

std::string marker_key(const std::string& title) {
  std::string key;
  for (char c : title) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_';
    if (keep) {
      key += c;
    } else if (!key.empty() && key.back() != '-') {
      key += '-';
    }
  }
  if (key.size() > 100) key.resize(100);
  while (!key.empty() && key.back() == '-') key.pop_back();
  return key.empty() ? "coldgate" : key;
}

std::string cut_markdown(std::string_view text, std::size_t max_bytes,
                         const std::string& full_name) {
  if (text.size() <= max_bytes) return std::string(text);
  std::string note = fmt::format(
      "\n> [!NOTE]\n> This report was cut to stay under {} characters. "
      "The whole report is {}.\n",
      format_value(static_cast<double>(max_bytes), "count"), md_code(full_name));
  // Room for the note and for closing what the cut leaves open (a fence of at most 64
  // backticks, a few `</details>`).
  std::size_t room = max_bytes > note.size() + 256 ? max_bytes - note.size() - 256 : 0;
  std::string_view kept = utf8_prefix(text, room);
  std::size_t nl = kept.rfind('\n');
  kept = kept.substr(0, nl == std::string_view::npos ? 0 : nl + 1);
  // Which fence and how many <details> are open at the cut (CommonMark: a fence closes on a
  // line of at least as many backticks and nothing else).
  std::string fence;
  int details = 0;
  for (std::size_t pos = 0; pos < kept.size();) {
    std::size_t end = kept.find('\n', pos);
    std::string_view line = kept.substr(pos, end - pos);
    pos = end + 1;
    std::size_t ticks = line.find_first_not_of('`');
    if (ticks == std::string_view::npos) ticks = line.size();
    if (!fence.empty()) {
      if (ticks >= fence.size() && line.find_first_not_of(" ", ticks) == std::string_view::npos)
        fence.clear();
    } else if (ticks >= 3) {
      fence.assign(ticks, '`');
    } else if (line.starts_with("<details")) {
      ++details;
    } else if (line.starts_with("</details>") && details > 0) {
      --details;
    }
  }
  std::string out(kept);
  if (!fence.empty()) out += fence.substr(0, 64) + "\n";
  for (int i = 0; i < details && out.size() + note.size() + 11 <= max_bytes; ++i)
    out += "</details>\n";
  out += note;
  return out.size() <= max_bytes ? out : std::string(utf8_prefix(out, max_bytes));
}

namespace {

// report::markdown for `reader`, the reader of the current ReaderScope (the escapes follow the
// scope; the trend's form follows `reader`): `report`, `full` and `cut`.
Markdown render(const Results& r, const Results* base, const std::string& full_name,
                std::size_t max_bytes, Reader reader) {
  Comparison c(r, base);
  std::string head = top(r);
  std::string foot = footer(r);
  Section changes = table_section(changes_table(c), "change", "changes");
  Section timings = c.gated() ? Section{} : table_section(head_table(r), "table row", "table rows");
  Section unchanged = unchanged_section(c);
  Section errors = errors_section(r);
  Section diffs = diffs_section(r);
  Section diagnoses = diagnoses_section(c);
  Section statements = statements_section(c);
  Section growth = growth_section(r);
  Section database = database_section(r);
  Section remedies = remedies_section(r);
  Section chart = chart_section(c);
  Section history = history_section(r);
  Section trend = trend_section(c, reader);
  Section more = more_metrics_section(c);
  Section migration{"", {}, "", "migration", "migrations"};
  if (r.migration) migration.items.push_back({migration_section(*r.migration), 0});
  Markdown md;
  md.full = assemble(head,
                     {migration, changes, timings, unchanged, statements, errors, diffs, diagnoses,
                      growth, remedies, database, chart, history, trend, more},
                     foot);
  if (md.full.size() <= max_bytes) {
    md.report = md.full;
    return md;
  }
  md.cut = true;
  // Errors, diffs, diagnoses and the chart before the long tables here: thousands of unchanged
  // stages must not crowd out why the gate failed. The history's commits with the chart; its
  // trend last, the first to go: the table of changes has the base and head medians already.
  md.report = cut_report(head,
                         {migration, changes, statements, errors, diffs, diagnoses, growth, remedies, chart, history,
                          timings,
                          unchanged, database, more, trend},
                         foot, full_name, max_bytes);
  return md;
}

}  // namespace

Markdown markdown(const Results& r, const Results* base, const std::string& full_name,
                  std::size_t max_bytes) {
  Markdown md = render(r, base, full_name, max_bytes, Reader::github);
  // Cut only when `report` is, and then `full_name` exists: entities are longer than their
  // characters, but a trend's lines can be longer than its charts.
  ReaderScope terminal(Reader::terminal);
  md.terminal =
      render(r, base, full_name, md.cut ? max_bytes : std::numeric_limits<std::size_t>::max(),
             Reader::terminal)
          .report;
  return md;
}

std::string repo_path(std::string_view path, const std::vector<std::string>& anchors) {
  for (std::string_view worktree : {"coldgate-out/ab/head/", "coldgate-out/ab/base/"}) {
    std::size_t pos = path.rfind(worktree);
    if (pos != std::string_view::npos && (pos == 0 || path[pos - 1] == '/'))
      return std::string(path.substr(pos + worktree.size()));
  }
  if (!path.starts_with('/')) return std::string(path);
  for (std::string_view anchor : anchors) {
    if (!anchor.empty() && !anchor.starts_with('/') && path.size() > anchor.size() &&
        path.ends_with(anchor) && path[path.size() - anchor.size() - 1] == '/') {
      return std::string(anchor);
    }
  }
  if (std::size_t out = path.rfind("/coldgate-out/"); out != std::string_view::npos)
    return std::string(path.substr(out + 1));
  return "…/" + std::string(path.substr(path.rfind('/') + 1));
}

}  // namespace coldgate::report
