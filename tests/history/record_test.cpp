// The history record (reduce, reader, writer) and the history baseline: what `history record`
// keeps of a run, what a file must hold to be read, and how N records become the gate's base.
#include <gtest/gtest.h>

#include "gate/gate.hpp"
#include "history/baseline.hpp"
#include "history/record.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::history {
namespace {

using results::Metric;
using results::Results;
using results::StageResult;

const std::string k_sha_a = std::string(40, 'a');
const std::string k_sha_b = std::string(40, 'b');

StageResult stage(const std::string& name, std::vector<double> wall_ms) {
  StageResult s;
  s.name = name;
  s.runs = static_cast<int>(wall_ms.size());
  s.metric("wall_ms", "ms").cold = std::move(wall_ms);
  s.metric("db_queries", "count").cold = {3, 3, 3};
  return s;
}

Results results_of(const std::string& commit, std::vector<StageResult> stages) {
  Results r;
  r.tool_version = "0.1.0";
  r.git.commit = commit;
  r.git.branch = "main";
  r.environment.provider = "local";
  r.environment.cpu_model = "test cpu";
  r.environment.postgres_version_num = 150008;
  r.stages = std::move(stages);
  return r;
}

Record record_of(const std::string& commit, std::vector<StageResult> stages,
                 const std::string& date = "2026-11-01T00:00:00Z") {
  return reduce(results_of(commit, std::move(stages)), {k_sha_b, "subject of " + commit, date},
                "main", "0123456789abcdef", "2026-11-02T00:00:00Z", "results.json");
}

std::string sha(int i) {
  std::string s = std::to_string(i);
  return std::string(40 - s.size(), 'c') + s;
}

// `text` with the first `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string message_of(const std::string& text) {
  try {
    from_json(text, "h.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.message();
  }
  return "(read without error)";
}

TEST(HistoryRecord, KeepsEverySampleAndTheRegressionsOfTheRunsOwnGate) {
  Results r = results_of(k_sha_a, {stage("load", {10, 12, 11}), stage("steady", {1, 1, 1})});
  r.stages[0].queries.push_back({});  // left out of the record
  r.gate.emplace();
  r.gate->metrics.push_back({"load", "wall_ms", "ms", results::Verdict::regression, 1, 11, 11, ""});
  r.gate->metrics.push_back({"steady", "wall_ms", "ms", results::Verdict::same, 1, 1, 1, ""});
  Record rec = reduce(r, {k_sha_b, "Make load fast", "2026-11-01T10:00:00Z"}, "", "fp",
                      "2026-11-01T11:00:00Z", "results.json");
  EXPECT_EQ(rec.commit, k_sha_a);
  EXPECT_EQ(rec.parent, k_sha_b);
  EXPECT_EQ(rec.branch, "main");  // the results' own when none is given
  EXPECT_EQ(rec.subject, "Make load fast");
  ASSERT_EQ(rec.stages.size(), 2u);
  EXPECT_EQ(rec.stages[0].find("wall_ms")->cold, (std::vector<double>{10, 12, 11}));
  EXPECT_EQ(rec.stages[0].regressions, std::vector<std::string>{"wall_ms"});
  EXPECT_TRUE(rec.stages[1].regressions.empty());
  EXPECT_EQ(file_name(rec), k_sha_a + ".json");
}

TEST(HistoryRecord, RefusesResultsWithoutACommitOrOfARunThatStopped) {
  Results r = results_of("", {stage("load", {1})});
  try {
    reduce(r, {}, "main", "fp", "now", "out/results.json");
    FAIL() << "no commit was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "out/results.json");
    EXPECT_NE(std::string(e.what()).find("name no commit"), std::string::npos) << e.what();
  }
  r.git.commit = k_sha_a;
  r.stopped = results::Stopped{1, "setup", "sql schema.sql", "schema.sql:3:1", "syntax error", {}};
  try {
    reduce(r, {}, "main", "fp", "now", "out/results.json");
    FAIL() << "a stopped run was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stopped in its setup phase"), std::string::npos) << e.what();
  }
}

TEST(HistoryRecord, WritesByteStableJsonThatReadsBackTheSame) {
  Record rec = record_of(k_sha_a, {stage("load", {10.25, 12, 11}), stage("b", {1, 2, 3})});
  rec.subject = "<img src=x onerror=alert(1)> \"quoted\" ünïcode";
  rec.stages[1].failed = true;
  rec.stages[1].snapshot = "changed";
  rec.stages[0].settings = {{"jit", "off"}};
  const std::string once = to_json(rec);
  EXPECT_EQ(once.rfind("{\n  \"schema\": \"coldgate-history/1\",\n", 0), 0u) << once;
  EXPECT_EQ(once.back(), '\n');
  const Record back = from_json(once, "x.json");
  EXPECT_EQ(to_json(back), once);
  EXPECT_EQ(back.subject, rec.subject);
  EXPECT_TRUE(back.stages[1].failed);
  EXPECT_EQ(back.stages[1].snapshot, "changed");
  EXPECT_EQ(back.stages[0].settings.at("jit"), "off");
  EXPECT_EQ(back.stages[0].find("wall_ms")->cold, (std::vector<double>{10.25, 12, 11}));
  EXPECT_EQ(back.environment.postgres_version_num, 150008);
}

TEST(HistoryRecord, AFileThatIsNotAValidRecordIsRefusedSayingWhat) {
  const std::string good = to_json(record_of(k_sha_a, {stage("load", {1, 2, 3})}));
  EXPECT_NE(message_of("{\"schema\": \"coldgate-history/1\", \"commit\": ").find("not JSON at byte"),
            std::string::npos);
  EXPECT_EQ(message_of("[1, 2"), "h.json: not JSON at byte 6: not a coldgate history file");
  EXPECT_EQ(message_of("[]"), "h.json: the document is array (expected an object): not a coldgate "
                              "history file");
  EXPECT_EQ(message_of("{\"name\": \"package.json\"}"),
            "h.json: no \"schema\" member: not a coldgate history file");
  EXPECT_EQ(message_of(replaced(good, "history/1", "history/2")),
            "h.json: schema coldgate-history/2 is not coldgate-history/1: written by a newer "
            "coldgate; upgrade coldgate to read it");
  EXPECT_EQ(message_of(replaced(good, "history/1", "history/x")),
            "h.json: schema coldgate-history/x is not coldgate-history/1: not a history file "
            "this coldgate can read");
  EXPECT_EQ(message_of(replaced(good, "coldgate-history/1", "coldgate-results/1")), "h.json: schema \"coldgate-results/1\": not a coldgate history file");
  EXPECT_EQ(message_of(replaced(good, k_sha_a, "HEAD")), "h.json: commit: \"HEAD\" is not a full commit SHA");
  const std::string first_sample = "\"cold\": [\n            1";
  EXPECT_EQ(message_of(replaced(good, first_sample, "\"cold\": [\n            -1")),
            "h.json: stages[0].metrics.wall_ms.cold[0]: is -1: a time or size cannot be negative");
  EXPECT_EQ(message_of(replaced(good, first_sample, "\"cold\": [\n            \"1\"")),
            "h.json: stages[0].metrics.wall_ms.cold[0]: is string (expected a number)");
  std::string no_stages = good.substr(0, good.find(",\n  \"stages\"")) + "\n}\n";
  EXPECT_EQ(message_of(no_stages), "h.json: stages: missing");
  std::string twice = to_json(record_of(k_sha_a, {stage("load", {1}), stage("load2", {1})}));
  EXPECT_EQ(message_of(replaced(twice, "\"load2\"", "\"load\"")), "h.json: stages[1].name: stage \"load\" appears twice");
  EXPECT_EQ(message_of(replaced(good, "\"kind\": \"sql\"", "\"kind\": \"shell\"")), "h.json: stages[0].kind: is \"shell\" (expected sql or command)");
  EXPECT_EQ(message_of(std::string(17u << 20, ' ')),
            "h.json: 17825792 bytes: larger than any history file (16 MiB at most); not a "
            "coldgate history file");
}

TEST(HistoryBaseline, ParsesHistoryAndHistoryColonN) {
  EXPECT_EQ(parse_history_baseline("history"), 5);
  EXPECT_EQ(parse_history_baseline("history:12"), 12);
  EXPECT_EQ(parse_history_baseline("base/results.json"), std::nullopt);
  EXPECT_EQ(parse_history_baseline("historyfile.json"), std::nullopt);
  for (const char* bad : {"history:", "history:0", "history:x", "history:101", "history:5x"}) {
    try {
      parse_history_baseline(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), "--baseline");
      EXPECT_NE(std::string(e.what()).find("history:N with N from 1 to 100"), std::string::npos);
    }
  }
}

TEST(HistoryBaseline, IsTheMedianOfMediansWithTheRangeOfAllSamples) {
  std::vector<Record> used = {
      record_of(sha(1), {stage("load", {10, 11, 40})}),  // median 11, one slow outlier
      record_of(sha(2), {stage("load", {12, 12, 13})}),  // median 12
      record_of(sha(3), {stage("load", {9, 30, 31}), stage("only-new", {5, 5, 5})}),  // median 30
  };
  used[1].stages.push_back(used[1].stages[0]);
  used[1].stages[1].name = "broken";
  used[1].stages[1].failed = true;
  Results base = baseline_results(used);
  EXPECT_EQ(base.git.commit, sha(3));  // the newest names the base
  ASSERT_EQ(base.stages.size(), 3u);
  EXPECT_EQ(base.stages[0].name, "load");
  EXPECT_EQ(base.stages[0].find("wall_ms")->cold, (std::vector<double>{9, 12, 40}));
  EXPECT_EQ(base.stages[0].find("db_queries")->cold, (std::vector<double>{3, 3, 3}));
  EXPECT_EQ(base.stages[1].name, "only-new");
  EXPECT_EQ(base.stages[2].name, "broken");
  EXPECT_TRUE(base.stages[2].failed());
  EXPECT_NE(base.stages[2].error.find("failed in every recorded result"), std::string::npos);
}

TEST(HistoryBaseline, GatesAsDocumented) {
  std::vector<Record> used;
  for (int i = 1; i <= 5; ++i) {
    used.push_back(record_of(sha(i), {stage("load", {50.0 + i, 52.0 + i, 51.0 + i})}));
  }
  const Results base = baseline_results(used);
  const gate::Thresholds thresholds;
  auto verdict = [&](std::vector<double> head_ms) {
    Results head = results_of(k_sha_a, {stage("load", std::move(head_ms))});
    for (const auto& m : gate::compare(head, base, "history:5", thresholds).metrics) {
      if (m.metric == "wall_ms") return std::string(results::to_string(m.verdict));
    }
    return std::string("no verdict");
  };
  EXPECT_EQ(verdict({600, 610, 620}), "regression");  // 11× the median of medians (54)
  EXPECT_EQ(verdict({52, 54, 56}), "same");           // A/A
  // 11× the median, but one head run is as fast as the slowest recorded sample: the ranges
  // meet, so it is not proven.
  used[2].stages[0].metrics[0].second.cold = {53, 54, 600};
  const Results wide = baseline_results(used);
  Results head = results_of(k_sha_a, {stage("load", {590, 600, 620})});
  for (const auto& m : gate::compare(head, wide, "history:5", thresholds).metrics) {
    if (m.metric == "wall_ms") {
      EXPECT_EQ(m.verdict, results::Verdict::slower) << m.reason;
    }
  }
}

TEST(HistoryBaseline, SelectsTheNewestRecordsReachableFromHeadAndNotHeadItself) {
  testing::TempDir repo;
  testing::run_git(repo.path(), {"init", "-q"});
  std::vector<std::string> commits;
  for (int i = 0; i < 8; ++i) {
    repo.write("f", std::to_string(i));
    testing::run_git(repo.path(), {"add", "f"});
    testing::run_git(repo.path(), {"commit", "-qm", "c" + std::to_string(i)});
    commits.push_back(testing::run_git(repo.path(), {"rev-parse", "HEAD"}));
  }
  std::vector<Record> records;
  // Dates that lie: the ancestry decides, not the clock.
  for (int i : {1, 2, 4, 5, 7}) {
    records.push_back(record_of(commits[i], {stage("load", {1})},
                                "2026-01-0" + std::to_string(9 - i) + "T00:00:00Z"));
  }
  records.push_back(record_of(sha(99), {stage("load", {1})}));  // not an ancestor
  records.back().branch = "main";
  auto names = [](const std::vector<Record>& used) {
    std::vector<std::string> out;
    for (const auto& r : used) out.push_back(r.commit);
    return out;
  };
  EXPECT_EQ(names(select(records, repo.path(), commits[7], "", 3)),
            (std::vector<std::string>{commits[2], commits[4], commits[5]}));
  EXPECT_EQ(names(select(records, repo.path(), commits[4], "", 5)),
            (std::vector<std::string>{commits[1], commits[2]}));
  records[0].branch = "feature";
  EXPECT_EQ(names(select(records, repo.path(), commits[7], "main", 5)),
            (std::vector<std::string>{commits[2], commits[4], commits[5]}));
  // Outside a checkout: the newest commit dates (the one that is no ancestor is newest).
  testing::TempDir elsewhere;
  EXPECT_EQ(names(select(records, elsewhere.path(), commits[7], "", 2)),
            (std::vector<std::string>{commits[1], sha(99)}));
  // From ab's base commit: its own record is the newest point, the rest as before.
  EXPECT_EQ(names(select(records, repo.path(), commits[5], "", 3, Start::included)),
            (std::vector<std::string>{commits[2], commits[4], commits[5]}));
  EXPECT_EQ(names(select(records, repo.path(), commits[5], "", 3, Start::excluded)),
            (std::vector<std::string>{commits[1], commits[2], commits[4]}));
  EXPECT_EQ(names(select(records, repo.path(), commits[6], "", 3, Start::included)),
            (std::vector<std::string>{commits[2], commits[4], commits[5]}))
      << "a commit without a record starts the walk all the same";
  EXPECT_EQ(names(select(records, elsewhere.path(), commits[1], "", 2, Start::included)),
            (std::vector<std::string>{commits[1], sha(99)}))
      << "no ancestry: the newest dates, the commit itself among them";
  EXPECT_EQ(names(select(records, elsewhere.path(), commits[1], "", 2, Start::excluded)),
            (std::vector<std::string>{commits[2], sha(99)}));
}

TEST(HistoryBaseline, TheTrendHasEveryUsedCommitAndHead) {
  std::vector<Record> used = {record_of(sha(1), {stage("load", {10, 11, 12})}),
                              record_of(sha(2), {stage("other", {1})})};
  Results head = results_of(k_sha_a, {stage("load", {20, 21, 22})});
  StageResult command;
  command.name = "cmd";
  command.metric("own_ms", "ms").warm = {4, 6};
  head.stages.push_back(command);
  auto t = trend(used, head, "git:coldgate-history", 5);
  EXPECT_EQ(t.store, "git:coldgate-history");
  EXPECT_EQ(t.asked, 5);
  ASSERT_EQ(t.commits.size(), 2u);
  EXPECT_EQ(t.commits[0].commit, sha(1));
  EXPECT_EQ(t.commits[0].subject, "subject of " + sha(1));
  ASSERT_EQ(t.series.size(), 2u);
  EXPECT_EQ(t.series[0].stage, "load");
  EXPECT_EQ(t.series[0].metric, "wall_ms");
  EXPECT_EQ(t.series[0].medians, (std::vector<std::optional<double>>{11, std::nullopt}));
  EXPECT_EQ(t.series[0].head, 21);
  EXPECT_EQ(t.series[1].metric, "own_ms");  // no wall_ms: the first metric with samples
  EXPECT_EQ(t.series[1].head, 5);
}

}  // namespace
}  // namespace coldgate::history

namespace coldgate::history {
namespace {

// The fuzz target's invariant on its seed corpus, in every build: a file reads to a record
// that writes and reads back to the same text, or is refused as a usage error naming it.
TEST(HistoryRecord, TheFuzzCorpusReadsOrIsRefusedByName) {
  int read = 0;
  int refused = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::source_dir() / "tests/fuzz/corpus/history")) {
    const std::string name = entry.path().filename().string();
    const std::string text = testing::slurp(entry.path());
    try {
      const std::string once = to_json(from_json(text, name));
      EXPECT_EQ(to_json(from_json(once, name)), once) << name;
      ++read;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage) << name;
      EXPECT_EQ(e.where(), name);
      ++refused;
    }
  }
  EXPECT_GE(read, 1);
  EXPECT_GE(refused, 2);
}

TEST(HistoryRecord, ANumberBeyondDoubleIsRefusedNotInfinite) {
  const std::string text = testing::slurp(testing::source_dir() /
                                          "tests/fuzz/corpus/history/huge-number.json");
  EXPECT_EQ(message_of(text),
            "h.json: holds a number beyond the range of a double: not a coldgate history file");
}

}  // namespace
}  // namespace coldgate::history
