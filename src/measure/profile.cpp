#include "measure/profile.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "util/fs.hpp"
#include "util/statement_text.hpp"
#include "util/text.hpp"

namespace coldgate::measure {
using namespace coldgate::results;

const std::vector<std::string>& probe_statements() {
  // pqxx::work sends BEGIN and COMMIT; settings go through set_config($1, $2, true), whose
  // constant pg_stat_statements shows as $3.
  static const std::vector<std::string> k_texts = {
      "BEGIN", "COMMIT", "ROLLBACK", "SELECT set_config($1, $2, true)",
      "SELECT set_config($1, $2, $3)"};
  return k_texts;
}

void add_profile_metrics(StageResult& result, const std::vector<db::StatementStats>& statements,
                         bool warm) {
  double queries = 0, plan = 0, exec = 0, jit = 0, functions = 0, rows = 0, hit = 0, read = 0;
  for (const auto& s : statements) {
    queries += s.calls;
    plan += s.plan_ms;
    exec += s.exec_ms;
    jit += s.jit_ms();
    functions += s.jit_functions;
    rows += s.rows;
    hit += s.shared_hit_blocks;
    read += s.shared_read_blocks;
  }
  auto add = [&](const char* name, const char* unit, double v) {
    Metric& m = result.metric(name, unit);
    (warm ? m.warm : m.cold).push_back(v);
  };
  add("db_queries", "count", queries);
  add("db_plan_ms", "ms", plan);
  add("db_exec_ms", "ms", exec);
  add("db_jit_ms", "ms", jit);
  add("db_jit_functions", "count", functions);
  add("db_rows", "count", rows);
  add("db_shared_hit_blocks", "count", hit);
  add("db_shared_read_blocks", "count", read);
}

namespace {

// Where the statement itself begins: after leading whitespace and comments (a file's header, an
// ORM's tag), which say nothing about it; npos when there is nothing else.
std::size_t statement_start(const std::string& query) {
  std::size_t start = 0;
  for (;;) {
    start = query.find_first_not_of(" \t\r\n", start);
    if (start == std::string::npos) return start;
    if (query.compare(start, 2, "--") == 0) {
      start = query.find('\n', start);
      if (start == std::string::npos) return start;
    } else if (query.compare(start, 2, "/*") == 0) {
      std::size_t end = query.find("*/", start + 2);
      if (end == std::string::npos) return end;
      start = end + 2;
    } else {
      return start;
    }
  }
}

}  // namespace

bool reads_or_writes_data(const std::string& query) {
  std::size_t i = statement_start(query);
  while (i < query.size() && (query[i] == '(' || std::isspace(static_cast<unsigned char>(query[i]))))
    ++i;
  std::string word;
  for (; i < query.size() && std::isalpha(static_cast<unsigned char>(query[i])); ++i)
    word += static_cast<char>(std::tolower(static_cast<unsigned char>(query[i])));
  static const std::vector<std::string> k_verbs = {"select", "with",   "values", "table",
                                                   "insert", "update", "delete", "merge"};
  return std::find(k_verbs.begin(), k_verbs.end(), word) != k_verbs.end();
}

namespace {

// `query` from `start` on one line (runs of white space as one space), cut to `chars`
// characters with " …" after them when longer.
std::string one_line_cut(const std::string& query, std::size_t start, std::size_t chars) {
  std::string out;
  std::size_t points = 0;
  bool space = false;
  for (std::size_t i = start; i < query.size();) {
    unsigned char c = static_cast<unsigned char>(query[i]);
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      ++i;
      continue;
    }
    // A byte that starts no well-formed sequence (a SQL_ASCII database's Latin-1) counts as one
    // character, so it never swallows the newline or space after it.
    const std::size_t len = std::max<std::size_t>(1, util::utf8_sequence_length(query, i));
    if (points + (space ? 1 : 0) >= chars) return out + " …";
    if (space) {
      out += ' ';
      ++points;
      space = false;
    }
    out.append(query, i, len);
    ++points;
    i += len;
  }
  return out;
}

}  // namespace

std::string shortened(const std::string& query, std::size_t chars) {
  const std::size_t start = statement_start(query);
  if (start == std::string::npos) return "";
  std::string line = one_line_cut(query, start, std::string::npos);
  // Too long: the select list goes first, so that FROM and WHERE are kept (an ORM's statements
  // on one table share a select list longer than the cut).
  if (std::string cut = one_line_cut(line, 0, chars); cut == line) return cut;
  return one_line_cut(util::elide_statement_lists(line), 0, chars);
}

std::string text_id_of(const std::string& whole_query) {
  return util::sha256_hex(whole_query).substr(0, 16);
}

void shorten_keeping_id(db::StatementStats& s) {
  if (s.text_id.empty()) s.text_id = text_id_of(s.query);
  if (!s.parameters) s.parameters = util::parameter_use(s.query);
  s.query = shortened(s.query);
}

std::vector<QueryStats> statement_table(const std::vector<std::vector<db::StatementStats>>& cold_runs) {
  struct Columns {
    std::string query;
    std::string text_id;
    util::ParameterUse parameters = util::ParameterUse::none;
    std::vector<double> calls, rows, plan, exec, jit, functions, blocks;
  };
  std::map<std::int64_t, Columns> by_id;
  for (std::size_t run = 0; run < cold_runs.size(); ++run) {
    for (const auto& s : cold_runs[run]) {
      Columns& c = by_id[s.queryid];
      if (c.query.empty()) {
        c.query = shortened(s.query);
        c.text_id = s.text_id.empty() ? text_id_of(s.query) : s.text_id;
        c.parameters = s.parameters ? *s.parameters : util::parameter_use(s.query);
      }
      double values[] = {s.calls,    s.rows,          s.plan_ms,
                         s.exec_ms,  s.jit_ms(),      s.jit_functions,
                         s.shared_hit_blocks + s.shared_read_blocks};
      std::vector<double>* columns[] = {&c.calls, &c.rows,      &c.plan,  &c.exec,
                                        &c.jit,   &c.functions, &c.blocks};
      for (int i = 0; i < 7; ++i) {
        std::vector<double>& v = *columns[i];
        // One id twice in a run (two roles ran it): summed. Runs it missed executed it 0 times.
        if (v.size() == run + 1) {
          v.back() += values[i];
        } else {
          v.resize(run, 0);
          v.push_back(values[i]);
        }
      }
    }
  }
  std::vector<QueryStats> out;
  for (auto& [id, c] : by_id) {
    for (auto* v : {&c.calls, &c.rows, &c.plan, &c.exec, &c.jit, &c.functions, &c.blocks})
      v->resize(cold_runs.size(), 0);
    QueryStats q;
    q.queryid = std::to_string(id);
    q.query = c.query;
    q.text_id = c.text_id;
    q.parameters = c.parameters;
    q.calls = median(c.calls);
    q.rows = median(c.rows);
    q.plan_ms = median(c.plan);
    q.exec_ms = median(c.exec);
    q.jit_ms = median(c.jit);
    q.jit_functions = median(c.functions);
    q.blocks = median(c.blocks);
    // Per call in each run that called it, then the median: a run that missed the statement
    // says nothing about what one execution reads.
    std::vector<double> per_call;
    for (std::size_t run = 0; run < c.calls.size(); ++run) {
      if (c.calls[run] > 0) per_call.push_back(c.blocks[run] / c.calls[run]);
    }
    q.blocks_per_call = per_call.empty() ? 0.0 : median(per_call);
    out.push_back(std::move(q));
  }
  std::stable_sort(out.begin(), out.end(), [](const QueryStats& a, const QueryStats& b) {
    return a.time_ms() > b.time_ms();
  });
  return out;
}

}  // namespace coldgate::measure
