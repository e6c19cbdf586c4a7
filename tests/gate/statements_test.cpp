// Statement verdicts and diagnosis marks on hand-made results: the thresholds' edges, pairing by
// text across queryids, older results without block counts or text ids, and the JSON round trip.
#include <gtest/gtest.h>

#include "gate/gate.hpp"
#include "results/json.hpp"

namespace coldgate::gate {
namespace {

using namespace coldgate::results;

QueryStats stmt(std::string id, std::string text, double calls, double blocks_per_call) {
  QueryStats q;
  q.queryid = std::move(id);
  q.query = text;
  q.text_id = "t" + std::to_string(std::hash<std::string>{}(text) % 100000);
  q.calls = calls;
  q.rows = calls;
  q.exec_ms = calls * 0.05;
  q.blocks_per_call = blocks_per_call;
  q.blocks = blocks_per_call * calls;
  return q;
}

StageResult stage(std::vector<QueryStats> queries) {
  StageResult s;
  s.name = "page";
  s.kind = StageKind::command;
  s.queries = std::move(queries);
  return s;
}

const StatementVerdict& of(const std::vector<StatementVerdict>& v, const std::string& text) {
  for (const auto& s : v) {
    if (s.query == text) return s;
  }
  static StatementVerdict none;
  ADD_FAILURE() << "no verdict for " << text;
  return none;
}

TEST(StatementVerdicts, PairedByTextAcrossQueryidsAndJudgedOnCounts) {
  config::Gate g;
  StageResult base = stage({stmt("-377094331132490252", "select * from coupon where code = $1", 1, 4),
                            stmt("11", "select name from author where id = $1", 100, 3),
                            stmt("12", "select title from book where isbn = $1", 1, 4),
                            stmt("13", "select 1 from gone", 3, 1),
                            stmt("14", "select 2 from gone_many", 12, 1)});
  StageResult head = stage({stmt("-5210114618935114403", "select * from coupon where code = $1", 1, 4),
                            stmt("21", "select name from author where id = $1", 100, 3),
                            stmt("22", "select title from book where isbn = $1", 1, 1937),
                            stmt("23", "select count(*) from review where book_id = $1", 40, 2),
                            stmt("24", "select 3 from new_few", 2, 1)});
  auto v = compare_statements(head, base, g);
  ASSERT_EQ(v.size(), 7u);
  // Regressions first.
  EXPECT_EQ(v[0].verdict, Verdict::regression);
  EXPECT_EQ(v[1].verdict, Verdict::regression);

  const auto& coupon = of(v, "select * from coupon where code = $1");
  EXPECT_EQ(coupon.verdict, Verdict::same);
  EXPECT_FALSE(coupon.changed());
  EXPECT_EQ(coupon.base->queryid, "-377094331132490252");
  EXPECT_EQ(coupon.head->queryid, "-5210114618935114403");

  const auto& isbn = of(v, "select title from book where isbn = $1");
  EXPECT_EQ(isbn.verdict, Verdict::regression);
  EXPECT_NE(isbn.reason.find("reads 1,937 blocks per call instead of 4 (484×"), std::string::npos)
      << isbn.reason;

  const auto& review = of(v, "select count(*) from review where book_id = $1");
  EXPECT_EQ(review.verdict, Verdict::regression);
  EXPECT_FALSE(review.base);
  EXPECT_EQ(review.reason, "new statement: runs 40 times per run (≥ min_query_delta 10)");

  EXPECT_EQ(of(v, "select 3 from new_few").verdict, Verdict::added);
  EXPECT_EQ(of(v, "select 1 from gone").verdict, Verdict::removed);
  EXPECT_EQ(of(v, "select 2 from gone_many").verdict, Verdict::faster);
  EXPECT_EQ(of(v, "select name from author where id = $1").verdict, Verdict::same);

  Results r;
  r.stages.push_back(head);
  r.gate = GateResult{};
  r.gate->statements = v;
  EXPECT_FALSE(passed(r));
  EXPECT_NE(verdict(r).find("page statement `select title from book where isbn = $1` blocks per "
                            "call 4 → 1,937"),
            std::string::npos)
      << verdict(r);
  EXPECT_NE(verdict(r).find("page statement `select count(*) from review where book_id = $1` "
                            "new, 40 calls per run"),
            std::string::npos)
      << verdict(r);
}

TEST(StatementVerdicts, ThresholdEdges) {
  config::Gate g;
  auto one = [&](double bc, double bb, double hc, double hb) {
    auto v = compare_statements(stage({stmt("2", "q", hc, hb)}), stage({stmt("1", "q", bc, bb)}), g);
    EXPECT_EQ(v.size(), 1u);
    return v.front();
  };
  // Calls: 2× and +10 both needed.
  EXPECT_EQ(one(10, 4, 20, 4).verdict, Verdict::regression);
  EXPECT_EQ(one(10, 4, 19, 4).verdict, Verdict::same);
  EXPECT_EQ(one(20, 4, 35, 4).verdict, Verdict::same);  // +15 but 1.75×
  EXPECT_NE(one(20, 4, 35, 4).reason.find("1.75× is under max_query_ratio 2"), std::string::npos)
      << one(20, 4, 35, 4).reason;
  EXPECT_EQ(one(5, 4, 14, 4).verdict, Verdict::same);  // 2.8× but +9
  EXPECT_NE(one(5, 4, 14, 4).reason.find("+9 is under min_query_delta 10"), std::string::npos)
      << one(5, 4, 14, 4).reason;
  EXPECT_EQ(one(20, 4, 10, 4).verdict, Verdict::faster);
  // Blocks per call: 10× and +100 both needed; a few index pages never count.
  EXPECT_EQ(one(1, 4, 1, 104).verdict, Verdict::regression);
  EXPECT_EQ(one(1, 4, 1, 103).verdict, Verdict::same);
  EXPECT_NE(one(1, 4, 1, 103).reason.find("+99 is under min_blocks_delta 100"), std::string::npos)
      << one(1, 4, 1, 103).reason;
  EXPECT_EQ(one(1, 200, 1, 1999).verdict, Verdict::same);
  EXPECT_NE(one(1, 200, 1, 1999).reason.find("under max_blocks_ratio 10"), std::string::npos);
  EXPECT_EQ(one(1, 3, 1, 5).verdict, Verdict::same);
  EXPECT_EQ(one(1, 1000, 1, 4).verdict, Verdict::faster);
  // Off per config.
  g.statements = false;
  EXPECT_TRUE(compare_statements(stage({stmt("2", "q", 40, 4)}), stage({stmt("1", "q", 1, 4)}), g)
                  .empty());
}

TEST(StatementVerdicts, OlderResultsPairByTextAndJudgeNoBlocksTheyLack) {
  config::Gate g;
  QueryStats old = stmt("1", "select title from book where isbn = $1", 1, 4);
  old.text_id.clear();
  old.blocks_per_call.reset();
  old.blocks.reset();
  auto v = compare_statements(stage({stmt("2", "select title from book where isbn = $1", 1, 1937)}),
                              stage({old}), g);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::same) << v[0].reason;
  EXPECT_FALSE(v[0].base->blocks_per_call);
  // No profile on one side: no statement verdicts at all (not all "new").
  EXPECT_TRUE(compare_statements(stage({stmt("2", "q", 40, 4)}), stage({}), g).empty());
}

TEST(StatementVerdicts, GateResultRoundTripsThroughResultsJson) {
  config::Gate g;
  Results r;
  r.tool_version = "0";
  StageResult head = stage({stmt("2", "q", 40, 1937), stmt("3", "new", 12, 1)});
  r.stages.push_back(head);
  r.gate = GateResult{};
  r.gate->statements = compare_statements(head, stage({stmt("1", "q", 1, 4), stmt("4", "old", 1, 1)}), g);
  std::string text = to_json(r);
  Results back = from_json(text, "results.json");
  ASSERT_TRUE(back.gate);
  ASSERT_EQ(back.gate->statements.size(), r.gate->statements.size());
  EXPECT_EQ(to_json(back), text);
  EXPECT_EQ(back.stages[0].queries[0].text_id, head.queries[0].text_id);
  EXPECT_EQ(back.stages[0].queries[0].blocks_per_call, 1937);
}

TEST(DiagnosisMarks, NewGoneAndAlsoInBaseByTextNotQueryid) {
  Results base, head;
  base.stages.push_back(stage({stmt("1", "select a from t where id = $1", 100, 3)}));
  head.stages.push_back(stage({stmt("9", "select a from t where id = $1", 100, 3),
                               stmt("8", "select b from u where id = $1", 40, 3)}));
  base.stages.push_back(stage({}));
  base.stages.back().name = "fixed";
  head.stages.push_back(base.stages.back());
  base.diagnoses = {{"page", "repeated_query", "a", {}, "1", "select a from t where id = $1", ""},
                    {"fixed", "never_analyzed", "n", {}, "", "", ""}};
  head.diagnoses = {{"page", "repeated_query", "a", {}, "9", "select a from t where id = $1", ""},
                    {"page", "repeated_query", "b", {}, "8", "select b from u where id = $1", ""}};
  mark_diagnoses(head, base);
  ASSERT_EQ(head.diagnoses.size(), 3u);
  EXPECT_EQ(head.diagnoses[0].change, "also_in_base");
  EXPECT_EQ(head.diagnoses[1].change, "new");
  EXPECT_EQ(head.diagnoses[2].change, "gone");
  EXPECT_EQ(head.diagnoses[2].stage, "fixed");
  // Idempotent, and a base's own "gone" entries are not carried on.
  mark_diagnoses(head, base);
  EXPECT_EQ(head.diagnoses.size(), 3u);
  Results next = head;
  next.diagnoses.pop_back();
  next.diagnoses[0].change.clear();
  mark_diagnoses(next, head);
  ASSERT_EQ(next.diagnoses.size(), 2u);
  EXPECT_EQ(next.diagnoses[0].change, "also_in_base");
  EXPECT_EQ(next.diagnoses[1].change, "also_in_base");
}

}  // namespace
}  // namespace coldgate::gate
