// libFuzzer target: what coldgate reads from a server's profile — pg_stat_statements' statement
// texts, which an application (or a SQL_ASCII database) fills with any bytes — through
// everything that turns them into results: measure::shortened, reads_or_writes_data,
// statement_table, add_profile_metrics, measure::diagnose (the N+1, JIT and planning
// findings), results::to_json and back.
//
// Input: chunks separated by NUL; per chunk, byte 0 = calls (0–255), byte 1 = run (bits 0–1,
// of 3 cold runs), queryid bucket (bits 2–4: 8 ids, so ids collide with other texts), JIT
// time on (bit 5), planning time on (bit 6); the rest is the statement's text.
// Properties:
// - shortened(): at most k_statement_text_chars characters plus " …" (a byte that is not UTF-8
//   counting as one); UTF-8 in, UTF-8 out;
//   no leading whitespace or comment; no whitespace run; a text not cut is a fixed point;
// - reads_or_writes_data() does not change when a comment and spaces are put in front;
// - statement_table(): each queryid once, by time descending, every median within the
//   statement's per-run values (missing runs counting 0);
// - the Results holding the table, the db_* metrics and the diagnoses are written by
//   results::to_json and read back by from_json, and the second writing is the first.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "db/profile.hpp"
#include "measure/diagnose.hpp"
#include "measure/profile.hpp"
#include "results/json.hpp"
#include "results/results.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace {

using coldgate::util::first_invalid_utf8;
using coldgate::util::utf8_sequence_length;
namespace measure = coldgate::measure;
namespace results = coldgate::results;

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n) {
    std::size_t len = utf8_sequence_length(s, i);
    i += len == 0 ? 1 : len;
  }
  return n;
}

void check_shortened(const std::string& text) {
  const std::string out = measure::shortened(text);
  const bool valid_in = !first_invalid_utf8(text);
  if (valid_in && first_invalid_utf8(out)) std::abort();
  if (code_points(out) > measure::k_statement_text_chars + 2) std::abort();
  if (!out.empty()) {
    if (out.front() == ' ' || out.front() == '\t' || out.front() == '\n' || out.front() == '\r')
      std::abort();
    if (out.rfind("--", 0) == 0 || out.rfind("/*", 0) == 0) std::abort();
  }
  if (out.find("  ") != std::string::npos || out.find_first_of("\t\r\n") != std::string::npos)
    std::abort();
  const bool cut = out.size() >= 4 && out.compare(out.size() - 4, 4, " \xE2\x80\xA6") == 0;
  if (valid_in && !cut && measure::shortened(out) != out) std::abort();
  if (measure::reads_or_writes_data(text) != measure::reads_or_writes_data("/* tag */  \n" + text))
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::vector<coldgate::db::StatementStats>> runs(3);
  std::map<std::int64_t, std::vector<std::vector<double>>> calls_by_id;  // id → run → calls
  for (std::size_t start = 0; start <= input.size();) {
    std::size_t end = input.find('\0', start);
    if (end == std::string_view::npos) end = input.size();
    std::string_view chunk = input.substr(start, end - start);
    start = end + 1;
    if (chunk.size() < 2) continue;
    const auto calls = static_cast<unsigned char>(chunk[0]);
    const auto bits = static_cast<unsigned char>(chunk[1]);
    coldgate::db::StatementStats s;
    s.query = std::string(chunk.substr(2));
    s.queryid = static_cast<std::int64_t>((bits >> 2) & 7) - 4;
    s.calls = calls;
    s.rows = calls * 2.0;
    s.exec_ms = 1.5 * calls + 0.25;
    if (bits & 0x20) s.jit_generation_ms = 2.0 * calls + 1;
    if (bits & 0x40) s.plan_ms = 7.0 + calls;
    s.jit_functions = (bits & 0x20) ? calls : 0;
    check_shortened(s.query);
    const std::size_t run = (bits & 3) % 3;
    auto& per_run = calls_by_id[s.queryid];
    per_run.resize(3);
    per_run[run].push_back(s.calls);
    runs[run].push_back(std::move(s));
  }

  const std::vector<results::QueryStats> table = measure::statement_table(runs);
  if (table.size() != calls_by_id.size()) std::abort();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (i > 0 && table[i - 1].time_ms() < table[i].time_ms()) std::abort();
    const auto it = calls_by_id.find(std::stoll(table[i].queryid));
    if (it == calls_by_id.end()) std::abort();
    double lo = 1e300, hi = -1e300;
    for (const auto& in_run : it->second) {  // a run's calls of one id are summed
      double sum = 0;
      for (double c : in_run) sum += c;
      lo = std::min(lo, sum);
      hi = std::max(hi, sum);
    }
    if (table[i].calls < lo || table[i].calls > hi) std::abort();
  }

  results::Results r;
  results::StageResult stage;
  stage.name = "fuzzed";
  stage.kind = results::StageKind::command;
  stage.runs = 3;
  for (const auto& run : runs) measure::add_profile_metrics(stage, run, false);
  stage.queries = table;
  r.stages.push_back(stage);
  try {
    r.diagnoses = measure::diagnose(r, coldgate::config::Config{});
    const std::string once = results::to_json(r);
    const std::string twice = results::to_json(results::from_json(once, "fuzz.json"));
    if (once != twice) std::abort();
  } catch (const coldgate::Error&) {
    std::abort();  // coldgate's own results must always read back
  }
  return 0;
}
