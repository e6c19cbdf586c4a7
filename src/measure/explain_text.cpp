// The plan tree of EXPLAIN (FORMAT JSON) in PostgreSQL's own text format. The layout, the
// labels and the order of the lines under a node follow src/backend/commands/explain.c
// (ExplainNode and the show_* functions it calls); the keys are the JSON names it writes.
#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "measure/explain.hpp"
#include "util/error.hpp"

namespace coldgate::measure {
namespace {

using nlohmann::json;

const json* member(const json& node, const char* key) {
  auto it = node.find(key);
  return it == node.end() ? nullptr : &*it;
}

double num(const json& node, const char* key) {
  const json* v = member(node, key);
  return v && v->is_number() ? v->get<double>() : 0.0;
}

bool has_number(const json& node, const char* key) {
  const json* v = member(node, key);
  return v && v->is_number();
}

std::string str(const json& node, const char* key) {
  const json* v = member(node, key);
  return v && v->is_string() ? v->get<std::string>() : "";
}

bool is_true(const json& node, const char* key) {
  const json* v = member(node, key);
  return v && v->is_boolean() && v->get<bool>();
}

// A count as EXPLAIN prints it (%.0f); PostgreSQL 18 gives rows per loop with two decimals,
// which are kept when they are not zero.
std::string explain_count(double v) {
  return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{:.2f}", v);
}

// quote_identifier (src/backend/utils/adt/ruleutils.c) without its keyword list: a name stays
// bare when it is lower-case letters, digits and `_` and does not start with a digit.
std::string identifier(const std::string& name) {
  bool safe = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) safe = safe && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (safe) return name;
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// "Sort Key": ["a", "b DESC"] as `a, b DESC`.
std::string list(const json& node, const char* key) {
  const json* v = member(node, key);
  if (!v || !v->is_array()) return "";
  std::string out;
  for (const auto& item : *v) {
    if (item.is_string()) out += (out.empty() ? "" : ", ") + item.get<std::string>();
  }
  return out;
}

// The node's name as the text format prints it: "Node Type" with the strategy, partial mode,
// operation or join type ExplainNode folds into it, then its index and target.
std::string label(const json& node) {
  const std::string type = str(node, "Node Type");
  std::string name = type;
  if (type == "Aggregate") {
    const std::string strategy = str(node, "Strategy");
    name = strategy == "Sorted"   ? "GroupAggregate"
           : strategy == "Hashed" ? "HashAggregate"
           : strategy == "Mixed"  ? "MixedAggregate"
                                  : "Aggregate";
    const std::string mode = str(node, "Partial Mode");
    if (mode == "Partial" || mode == "Finalize") name = mode + " " + name;
  } else if (type == "ModifyTable") {
    name = str(node, "Operation");
  } else if (type == "Foreign Scan") {
    const std::string op = str(node, "Operation");
    if (!op.empty() && op != "Select") name = "Foreign " + op;
  } else if (type == "Custom Scan") {
    if (auto provider = str(node, "Custom Plan Provider"); !provider.empty())
      name = "Custom Scan (" + provider + ")";
  } else if (type == "SetOp") {
    name = str(node, "Strategy") == "Hashed" ? "HashSetOp" : "SetOp";
    if (auto command = str(node, "Command"); !command.empty()) name += " " + command;
  } else if (type == "Hash Join" || type == "Merge Join" || type == "Nested Loop") {
    const std::string join = str(node, "Join Type");
    name = type == "Hash Join" ? "Hash" : type == "Merge Join" ? "Merge" : "Nested Loop";
    if (!join.empty() && join != "Inner") {
      name += " " + join + " Join";
    } else if (type != "Nested Loop") {
      name += " Join";
    }
  }
  std::string prefix;
  if (is_true(node, "Parallel Aware")) prefix += "Parallel ";
  if (is_true(node, "Async Capable")) prefix += "Async ";
  name = prefix + name;

  if (type == "Index Scan" || type == "Index Only Scan") {
    if (str(node, "Scan Direction") == "Backward") name += " Backward";
    name += " using " + identifier(str(node, "Index Name"));
  } else if (type == "Bitmap Index Scan") {
    name += " on " + identifier(str(node, "Index Name"));
  }
  // A scan or modify target: the JSON has "Alias" exactly where the text has " on …".
  if (member(node, "Alias")) {
    std::string object;
    for (const char* key : {"Relation Name", "Function Name", "Table Function Name", "CTE Name",
                            "Tuplestore Name"}) {
      if (object.empty()) object = str(node, key);
    }
    const std::string alias = str(node, "Alias");
    name += " on";
    if (auto schema = str(node, "Schema"); !schema.empty() && !object.empty()) {
      name += " " + identifier(schema) + "." + identifier(object);
    } else if (!object.empty()) {
      name += " " + identifier(object);
    }
    if (object.empty() || alias != object) name += " " + identifier(alias);
  }
  return name;
}

// The timing and rows of EXPLAIN ANALYZE: `time=0.010..0.020 rows=50 loops=1` (no time with
// TIMING OFF).
std::string actual(const json& node) {
  std::string out;
  if (has_number(node, "Actual Startup Time")) {
    out = fmt::format("time={:.3f}..{:.3f} ", num(node, "Actual Startup Time"),
                      num(node, "Actual Total Time"));
  }
  return out + fmt::format("rows={} loops={:.0f}", explain_count(num(node, "Actual Rows")),
                           num(node, "Actual Loops"));
}

// The node's first line after its name: the estimate, then what ANALYZE measured.
std::string figures(const json& node) {
  std::string out;
  if (has_number(node, "Startup Cost")) {
    out += fmt::format("  (cost={:.2f}..{:.2f} rows={:.0f} width={:.0f})",
                       num(node, "Startup Cost"), num(node, "Total Cost"), num(node, "Plan Rows"),
                       num(node, "Plan Width"));
  }
  if (has_number(node, "Actual Loops")) {
    out += num(node, "Actual Loops") > 0 ? " (actual " + actual(node) + ")" : " (never executed)";
  }
  return out;
}

// `Buffers: shared hit=12 read=3, temp read=1 written=1`, each figure only when not zero, and
// `I/O Timings: …` (show_buffer_usage). PostgreSQL 15 names its shared read time
// "I/O Read Time"; 16 and later have "Shared I/O Read Time" and "Local I/O Read Time".
void buffer_lines(const json& node, const std::string& indent, std::vector<std::string>& out) {
  auto group = [&](const char* name, std::initializer_list<std::pair<const char*, const char*>> fields,
                   std::string& line) {
    std::string part;
    for (const auto& [key, label] : fields) {
      if (num(node, key) > 0) part += fmt::format(" {}={:.0f}", label, num(node, key));
    }
    if (part.empty()) return;
    line += (line.empty() ? " " : ", ") + std::string(name) + part;
  };
  std::string blocks;
  group("shared", {{"Shared Hit Blocks", "hit"}, {"Shared Read Blocks", "read"},
                   {"Shared Dirtied Blocks", "dirtied"}, {"Shared Written Blocks", "written"}},
        blocks);
  group("local", {{"Local Hit Blocks", "hit"}, {"Local Read Blocks", "read"},
                  {"Local Dirtied Blocks", "dirtied"}, {"Local Written Blocks", "written"}},
        blocks);
  group("temp", {{"Temp Read Blocks", "read"}, {"Temp Written Blocks", "written"}}, blocks);
  if (!blocks.empty()) out.push_back(indent + "Buffers:" + blocks);

  std::string timings;
  auto times = [&](const char* name, const char* read, const char* write) {
    std::string part;
    if (num(node, read) > 0) part += fmt::format(" read={:.3f}", num(node, read));
    if (num(node, write) > 0) part += fmt::format(" write={:.3f}", num(node, write));
    if (!part.empty()) timings += (timings.empty() ? " " : ", ") + std::string(name) + part;
  };
  times("shared", "I/O Read Time", "I/O Write Time");
  times("shared", "Shared I/O Read Time", "Shared I/O Write Time");
  times("local", "Local I/O Read Time", "Local I/O Write Time");
  times("temp", "Temp I/O Read Time", "Temp I/O Write Time");
  if (!timings.empty()) out.push_back(indent + "I/O Timings:" + timings);
}

// The lines under a node (or a worker of it), in ExplainNode's order: keys, conditions, rows
// removed (only when not zero, as the text format does), the node type's own figures, buffers.
void detail_lines(const json& node, const std::string& indent, std::vector<std::string>& out) {
  const std::string type = str(node, "Node Type");
  auto text = [&](const char* key) {
    if (auto v = str(node, key); !v.empty()) out.push_back(indent + key + ": " + v);
  };
  auto keys = [&](const char* key) {
    if (auto v = list(node, key); !v.empty()) out.push_back(indent + key + ": " + v);
  };
  auto removed = [&](const char* key) {
    if (num(node, key) > 0) out.push_back(fmt::format("{}{}: {:.0f}", indent, key, num(node, key)));
  };
  auto integer = [&](const char* key) {
    if (has_number(node, key)) out.push_back(fmt::format("{}{}: {:.0f}", indent, key, num(node, key)));
  };

  keys("Output");
  keys("Sort Key");
  keys("Presorted Key");
  keys("Group Key");
  text("Cache Key");
  text("Cache Mode");
  for (const char* cond : {"Hash Cond", "Merge Cond", "Index Cond", "Recheck Cond", "TID Cond",
                           "One-Time Filter"}) {
    text(cond);
  }
  removed("Rows Removed by Index Recheck");
  text("Order By");
  text("Join Filter");
  removed("Rows Removed by Join Filter");
  text("Filter");
  if (type == "Aggregate") {  // show_hashagg_info
    std::string line;
    if (num(node, "Planned Partitions") > 0)
      line = fmt::format("Planned Partitions: {:.0f}", num(node, "Planned Partitions"));
    if (num(node, "Peak Memory Usage") > 0) {
      line += fmt::format("{}Batches: {:.0f}  Memory Usage: {:.0f}kB", line.empty() ? "" : "  ",
                          num(node, "HashAgg Batches"), num(node, "Peak Memory Usage"));
      if (num(node, "HashAgg Batches") > 1)
        line += fmt::format("  Disk Usage: {:.0f}kB", num(node, "Disk Usage"));
    }
    if (!line.empty()) out.push_back(indent + line);
  }
  removed("Rows Removed by Filter");
  text("Conflict Resolution");
  keys("Conflict Arbiter Indexes");
  text("Conflict Filter");
  removed("Rows Removed by Conflict Filter");
  integer("Tuples Inserted");
  integer("Conflicting Tuples");
  integer("Heap Fetches");
  if (num(node, "Exact Heap Blocks") > 0 || num(node, "Lossy Heap Blocks") > 0) {
    std::string line = indent + "Heap Blocks:";
    if (num(node, "Exact Heap Blocks") > 0)
      line += fmt::format(" exact={:.0f}", num(node, "Exact Heap Blocks"));
    if (num(node, "Lossy Heap Blocks") > 0)
      line += fmt::format(" lossy={:.0f}", num(node, "Lossy Heap Blocks"));
    out.push_back(line);
  }
  if (auto method = str(node, "Sort Method"); !method.empty()) {
    out.push_back(fmt::format("{}Sort Method: {}  {}: {:.0f}kB", indent, method,
                              str(node, "Sort Space Type"), num(node, "Sort Space Used")));
  }
  if (type == "Hash" && num(node, "Hash Batches") > 0) {  // show_hash_info
    const double buckets = num(node, "Hash Buckets"), batches = num(node, "Hash Batches");
    const double buckets0 = num(node, "Original Hash Buckets");
    const double batches0 = num(node, "Original Hash Batches");
    out.push_back(buckets != buckets0 || batches != batches0
                      ? fmt::format("{}Buckets: {:.0f} (originally {:.0f})  Batches: {:.0f} "
                                    "(originally {:.0f})  Memory Usage: {:.0f}kB",
                                    indent, buckets, buckets0, batches, batches0,
                                    num(node, "Peak Memory Usage"))
                      : fmt::format("{}Buckets: {:.0f}  Batches: {:.0f}  Memory Usage: {:.0f}kB",
                                    indent, buckets, batches, num(node, "Peak Memory Usage")));
  }
  if (type == "Memoize" && num(node, "Cache Misses") > 0) {
    out.push_back(fmt::format("{}Hits: {:.0f}  Misses: {:.0f}  Evictions: {:.0f}  Overflows: "
                              "{:.0f}  Memory Usage: {:.0f}kB",
                              indent, num(node, "Cache Hits"), num(node, "Cache Misses"),
                              num(node, "Cache Evictions"), num(node, "Cache Overflows"),
                              num(node, "Peak Memory Usage")));
  }
  integer("Workers Planned");
  integer("Workers Launched");
  if (is_true(node, "Single Copy")) out.push_back(indent + "Single Copy: true");
  buffer_lines(node, indent, out);

  // Each worker's own figures (ExplainOpenWorker): the first after "Worker N:  ", the others
  // one step further in.
  if (const json* workers = member(node, "Workers"); workers && workers->is_array()) {
    for (const auto& w : *workers) {
      if (!w.is_object()) continue;
      std::vector<std::string> lines;
      if (has_number(w, "Actual Loops")) lines.push_back(indent + "  actual " + actual(w));
      detail_lines(w, indent + "  ", lines);
      if (lines.empty()) continue;
      lines.front() = fmt::format("{}Worker {:.0f}:  {}", indent, num(w, "Worker Number"),
                                  lines.front().substr(indent.size() + 2));
      for (auto& line : lines) out.push_back(std::move(line));
    }
  }
  if (num(node, "Subplans Removed") > 0) integer("Subplans Removed");
}

}  // namespace

std::string plan_text(std::string_view text, const std::string& where) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_array() || doc.size() != 1 || !doc[0].is_object()) {
    throw Error(ExitCode::infrastructure, where,
                "unexpected EXPLAIN output: expected a one-element array of an object");
  }
  const json* plan = member(doc[0], "Plan");
  if (!plan || !plan->is_object()) {
    throw Error(ExitCode::infrastructure, where, "unexpected EXPLAIN output: no \"Plan\" object");
  }
  // explain.c's es->indent, two spaces a step: a child's arrow one step in from its parent's
  // lines, its own lines three steps in from the arrow. Iterative: plans nest deep.
  struct Entry {
    const json* node;
    int indent;
  };
  std::string out;
  std::vector<Entry> todo{{plan, 0}};
  std::vector<std::string> lines;
  while (!todo.empty()) {
    auto [node, indent] = todo.back();
    todo.pop_back();
    if (!node->is_object()) continue;
    if (auto sub = str(*node, "Subplan Name"); !sub.empty()) {
      out += std::string(static_cast<std::size_t>(indent) * 2, ' ') + sub + "\n";
      ++indent;
    }
    if (indent > 0) {
      out += std::string(static_cast<std::size_t>(indent) * 2, ' ') + "->  ";
      indent += 2;
    }
    out += label(*node) + figures(*node) + "\n";
    ++indent;
    lines.clear();
    detail_lines(*node, std::string(static_cast<std::size_t>(indent) * 2, ' '), lines);
    for (const auto& line : lines) out += line + "\n";
    if (const json* children = member(*node, "Plans"); children && children->is_array()) {
      for (auto it = children->rbegin(); it != children->rend(); ++it) todo.push_back({&*it, indent});
    }
  }
  // The planner's own buffers (EXPLAIN (ANALYZE, BUFFERS), PostgreSQL 13 and later).
  if (const json* planning = member(doc[0], "Planning"); planning && planning->is_object()) {
    lines.clear();
    buffer_lines(*planning, "  ", lines);
    if (!lines.empty()) out += "Planning:\n";
    for (const auto& line : lines) out += line + "\n";
  }
  return out;
}

}  // namespace coldgate::measure
