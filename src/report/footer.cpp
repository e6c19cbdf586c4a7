#include "report/sections.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace coldgate::report {

using namespace coldgate::results;

namespace {

// Cap for one footer line.
constexpr std::size_t k_max_footer_line_bytes = 1'000;
// Uncommitted changes listed in the footer (`git status --porcelain` lines), and how long each.
constexpr std::size_t k_dirty_lines = 20;
constexpr std::size_t k_dirty_line_bytes = 200;

// `url` as a Markdown link destination: http(s) only, and every character that could end the
// link, the line or the destination percent-encoded; "" for any other scheme.
std::string link_url(std::string_view url) {
  if (!url.starts_with("https://") && !url.starts_with("http://")) return "";
  std::string out;
  // `@` too: the same in a query, and it cannot read as a mention.
  for (char ch : url.substr(0, url.find('#'))) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f ||
        std::string_view("<>()[]\"'`\\|*_~@").find(ch) != std::string_view::npos) {
      out += fmt::format("%{:02X}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

std::string commits_line(const Results& r) {
  std::string base_commit =
      r.gate && !r.gate->base_git.commit.empty() ? r.gate->base_git.commit : r.git.base;
  // `+dirty` (git describe --dirty's mark): what was measured is the commit with uncommitted
  // changes on top. run measures the working tree with its edits; ab measures the commit.
  auto commit = [](const std::string& sha, const std::string& branch, const GitInfo* git) {
    const bool dirty = git && !git->dirty.empty() && git->dirty_measured;
    std::string s = md_code(short_sha(sha) + (dirty ? "+dirty" : ""));
    if (!branch.empty()) s += " (" + md_code(capped(branch, 200)) + ")";
    return s;
  };
  std::string commits;
  if (r.gate && r.gate->base_source == BaseSource::history && r.history &&
      !r.history->commits.empty()) {
    // Many commits: the range, as the base line says, and the branch they were recorded on.
    std::string branch = r.gate->base_git.branch;
    commits +=
        fmt::format("base {} ({}{}) → ", history_range(*r.history),
                    branch.empty() ? "" : md_code(capped(one_line(branch), 200)) + ", ",
                    plural(r.history->commits.size(), "recorded commit", "recorded commits"));
  } else if (!base_commit.empty()) {
    const GitInfo* base_git = r.gate && base_commit == r.gate->base_git.commit ? &r.gate->base_git
                                                                                : nullptr;
    commits += "base " + commit(base_commit, base_git ? base_git->branch : "", base_git) + " → ";
  }
  if (!r.git.commit.empty()) {
    commits += "head " + commit(r.git.commit, r.git.branch, &r.git);
  } else {
    commits += r.git.unborn ? "head (git repository without commits)" : "head (not a git checkout)";
  }
  if (!r.git.dirty.empty()) {
    std::string changes = plural(r.git.dirty.size(), "uncommitted change", "uncommitted changes");
    commits += r.git.dirty_measured ? " with " + changes : " (" + changes + " not measured)";
  }
  // A baseline file the user gave is theirs to name; the cache's or ab's are internal.
  if (r.gate && r.gate->base_source == BaseSource::file && !r.gate->baseline.empty())
    commits += ", baseline " + md_code(capped(r.gate->baseline, 300));
  return "- Commits: " + commits + "\n";
}

std::string ci_line(const Results& r) {
  if (r.ci_run_url.empty()) return "";
  std::string url = link_url(r.ci_run_url);
  if (url.empty()) return "- CI run: " + md_code(capped(r.ci_run_url, 300)) + "\n";
  return fmt::format("- CI: [run]({0}) · artifact [coldgate-out]({0}#artifacts)\n", url);
}

std::string environment_line(const Environment& e) {
  std::vector<std::string> env;
  if (!e.postgres_version.empty()) env.push_back("PostgreSQL " + md_text(e.postgres_version));
  if (!e.provider.empty()) env.push_back(md_text(e.provider) + " provider");
  if (!e.cpu_model.empty() || e.cpus > 0) {
    env.push_back(md_text(e.cpu_model.empty() ? "CPU" : e.cpu_model) +
                  (e.cpus > 0 ? fmt::format(" ({} CPUs)", e.cpus) : ""));
  }
  if (!e.kernel.empty()) env.push_back(md_text(e.kernel));
  if (!e.os.empty()) env.push_back(md_text(e.os));
  std::string line;
  for (const auto& part : env) line += (line.empty() ? "" : " · ") + part;
  return line.empty() ? "" : "- Environment: " + line + "\n";
}

// The uncommitted changes named on the commits line, listed (capped) in a closed block.
std::string dirty_block(const GitInfo& git) {
  if (git.dirty.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < git.dirty.size() && i < k_dirty_lines; ++i)
    list += capped(one_line(git.dirty[i]), k_dirty_line_bytes) + "\n";
  if (git.dirty.size() > k_dirty_lines)
    list += fmt::format("… and {} more\n", git.dirty.size() - k_dirty_lines);
  return fmt::format("\n<details><summary>{}{}</summary>\n\n{}\n</details>\n",
                     plural(git.dirty.size(), "uncommitted change", "uncommitted changes"),
                     git.dirty_measured ? "" : ", not measured", md_fence(list));
}

}  // namespace

std::string footer(const Results& r) {
  auto line = [](std::string text) {
    return text.size() <= k_max_footer_line_bytes ? text
                                                  : capped(text, k_max_footer_line_bytes) + "\n";
  };
  std::string out = "\n---\n\n" + line(commits_line(r)) + line(ci_line(r)) +
                    line(environment_line(r.environment));
  if (r.gate && !r.gate->environment_differences.empty()) {
    std::string diffs;
    for (const auto& d : r.gate->environment_differences)
      diffs += (diffs.empty() ? "" : "; ") + md_text(d);
    out += line("- ⚠️ **Environment differs from the baseline**: " + diffs + "\n");
  }
  out += line(fmt::format("- coldgate {}{}{}\n", md_text(r.tool_version),
                          r.config.empty() ? "" : " · " + md_code(r.config),
                          r.finished_at.empty() ? "" : " · " + md_text(r.finished_at)));
  return out + dirty_block(r.git);
}

}  // namespace coldgate::report
