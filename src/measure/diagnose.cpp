#include "measure/diagnose.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "measure/profile.hpp"
#include "results/format.hpp"
#include "results/growth.hpp"
#include "results/plan.hpp"
#include "util/error.hpp"
#include "util/statement_text.hpp"

namespace coldgate::measure {
namespace {

using namespace coldgate::results;

std::string ms(double v) {
  return results::format_value(v, "ms");
}
std::string count(double v) {
  return results::format_value(v, "count");
}

const config::Stage* stage_of(const config::Config& config, const std::string& name) {
  for (const auto& s : config.stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// The median of the warm repetitions when there are any (the steady state), else of the cold
// runs; `warm` says which.
double steady_median(const StageResult& s, const char* name, bool* warm = nullptr) {
  const Metric* m = s.find(name);
  if (!m) return 0;
  bool use_warm = !m->warm.empty();
  if (warm) *warm = use_warm;
  return median(use_warm ? m->warm : m->cold);
}

// "statement 123 `select …`", or without an id when there is none (coldgate explain).
std::string statement(const QueryStats& q) {
  return q.queryid.empty() ? fmt::format("statement `{}`", q.query)
                           : fmt::format("statement {} `{}`", q.queryid, q.query);
}

Diagnosis about(const StageResult& s, const QueryStats& q, DiagnosisKind kind, std::string message,
                std::map<std::string, double> data) {
  return {s.name, kind, std::move(message), std::move(data), q.queryid, q.query};
}

void jit_dominates(const StageResult& s, std::vector<Diagnosis>& out) {
  for (const auto& q : s.queries) {
    if (q.jit_ms < k_jit_floor_ms || q.jit_ms <= k_jit_dominance_share * q.exec_ms) continue;
    std::string estimate;
    std::map<std::string, double> data{{"db_jit_ms", q.jit_ms},
                                       {"db_exec_ms", q.exec_ms},
                                       {"jit_functions", q.jit_functions},
                                       {"calls", q.calls}};
    if (q.total_cost) {
      data["total_cost"] = *q.total_cost;
      estimate = fmt::format("; cost estimate {}", count(std::round(*q.total_cost)));
      if (s.explain && s.explain->jit_above_cost > 0) {
        data["jit_above_cost"] = s.explain->jit_above_cost;
        estimate += fmt::format(" (jit_above_cost {})", count(std::round(s.explain->jit_above_cost)));
      }
    }
    std::string fix =
        s.kind == StageKind::sql
            ? "set `settings: {jit: \"off\"}` on this stage (SET LOCAL jit = off in the query's "
              "transaction)"
            : "run `SET LOCAL jit = off;` right before that statement, in a transaction of its "
              "own (the setting ends with the transaction, so the pooled connection keeps JIT for "
              "everything else), or measure the stage with `settings: {jit: \"off\"}`";
    // JIT time is not a part of the execution time as pg_stat_statements counts them (some of it
    // falls in executor start-up), so the two are set side by side.
    out.push_back(about(
        s, q, DiagnosisKind::jit_dominates,
        fmt::format("JIT compiled {} functions in {} per run for {}, whose execution took {}{} "
                    "— {}",
                    count(q.jit_functions), ms(q.jit_ms), statement(q), ms(q.exec_ms), estimate,
                    fix),
        std::move(data)));
  }
}

// The statement's growth over the data scales (StageResult::growth), or nullptr.
const StatementGrowth* growth_of(const StageResult& s, const QueryStats& q) {
  if (!s.growth) return nullptr;
  for (const auto& g : s.growth->statements) {
    if (q.text_id.empty() ? g.query == q.query : g.text_id == q.text_id) return &g;
  }
  return nullptr;
}

// How the statement uses its parameters: read from its whole text when it was measured
// (QueryStats::parameters), else from the shortened one, where a cut text (" …") that shows no
// parameter is not known to have none: its WHERE may be past the cut.
std::optional<util::ParameterUse> parameters_of(const QueryStats& q) {
  if (q.parameters) return q.parameters;
  const util::ParameterUse shown = util::parameter_use(q.query);
  const bool cut = q.query.size() >= 4 && q.query.compare(q.query.size() - 4, 4, " …") == 0;
  if (cut && shown == util::ParameterUse::none) return std::nullopt;
  return shown;
}

void repeated(const StageResult& s, int threshold, int requests, std::vector<Diagnosis>& out) {
  for (const auto& q : s.queries) {
    if (!reads_or_writes_data(q.query)) continue;
    const StatementGrowth* g = growth_of(s, q);
    // Calls that grow with the data are an N+1 however few they are on CI's data.
    const bool calls_grow = g && g->calls.growth >= GrowthClass::linear;
    const bool calls_constant = g && g->calls.exponent && !calls_grow;
    // A stage of `requests` requests is judged per request: one call per request is the
    // stage's own loop, an N+1 is one call per row within each request.
    const double per_request = q.calls / requests;
    if (per_request < threshold && !(calls_grow && per_request >= 2)) continue;
    // No remedy to measure (it is a code change): the estimate is what all calls but one per
    // request cost, at the median time per call.
    const double saved_calls = q.calls - requests;
    const double saving = saved_calls * (q.time_ms() / q.calls);
    std::map<std::string, double> data{{"calls", q.calls},
                                       {"db_time_ms", q.time_ms()},
                                       {"rows", q.rows},
                                       {"estimated_saving_ms", saving}};
    if (requests > 1) {
      data["requests"] = requests;
      data["calls_per_request"] = per_request;
    }
    std::string growth;
    if (g && g->calls.exponent) {
      data["calls_growth_exponent"] = *g->calls.exponent;
      growth = calls_grow ? fmt::format("; its calls grow {} with the data ({} per run): an N+1 "
                                        "that grows",
                                        growth_adverb(g->calls.growth), growth_values(g->calls))
                          : fmt::format("; its calls stay constant with the data ({} per run)",
                                        growth_values(g->calls));
    }
    // An N+1 is one lookup per row of an earlier result. What else repeats — a count per page
    // request, the same settings query per transaction — has another fix, and calling it an
    // N+1 would bury the real one among look-alikes.
    const std::optional<util::ParameterUse> use = parameters_of(q);
    const std::string own_loop =
        requests > 1 ? fmt::format("this stage makes {} requests, so this is per request", requests)
                     : "if the stage makes one request per call, give it `requests:` with their "
                       "number";
    std::string shape, verdict;
    if (calls_grow || (!calls_constant && use == util::ParameterUse::lookup)) {
      shape = "per_row";
      const std::string fix = "load all of them with one query (a join, `= ANY($1)` with an "
                              "array of the keys, or the ORM's eager loading)";
      verdict = calls_grow ? fix : "an N+1: " + fix;
    } else if (use == util::ParameterUse::none) {
      shape = "same_text";
      verdict = fmt::format("repeated with the same text, so not an N+1: each call reads what the "
                            "first read unless the data changed between them — run it once and "
                            "reuse the result ({})",
                            own_loop);
    } else {
      shape = "fixed_loop";
      verdict = fmt::format("{}: batch the calls into one query ({})",
                            calls_constant ? "repeated in a fixed loop, so not an N+1 over rows"
                            : use ? "repeated, but none of its parameters is a key it looks up "
                                    "(`= $n`, `IN ($n, …)`), so likely not an N+1"
                                  : "repeated; its text is cut before its parameters, so "
                                    "whether it looks a key up (an N+1) is not known",
                            own_loop);
    }
    const std::string times =
        requests > 1 ? fmt::format("{} times per request ({} per cold run of {} requests, {} in "
                                   "all, {} repeated_threshold {} per request)",
                                   count(per_request), count(q.calls), requests, ms(q.time_ms()),
                                   per_request >= threshold ? "≥" : "<", threshold)
                     : fmt::format("{} times per cold run ({} in all, {} repeated_threshold {})",
                                   count(q.calls), ms(q.time_ms()),
                                   q.calls >= threshold ? "≥" : "<", threshold);
    Diagnosis d = about(s, q, DiagnosisKind::repeated_query,
                        fmt::format("{} ran {}{} — {}; that saves about {} of server time per "
                                    "run, plus {} round trips",
                                    statement(q), times, growth, verdict, ms(saving),
                                    count(saved_calls)),
                        std::move(data));
    d.facts["shape"] = shape;
    if (g && g->calls.growth != GrowthClass::none) d.facts["growth"] = to_string(g->calls.growth);
    out.push_back(std::move(d));
  }
}

void never_analyzed(const StageResult& s, std::vector<Diagnosis>& out) {
  if (!s.explain || s.explain->never_analyzed.empty()) return;
  const auto& tables = s.explain->never_analyzed;
  std::string names;
  const std::size_t shown = std::min<std::size_t>(tables.size(), 5);
  for (std::size_t i = 0; i < shown; ++i) names += (i ? ", " : "") + tables[i];
  if (tables.size() > shown) names += fmt::format(", … {} more", tables.size() - shown);
  out.push_back({s.name,
                 DiagnosisKind::never_analyzed,
                 fmt::format("{} table{} this stage's statements read {} never analyzed ({}): "
                             "their plans rest on default statistics — add `- analyze: true` to "
                             "setup:",
                             tables.size(), tables.size() == 1 ? "" : "s",
                             tables.size() == 1 ? "was" : "were", names),
                 {{"tables", static_cast<double>(tables.size())}},
                 "",
                 ""});
}

void planning(const StageResult& s, std::vector<Diagnosis>& out) {
  bool warm = false;
  double plan = steady_median(s, "db_plan_ms", &warm);
  double exec = steady_median(s, "db_exec_ms");
  // Per statement too: thirty 0.15 ms plans of an N+1 are the N+1's cost, not planning's.
  double statements = std::max(1.0, steady_median(s, "db_queries"));
  if (plan < k_planning_floor_ms || plan <= exec || plan / statements < k_planning_per_call_ms)
    return;
  // What a prepared statement saves is every plan of a statement after its first. A statement
  // run once per run has none to save, and its one plan in a fresh backend is mostly loading
  // catalog caches, which grows with the machine's load, not with the application's code.
  double replanned = 0;
  for (const auto& q : s.queries) {
    if (q.calls >= 2) replanned += q.plan_ms * (q.calls - 1) / q.calls;
  }
  if (replanned < k_planning_floor_ms) return;
  out.push_back({s.name,
                 DiagnosisKind::planning_exceeds_execution,
                 fmt::format("planning took {} per run, more than the {} execution (medians of "
                             "the {}) — every execution plans again: a prepared statement (or "
                             "the driver's statement cache) plans once",
                             ms(plan), ms(exec), warm ? "warm repetitions" : "cold runs"),
                 {{"db_plan_ms", plan}, {"db_exec_ms", exec}},
                 "",
                 ""});
}


// ---- condition text (EXPLAIN's deparsed expressions) ----

enum class Tok { word, quoted, literal, number, param, open, close, comma, cast, dot, op, other };

struct Token {
  Tok kind;
  std::string text;
};

bool op_char(char c) {
  return std::string_view("+-*/<>=~!@#%^&|`?").find(c) != std::string_view::npos;
}

std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> out;
  std::size_t i = 0;
  auto ident_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
           static_cast<unsigned char>(c) >= 0x80;
  };
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '\'' || c == '"') {  // a literal or a quoted name; doubled quotes inside
      std::size_t j = i + 1;
      for (; j < s.size(); ++j) {
        if (s[j] != c) continue;
        if (j + 1 < s.size() && s[j + 1] == c) {
          ++j;
          continue;
        }
        break;
      }
      j = std::min(j + 1, s.size());
      out.push_back({c == '"' ? Tok::quoted : Tok::literal, s.substr(i, j - i)});
      i = j;
    } else if (c == '$' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      std::size_t j = i + 1;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      out.push_back({Tok::param, s.substr(i, j - i)});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
      out.push_back({Tok::number, s.substr(i, j - i)});
      i = j;
    } else if (ident_char(c)) {
      std::size_t j = i;
      while (j < s.size() && ident_char(s[j])) ++j;
      out.push_back({Tok::word, s.substr(i, j - i)});
      i = j;
    } else if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      out.push_back({Tok::cast, "::"});
      i += 2;
    } else if (op_char(c)) {
      std::size_t j = i;
      while (j < s.size() && op_char(s[j])) ++j;
      out.push_back({Tok::op, s.substr(i, j - i)});
      i = j;
    } else {
      Tok k = c == '(' || c == '[' ? Tok::open
              : c == ')' || c == ']' ? Tok::close
              : c == ','             ? Tok::comma
              : c == '.'             ? Tok::dot
                                     : Tok::other;
      out.push_back({k, std::string(1, c)});
      ++i;
    }
  }
  return out;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool is_word(const Token& t, const char* w) {
  return t.kind == Tok::word && upper(t.text) == w;
}

// A name as written: "x""y" → x"y; a plain word as is (EXPLAIN prints unquoted names lower case).
std::string unquoted(const std::string& name) {
  if (name.size() < 2 || name.front() != '"') return name;
  std::string out;
  for (std::size_t i = 1; i + 1 < name.size(); ++i) {
    out += name[i];
    if (name[i] == '"' && name[i + 1] == '"') ++i;
  }
  return out;
}

// [lo, hi) with the parentheses that wrap all of it removed.
void strip_parens(const std::vector<Token>& t, std::size_t& lo, std::size_t& hi) {
  while (hi - lo >= 2 && t[lo].kind == Tok::open && t[hi - 1].kind == Tok::close) {
    int depth = 0;
    bool wraps = true;
    for (std::size_t i = lo; i < hi; ++i) {
      if (t[i].kind == Tok::open) ++depth;
      if (t[i].kind == Tok::close && --depth == 0 && i + 1 < hi) {
        wraps = false;
        break;
      }
    }
    if (!wraps) return;
    ++lo;
    --hi;
  }
}

// The column one side of a comparison is, by itself (parentheses and casts around it allowed),
// when it belongs to `alias`; "" otherwise.
std::string side_column(const std::vector<Token>& t, std::size_t lo, std::size_t hi,
                        const std::string& alias, bool unqualified) {
  strip_parens(t, lo, hi);
  // A cast at depth 0 ends the expression: `(c.code)::character varying(20)`.
  int depth = 0;
  for (std::size_t i = lo; i < hi; ++i) {
    if (t[i].kind == Tok::open) ++depth;
    if (t[i].kind == Tok::close) --depth;
    if (depth == 0 && t[i].kind == Tok::cast) {
      hi = i;
      break;
    }
  }
  strip_parens(t, lo, hi);
  auto name = [](const Token& x) { return x.kind == Tok::word || x.kind == Tok::quoted; };
  if (hi - lo == 1 && name(t[lo]) && unqualified) {
    static const std::set<std::string> k_not_columns = {"NULL", "TRUE", "FALSE", "CURRENT_DATE",
                                                        "CURRENT_TIMESTAMP", "CURRENT_USER"};
    if (t[lo].kind == Tok::word && k_not_columns.count(upper(t[lo].text))) return "";
    return t[lo].text;
  }
  if (hi - lo == 3 && name(t[lo]) && t[lo + 1].kind == Tok::dot && name(t[lo + 2]) &&
      unquoted(t[lo].text) == alias) {
    return t[lo + 2].text;
  }
  return "";
}

void add_once(std::vector<std::string>& list, const std::string& column) {
  if (!column.empty() && std::find(list.begin(), list.end(), column) == list.end()) {
    list.push_back(column);
  }
}

void conjuncts(const std::vector<Token>& t, std::size_t lo, std::size_t hi,
               const std::string& alias, bool unqualified, ConditionColumns& out, int level) {
  if (level > 100) return;
  strip_parens(t, lo, hi);
  if (lo >= hi) return;
  // Split at the ANDs of this level; an OR at this level makes it no conjunct for an index.
  std::vector<std::size_t> ands;
  int depth = 0;
  for (std::size_t i = lo; i < hi; ++i) {
    if (t[i].kind == Tok::open) ++depth;
    if (t[i].kind == Tok::close) --depth;
    if (depth != 0) continue;
    if (is_word(t[i], "OR")) return;
    if (is_word(t[i], "AND")) ands.push_back(i);
  }
  if (!ands.empty()) {
    std::size_t start = lo;
    for (std::size_t a : ands) {
      conjuncts(t, start, a, alias, unqualified, out, level + 1);
      start = a + 1;
    }
    conjuncts(t, start, hi, alias, unqualified, out, level + 1);
    return;
  }
  // One comparison: its operator at depth 0.
  depth = 0;
  for (std::size_t i = lo; i < hi; ++i) {
    if (t[i].kind == Tok::open) ++depth;
    if (t[i].kind == Tok::close) --depth;
    if (depth != 0 || t[i].kind != Tok::op) continue;
    const std::string& op = t[i].text;
    const bool eq = op == "=";
    const bool range = op == "<" || op == "<=" || op == ">" || op == ">=";
    if (!eq && !range) return;
    auto& list = eq ? out.equality : out.range;
    add_once(list, side_column(t, lo, i, alias, unqualified));
    // `col = ANY ('{…}'::integer[])` (an IN list) compares the left side only.
    if (i + 1 < hi && !is_word(t[i + 1], "ANY") && !is_word(t[i + 1], "ALL")) {
      add_once(list, side_column(t, i + 1, hi, alias, unqualified));
    }
    return;
  }
}

// Reserved key words of PostgreSQL (docs, "SQL Key Words": "reserved" and "reserved (can be
// function or type)"), which quote_ident() quotes.
bool reserved(const std::string& word) {
  static const std::set<std::string> k_words = {
      "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric",
      "authorization", "binary", "both", "case", "cast", "check", "collate", "collation",
      "column", "concurrently", "constraint", "create", "cross", "current_catalog",
      "current_date", "current_role", "current_schema", "current_time", "current_timestamp",
      "current_user", "default", "deferrable", "desc", "distinct", "do", "else", "end", "except",
      "false", "fetch", "for", "foreign", "freeze", "from", "full", "grant", "group", "having",
      "ilike", "in", "initially", "inner", "intersect", "into", "is", "isnull", "join", "lateral",
      "leading", "left", "like", "limit", "localtime", "localtimestamp", "natural", "not",
      "notnull", "null", "offset", "on", "only", "or", "order", "outer", "overlaps", "placing",
      "primary", "references", "returning", "right", "select", "session_user", "similar", "some",
      "symmetric", "system_user", "table", "tablesample", "then", "to", "trailing", "true",
      "union", "unique", "user", "using", "variadic", "verbose", "when", "where", "window",
      "with"};
  return k_words.count(word) > 0;
}

// ---- plans ----

std::string qualified(const PlanNode& n) {
  return n.schema.empty() ? n.relation : n.schema + "." + n.relation;
}

std::string qualified_sql(const PlanNode& n) {
  return n.schema.empty() ? quote_identifier(n.relation)
                          : quote_identifier(n.schema) + "." + quote_identifier(n.relation);
}

std::string joined(const std::vector<std::string>& columns, bool plain) {
  std::string out;
  for (const auto& c : columns) out += (out.empty() ? "" : ", ") + (plain ? unquoted(c) : c);
  return out;
}

std::vector<PlanNode> nodes_of(const QueryStats& q) {
  if (!q.plan) return {};
  try {
    return plan_nodes(q.plan->json, "statement " + q.queryid + ": plan");
  } catch (const Error&) {
    return {};  // a results file's plan that is not one: no finding from it
  }
}

bool is_join(const PlanNode& n) {
  return n.node_type == "Hash Join" || n.node_type == "Merge Join" || n.node_type == "Nested Loop";
}

bool is_scan(const PlanNode& n) {
  return !n.relation.empty() && (n.node_type == "Seq Scan" || n.node_type == "Index Scan" ||
                                 n.node_type == "Index Only Scan" ||
                                 n.node_type == "Bitmap Heap Scan");
}

// The relation scan on the inner side of Nested Loop `join` (through a Materialize or Memoize
// over it), or -1.
int inner_scan(const std::vector<PlanNode>& nodes, int join) {
  int inner = -1;
  for (std::size_t i = join + 1; i < nodes.size() && nodes[i].depth > nodes[join].depth; ++i) {
    if (nodes[i].parent == join && nodes[i].parent_relationship == "Inner") inner = static_cast<int>(i);
  }
  while (inner >= 0 && !is_scan(nodes[inner])) {
    const std::string& type = nodes[inner].node_type;
    if (type != "Materialize" && type != "Memoize") return -1;
    int child = -1;
    for (std::size_t i = inner + 1; i < nodes.size(); ++i) {
      if (nodes[i].parent == inner) {
        child = static_cast<int>(i);
        break;
      }
    }
    inner = child;
  }
  return inner;
}

// The columns an index for `columns` takes: equality ones, then the first range one.
std::vector<std::string> index_columns(const ConditionColumns& columns) {
  std::vector<std::string> out = columns.equality;
  for (const auto& r : columns.range) {
    if (std::find(out.begin(), out.end(), r) == out.end()) {
      out.push_back(r);
      break;
    }
  }
  return out;
}

void merge(ConditionColumns& into, const ConditionColumns& more) {
  for (const auto& c : more.equality) add_once(into.equality, c);
  for (const auto& c : more.range) add_once(into.range, c);
}

void missing_index(const StageResult& s, const QueryStats& q, std::set<std::string>& seen,
                   std::vector<Diagnosis>& out) {
  auto nodes = nodes_of(q);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const PlanNode& n = nodes[i];
    if (!n.analyzed || n.loops <= 0) continue;
    int scan = -1;
    double removed = 0;
    ConditionColumns columns;
    std::string through;
    if (is_scan(n) && !n.filter.empty()) {
      scan = static_cast<int>(i);
      removed = n.rows_removed_by_filter;
      columns = condition_columns(n.filter, n.alias, true);
      // An index scan's own condition narrows the same rows: its columns join the filter's.
      if (n.node_type != "Seq Scan") merge(columns, condition_columns(n.condition, n.alias, true));
      through = "filter";
    } else if (n.node_type == "Nested Loop" && !n.join_filter.empty()) {
      scan = inner_scan(nodes, static_cast<int>(i));
      if (scan < 0) continue;
      removed = n.rows_removed_by_join_filter;
      columns = condition_columns(n.join_filter, nodes[scan].alias, false);
      through = "join filter";
    }
    if (scan < 0) continue;
    const PlanNode& t = nodes[scan];
    const double returned = n.actual_rows;
    const double blocks = t.loops > 0 ? t.shared_blocks / t.loops : 0;
    if (removed < k_index_min_removed_rows || removed < k_index_removed_ratio * returned ||
        blocks < k_index_min_blocks) {
      continue;
    }
    std::vector<std::string> cols = index_columns(columns);
    if (cols.empty()) continue;  // expressions only: no plain index to suggest
    if (!seen.insert(s.name + '\n' + qualified(t) + '\n' + joined(cols, false)).second) continue;
    const std::string index =
        fmt::format("CREATE INDEX ON {} ({})", qualified_sql(t), joined(cols, false));
    Diagnosis d = about(
        s, q, DiagnosisKind::missing_index,
        fmt::format("{} removes {} rows per execution through its {} to return {}, reading {} "
                    "blocks, for {} — an index on {} ({}) would find them: try `{}` (`--try` "
                    "measures it in a copy of the database)",
                    node_label(t), count(removed), through, count(returned), count(std::round(blocks)),
                    statement(q), qualified(t), joined(cols, true), index),
        {{"rows_removed_per_loop", removed},
         {"rows_per_loop", returned},
         {"loops", n.loops},
         {"blocks_per_loop", blocks}});
    d.facts = {{"table", qualified(t)}, {"columns", joined(cols, true)}, {"index", index}};
    // The scales confirm it: what it reads grows with the table, what it returns does not.
    if (const StatementGrowth* g = growth_of(s, q);
        g && g->blocks_per_call.growth >= GrowthClass::linear &&
        g->rows_per_call.growth == GrowthClass::constant) {
      d.message += fmt::format("; confirmed by the data scales: blocks per call grow {} ({}) while "
                               "rows per call stay constant ({}), so it costs more with every row added",
                               growth_adverb(g->blocks_per_call.growth), growth_values(g->blocks_per_call),
                               growth_values(g->rows_per_call));
      d.facts["growth"] = to_string(g->blocks_per_call.growth);
    }
    out.push_back(std::move(d));
  }
}

// Blocks per call that grow with the data while the rows per call stay flat: the statement
// reads more of a table to return the same rows (a scan where an index would do). On CI's data
// the table may be too small for missing_index (a few pages are read whole anyway); the scales
// show the cost it grows into. The index is named from the first scale's plan when it has a
// scan with a filter on plain columns: the one that discards the most rows.
void scan_grows(const StageResult& s, const std::set<std::string>& indexed, std::vector<Diagnosis>& out) {
  for (const auto& q : s.queries) {
    const StatementGrowth* g = growth_of(s, q);
    if (!g || g->blocks_per_call.growth < GrowthClass::linear) continue;
    if (g->rows_per_call.growth != GrowthClass::constant) continue;
    if (indexed.count(q.queryid)) continue;
    std::string fix = "an index on the columns of its condition would keep it flat";
    std::map<std::string, std::string> facts;
    // The scan that throws the most rows away: in a join of small tables at the first scale
    // each may be a filtered scan (the planner reads a few pages whole rather than use even a
    // primary key), and the one that grows is the one that discards the most.
    const auto nodes = nodes_of(q);
    const PlanNode* best = nullptr;
    std::vector<std::string> cols;
    for (const PlanNode& n : nodes) {
      if (!is_scan(n) || n.filter.empty()) continue;
      std::vector<std::string> c = index_columns(condition_columns(n.filter, n.alias, true));
      if (c.empty()) continue;
      auto discarded = [](const PlanNode& x) { return x.rows_removed_by_filter * std::max(x.loops, 1.0); };
      if (!best || discarded(n) > discarded(*best) ||
          (discarded(n) == discarded(*best) && n.shared_blocks > best->shared_blocks)) {
        best = &n;
        cols = std::move(c);
      }
    }
    if (best) {
      const PlanNode& n = *best;
      const std::string index = fmt::format("CREATE INDEX ON {} ({})", qualified_sql(n), joined(cols, false));
      // No `--try` here: a trial measures at the first scale, where the scan is still cheap.
      fix = fmt::format("it is a {} filtering on {}: an index on {} ({}) would keep it flat — add "
                        "`{}` and compare the growth (`coldgate ab`)",
                        node_label(n), joined(cols, true), qualified(n), joined(cols, true), index);
      facts = {{"table", qualified(n)}, {"columns", joined(cols, true)}, {"index", index}};
    }
    Diagnosis d = about(
        s, q, DiagnosisKind::scan_grows,
        fmt::format("{} reads blocks per call that grow {} with the data ({}) while it returns "
                    "the same rows per call ({}): {}",
                    statement(q), growth_adverb(g->blocks_per_call.growth), growth_values(g->blocks_per_call),
                    growth_values(g->rows_per_call), fix),
        {{"blocks_growth_exponent", g->blocks_per_call.exponent.value_or(0)}});
    d.facts = std::move(facts);
    d.facts["growth"] = to_string(g->blocks_per_call.growth);
    out.push_back(std::move(d));
  }
}

// The parent `n` feeds a join through, or nullptr: its parent when that is a join, or its
// grandparent when the parent only buffers its rows for one (Hash, Materialize, Memoize, Sort).
const PlanNode* feeds_join(const std::vector<PlanNode>& nodes, const PlanNode& n) {
  if (n.parent < 0) return nullptr;
  const PlanNode* p = &nodes[n.parent];
  if ((p->node_type == "Hash" || p->node_type == "Materialize" || p->node_type == "Memoize" ||
       p->node_type == "Sort") &&
      p->parent >= 0) {
    p = &nodes[p->parent];
  }
  return is_join(*p) ? p : nullptr;
}

// True when `n`'s consumer may have stopped reading it before its end, so that fewer actual rows
// than estimated say nothing about the estimate: a Merge Join stops a side once the other is
// exhausted, a semi or anti join at the first match, a Limit above at its count (PostgreSQL
// docs, "Using EXPLAIN": "the actual row count … may be less than the estimate" there).
bool may_stop_early(const std::vector<PlanNode>& nodes, const PlanNode& n, const PlanNode& join) {
  if (join.node_type == "Merge Join" || join.join_type == "Semi" || join.join_type == "Anti")
    return true;
  for (int p = n.parent; p >= 0; p = nodes[p].parent) {
    if (nodes[p].node_type == "Limit") return true;
  }
  return false;
}

void misestimate(const StageResult& s, const QueryStats& q, std::set<std::string>& seen,
                 std::vector<Diagnosis>& out) {
  auto nodes = nodes_of(q);
  for (const auto& n : nodes) {
    if (!n.analyzed || n.loops <= 0 || n.relation.empty()) continue;
    const PlanNode* join = feeds_join(nodes, n);
    if (!join) continue;
    const double hi = std::max(n.plan_rows, n.actual_rows);
    const double lo = std::max(1.0, std::min(n.plan_rows, n.actual_rows));
    if (hi < k_misestimate_min_rows || hi < k_misestimate_ratio * lo) continue;
    if (n.actual_rows < n.plan_rows && may_stop_early(nodes, n, *join)) continue;
    ConditionColumns c = condition_columns(n.filter, n.alias, true);
    merge(c, condition_columns(n.condition, n.alias, true));
    std::vector<std::string> cols = c.equality;
    for (const auto& r : c.range) add_once(cols, r);
    if (!seen.insert(s.name + '\n' + qualified(n) + '\n' + joined(cols, false)).second) continue;
    const double factor = hi / lo;
    std::string statistics;
    std::string fix = fmt::format("ANALYZE {}", qualified_sql(n));
    // PostgreSQL's extended statistics take 2 to 8 columns (docs, "CREATE STATISTICS").
    if (cols.size() >= 2 && cols.size() <= 8) {
      std::string name = n.relation;
      for (const auto& col : cols) name += "_" + unquoted(col);
      name += "_stats";
      if (name.size() > 63) name = name.substr(0, 57) + "_stats";
      statistics = fmt::format("CREATE STATISTICS {}{} ON {} FROM {}",
                               n.schema.empty() ? "" : quote_identifier(n.schema) + ".",
                               quote_identifier(name), joined(cols, false), qualified_sql(n));
      fix = fmt::format("{}; if the statistics are fresh, the columns {} are correlated: try `{}` "
                        "then ANALYZE",
                        fix, joined(cols, true), statistics);
    }
    Diagnosis d = about(
        s, q, DiagnosisKind::misestimate,
        fmt::format("{} was estimated at {} rows and returned {} per loop ({}× {}), feeding a "
                    "{}, for {} — the join was planned for the wrong row count: {} (`--try` "
                    "measures {} in a copy of the database)",
                    node_label(n), count(n.plan_rows), count(n.actual_rows),
                    count(std::round(factor)), n.actual_rows > n.plan_rows ? "more" : "fewer",
                    node_label(*join), statement(q), fix, statistics.empty() ? "it" : "both"),
        {{"plan_rows", n.plan_rows},
         {"actual_rows", n.actual_rows},
         {"loops", n.loops},
         {"ratio", factor}});
    d.facts = {{"table", qualified(n)}, {"columns", joined(cols, true)}};
    if (!statistics.empty()) d.facts["statistics"] = statistics;
    out.push_back(std::move(d));
  }
}

}  // namespace

ConditionColumns condition_columns(const std::string& condition, const std::string& alias,
                                   bool unqualified) {
  ConditionColumns out;
  auto t = tokenize(condition);
  conjuncts(t, 0, t.size(), alias, unqualified, out, 0);
  return out;
}

std::string quote_identifier(const std::string& name) {
  bool plain = !name.empty() && (std::islower(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '_' || c == '$')) {
      plain = false;
    }
  }
  if (plain && !reserved(name)) return name;
  std::string out = "\"";
  for (char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

std::vector<Diagnosis> diagnose(const Results& results, const config::Config& config) {
  std::vector<Diagnosis> out;
  const bool setup_analyzes = config.setup_analyzes();
  for (const auto& s : results.stages) {
    if (s.failed()) continue;
    const config::Stage* stage = stage_of(config, s.name);
    jit_dominates(s, out);
    repeated(s, stage ? stage->repeated_threshold : config::k_default_repeated_threshold,
             stage ? std::max(1, stage->requests) : 1, out);
    if (!setup_analyzes) never_analyzed(s, out);
    planning(s, out);
    std::set<std::string> indexes, estimates;
    const std::size_t before = out.size();
    for (const auto& q : s.queries) missing_index(s, q, indexes, out);
    std::set<std::string> indexed;
    for (std::size_t i = before; i < out.size(); ++i) indexed.insert(out[i].queryid);
    scan_grows(s, indexed, out);
    for (const auto& q : s.queries) misestimate(s, q, estimates, out);
  }
  return out;
}

}  // namespace coldgate::measure
