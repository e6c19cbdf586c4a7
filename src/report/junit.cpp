#include "report/junit.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "gate/gate.hpp"
#include "report/escape.hpp"
#include "results/format.hpp"
#include "report/table.hpp"

namespace coldgate::report {
namespace {

using namespace coldgate::results;

constexpr std::size_t k_max_message_bytes = 1'000;

std::string attr(std::string_view text) {
  return xml_text(utf8_prefix(text, k_max_message_bytes), true);
}

// How a case ended; its element in the XML: none (system-out), <failure>, <error>, <skipped>.
enum class Outcome { passed, failure, error, skipped };

const char* element(Outcome o) {
  switch (o) {
    case Outcome::failure: return "failure";
    case Outcome::error: return "error";
    case Outcome::skipped: return "skipped";
    case Outcome::passed: break;
  }
  return "";
}

struct Case {
  std::string name;
  std::string file;
  Outcome outcome = Outcome::passed;
  std::string type;
  std::string message;
  std::string body;  // failure/error text, or <system-out> when passing
};

struct Suite {
  std::string name;
  std::vector<Case> cases;
  std::size_t count(Outcome outcome) const {
    return static_cast<std::size_t>(std::count_if(
        cases.begin(), cases.end(), [&](const Case& c) { return c.outcome == outcome; }));
  }
};

Case verdict_case(const MetricVerdict& v) {
  std::string line =
      fmt::format("{} {}: {}{} ({} → {})", v.stage, v.metric, to_string(v.verdict),
                  v.ratio ? fmt::format(" {}", format_ratio(*v.ratio)) : "", value_or_dash(v.base_median, v.unit),
                  value_or_dash(v.head_median, v.unit));
  std::string body = v.reason.empty() ? line : line + ": " + v.reason;
  if (v.verdict == Verdict::regression) return {v.metric, "", Outcome::failure, "regression", line, body};
  return {v.metric, "", Outcome::passed, "", "", body};
}

using Verdicts = std::map<std::string, std::vector<const MetricVerdict*>>;

Suite stage_suite(const StageResult& s, const Results& r, Verdicts& verdicts) {
  Suite suite{s.name, {}};
  if (s.failed()) {
    suite.cases.push_back(
        {"run", "", Outcome::error, "stage failed", results::failure_summary(s.error), s.error});
  }
  if (r.gate) {
    for (const MetricVerdict* v : verdicts[s.name]) suite.cases.push_back(verdict_case(*v));
    // A statement that regressed fails like a metric; the others are in results.json.
    for (const auto& v : r.gate->statements) {
      if (v.stage != s.name || v.verdict != Verdict::regression) continue;
      std::string line = fmt::format("{} statement `{}`: regression", v.stage, v.query);
      suite.cases.push_back({"statement " + (v.head ? v.head->queryid : v.base->queryid), "",
                             Outcome::failure, "regression", line, line + ": " + v.reason});
    }
  } else {
    for (const auto& [name, m] : s.metrics) {
      if (m.cold.empty()) continue;
      auto [lo, hi] = std::minmax_element(m.cold.begin(), m.cold.end());
      suite.cases.push_back(
          {name, "", Outcome::passed, "", "",
           fmt::format("median {} ({} – {}) over {} cold run{}",
                       format_value(median(m.cold), m.unit), format_value(*lo, m.unit),
                       format_value(*hi, m.unit), m.cold.size(), m.cold.size() == 1 ? "" : "s")});
    }
  }
  if (s.snapshot) {
    const SnapshotResult& sn = *s.snapshot;
    bool ok = passes(sn.status);
    std::string message =
        sn.message.empty() ? "snapshot " + std::string(to_string(sn.status)) : sn.message;
    std::string body = ok ? "snapshot " + std::string(to_string(sn.status)) + ": " + sn.path
                          : message + (sn.pending.empty() ? "" : "\ncandidate: " + sn.pending) +
                                (sn.diff.empty() ? "" : "\n\n" + sn.diff);
    suite.cases.push_back({"snapshot", sn.path, ok ? Outcome::passed : Outcome::failure,
                           "snapshot " + std::string(to_string(sn.status)), message, body});
  }
  return suite;
}

// A run that stopped: the setup steps as run and the one that failed (or the phase it stopped
// in), then each selected stage it did not run, skipped with the reason.
std::vector<Suite> stopped_suites(const Results& r) {
  const Stopped& x = *r.stopped;
  std::string summary = results::failure_summary(x.error);
  std::string place = x.where.empty() ? "" : " at " + x.where;
  const Outcome outcome = x.exit_code == 1 ? Outcome::failure : Outcome::error;
  std::vector<Suite> out;
  if (x.phase == results::StopPhase::setup || !r.setup.empty()) {
    Suite setup{"setup", {}};
    for (const auto& step : r.setup) {
      setup.cases.push_back({step.label, "", Outcome::passed, "", "",
                             fmt::format("{} in {}", step.label, format_value(step.wall_ms, "ms"))});
    }
    if (x.phase == results::StopPhase::setup) {
      std::string name = x.step.empty() ? "setup" : x.step;
      std::size_t colon = x.where.find(':');  // the file of "schema.sql:3:24"
      setup.cases.push_back({name, colon == std::string::npos ? "" : x.where.substr(0, colon), outcome,
                             x.exit_code == 1 ? "setup failed" : "setup error",
                             name + place + ": " + summary,
                             (x.where.empty() ? "" : x.where + ": ") + x.error});
    }
    out.push_back(std::move(setup));
  }
  if (x.phase != results::StopPhase::setup) {
    out.push_back({"coldgate", {{std::string(results::to_string(x.phase)), "", outcome, "run stopped",
                                 gate::stopped_verdict(x),
                                 (x.where.empty() ? "" : x.where + ": ") + x.error}}});
  }
  return out;
}

}  // namespace

std::string junit_xml(const Results& r) {
  // The gate's verdicts by stage, in their order: a run may have thousands of stages.
  Verdicts verdicts;
  if (r.gate) {
    for (const auto& v : r.gate->metrics) verdicts[v.stage].push_back(&v);
  }
  std::vector<Suite> suites;
  if (r.stopped) suites = stopped_suites(r);
  for (const auto& s : r.stages) suites.push_back(stage_suite(s, r, verdicts));
  if (r.stopped) {
    for (const auto& name : r.stopped->not_run) {
      suites.push_back({name, {{"run", "", Outcome::skipped, "", not_run_reason(*r.stopped), ""}}});
    }
  }
  if (r.gate) {
    for (const auto& name : r.gate->stages_removed) {
      Suite suite{name, {}};
      for (const MetricVerdict* v : verdicts[name]) suite.cases.push_back(verdict_case(*v));
      if (suite.cases.empty())
        suite.cases.push_back({"stage", "", Outcome::passed, "", "", "removed: in the baseline only"});
      suites.push_back(std::move(suite));
    }
  }
  std::size_t tests = 0, failures = 0, errors = 0;
  for (const auto& s : suites) {
    tests += s.cases.size();
    failures += s.count(Outcome::failure);
    errors += s.count(Outcome::error);
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n",
                     attr("coldgate: " + r.title), tests, failures, errors);
  for (const auto& s : suites) {
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n",
        attr(s.name), s.cases.size(), s.count(Outcome::failure), s.count(Outcome::error),
        s.count(Outcome::skipped));
    for (const auto& c : s.cases) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\"{}>\n", attr(s.name),
                         attr(c.name), c.file.empty() ? "" : " file=\"" + attr(c.file) + "\"");
      if (c.outcome == Outcome::skipped) {
        out += fmt::format("      <skipped message=\"{}\"/>\n", attr(c.message));
      } else if (c.outcome == Outcome::passed) {
        out += fmt::format("      <system-out>{}</system-out>\n", xml_text(c.body));
      } else {
        out += fmt::format("      <{0} type=\"{1}\" message=\"{2}\">{3}</{0}>\n", element(c.outcome),
                           attr(c.type), attr(c.message), xml_text(c.body));
      }
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace coldgate::report
