// The history dashboard (history::page_html, `coldgate history page`): the data it embeds and
// how, and the page as a browser runs it — headless Chromium through playwright-core
// (tests/history/page_browser.mjs), which reports what the scripts built; the assertions are
// here. COLDGATE_HISTORY_SCREENSHOT=FILE keeps the browser test's screenshot there
// (ci/history-screenshot.sh makes docs/images/history-page.png so).
#include "history/page.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "history/record.hpp"
#include "support/support.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using history::PageOptions;
using history::Record;
using history::StagePoint;
using nlohmann::json;
using testing::run_coldgate;
using testing::ScopedEnv;
using testing::slurp;
using testing::source_dir;
using testing::TempDir;

constexpr const char* k_hostile = "<img src=x onerror=alert(1)>";
constexpr const char* k_repo = "https://git.example/shop/app";
constexpr int k_commits = 24;
constexpr int k_hostile_at = 9;      // the commit whose subject is hostile
constexpr int k_regression_at = 12;  // orders' wall_ms regressed here, fixed 3 commits later
const std::vector<std::string> k_stages = {"orders", "items", "checkout"};

// Three cold samples around `median`, so median, min and max are known: {m - d, m, m + d}.
results::Metric around(double median, double spread, const std::string& unit) {
  return {unit, {median - spread, median, median + spread}, {median}};
}

double wall_median(int stage, int commit) {
  double m = 40.0 + 15.0 * stage + (commit % 5);
  if (stage == 0 && commit >= k_regression_at && commit < k_regression_at + 3) m *= 12;
  return m;
}
double exec_median(int stage, int commit) {
  return 5.0 + stage + commit * 0.25;
}
double queries_median(int stage, int commit) {
  return 3.0 + stage + (commit >= 20 ? 30 : 0);
}

std::string sha_of(int commit) {
  return util::sha256_hex("commit " + std::to_string(commit)).substr(0, 40);
}

// 24 commits of 3 stages, oldest first: wall_ms, db_exec_ms, db_queries and a command's own
// metric per stage; one regression marker; one hostile subject; a jump of db_queries at 20.
std::vector<Record> shop_history() {
  std::vector<Record> out;
  for (int c = 0; c < k_commits; ++c) {
    Record r;
    r.commit = sha_of(c);
    r.parent = c > 0 ? sha_of(c - 1) : "";
    r.branch = "main";
    r.subject = c == k_hostile_at ? k_hostile : "shop: change " + std::to_string(c);
    char date[32];
    std::snprintf(date, sizeof date, "2026-11-%02dT09:%02d:00Z", 1 + c, c);
    r.date = date;
    r.recorded_at = r.date;
    r.tool_version = "0.0.0";
    r.fingerprint = "f";
    r.ci_run_url = "https://ci.example/runs/" + std::to_string(c);
    for (int s = 0; s < 3; ++s) {
      StagePoint p;
      p.name = k_stages[s];
      p.runs = 3;
      p.snapshot = "match";
      p.metrics.emplace_back("cart_items", around(7, 1, "count"));
      p.metrics.emplace_back("db_queries", around(queries_median(s, c), 0, "count"));
      p.metrics.emplace_back("db_exec_ms", around(exec_median(s, c), 0.5, "ms"));
      p.metrics.emplace_back("wall_ms", around(wall_median(s, c), 2, "ms"));
      if (s == 0 && c == k_regression_at) p.regressions = {"wall_ms"};
      r.stages.push_back(std::move(p));
    }
    out.push_back(std::move(r));
  }
  return out;
}

PageOptions options_with(std::string chart_js) {
  PageOptions o;
  o.title = "shop & <co>";
  o.repo_url = k_repo;
  o.chart_js = std::move(chart_js);
  o.generated_at = "2026-12-01T12:00:00Z";
  return o;
}

std::string real_chart_js() {
  return slurp(history::chart_js_path());
}

// The text of <script type="application/json" id="coldgate-data">, parsed.
json embedded_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"coldgate-data\">";
  auto start = html.find(open);
  EXPECT_NE(start, std::string::npos);
  if (start == std::string::npos) return nullptr;
  start += open.size();
  auto end = html.find("</script>", start);
  EXPECT_NE(end, std::string::npos);
  return json::parse(html.substr(start, end - start));
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(HistoryPage, DataIsOneJsonElementWithNothingThatEndsAScript) {
  auto records = shop_history();
  records[3].subject = "</script><script>alert(2)</script> & <!-- \u2028 \u2029";
  std::string html = history::page_html(records, options_with("/* chart */"));
  EXPECT_EQ(html.find(k_hostile), std::string::npos) << "the hostile subject is never raw HTML";
  EXPECT_EQ(html.find("alert(2)</script>"), std::string::npos);
  EXPECT_EQ(html.find("shop & <co>"), std::string::npos);
  EXPECT_EQ(html.find("\u2028"), std::string::npos);
  EXPECT_EQ(count(html, "</script>"), 3u) << "the data, Chart.js and the page's own script";
  EXPECT_NE(html.find("\\u003cimg src=x onerror=alert(1)\\u003e"), std::string::npos);
  EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'; script-src "
                      "'unsafe-inline'; style-src 'unsafe-inline'; img-src data:;"),
            std::string::npos);
  EXPECT_EQ(html.find("innerHTML"), std::string::npos) << "data reaches the DOM as text only";

  json data = embedded_data(html);
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["title"], "shop & <co>");
  ASSERT_EQ(data["commits"].size(), static_cast<std::size_t>(k_commits));
  EXPECT_EQ(data["commits"][k_hostile_at]["subject"], k_hostile);
  EXPECT_EQ(data["commits"][3]["subject"], records[3].subject);
  EXPECT_EQ(data["commits"][0]["short"], sha_of(0).substr(0, 7));
  EXPECT_EQ(data["commits"][5]["url"], std::string(k_repo) + "/commit/" + sha_of(5));
  EXPECT_EQ(data["commits"][5]["run_url"], "https://ci.example/runs/5");
  EXPECT_EQ(data["commits"][k_regression_at]["regressions"], json::array({"orders: wall_ms"}));
  // wall_ms first, then the server-side figures, then the rest.
  std::vector<std::string> metrics;
  for (const auto& m : data["metrics"]) metrics.push_back(m["name"]);
  EXPECT_EQ(metrics,
            (std::vector<std::string>{"wall_ms", "db_exec_ms", "db_queries", "cart_items"}));
  EXPECT_EQ(data["metrics"][0]["unit"], "ms");
  ASSERT_EQ(data["stages"].size(), 3u);
  EXPECT_EQ(data["stages"][0]["name"], "orders");
  EXPECT_EQ(data["stages"][0]["series"][0]["metric"], "wall_ms")
      << "series in the page's metric order";
  json orders_wall;
  for (const auto& s : data["stages"][0]["series"]) {
    if (s["metric"] == "wall_ms") orders_wall = s["points"];
  }
  ASSERT_EQ(orders_wall.size(), static_cast<std::size_t>(k_commits));
  const json& p = orders_wall[k_regression_at];
  EXPECT_EQ(p["median"], wall_median(0, k_regression_at));
  EXPECT_EQ(p["min"], wall_median(0, k_regression_at) - 2);
  EXPECT_EQ(p["max"], wall_median(0, k_regression_at) + 2);
  EXPECT_EQ(p["text"], "504.0 ms");
  EXPECT_EQ(p["regression"], true);
  EXPECT_EQ(orders_wall[k_regression_at - 1]["regression"], false);
}

TEST(HistoryPage, LinksOnlyToWebAddressesAndHexCommits) {
  auto records = shop_history();
  records[1].commit = "not-a-sha";
  records[2].ci_run_url = "javascript:alert(1)";
  json data = embedded_data(history::page_html(records, options_with("")));
  EXPECT_EQ(data["commits"][0]["url"], std::string(k_repo) + "/commit/" + sha_of(0));
  EXPECT_EQ(data["commits"][1]["url"], "");
  EXPECT_EQ(data["commits"][2]["run_url"], "");
  for (const char* repo : {"javascript:alert(1)//", "data:text/html,x", "", "ftp://host/x"}) {
    PageOptions o = options_with("");
    o.repo_url = repo;
    json d = embedded_data(history::page_html(records, o));
    for (const auto& c : d["commits"]) EXPECT_EQ(c["url"], "") << repo;
  }
  PageOptions o = options_with("");
  o.repo_url = "http://git.example/app/";
  EXPECT_EQ(embedded_data(history::page_html(records, o))["commits"][0]["url"],
            "http://git.example/app/commit/" + sha_of(0));
}

TEST(HistoryPage, AnEmptyStoreIsAPageThatSaysSo) {
  std::string html = history::page_html({}, options_with(""));
  EXPECT_NE(html.find("No records yet"), std::string::npos);
  json data = embedded_data(html);
  EXPECT_EQ(data["commits"], json::array());
  EXPECT_EQ(data["stages"], json::array());
}

TEST(HistoryPage, ABundleThatSaysScriptEndsNoElement) {
  std::string html = history::page_html(shop_history(), options_with("var s = '</SCRIPT><!-- x';"));
  EXPECT_NE(html.find("var s = '<\\/SCRIPT><\\!-- x';"), std::string::npos);
  EXPECT_EQ(count(html, "</script>"), 3u);
}

TEST(HistoryPage, ChartJsIsDebiansUnlessTheEnvironmentSaysOtherwise) {
  {
    ScopedEnv unset("COLDGATE_CHART_JS", nullptr);
    EXPECT_EQ(history::chart_js_path(), "/usr/share/javascript/chart.js/chart.min.js");
  }
  ScopedEnv set("COLDGATE_CHART_JS", "/opt/chart.umd.js");
  EXPECT_EQ(history::chart_js_path(), "/opt/chart.umd.js");
}

TEST(HistoryPage, RepositoryWebAddressFromTheRemote) {
  using history::repository_web_url;
  EXPECT_EQ(repository_web_url("https://github.com/shop/app.git\n"), "https://github.com/shop/app");
  EXPECT_EQ(repository_web_url("https://x-access-token:ghs_abc@github.com/shop/app"),
            "https://github.com/shop/app");
  EXPECT_EQ(repository_web_url("git@github.com:shop/app.git"), "https://github.com/shop/app");
  EXPECT_EQ(repository_web_url("ssh://git@gitlab.example:2222/group/sub/app.git"),
            "https://gitlab.example/group/sub/app");
  EXPECT_EQ(repository_web_url("http://git.local/app/"), "http://git.local/app");
  EXPECT_EQ(repository_web_url("/srv/git/app.git"), "");
  EXPECT_EQ(repository_web_url("../app"), "");
  EXPECT_EQ(repository_web_url("file:///srv/git/app.git"), "");
  EXPECT_EQ(repository_web_url("https://github.com"), "");
  EXPECT_EQ(repository_web_url(""), "");
}

// --- in the browser -------------------------------------------------------------------------

// The verdict of tests/history/page_browser.mjs on `page`; the screenshot goes to `shot`.
json browse(const fs::path& page, const fs::path& shot) {
  util::SpawnOptions o;
  o.argv = {"node", (source_dir() / "tests/history/page_browser.mjs").string(), page.string(),
            shot.string()};
  util::RunOutput out = util::run(o, std::chrono::minutes(3));
  EXPECT_EQ(out.status.exit_code, 0) << out.err;
  if (out.status.exit_code != 0) return nullptr;
  return json::parse(out.out);
}

std::vector<double> medians(double (*of)(int, int), int stage) {
  std::vector<double> out;
  for (int c = 0; c < k_commits; ++c) out.push_back(of(stage, c));
  return out;
}

// What a user sees of shop_history(): its charts, tooltip, controls, links and no script
// from the data.
void expect_shop_page(const json& v, const fs::path& shot) {
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v["console_errors"], json::array());
  EXPECT_EQ(v["page_errors"], json::array());
  EXPECT_EQ(v["dialogs"], json::array()) << "no alert fired";
  EXPECT_EQ(v["requests_before_click"], json::array()) << "no network";
  EXPECT_EQ(v["img_elements"], 0);
  EXPECT_EQ(v["title"], "shop & <co> · history");

  // One chart per stage, every commit a point.
  ASSERT_EQ(v["sections"].size(), k_stages.size());
  std::vector<std::string> labels;
  for (int c = 0; c < k_commits; ++c) labels.push_back(sha_of(c).substr(0, 7));
  for (std::size_t s = 0; s < k_stages.size(); ++s) {
    const json& section = v["sections"][s];
    SCOPED_TRACE(k_stages[s]);
    EXPECT_EQ(section["stage"], k_stages[s]);
    EXPECT_EQ(section["heading"], k_stages[s]);
    EXPECT_EQ(section["canvases"], 1);
    EXPECT_EQ(section["chart"], true);
    EXPECT_EQ(section["visible"], true);
    EXPECT_EQ(section["labels"], json(labels));
    ASSERT_EQ(section["datasets"].size(), 4u);
    EXPECT_EQ(section["datasets"][0]["data"], json(medians(wall_median, static_cast<int>(s))));
    std::vector<double> lows = medians(wall_median, static_cast<int>(s));
    for (double& x : lows) x -= 2;
    EXPECT_EQ(section["datasets"][1]["data"], json(lows)) << "the band's lower edge";
    EXPECT_EQ(section["y_title"], "wall_ms (ms)");
    // The regression marker: only orders' commit 16.
    const json& markers = section["datasets"][3]["data"];
    ASSERT_EQ(markers.size(), static_cast<std::size_t>(k_commits));
    for (int c = 0; c < k_commits; ++c) {
      if (s == 0 && c == k_regression_at) {
        EXPECT_EQ(markers[c], wall_median(0, c));
      } else {
        EXPECT_TRUE(markers[c].is_null()) << c;
      }
    }
  }

  // The hostile subject is text in the commit list (newest first), and nothing ran.
  ASSERT_EQ(v["commit_rows"].size(), static_cast<std::size_t>(k_commits));
  const json& hostile_row = v["commit_rows"][k_commits - 1 - k_hostile_at];
  EXPECT_EQ(hostile_row["cells"][0], sha_of(k_hostile_at).substr(0, 7));
  EXPECT_EQ(hostile_row["cells"][2], k_hostile);
  EXPECT_EQ(hostile_row["link"], std::string(k_repo) + "/commit/" + sha_of(k_hostile_at));
  EXPECT_EQ(v["commit_rows"][k_commits - 1 - k_regression_at]["cells"][3], "orders: wall_ms");

  // Hovering the last point: its commit, value and date.
  const json& tip = v["tooltip"];
  int last = k_commits - 1;
  EXPECT_EQ(tip["hovered"], last);
  // Every dataset's point of that commit is active (the band's edges too); the tooltip shows
  // the median's.
  ASSERT_FALSE(tip["active"].empty());
  EXPECT_EQ(tip["active"][0], (json{{"dataset", 0}, {"index", last}}));
  for (const auto& a : tip["active"]) EXPECT_EQ(a["index"], last);
  EXPECT_EQ(tip["title"], json::array({sha_of(last).substr(0, 7) + " shop: change 23"}));
  ASSERT_FALSE(tip["body"].empty());
  EXPECT_EQ(tip["body"][0], "median 43.0 ms");
  EXPECT_EQ(tip["body"][1], "range 41.0 ms – 45.0 ms over 3 cold runs");
  EXPECT_EQ(tip["footer"], json::array({"2026-11-24 09:23:00 UTC · click to open the commit"}));

  // The metric select switches every chart in place.
  EXPECT_EQ(v["metric_options"],
            json::array({"wall_ms", "db_exec_ms", "db_queries", "cart_items"}));
  EXPECT_EQ(v["switched_to"], "db_exec_ms");
  ASSERT_EQ(v["after_switch"].size(), k_stages.size());
  for (std::size_t s = 0; s < k_stages.size(); ++s) {
    EXPECT_EQ(v["after_switch"][s]["datasets"][0]["data"],
              json(medians(exec_median, static_cast<int>(s))));
    EXPECT_EQ(v["after_switch"][s]["y_title"], "db_exec_ms (ms)");
    for (const auto& marker : v["after_switch"][s]["datasets"][3]["data"])
      EXPECT_TRUE(marker.is_null());
  }

  // Unchecking the last stage hides its section only.
  EXPECT_EQ(v["stage_boxes"], json(k_stages));
  EXPECT_EQ(v["unchecked"], "checkout");
  ASSERT_EQ(v["after_uncheck"].size(), k_stages.size());
  EXPECT_EQ(v["after_uncheck"][0]["visible"], true);
  EXPECT_EQ(v["after_uncheck"][1]["visible"], true);
  EXPECT_EQ(v["after_uncheck"][2]["visible"], false);

  // A click on a point opens its commit.
  EXPECT_EQ(v["clicked"], last);
  std::string commit = std::string(k_repo) + "/commit/" + sha_of(last);
  EXPECT_EQ(v["opened"], commit);
  // Chromium may ask twice (the new tab's first request and its retry), never for anything else.
  ASSERT_FALSE(v["click_requests"].empty());
  for (const auto& url : v["click_requests"]) EXPECT_EQ(url, commit);

  std::string png = slurp(shot);
  EXPECT_GT(png.size(), 10000u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

fs::path screenshot_in(const TempDir& dir) {
  const char* keep = std::getenv("COLDGATE_HISTORY_SCREENSHOT");
  return keep && *keep ? fs::absolute(keep) : dir / "shot.png";
}

TEST(HistoryPageBrowser, ChartsTooltipsControlsAndClicksRunAndTheDataStaysText) {
  TempDir dir;
  fs::path page =
      dir.write("index.html", history::page_html(shop_history(), options_with(real_chart_js())));
  fs::path shot = screenshot_in(dir);
  expect_shop_page(browse(page, shot), shot);
}

TEST(HistoryPageBrowser, AnEmptyPageLoadsCleanly) {
  TempDir dir;
  fs::path page = dir.write("index.html", history::page_html({}, options_with(real_chart_js())));
  json v = browse(page, dir / "shot.png");
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v["console_errors"], json::array());
  EXPECT_EQ(v["page_errors"], json::array());
  EXPECT_EQ(v["requests_before_click"], json::array());
  EXPECT_EQ(v["sections"], json::array());
  EXPECT_EQ(v["commit_rows"], json::array());
  EXPECT_EQ(v["empty_text"], "No records yet: coldgate history record adds one per commit.");
}

// --- the command ----------------------------------------------------------------------------

TEST(HistoryPageCommand, WithoutOutIsAUsageError) {
  TempDir dir;
  auto r = run_coldgate({"history", "page", "--store", dir.path().string()}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("-o DIR is required"), std::string::npos) << r.err;
}

TEST(HistoryPageCommand, WithoutChartJsSaysWhichPackageToInstall) {
  TempDir dir;
  auto r = run_coldgate(
      {"history", "page", "--store", (dir / "store").string(), "-o", (dir / "site").string()},
      dir.path(), "", {"COLDGATE_CHART_JS=" + (dir / "none.js").string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("apt-get install libjs-chart.js"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "site" / "index.html"));
}

// The whole command on a folder store as `history record` writes it (history::to_json), a bad
// file among the records, then the page in the browser.
TEST(HistoryPageCommand, FolderStoreToPageInTheBrowser) {
  TempDir dir;
  auto records = shop_history();
  // The files are named by SHA, so the store lists them in no order of time: the page sorts by
  // date. A record of another branch is left out by --branch.
  for (const auto& r : records)
    util::write_file_atomic(dir / "store" / history::file_name(r), history::to_json(r));
  Record other = records.back();
  other.commit = sha_of(99);
  other.branch = "feature";
  util::write_file_atomic(dir / "store" / history::file_name(other), history::to_json(other));
  util::write_file_atomic(dir / "store" / "broken.json", "{\"schema\": \"coldgate-history/1\"");
  auto r = run_coldgate({"history", "page", "--store", (dir / "store").string(), "--branch", "main",
                         "--repo-url", k_repo, "-o", (dir / "site").string()},
                        dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, (dir / "site" / "index.html").string() + "\n");
  EXPECT_NE(r.err.find("coldgate: warning: history page: skipped "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("broken.json"), std::string::npos) << r.err;
  std::string html = slurp(dir / "site" / "index.html");
  EXPECT_NE(html.find(slurp(history::chart_js_path())), std::string::npos)
      << "Debian's Chart.js, embedded as installed";
  EXPECT_NE(html.find(" * Released under the MIT License"), std::string::npos)
      << "its licence banner";
  json data = embedded_data(html);
  ASSERT_EQ(data["commits"].size(), static_cast<std::size_t>(k_commits));
  EXPECT_EQ(data["title"], "coldgate") << "no config: the default title";
  fs::path shot = dir / "shot.png";
  json v = browse(dir / "site" / "index.html", shot);
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v["console_errors"], json::array());
  EXPECT_EQ(v["page_errors"], json::array());
  EXPECT_EQ(v["dialogs"], json::array());
  EXPECT_EQ(v["requests_before_click"], json::array());
  EXPECT_EQ(v["sections"].size(), k_stages.size());
  EXPECT_EQ(v["commit_rows"][k_commits - 1 - k_hostile_at]["cells"][2], k_hostile);
  EXPECT_EQ(v["opened"], std::string(k_repo) + "/commit/" + sha_of(k_commits - 1));
}

// Without --repo-url the links come from the remote's URL, an scp-like one here.
TEST(HistoryPageCommand, LinksFollowTheRemoteWithoutRepoUrl) {
  TempDir dir;
  testing::run_git(dir.path(), {"init", "-q"});
  testing::run_git(dir.path(), {"remote", "add", "origin", "git@github.com:shop/app.git"});
  Record r = shop_history().front();
  util::write_file_atomic(dir / "store" / history::file_name(r), history::to_json(r));
  auto run = run_coldgate({"history", "page", "--store", "store", "-o", "site"}, dir.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json data = embedded_data(slurp(dir / "site" / "index.html"));
  ASSERT_EQ(data["commits"].size(), 1u);
  EXPECT_EQ(data["commits"][0]["url"], "https://github.com/shop/app/commit/" + r.commit);
}

}  // namespace
}  // namespace coldgate
