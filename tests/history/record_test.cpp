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
  r.stopped = results::Stopped{1, results::StopPhase::setup, "sql schema.sql", "schema.sql:3:1", "syntax error", {}};
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

// A statement as measure::statement_table leaves it in results.json.
results::QueryStats statement(const std::string& text_id, const std::string& query, double calls,
                              double blocks_per_call, double exec_ms = 1) {
  results::QueryStats q;
  q.text_id = text_id;
  q.query = query;
  q.queryid = std::to_string(1000 + static_cast<int>(calls));
  q.calls = calls;
  q.rows = calls * 2;
  q.plan_ms = 0.25;
  q.exec_ms = exec_ms;
  q.blocks = blocks_per_call * calls;
  q.blocks_per_call = blocks_per_call;
  return q;
}

const std::string k_id_one = "0123456789abcdef";
const std::string k_id_each = "fedcba9876543210";
const std::string k_id_new = "00000000000000ff";

StageResult profiled(const std::string& name, std::vector<results::QueryStats> queries) {
  StageResult s = stage(name, {10, 11, 12});
  s.queries = std::move(queries);
  return s;
}

TEST(HistoryStatements, AProfiledStageKeepsItsStatementTableAndAnUnprofiledOneHasNone) {
  results::QueryStats q = statement(k_id_one, "select $1", 1, 4);
  q.total_cost = 12.5;
  q.jit_ms = 3;
  q.jit_functions = 7;
  StageResult quiet = stage("quiet", {1});  // profiled (db_queries), ran no statement
  StageResult unprofiled;
  unprofiled.name = "plain";
  unprofiled.metric("wall_ms", "ms").cold = {1};
  Record rec = record_of(k_sha_a, {profiled("load", {q}), quiet, unprofiled});
  ASSERT_TRUE(rec.stages[0].queries);
  ASSERT_EQ(rec.stages[0].queries->size(), 1u);
  const results::QueryStats& kept = rec.stages[0].queries->front();
  EXPECT_EQ(kept.text_id, k_id_one);
  EXPECT_EQ(kept.queryid, q.queryid);
  EXPECT_EQ(kept.jit_functions, 7);
  EXPECT_EQ(kept.blocks_per_call, 4);
  EXPECT_FALSE(kept.total_cost) << "a plan's estimate is not recorded";
  ASSERT_TRUE(rec.stages[1].queries);
  EXPECT_TRUE(rec.stages[1].queries->empty());
  EXPECT_FALSE(rec.stages[2].queries);
}

TEST(HistoryStatements, WriteInAFixedMemberOrderAndReadBackTheSame) {
  results::QueryStats q = statement(k_id_one, "select \"x\" from t where id = $1", 3, 2.5, 0.125);
  q.jit_ms = 0.5;
  q.jit_functions = 4;
  results::QueryStats old_style = statement("", "select 1", 1, 0);
  old_style.blocks.reset();  // results of a version that did not record blocks
  old_style.blocks_per_call.reset();
  StageResult unprofiled;
  unprofiled.name = "plain";
  unprofiled.metric("wall_ms", "ms").cold = {1};
  Record rec = record_of(k_sha_a, {profiled("load", {q, old_style}), unprofiled});
  const std::string once = to_json(rec);
  EXPECT_NE(once.find("      \"queries\": [\n"
                      "        {\n"
                      "          \"text_id\": \"0123456789abcdef\",\n"
                      "          \"query\": \"select \\\"x\\\" from t where id = $1\",\n"
                      "          \"queryid\": \"1003\",\n"
                      "          \"calls\": 3,\n"
                      "          \"rows\": 6,\n"
                      "          \"plan_ms\": 0.25,\n"
                      "          \"exec_ms\": 0.125,\n"
                      "          \"jit_ms\": 0.5,\n"
                      "          \"jit_functions\": 4,\n"
                      "          \"blocks\": 7.5,\n"
                      "          \"blocks_per_call\": 2.5\n"
                      "        },\n"),
            std::string::npos)
      << once;
  EXPECT_NE(once.find("\"blocks\": null,\n          \"blocks_per_call\": null\n"), std::string::npos)
      << once;
  // The unprofiled stage has no member at all: its bytes are what an older coldgate wrote.
  EXPECT_EQ(once.find("\"queries\"", once.find("\"plain\"")), std::string::npos) << once;
  const Record back = from_json(once, "x.json");
  EXPECT_EQ(to_json(back), once);
  ASSERT_TRUE(back.stages[0].queries);
  ASSERT_EQ(back.stages[0].queries->size(), 2u);
  const auto& b = back.stages[0].queries->at(0);
  EXPECT_EQ(b.text_id, k_id_one);
  EXPECT_EQ(b.query, q.query);
  EXPECT_EQ(b.queryid, "1003");
  EXPECT_EQ(b.calls, 3);
  EXPECT_EQ(b.rows, 6);
  EXPECT_EQ(b.plan_ms, 0.25);
  EXPECT_EQ(b.exec_ms, 0.125);
  EXPECT_EQ(b.jit_ms, 0.5);
  EXPECT_EQ(b.jit_functions, 4);
  EXPECT_EQ(b.blocks, 7.5);
  EXPECT_EQ(b.blocks_per_call, 2.5);
  EXPECT_FALSE(back.stages[0].queries->at(1).blocks);
  EXPECT_FALSE(back.stages[0].queries->at(1).blocks_per_call);
  EXPECT_EQ(back.stages[0].queries->at(1).text_id, "");
  EXPECT_FALSE(back.stages[1].queries);
}

TEST(HistoryStatements, OlderAndNewerRecordsReadBothWays) {
  // An older coldgate's record: no `queries` anywhere. It reads as "no table" and writes back
  // byte for byte.
  Record old_rec = record_of(k_sha_a, {stage("load", {1, 2, 3})});
  old_rec.stages[0].queries.reset();
  const std::string old_text = to_json(old_rec);
  EXPECT_EQ(old_text.find("\"queries\""), std::string::npos);
  const Record old_back = from_json(old_text, "old.json");
  EXPECT_FALSE(old_back.stages[0].queries);
  EXPECT_EQ(to_json(old_back), old_text);
  // A newer coldgate's members, in a stage and in a statement, are skipped (this coldgate's
  // own record reader is what an older one runs on our files: it knows no `queries` either).
  std::string newer = to_json(record_of(k_sha_a, {profiled("load", {statement(k_id_one, "q", 1, 1)})}));
  newer = replaced(newer, "\"text_id\": ", "\"plan_id\": {\"a\": [1]}, \"text_id\": ");
  newer = replaced(newer, "\"queries\": [", "\"cache\": \"x\", \"queries\": [");
  const Record back = from_json(newer, "new.json");
  ASSERT_TRUE(back.stages[0].queries);
  EXPECT_EQ(back.stages[0].queries->at(0).text_id, k_id_one);
  // `queries: null` is no table, as results.json readers treat null.
  std::string null_table = to_json(record_of(k_sha_a, {profiled("load", {})}));
  null_table = replaced(null_table, "\"queries\": []", "\"queries\": null");
  EXPECT_FALSE(from_json(null_table, "n.json").stages[0].queries);
}

TEST(HistoryStatements, AStatementTableThatIsNotValidIsRefusedByPath) {
  const std::string good = to_json(record_of(
      k_sha_a, {profiled("load", {statement(k_id_one, "select 1", 1, 1),
                                  statement(k_id_each, "select 2", 2, 1)})}));
  auto second = [&](const std::string& from, const std::string& to) {
    // The second statement's member (the first `from` after its text_id).
    std::string text = good;
    auto at = text.find(from, text.find(k_id_each));
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return message_of(text);
  };
  EXPECT_EQ(second("\"calls\": 2", "\"calls\": \"2\""),
            "h.json: stages[0].queries[1].calls: is string (expected a number)");
  EXPECT_EQ(second("\"calls\": 2", "\"calls\": -2"),
            "h.json: stages[0].queries[1].calls: is -2: a count, time or size cannot be negative");
  EXPECT_EQ(second("\"calls\": 2,", ""), "h.json: stages[0].queries[1].calls: missing");
  EXPECT_EQ(second("\"exec_ms\": 1", "\"exec_ms\": true"),
            "h.json: stages[0].queries[1].exec_ms: is boolean (expected a number)");
  EXPECT_EQ(second("\"blocks_per_call\": 1", "\"blocks_per_call\": [1]"),
            "h.json: stages[0].queries[1].blocks_per_call: is array (expected a number)");
  EXPECT_EQ(second("\"query\": \"select 2\"", "\"query\": 2"),
            "h.json: stages[0].queries[1].query: is number (expected a string)");
  EXPECT_EQ(second("\"queryid\": \"1002\"", "\"queryid\": \"12ab\""),
            "h.json: stages[0].queries[1].queryid: \"12ab\" is not a queryid (decimal digits)");
  EXPECT_EQ(message_of(replaced(good, k_id_each, "FEDCBA9876543210")),
            "h.json: stages[0].queries[1].text_id: \"FEDCBA9876543210\" is not 16 hex digits");
  EXPECT_EQ(message_of(replaced(good, "\"text_id\": \"" + k_id_one + "\"", "\"text_id\": 7")),
            "h.json: stages[0].queries[0].text_id: is number (expected a string)");
  const std::string table = good.substr(good.find("\"queries\": ["));
  std::string not_list = good.substr(0, good.find("\"queries\": [")) + "\"queries\": {}" +
                         table.substr(table.find("\n      ]") + 8);
  EXPECT_EQ(message_of(not_list), "h.json: stages[0].queries: is object (expected an array)");
  EXPECT_EQ(message_of(replaced(good, "\"queries\": [", "\"queries\": [1, ")),
            "h.json: stages[0].queries[0]: is number (expected an object)");
  // A negative queryid is a bigint as pg_stat_statements has it.
  EXPECT_EQ(second("\"queryid\": \"1002\"", "\"queryid\": \"-9223372036854775808\""),
            "(read without error)");
}

const results::QueryStats* find_statement(const StageResult& s, const std::string& query) {
  for (const auto& q : s.queries) {
    if (q.query == query) return &q;
  }
  return nullptr;
}

TEST(HistoryStatements, TheBaselineHasTheMedianOfEachStatementOverTheRecordsWithATable) {
  // "each": one call per account, 4, 6, then 5 accounts; blocks per call 3, 3, 4.
  // "one": once per run, 10 blocks, in every record; its exec time 1, 3, 2 ms.
  // "rare": only in the newest record: its median calls are 0 — base did not run it.
  // "half": in two of three records, twice: median 2; the third ran it 0 times.
  std::vector<Record> used = {
      record_of(sha(1), {profiled("load", {statement(k_id_one, "one", 1, 10, 1),
                                           statement(k_id_each, "each", 4, 3),
                                           statement("", "half", 2, 5)})}),
      record_of(sha(2), {profiled("load", {statement(k_id_one, "one", 1, 10, 3),
                                           statement(k_id_each, "each", 6, 3)})}),
      record_of(sha(3), {profiled("load", {statement(k_id_one, "one", 1, 10, 2),
                                           statement(k_id_each, "each", 5, 4),
                                           statement("", "half", 2, 5),
                                           statement(k_id_new, "rare", 30, 1)})}),
  };
  // A record without a table (an older coldgate's, or a run without the profile): it says
  // nothing of the statements, though its metrics count.
  used.insert(used.begin(), record_of(sha(0), {stage("load", {10, 11, 12})}));
  used.front().stages[0].queries.reset();
  // A failed stage's table is left out like its metrics.
  used.push_back(record_of(sha(4), {profiled("load", {statement(k_id_one, "one", 100, 100)})}));
  used.back().stages[0].failed = true;

  const Results base = baseline_results(used);
  ASSERT_EQ(base.stages.size(), 1u);
  const StageResult& s = base.stages[0];
  ASSERT_EQ(s.queries.size(), 3u);
  const results::QueryStats* one = find_statement(s, "one");
  const results::QueryStats* each = find_statement(s, "each");
  const results::QueryStats* half = find_statement(s, "half");
  ASSERT_TRUE(one && each && half);
  EXPECT_EQ(find_statement(s, "rare"), nullptr);
  EXPECT_EQ(one->text_id, k_id_one);
  EXPECT_EQ(one->calls, 1);
  EXPECT_EQ(one->exec_ms, 2);
  EXPECT_EQ(one->blocks, 10);
  EXPECT_EQ(one->blocks_per_call, 10);
  EXPECT_EQ(one->queryid, "1001");
  EXPECT_EQ(each->calls, 5);
  EXPECT_EQ(each->rows, 10);
  EXPECT_EQ(each->blocks, 18);             // 12, 18, 20
  EXPECT_EQ(each->blocks_per_call, 3);     // 3, 3, 4
  EXPECT_EQ(each->plan_ms, 0.25);
  EXPECT_EQ(half->calls, 2);               // 2, 0, 2
  EXPECT_EQ(half->blocks, 10);             // 10, 0, 10
  EXPECT_EQ(half->blocks_per_call, 5);     // only the records that called it
  EXPECT_EQ(half->text_id, "");
  // results.json's order: plan + execution time, highest first.
  EXPECT_EQ(s.queries[0].query, "one");
  EXPECT_FALSE(s.queries[0].total_cost);
}

TEST(HistoryStatements, OneTextIsOneStatementAndAnOlderRecordsTextFindsItsId) {
  // Two queryids of one text (two roles) are summed, as the gate sums them; blocks per call
  // weighted by their calls.
  results::QueryStats a = statement(k_id_each, "each", 3, 2);
  results::QueryStats b = statement(k_id_each, "each", 1, 6);
  b.queryid = "-77";
  // An older record has no text_id: its text pairs it with the newer records' statement.
  results::QueryStats old_style = statement("", "each", 4, 3);
  old_style.blocks.reset();
  old_style.blocks_per_call.reset();
  std::vector<Record> used = {record_of(sha(1), {profiled("load", {old_style})}),
                              record_of(sha(2), {profiled("load", {a, b})}),
                              record_of(sha(3), {profiled("load", {a, b})})};
  const Results base = baseline_results(used);
  ASSERT_EQ(base.stages[0].queries.size(), 1u);
  const results::QueryStats& q = base.stages[0].queries[0];
  EXPECT_EQ(q.text_id, k_id_each);
  EXPECT_EQ(q.calls, 4);
  EXPECT_EQ(q.queryid, "1003");  // the newest record's id with the most calls
  EXPECT_EQ(q.blocks, 12);       // the records that recorded blocks: 6 + 6
  EXPECT_EQ(q.blocks_per_call, 3);  // (3 × 2 + 1 × 6) / 4
}

TEST(HistoryStatements, AHistoryBaselineGivesTheGateTheVerdictsOfAResultsFileBaseline) {
  const std::vector<results::QueryStats> table = {
      statement(k_id_one, "select * from config", 1, 40, 5),
      statement(k_id_each, "select * from account where id = $1", 24, 3),
      statement(k_id_new, "select 1", 1, 0),
  };
  Results file_base = results_of(sha(1), {profiled("load", table)});
  // Through a written and read record, as `history record` and `run --baseline history` do.
  Record rec = from_json(to_json(reduce(file_base, {k_sha_b, "s", "2026-11-01T00:00:00Z"}, "main",
                                        "fp", "2026-11-02T00:00:00Z", "results.json")),
                         "r.json");
  const Results history_base = baseline_results({rec, rec, rec});
  const gate::Thresholds thresholds;
  auto verdicts = [&](const Results& head, const Results& base) {
    std::vector<std::string> out;
    for (const auto& v : gate::compare(head, base, "b", thresholds).statements) {
      out.push_back(v.query + ": " + std::string(results::to_string(v.verdict)) + ": " + v.reason);
    }
    return out;
  };
  // The same commit measured again: every statement the same.
  const Results same = results_of(k_sha_a, {profiled("load", table)});
  const auto from_history = verdicts(same, history_base);
  EXPECT_EQ(from_history, verdicts(same, file_base));
  ASSERT_EQ(from_history.size(), 3u);
  for (const auto& v : gate::compare(same, history_base, "b", thresholds).statements) {
    EXPECT_EQ(v.verdict, results::Verdict::same) << v.query << ": " << v.reason;
  }
  // An N+1 and a lost index: the same regressions either way.
  std::vector<results::QueryStats> worse = table;
  worse[1].calls = 240;
  worse[0].blocks_per_call = 4000;
  const Results pr = results_of(k_sha_a, {profiled("load", worse)});
  const auto regressed = verdicts(pr, history_base);
  EXPECT_EQ(regressed, verdicts(pr, file_base));
  int regressions = 0;
  for (const auto& v : gate::compare(pr, history_base, "b", thresholds).statements) {
    regressions += v.verdict == results::Verdict::regression;
  }
  EXPECT_EQ(regressions, 2);
}

}  // namespace
}  // namespace coldgate::history

namespace coldgate::history {
namespace {

// The fuzz seed with statement tables: one with every figure, one an older results' (no
// text_id, no blocks), a stage without a table and one with an empty table.
TEST(HistoryRecord, TheStatementsSeedReadsWithItsTables) {
  const std::string text = testing::slurp(testing::source_dir() /
                                          "tests/fuzz/corpus/history/statements.json");
  const Record rec = from_json(text, "statements.json");
  ASSERT_EQ(rec.stages.size(), 3u);
  ASSERT_TRUE(rec.stages[0].queries);
  ASSERT_EQ(rec.stages[0].queries->size(), 2u);
  EXPECT_EQ(rec.stages[0].queries->at(0).queryid, "-1921244256710817708");
  EXPECT_EQ(rec.stages[0].queries->at(0).blocks_per_call, 3);
  EXPECT_EQ(rec.stages[0].queries->at(1).jit_functions, 1090);
  EXPECT_FALSE(rec.stages[0].queries->at(1).blocks);
  EXPECT_FALSE(rec.stages[1].queries);
  ASSERT_TRUE(rec.stages[2].queries);
  EXPECT_TRUE(rec.stages[2].queries->empty());
}

TEST(HistoryRecord, ANumberBeyondDoubleIsRefusedNotInfinite) {
  const std::string text = testing::slurp(testing::source_dir() /
                                          "tests/fuzz/corpus/history/huge-number.json");
  EXPECT_EQ(message_of(text),
            "h.json: holds a number beyond the range of a double: not a coldgate history file");
}

}  // namespace
}  // namespace coldgate::history
