#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "history/record.hpp"

namespace coldgate::history {

/// What the dashboard page needs beside the records.
struct PageOptions {
  std::string title = "coldgate";  // report.title
  /// The repository's web address ("https://github.com/owner/repo"): a click on a point opens
  /// `<repo_url>/commit/<sha>`; "" when unknown (no links). Only http(s) addresses are linked.
  std::string repo_url;
  std::string chart_js;      // the Chart.js UMD bundle's text, embedded in the page
  std::string generated_at;  // UTC, RFC 3339, shown in the footer
};

/// Where Debian's libjs-chart.js puts its UMD bundle; COLDGATE_CHART_JS overrides it.
std::string chart_js_path();

/// The web address of a repository from its git remote URL, for commit links:
/// "https://host/owner/repo" from `https://[user[:token]@]host/owner/repo[.git]`,
/// `git@host:owner/repo[.git]` or `ssh://[user@]host[:port]/owner/repo[.git]` (the port and any
/// credentials dropped); "" for anything else (a local path, `file://`, an empty URL).
std::string repository_web_url(std::string_view remote_url);

/// The self-contained dashboard: one HTML page, no network, Chart.js embedded. Per stage a
/// chart over the commits (in `records` order: oldest first) of the selected metric — the cold
/// median with its min–max band, a marker where the recorded gate said regression — with
/// hover (short SHA and subject, date, value) and click (the commit, when repo_url is set);
/// stages and metrics selectable. Every value from data reaches the page as JSON inside a
/// script element with `<`, `>`, `&` and U+2028/9 escaped and is put into the DOM as text only.
std::string page_html(const std::vector<Record>& records, const PageOptions& options);

}  // namespace coldgate::history
