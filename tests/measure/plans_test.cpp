// Reading auto_explain's JSON entries out of a server log as the stderr destination writes
// them: a log_line_prefix, continuation lines indented by a tab, other messages between.
#include <gtest/gtest.h>

#include <string>

#include "measure/plans.hpp"
#include "results/plan.hpp"
#include "util/error.hpp"

namespace coldgate::measure {
namespace {

// One entry as PostgreSQL 15 writes it (auto_explain.c: "duration: %.3f ms  plan:\n%s";
// elog.c: a tab after each newline of the message).
std::string entry(const std::string& prefix, double ms, const std::string& id,
                  const std::string& node) {
  return prefix + " LOG:  duration: " + std::to_string(ms).substr(0, 5) +
         " ms  plan:\n\t{\n\t  \"Query Text\": \"select \\\"x}\\\" from t where a = 1\",\n"
         "\t  \"Plan\": {\n\t    \"Node Type\": \"" + node +
         "\",\n\t    \"Relation Name\": \"t\",\n\t    \"Schema\": \"public\",\n"
         "\t    \"Plan Rows\": 10,\n\t    \"Actual Rows\": 5,\n\t    \"Actual Loops\": 1\n\t  },\n"
         "\t  \"Query Identifier\": " + id + "\n\t}\n";
}

TEST(PlanLog, KeepsTheLongestCallOfEachQueryIdentifierCostliestFirst) {
  std::string log = "2026-12-02 10:00:00.000 UTC [12] LOG:  database system is ready\n" +
                    entry("2026-12-02 10:00:01.000 UTC [13]", 1.5, "-42", "Seq Scan") +
                    entry("2026-12-02 10:00:01.100 UTC [13]", 9.25, "-42", "Index Scan") +
                    "2026-12-02 10:00:01.200 UTC [13] LOG:  duration: 3.000 ms  statement: x\n" +
                    entry("2026-12-02 10:00:01.300 UTC [14]", 4.0, "7", "Seq Scan") +
                    entry("2026-12-02 10:00:01.400 UTC [14]", 2.0, "7", "Bitmap Heap Scan");
  auto plans = parse_plan_log(log);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].queryid, "-42");
  EXPECT_DOUBLE_EQ(plans[0].plan.duration_ms, 9.25);
  EXPECT_EQ(plans[0].query, "select \"x}\" from t where a = 1");
  auto nodes = results::plan_nodes(plans[0].plan.json, "test");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(results::node_label(nodes[0]), "Index Scan on public.t");
  EXPECT_EQ(plans[1].queryid, "7");
  EXPECT_DOUBLE_EQ(plans[1].plan.duration_ms, 4.0);
  EXPECT_EQ(plans[1].plan.shape_id, results::plan_shape_id(results::plan_nodes(
                                        "{\"Node Type\": \"Seq Scan\", \"Relation Name\": \"t\", "
                                        "\"Schema\": \"public\"}",
                                        "test")));
}

TEST(PlanLog, SkipsEntriesOfNoStatementAndALogCutMidEntry) {
  std::string no_id = "[1] LOG:  duration: 1.000 ms  plan:\n\t{\"Plan\": {\"Node Type\": "
                      "\"Result\"}}\n";
  std::string cut = entry("[2]", 5.0, "9", "Seq Scan");
  cut.resize(cut.size() / 2);
  EXPECT_TRUE(parse_plan_log(no_id).empty());  // neither an identifier nor a text: no statement
  auto zero = parse_plan_log(entry("[3]", 1.0, "0", "Seq Scan"));  // 0: no identifier computed
  ASSERT_EQ(zero.size(), 1u);
  EXPECT_EQ(zero[0].queryid, "");
  auto plans = parse_plan_log(entry("[4]", 2.0, "8", "Seq Scan") + cut);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].queryid, "8");
}

// PostgreSQL 14 and 15 write no "Query Identifier": the calls of one statement that differ in
// their constants are one entry, and the text ties it to pg_stat_statements' normalized text.
TEST(PlanLog, WithoutQueryIdentifierGroupsCallsByTextAndMatchesTheNormalizedText) {
  auto entry15 = [](const std::string& text, double ms, const std::string& node) {
    return "2026-12-02 10:00:01.000 UTC [13] LOG:  duration: " + std::to_string(ms) +
           " ms  plan:\n\t{\n\t  \"Query Text\": \"" + text + "\",\n"
           "\t  \"Plan\": {\"Node Type\": \"" + node + "\"}\n\t}\n";
  };
  auto plans = parse_plan_log(entry15("select * from t where a = 1", 2.0, "Seq Scan") +
                              entry15("select * from t where a = 22", 3.0, "Seq Scan") +
                              entry15("select * from u where b = 'x'", 1.0, "Index Scan"));
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].queryid, "");
  EXPECT_EQ(plans[0].query, "select * from t where a = 22");
  EXPECT_DOUBLE_EQ(plans[0].plan.duration_ms, 3.0);

  EXPECT_TRUE(statement_instance("select * from t where a = $1", "select * from t where a = 22"));
  EXPECT_TRUE(statement_instance("select * from t where a = $1 and b = $2",
                                 "select  *\n from t where a = -1.5e3 and b = E'it''s \\' x'"));
  EXPECT_TRUE(statement_instance("select * from t where a in ($1, $2)",
                                 "select * from t where a in (1, 2);"));
  EXPECT_TRUE(statement_instance("SELECT id FROM comment WHERE article_id = $1 ORDER BY id",
                                 "SELECT id FROM comment WHERE article_id = $1 ORDER BY id"));
  EXPECT_TRUE(statement_instance("select * from t where a = $1 and b = \u2026",
                                 "select * from t where a = 5 and b = (select 1)"));
  EXPECT_FALSE(statement_instance("select * from t where a = $1", "select * from u where a = 1"));
  EXPECT_FALSE(statement_instance("select * from t where a = $1", "select * from t where a = b"));
  EXPECT_FALSE(statement_instance("select * from t", "select * from t where a = 1"));
}

TEST(PlanShape, IgnoresFiguresAndConditionsButNotAccessPathsOrJoinOrder) {
  auto shape = [](const std::string& json) {
    return results::plan_shape_id(results::plan_nodes(json, "test"));
  };
  const std::string a =
      R"J({"Node Type": "Hash Join", "Join Type": "Inner", "Plan Rows": 10, "Plans": [
          {"Node Type": "Seq Scan", "Relation Name": "a", "Actual Rows": 5, "Filter": "(x = 1)"},
          {"Node Type": "Hash", "Plans": [{"Node Type": "Index Scan", "Index Name": "b_pkey",
           "Relation Name": "b"}]}]})J";
  const std::string figures =
      R"J({"Node Type": "Hash Join", "Join Type": "Inner", "Plan Rows": 99, "Plans": [
          {"Node Type": "Seq Scan", "Relation Name": "a", "Actual Rows": 7, "Filter": "(x = 2)"},
          {"Node Type": "Hash", "Plans": [{"Node Type": "Index Scan", "Index Name": "b_pkey",
           "Relation Name": "b"}]}]})J";
  const std::string swapped =
      R"J({"Node Type": "Hash Join", "Join Type": "Inner", "Plans": [
          {"Node Type": "Index Scan", "Index Name": "b_pkey", "Relation Name": "b"},
          {"Node Type": "Hash", "Plans": [{"Node Type": "Seq Scan", "Relation Name": "a"}]}]})J";
  EXPECT_EQ(shape(a), shape(figures));
  EXPECT_NE(shape(a), shape(swapped));
  EXPECT_EQ(results::plan_shape(results::plan_nodes(a, "test")),
            "Hash Join [Inner]\n  Seq Scan on a\n  Hash\n    Index Scan using b_pkey on b\n");
  EXPECT_THROW(results::plan_nodes("[1, 2]", "test"), Error);
  EXPECT_THROW(results::plan_nodes("{not json", "test"), Error);
}

}  // namespace
}  // namespace coldgate::measure
