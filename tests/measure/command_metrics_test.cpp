#include "measure/command_metrics.hpp"

#include <gtest/gtest.h>

#include "util/error.hpp"

namespace coldgate::measure {
namespace {

TEST(CommandMetrics, ParsesLinesWithUnitsAndPhases) {
  auto m = parse_metric_lines(
      "{\"metric\":\"allocated_bytes\",\"value\":123,\"unit\":\"bytes\"}\n"
      "\n"
      "{\"metric\":\"parse_ms\",\"value\":1.25,\"unit\":\"ms\",\"phase\":\"warm\"}\r\n"
      "{\"metric\":\"parse_ms\",\"value\":1.5,\"unit\":\"ms\",\"phase\":\"warm\"}\n"
      "{\"value\":7,\"metric\":\"plugins\"}",
      "m");
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].name, "allocated_bytes");
  EXPECT_EQ(m[0].value, 123);
  EXPECT_EQ(m[0].unit, "bytes");
  EXPECT_FALSE(m[0].warm);
  EXPECT_TRUE(m[1].warm);
  EXPECT_EQ(m[2].value, 1.5);
  EXPECT_EQ(m[3].name, "plugins");
  EXPECT_EQ(m[3].unit, "");
}

std::string error_of(const std::string& text) {
  try {
    parse_metric_lines(text, "$COLDGATE_METRICS");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::gate_failed);
    return e.message();
  }
  return "(no error)";
}

TEST(CommandMetrics, EveryMalformedLineIsNamed) {
  const std::string expect = " (expected {\"metric\": NAME, \"value\": NUMBER, \"unit\": UNIT}, one object per line)";
  EXPECT_EQ(error_of("{\"metric\":\"a\",\"value\":1}\nnot json\n"),
            "$COLDGATE_METRICS line 2: not JSON: not json" + expect);
  EXPECT_EQ(error_of("[1]"), "$COLDGATE_METRICS line 1: not a JSON object: [1]" + expect);
  EXPECT_EQ(error_of("{\"metric\":\"a\"}"), "$COLDGATE_METRICS line 1: no \"value\": {\"metric\":\"a\"}" + expect);
  EXPECT_EQ(error_of("{\"value\":1}"), "$COLDGATE_METRICS line 1: no \"metric\": {\"value\":1}" + expect);
  EXPECT_EQ(error_of("{\"metric\":\"a\",\"value\":\"1\"}"),
            "$COLDGATE_METRICS line 1: \"value\" is not a number: {\"metric\":\"a\",\"value\":\"1\"}" + expect);
  EXPECT_EQ(error_of("{\"metric\":\"Bad-Name\",\"value\":1}"),
            "$COLDGATE_METRICS line 1: metric name \"Bad-Name\" is not [a-z][a-z0-9_]*: "
            "{\"metric\":\"Bad-Name\",\"value\":1}" + expect);
  EXPECT_EQ(error_of("{\"metric\":\"wall_ms\",\"value\":1}"),
            "$COLDGATE_METRICS line 1: \"wall_ms\" is one of coldgate's own metrics; choose another "
            "name: {\"metric\":\"wall_ms\",\"value\":1}" + expect);
  EXPECT_EQ(error_of("{\"metric\":\"a\",\"value\":1,\"phase\":\"hot\"}"),
            "$COLDGATE_METRICS line 1: \"phase\" must be \"cold\" or \"warm\": "
            "{\"metric\":\"a\",\"value\":1,\"phase\":\"hot\"}" + expect);
  EXPECT_EQ(error_of("{\"metric\":\"a\",\"value\":1}\n{\"metric\":\"a\",\"value\":2}"),
            "$COLDGATE_METRICS line 2: \"a\" given twice for one cold run (mark repetitions "
            "\"phase\": \"warm\"): {\"metric\":\"a\",\"value\":2}" + expect);
  EXPECT_EQ(error_of("{\"metric\":\"a\",\"value\":1,\"unit\":\"ms\",\"phase\":\"warm\"}\n"
                     "{\"metric\":\"a\",\"value\":1,\"unit\":\"s\",\"phase\":\"warm\"}"),
            "$COLDGATE_METRICS line 2: unit \"s\" differs from \"ms\" given earlier: "
            "{\"metric\":\"a\",\"value\":1,\"unit\":\"s\",\"phase\":\"warm\"}" + expect);
  EXPECT_EQ(error_of("{\"metric\":\"a\",\"value\":1e999}").substr(0, 43),
            "$COLDGATE_METRICS line 1: not JSON: {\"metri");
}

}  // namespace
}  // namespace coldgate::measure
