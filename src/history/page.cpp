// The dashboard: one HTML file that opens from disk. The page's own code (k_page_script) reads
// the data from a JSON script element and builds the DOM with createElement/textContent only;
// Chart.js (Debian's libjs-chart.js, embedded as given) draws the charts.
#include "history/page.hpp"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "results/format.hpp"
#include "util/text.hpp"

namespace coldgate::history {
namespace {

using nlohmann::json;

// The metrics the dashboard offers first (wall time, then the server-side figures a regression
// is usually explained by); the others follow in the reports' order, then by name.
constexpr std::string_view k_first_metrics[] = {"wall_ms", "db_exec_ms", "db_jit_ms", "db_queries"};

std::size_t metric_rank(const std::string& name) {
  std::size_t rank = 0;
  for (std::string_view m : k_first_metrics) {
    if (m == name) return rank;
    ++rank;
  }
  for (std::string_view m : results::known_metric_order()) {
    if (m == name) return rank;
    ++rank;
  }
  return rank;
}

bool is_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// Only web addresses become links: a `javascript:` or `data:` URL from a config or a remote
// must not turn a click into script.
bool is_web_url(std::string_view url) {
  std::string lower = util::lower(std::string(url.substr(0, 8)));
  return lower.starts_with("https://") || lower.starts_with("http://");
}

std::string commit_url(const std::string& repo_url, const std::string& sha) {
  if (!is_web_url(repo_url) || !is_hex(sha)) return "";
  std::string base = repo_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/commit/" + sha;
}

// The stages in the newest record's order, then those only older records have (newest first).
std::vector<std::string> stage_order(const std::vector<Record>& records) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (auto r = records.rbegin(); r != records.rend(); ++r) {
    for (const auto& s : r->stages) {
      if (seen.insert(s.name).second) out.push_back(s.name);
    }
  }
  return out;
}

// Every metric any stage recorded, with the unit it was first seen with, in dashboard order.
std::vector<std::pair<std::string, std::string>> metric_order(const std::vector<Record>& records) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> seen;
  for (const auto& r : records) {
    for (const auto& s : r.stages) {
      for (const auto& [name, metric] : s.metrics) {
        if (seen.insert(name).second) out.emplace_back(name, metric.unit);
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    std::size_t ra = metric_rank(a.first);
    std::size_t rb = metric_rank(b.first);
    return ra != rb ? ra < rb : a.first < b.first;  // equal ranks: names no list knows
  });
  return out;
}

// One chart point: the cold samples' median and range (warm ones for a metric without cold
// samples, as the gate reads them); null when the commit has no samples of it.
json point(const StagePoint& stage, const std::string& metric_name) {
  const results::Metric* metric = stage.find(metric_name);
  if (!metric) return nullptr;
  const std::vector<double>& samples = metric->gated();
  if (samples.empty()) return nullptr;
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  double median = results::median(samples);
  bool regression = std::find(stage.regressions.begin(), stage.regressions.end(), metric_name) !=
                    stage.regressions.end();
  return json{{"median", median},
              {"min", *lo},
              {"max", *hi},
              {"text", results::format_value(median, metric->unit)},
              {"range", results::format_value(*lo, metric->unit) + " – " +
                            results::format_value(*hi, metric->unit)},
              {"samples", samples.size()},
              {"warm", metric->cold.empty()},
              {"regression", regression},
              {"failed", stage.failed}};
}

json page_data(const std::vector<Record>& records, const PageOptions& options) {
  json commits = json::array();
  for (const auto& r : records) {
    json regressions = json::array();
    for (const auto& s : r.stages) {
      for (const auto& m : s.regressions) regressions.push_back(s.name + ": " + m);
    }
    commits.push_back({{"sha", r.commit},
                       {"short", r.commit.substr(0, 7)},
                       {"subject", r.subject},
                       {"date", r.date},
                       {"branch", r.branch},
                       {"url", commit_url(options.repo_url, r.commit)},
                       {"run_url", is_web_url(r.ci_run_url) ? r.ci_run_url : ""},
                       {"regressions", regressions}});
  }
  auto metrics = metric_order(records);
  json metric_list = json::array();
  for (const auto& [name, unit] : metrics) metric_list.push_back({{"name", name}, {"unit", unit}});
  json stages = json::array();
  for (const auto& name : stage_order(records)) {
    json series = json::array();
    for (const auto& [metric, unit] : metrics) {
      json points = json::array();
      bool any = false;
      for (const auto& r : records) {
        const StagePoint* s = r.find(name);
        json p = s ? point(*s, metric) : json(nullptr);
        any = any || !p.is_null();
        points.push_back(std::move(p));
      }
      if (any) series.push_back({{"metric", metric}, {"points", std::move(points)}});
    }
    stages.push_back({{"name", name}, {"series", std::move(series)}});
  }
  return json{{"title", options.title},
              {"generated_at", options.generated_at},
              {"version", COLDGATE_VERSION},
              {"commits", std::move(commits)},
              {"metrics", std::move(metric_list)},
              {"stages", std::move(stages)}};
}

// JSON that can sit inside <script type="application/json">: `<`, `>` and `&` as \u escapes, so
// neither `</script>` nor `<!--` can end or bend the element (HTML's script data states), and
// U+2028/U+2029 too, which older JavaScript parsers took for line ends. Only strings can hold
// these characters, where the escapes mean the same.
std::string script_json(const json& data) {
  std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

// A script's text as the body of an inline <script>: `</script` would end the element and `<!--`
// would open HTML's escaped state; in JavaScript source `<\/` and `<\!--` read the same inside the
// strings, comments and regular expressions such text can stand in.
std::string inline_script(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '!')) {
      std::string next = util::lower(std::string(text.substr(i + 1, 7)));
      if (next.starts_with("/script") || next.starts_with("!--")) {
        out += "<\\";
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

constexpr std::string_view k_style = R"css(
:root { color-scheme: light; --ink: #1d232b; --muted: #5b6570; --line: #d8dde3; --accent: #1f5fa8; --bad: #c0392b; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1200px; padding: 1.5rem; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: #fff; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 0 0 .5rem; }
.muted, footer { color: var(--muted); }
#controls { display: flex; flex-wrap: wrap; gap: .75rem 2rem; align-items: center; margin: 1rem 0 .5rem; }
#controls fieldset { border: 0; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
#controls legend { float: left; margin-right: .75rem; font-weight: 600; }
#controls label { white-space: nowrap; }
.metric-label { font-weight: 600; }
select { font: inherit; padding: .15rem .3rem; }
.legend { margin: .25rem 0 1rem; color: var(--muted); }
.swatch { display: inline-block; width: 1.6em; height: .8em; vertical-align: middle; margin: 0 .3em 0 .8em; }
.swatch.line { height: 3px; background: var(--accent); }
.swatch.band { background: rgba(31, 95, 168, .18); }
.swatch.marker { width: 0; height: 0; border: .45em solid transparent; border-bottom: .8em solid var(--bad); border-top: 0; }
section.stage { border-top: 1px solid var(--line); padding: 1rem 0; }
section.stage .note { margin: 0 0 .25rem; color: var(--muted); }
.chart-box { position: relative; height: 280px; }
table { border-collapse: collapse; width: 100%; margin-top: .5rem; }
th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; }
td.sha { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; white-space: nowrap; }
td.date { white-space: nowrap; }
td.regressions { color: var(--bad); }
a { color: var(--accent); }
.empty { font-size: 1.1rem; margin: 2rem 0; }
footer { border-top: 1px solid var(--line); margin-top: 2rem; padding-top: .75rem; font-size: .9rem; }
)css";

// The page's code. It reads #coldgate-data with JSON.parse and writes the DOM through
// createElement, textContent and property assignment only; Chart.js draws text on the canvas.
constexpr std::string_view k_page_script = R"js(
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("coldgate-data").textContent);
  var COLORS = { line: "#1f5fa8", band: "rgba(31, 95, 168, 0.18)", bad: "#c0392b" };

  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function link(url, text) {
    var a = el("a", "", text);
    a.href = url;  // page_html passes only http(s) addresses
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    return a;
  }
  function when(rfc3339) { return String(rfc3339).replace("T", " ").replace(/Z$/, " UTC"); }

  document.title = data.title + " · history";
  document.getElementById("title").textContent = data.title + " · history";
  var commits = data.commits;
  var footer = document.getElementById("footer");
  footer.textContent = "Generated by coldgate " + data.version + " (history page) at " +
      when(data.generated_at) + " from " + commits.length + " recorded commit" +
      (commits.length === 1 ? "" : "s") + ". Charts: Chart.js " + Chart.version + ".";
  if (commits.length === 0) return;

  var branches = [];
  commits.forEach(function (c) { if (branches.indexOf(c.branch) < 0) branches.push(c.branch); });
  document.getElementById("summary").textContent = commits.length + " commits on " +
      branches.join(", ") + ", " + when(commits[0].date) + " to " + when(commits[commits.length - 1].date) +
      ". Each point is one commit's cold runs.";

  var select = document.getElementById("metric");
  data.metrics.forEach(function (m) {
    var o = el("option", "", m.name + (m.unit ? " (" + m.unit + ")" : ""));
    o.value = m.name;
    select.appendChild(o);
  });
  function unitOf(name) {
    for (var i = 0; i < data.metrics.length; i++) if (data.metrics[i].name === name) return data.metrics[i].unit;
    return "";
  }
  function pointsOf(stage, metric) {
    for (var i = 0; i < stage.series.length; i++) if (stage.series[i].metric === metric) return stage.series[i].points;
    return commits.map(function () { return null; });
  }
  function datasets(points) {
    function pick(key) { return points.map(function (p) { return p ? p[key] : null; }); }
    return [
      { label: "cold median", data: pick("median"), borderColor: COLORS.line, backgroundColor: COLORS.line,
        borderWidth: 2, pointRadius: 3, pointHoverRadius: 5, tension: 0, fill: false, order: 1 },
      { label: "", data: pick("min"), borderWidth: 0, pointRadius: 0, pointHitRadius: 0, fill: false, order: 3 },
      { label: "min–max of the cold runs", data: pick("max"), borderWidth: 0, pointRadius: 0,
        pointHitRadius: 0, backgroundColor: COLORS.band, fill: 1, order: 3 },
      { label: "regression (the gate said so)", showLine: false, order: 0,
        data: points.map(function (p) { return p && p.regression ? p.median : null; }),
        pointStyle: "triangle", pointRadius: 9, pointHoverRadius: 10,
        borderColor: COLORS.bad, backgroundColor: COLORS.bad }
    ];
  }

  var stagesBox = document.getElementById("stages");
  var charts = document.getElementById("charts");
  var views = [];
  data.stages.forEach(function (stage, index) {
    var section = el("section", "stage");
    section.id = "stage-" + index;
    section.dataset.stage = stage.name;
    section.appendChild(el("h2", "", stage.name));
    var note = el("p", "note");
    section.appendChild(note);
    var box = el("div", "chart-box");
    var canvas = el("canvas");
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", "chart of " + stage.name);
    box.appendChild(canvas);
    section.appendChild(box);
    charts.appendChild(section);

    var label = el("label");
    var box2 = el("input");
    box2.type = "checkbox";
    box2.checked = true;
    box2.value = stage.name;
    box2.addEventListener("change", function () { section.hidden = !box2.checked; });
    label.appendChild(box2);
    label.appendChild(document.createTextNode(" " + stage.name));
    stagesBox.appendChild(label);

    var view = { stage: stage, note: note, points: [], chart: null };
    view.chart = new Chart(canvas, {
      type: "line",
      data: { labels: commits.map(function (c) { return c.short; }), datasets: [] },
      options: {
        animation: false,
        maintainAspectRatio: false,
        interaction: { mode: "index", intersect: false },
        scales: {
          x: { title: { display: true, text: "commit (oldest first)" }, ticks: { autoSkip: true, maxRotation: 60 } },
          y: { beginAtZero: true, title: { display: true, text: "" } }
        },
        plugins: {
          legend: { labels: {
            usePointStyle: true,
            filter: function (item) { return item.text !== ""; },
            sort: function (a, b) { return a.datasetIndex - b.datasetIndex; } } },
          tooltip: {
            filter: function (item) { return item.datasetIndex === 0; },
            callbacks: {
              title: function (items) {
                var c = commits[items[0].dataIndex];
                return c.short + " " + c.subject;
              },
              label: function (item) {
                var p = view.points[item.dataIndex];
                return p ? "median " + p.text : "not measured";
              },
              afterLabel: function (item) {
                var p = view.points[item.dataIndex];
                if (!p) return [];
                var lines = ["range " + p.range + " over " + p.samples + (p.warm ? " warm" : " cold") +
                    " run" + (p.samples === 1 ? "" : "s")];
                if (p.regression) lines.push("the gate said regression");
                if (p.failed) lines.push("the stage failed in this run");
                return lines;
              },
              footer: function (items) {
                var c = commits[items[0].dataIndex];
                return when(c.date) + (c.url ? " · click to open the commit" : "");
              }
            }
          }
        },
        onHover: function (event, active) {
          var i = active.length ? active[0].index : -1;
          event.native.target.style.cursor = i >= 0 && commits[i].url ? "pointer" : "default";
        },
        onClick: function (event, active) {
          if (!active.length) return;
          var c = commits[active[0].index];
          if (c.url) window.open(c.url, "_blank", "noopener");
        }
      }
    });
    views.push(view);
  });

  function show(metric) {
    var unit = unitOf(metric);
    views.forEach(function (view) {
      view.points = pointsOf(view.stage, metric);
      var measured = view.points.filter(function (p) { return p !== null; }).length;
      view.note.textContent = measured === 0 ? "No " + metric + " recorded for this stage."
          : metric + " over " + measured + " of " + commits.length + " commits";
      view.chart.data.datasets = datasets(view.points);
      view.chart.options.scales.y.title.text = metric + (unit ? " (" + unit + ")" : "");
      view.chart.update();
    });
  }
  select.addEventListener("change", function () { show(select.value); });
  if (data.metrics.length) show(data.metrics[0].name);

  var body = document.querySelector("#commits tbody");
  commits.slice().reverse().forEach(function (c) {
    var tr = el("tr");
    var sha = el("td", "sha");
    sha.appendChild(c.url ? link(c.url, c.short) : document.createTextNode(c.short));
    tr.appendChild(sha);
    tr.appendChild(el("td", "date", when(c.date)));
    tr.appendChild(el("td", "subject", c.subject));
    tr.appendChild(el("td", "regressions", c.regressions.join(", ")));
    var run = el("td", "run");
    if (c.run_url) run.appendChild(link(c.run_url, "CI run"));
    tr.appendChild(run);
    body.appendChild(tr);
  });
  document.getElementById("commit-list").hidden = false;
})();
)js";

}  // namespace

std::string chart_js_path() {
  const char* env = std::getenv("COLDGATE_CHART_JS");
  return env && *env ? env : "/usr/share/javascript/chart.js/chart.min.js";
}

std::string repository_web_url(std::string_view remote_url) {
  std::string_view url = util::trim(remote_url);
  std::string lower = util::lower(url.substr(0, 8));
  std::string scheme = "https://";
  std::string_view authority;
  std::string_view path;
  if (lower.starts_with("https://") || lower.starts_with("http://") ||
      lower.starts_with("ssh://")) {
    bool ssh = lower.starts_with("ssh://");
    if (lower.starts_with("http://")) scheme = "http://";
    std::string_view rest = url.substr(url.find("://") + 3);
    std::size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return "";
    authority = rest.substr(0, slash);
    path = rest.substr(slash + 1);
    if (auto at = authority.rfind('@'); at != std::string_view::npos)
      authority.remove_prefix(at + 1);
    if (auto colon = authority.find(':'); ssh && colon != std::string_view::npos) {
      authority = authority.substr(0, colon);  // ssh's port is no web port
    }
  } else {
    // scp-like syntax, [user@]host:path, when no slash comes before the colon (git-clone(1),
    // "GIT URLS"); otherwise it is a local path.
    std::size_t colon = url.find(':');
    if (colon == std::string_view::npos || url.find('/') < colon || url.find('@') > colon)
      return "";
    authority = url.substr(url.find('@') + 1, colon - url.find('@') - 1);
    path = url.substr(colon + 1);
  }
  std::string p(path);
  if (auto cut = p.find_first_of("?#"); cut != std::string::npos) p.resize(cut);
  while (!p.empty() && p.front() == '/') p.erase(0, 1);
  while (!p.empty() && p.back() == '/') p.pop_back();
  if (p.ends_with(".git")) p.resize(p.size() - 4);
  if (authority.empty() || p.empty()) return "";
  return scheme + std::string(authority) + "/" + p;
}

std::string page_html(const std::vector<Record>& records, const PageOptions& options) {
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Belt and braces for the escaping: inline script and style only, no network at all.
  html +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
      "base-uri 'none'; form-action 'none'\">\n";
  html += "<meta name=\"referrer\" content=\"no-referrer\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<meta name=\"generator\" content=\"coldgate history page\">\n";
  html += "<title>coldgate history</title>\n<style>";
  html += k_style;
  html += "</style>\n</head>\n<body>\n<header>\n<h1 id=\"title\">coldgate history</h1>\n";
  html += "<p id=\"summary\" class=\"muted\"></p>\n</header>\n";
  html +=
      "<noscript><p>This page draws its charts with JavaScript (Chart.js, embedded in the "
      "file): allow scripts to see them.</p></noscript>\n";
  if (records.empty()) {
    html +=
        "<p class=\"empty\" id=\"empty\">No records yet: <code>coldgate history record</code> "
        "adds one per commit.</p>\n";
  } else {
    html +=
        "<form id=\"controls\">\n<label><span class=\"metric-label\">Metric</span> "
        "<select id=\"metric\"></select></label>\n"
        "<fieldset id=\"stages\"><legend>Stages</legend></fieldset>\n</form>\n";
    html +=
        "<p class=\"legend\"><span class=\"swatch line\"></span>the cold median of each commit"
        "<span class=\"swatch band\"></span>the range of its cold runs (min to max)"
        "<span class=\"swatch marker\"></span>the gate said regression for this metric. "
        "Hover a point for the commit; click it to open the commit.</p>\n";
  }
  html += "<main id=\"charts\"></main>\n";
  html +=
      "<section id=\"commit-list\" hidden>\n<h2>Commits, newest first</h2>\n<table id=\"commits\">"
      "<thead><tr><th>commit</th><th>date</th><th>subject</th><th>regressions</th><th>run</th>"
      "</tr></thead><tbody></tbody></table>\n</section>\n";
  html += "<footer id=\"footer\"></footer>\n";
  html += "<script type=\"application/json\" id=\"coldgate-data\">";
  html += script_json(page_data(records, options));
  html += "</script>\n<script>\n";
  html += inline_script(options.chart_js);
  html += "\n</script>\n<script>";
  html += k_page_script;
  html += "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace coldgate::history
