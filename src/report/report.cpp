#include "report/report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "gate/gate.hpp"
#include "report/escape.hpp"
#include "report/table.hpp"

namespace coldgate::report {
namespace {

using namespace coldgate::measure;

// A whole row or block of a section; a cut report drops or shortens items, never splits them
// mid-Markdown. `body` (when not empty) is a fenced code block between `text` and `after` that
// may be shortened at a line boundary.
struct Item {
  std::string text;
  int rank = 3;  // 0 most urgent … 3 least; a cut report shows urgent items first
  std::string body;
  std::string info;
  std::string after;

  std::string whole() const { return body.empty() ? text : text + md_fence(body, info) + after; }
};

// A part of the report: a heading (or table header), items, and what closes it.
struct Section {
  std::string head;
  std::vector<Item> items;
  std::string tail;
  std::string what_one;   // "table row", … for the note when items are left out
  std::string what_many;  // "table rows", …
};

// Caps for the parts that have no items: a verdict naming thousands of stages, a long footer.
constexpr std::size_t k_max_line_bytes = 4'000;
constexpr std::size_t k_chart_stages = 20;

std::string capped(std::string text, std::size_t max) {
  if (text.size() <= max) return text;
  return std::string(utf8_prefix(text, max)) + " …";
}

std::string short_sha(const std::string& sha) {
  return sha.substr(0, 7);
}

std::string top(const Results& r) {
  std::string verdict = capped(gate::verdict(r), k_max_line_bytes);
  return fmt::format("<!-- coldgate:report:{} -->\n## {}\n\n{} **{}**\n", marker_key(r.title),
                     md_text(capped(r.title, 200)), gate::passed(r) ? "✅" : "❌", md_text(verdict));
}

Section table_section(const Results& r, const Results* base) {
  MetricsTable t = metrics_table(r, base);
  Section s{
      "\n" + t.header, {}, t.legend.empty() ? "" : "\n" + t.legend, "table row", "table rows"};
  for (auto& row : t.rows) s.items.push_back({std::move(row.text), row.rank});
  return s;
}

Section failures_section(const Results& r) {
  Section s{"", {}, "", "failed stage", "failed stages"};
  for (const auto& st : r.stages) {
    if (!st.failed()) continue;
    s.items.push_back({fmt::format("\n### {}: failed\n\n", md_text(st.name)), 1, st.error, "", ""});
  }
  return s;
}

std::string status_icon(const std::string& status) {
  if (status == "match") return "✅";
  if (status == "updated") return "📝";
  return "❌";
}

Section snapshot_table_section(const Results& r) {
  Section s{"\n| Stage | Snapshot | Status | Candidate |\n|---|---|---|---|\n",
            {},
            "",
            "snapshot",
            "snapshots"};
  for (const auto& st : r.stages) {
    if (!st.snapshot) continue;
    const SnapshotResult& sn = *st.snapshot;
    s.items.push_back(
        {fmt::format("| {} | {} | {} {} | {} |\n", md_text(st.name), md_code(sn.path, true),
                     status_icon(sn.status), md_text(sn.status),
                     sn.pending.empty() ? "—" : md_code(sn.pending, true)),
         sn.status == "match" || sn.status == "updated" ? 3 : 1});
  }
  for (const auto& path : r.obsolete_snapshots) {
    s.items.push_back({fmt::format("| — | {} | ⚠️ obsolete (no stage claims it) | — |\n",
                                   md_code(path, true)),
                       2});
  }
  if (s.items.empty()) s.head.clear();
  return s;
}

Section snapshot_details_section(const Results& r) {
  Section s{"", {}, "", "snapshot diff", "snapshot diffs"};
  for (const auto& st : r.stages) {
    if (!st.snapshot || st.snapshot->status == "match") continue;
    const SnapshotResult& sn = *st.snapshot;
    std::string text = fmt::format("\n### {}: snapshot {}\n\n{}\n", md_text(st.name),
                                   md_text(sn.status), md_text(sn.message));
    int rank = sn.status == "updated" ? 3 : 1;
    if (sn.diff.empty()) {
      s.items.push_back({std::move(text), rank});
      continue;
    }
    std::string first_line = sn.diff.substr(0, sn.diff.find('\n'));
    text += fmt::format("\n<details><summary>{}</summary>\n\n", html_text(first_line));
    s.items.push_back({std::move(text), rank, sn.diff, "diff", "\n</details>\n"});
  }
  return s;
}

Section diagnoses_section(const Results& r) {
  Section s{"\n### Diagnoses\n\n", {}, "", "diagnosis", "diagnoses"};
  for (const auto& d : r.diagnoses) {
    s.items.push_back(
        {fmt::format("- **{}**: {}\n", md_text(d.stage), md_with_code(d.message)), 2});
  }
  if (s.items.empty()) s.head.clear();
  return s;
}

// Mermaid takes a quoted label up to the next `"`; `#` starts an entity code, backticks could
// touch the fence: none of them get through.
std::string chart_label(std::string_view name, std::string_view suffix) {
  std::string out;
  for (char c : valid_utf8(capped(std::string(name), 40) + std::string(suffix))) {
    switch (c) {
      case '"':
      case '`':
        out += '\'';
        break;
      case '#':
        out += "no.";
        break;
      case '<':
        out += "‹";
        break;
      case '>':
        out += "›";
        break;
      case '\n':
      case '\t':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return "\"" + out + "\"";
}

// One bar series over interleaved "before"/"after" categories: Mermaid draws several `bar`
// series at the same x (overlapping in older releases, stacked in newer ones), which would
// hide one of the two medians.
Section chart_section(const Results& r, const Results* base) {
  struct Bar {
    std::string stage;
    std::optional<double> before;
    std::optional<double> after;
  };
  // Indexes, not scans: a run may have thousands of stages.
  std::map<std::string, const MetricVerdict*> verdicts;
  if (r.gate) {
    for (const auto& v : r.gate->metrics) {
      if (v.metric == "wall_ms") verdicts.emplace(v.stage, &v);
    }
  }
  std::map<std::string, const Metric*> base_walls;
  if (base) {
    for (const auto& bs : base->stages) {
      const Metric* bm = bs.find("wall_ms");
      if (bm && !bm->cold.empty()) base_walls.emplace(bs.name, bm);
    }
  }
  std::vector<Bar> bars;
  for (const auto& st : r.stages) {
    const Metric* m = st.find("wall_ms");
    if (!m || m->cold.empty()) continue;
    Bar b{st.name, std::nullopt, median(m->cold)};
    if (r.gate) {
      if (auto it = verdicts.find(st.name); it != verdicts.end()) {
        b.before = it->second->base_median;
        if (it->second->head_median) b.after = it->second->head_median;
      }
      if (auto it = base_walls.find(st.name); !b.before && it != base_walls.end()) {
        b.before = median(it->second->cold);
      }
    }
    bars.push_back(std::move(b));
  }
  Section s{"", {}, "", "chart", "charts"};
  if (bars.empty()) return s;
  std::string note;
  if (bars.size() > k_chart_stages) {
    // Keep the slowest stages, in stage order.
    std::vector<double> afters;
    for (const auto& b : bars) afters.push_back(b.after.value_or(0));
    std::nth_element(afters.begin(), afters.begin() + (k_chart_stages - 1), afters.end(),
                     std::greater<>());
    double threshold = afters[k_chart_stages - 1];
    std::vector<Bar> kept;
    for (auto& b : bars) {
      if (kept.size() < k_chart_stages && b.after.value_or(0) >= threshold) kept.push_back(b);
    }
    note = fmt::format("The {} slowest of {} stages.\n\n", kept.size(), bars.size());
    bars = std::move(kept);
  }
  std::string labels;
  std::string values;
  auto add = [&](const std::string& stage, std::string_view suffix, double value) {
    labels += (labels.empty() ? "" : ", ") + chart_label(stage, suffix);
    values += (values.empty() ? "" : ", ") + fmt::format("{:.1f}", value);
  };
  for (const auto& b : bars) {
    if (r.gate) {
      // A new stage has no "before" bar rather than a bar of 0.
      if (b.before) add(b.stage, " before", *b.before);
      if (b.after) add(b.stage, " after", *b.after);
    } else {
      add(b.stage, "", b.after.value_or(0));
    }
  }
  std::string chart = fmt::format(
      "xychart-beta\n    title \"Cold wall time per stage ({})\"\n    x-axis [{}]\n"
      "    y-axis \"ms\"\n    bar [{}]\n",
      r.gate ? "median, before and after" : "median", labels, values);
  s.items.push_back({"\n### Cold wall time\n\n" + note, 3, chart, "mermaid", ""});
  return s;
}

std::string footer(const Results& r) {
  std::string out = "\n---\n\n";
  std::string base_commit =
      r.gate && !r.gate->base_git.commit.empty() ? r.gate->base_git.commit : r.git.base;
  auto commit = [](const std::string& sha, const std::string& branch) {
    std::string s = md_code(short_sha(sha));
    if (!branch.empty()) s += " (" + md_code(branch) + ")";
    return s;
  };
  std::string commits;
  if (!base_commit.empty()) {
    commits += "base " + commit(base_commit, r.gate ? r.gate->base_git.branch : "") + " → ";
  }
  commits += r.git.commit.empty() ? "head (not a git checkout)"
                                  : "head " + commit(r.git.commit, r.git.branch);
  if (r.gate && !r.gate->baseline.empty()) commits += ", baseline " + md_code(r.gate->baseline);
  out += "- Commits: " + commits + "\n";
  const Environment& e = r.environment;
  std::vector<std::string> env;
  if (!e.postgres_version.empty()) env.push_back("PostgreSQL " + md_text(e.postgres_version));
  if (!e.provider.empty()) env.push_back(md_text(e.provider) + " provider");
  if (!e.cpu_model.empty() || e.cpus > 0) {
    env.push_back(md_text(e.cpu_model.empty() ? "CPU" : e.cpu_model) +
                  (e.cpus > 0 ? fmt::format(" ({} CPUs)", e.cpus) : ""));
  }
  if (!e.kernel.empty()) env.push_back(md_text(e.kernel));
  if (!e.os.empty()) env.push_back(md_text(e.os));
  std::string env_line;
  for (const auto& part : env) env_line += (env_line.empty() ? "" : " · ") + part;
  if (!env_line.empty()) out += "- Environment: " + env_line + "\n";
  if (r.gate && !r.gate->environment_differences.empty()) {
    std::string diffs;
    for (const auto& d : r.gate->environment_differences)
      diffs += (diffs.empty() ? "" : "; ") + md_text(d);
    out += "- ⚠️ **Environment differs from the baseline**: " + diffs + "\n";
  }
  out += fmt::format("- coldgate {}{}{}\n", md_text(r.tool_version),
                     r.config.empty() ? "" : " · " + md_code(r.config),
                     r.finished_at.empty() ? "" : " · " + md_text(r.finished_at));
  return capped(out, k_max_line_bytes) + (out.size() > k_max_line_bytes ? "\n" : "");
}

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
  return fmt::format("\n_… {} more {} in {}._\n", n, n == 1 ? s.what_one : s.what_many,
                     md_code(full_name));
}

// Two passes over the sections, each keeping a prefix of its rank-sorted items: first only
// the urgent items (regressions, failures, changed snapshots; a long one shortened to a quarter
// of the limit), then the rest while room is left.
std::string cut_report(const std::string& head, std::vector<Section> sections,
                       const std::string& foot, const std::string& full_name,
                       std::size_t max_bytes) {
  std::string top = head + fmt::format(
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
  std::string note = fmt::format("\n> [!NOTE]\n> This report was cut to stay under {} characters. "
                                 "The whole report is {}.\n",
                                 format_value(static_cast<double>(max_bytes), "count"),
                                 md_code(full_name));
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

Markdown markdown(const Results& r, const Results* base, const std::string& full_name,
                  std::size_t max_bytes) {
  std::string head = top(r);
  std::string foot = footer(r);
  Section table = table_section(r, base);
  Section failures = failures_section(r);
  Section snapshots = snapshot_table_section(r);
  Section details = snapshot_details_section(r);
  Section diagnoses = diagnoses_section(r);
  Section chart = chart_section(r, base);
  Markdown md;
  md.full = assemble(head, {table, failures, snapshots, details, diagnoses, chart}, foot);
  if (md.full.size() <= max_bytes) {
    md.report = md.full;
    return md;
  }
  md.cut = true;
  // Failures before the table here: a table of many regressions must not crowd them out.
  md.report = cut_report(head, {failures, table, snapshots, details, diagnoses, chart}, foot,
                         full_name, max_bytes);
  return md;
}

}  // namespace coldgate::report
