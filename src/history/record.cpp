#include "history/record.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "results/json_parts.hpp"
#include "util/error.hpp"

namespace coldgate::history {
namespace {

using nlohmann::ordered_json;

// A history file is one commit's figures: kilobytes. Anything far larger is not ours, and
// reading it whole would let one bad file cost the dashboard its memory.
constexpr std::size_t k_max_record_bytes = 16u << 20;


ordered_json string_map(const std::map<std::string, std::string>& m) {
  ordered_json o = ordered_json::object();
  for (const auto& [k, v] : m) o[k] = v;
  return o;
}

bool is_sha(const std::string& s) {
  if (s.size() != 40 && s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The validating reader: every error names the member by its path in the file.
class Reader {
 public:
  explicit Reader(const std::string& name) : m_name(name) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw Error(ExitCode::usage, m_name, fmt::format("{}: {}", path, what));
  }

  const ordered_json& member(const ordered_json& o, const std::string& path, const char* key,
                             ordered_json::value_t type, bool required = true) const {
    static const ordered_json null_value;
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
      if (required) fail(join(path, key), "missing");
      return null_value;
    }
    bool ok = type == ordered_json::value_t::number_float ? it->is_number() : it->type() == type;
    if (type == ordered_json::value_t::number_integer) ok = it->is_number_integer();
    if (!ok) fail(join(path, key), fmt::format("is {} (expected {})", it->type_name(), kind(type)));
    return *it;
  }

  std::string text(const ordered_json& o, const std::string& path, const char* key,
                   bool required = true) const {
    const auto& v = member(o, path, key, ordered_json::value_t::string, required);
    return v.is_null() ? std::string() : v.get<std::string>();
  }

  int integer(const ordered_json& o, const std::string& path, const char* key) const {
    const auto& v = member(o, path, key, ordered_json::value_t::number_integer, false);
    if (v.is_null()) return 0;
    auto n = v.get<std::int64_t>();
    if (n < 0 || n > 1'000'000) fail(join(path, key), fmt::format("{} is out of range", n));
    return static_cast<int>(n);
  }

  std::vector<double> numbers(const ordered_json& o, const std::string& path, const char* key,
                              bool non_negative) const {
    std::vector<double> out;
    const auto& a = member(o, path, key, ordered_json::value_t::array, false);
    if (a.is_null()) return out;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string at = fmt::format("{}.{}[{}]", path, key, i);
      if (!a[i].is_number()) fail(at, fmt::format("is {} (expected a number)", a[i].type_name()));
      double x = a[i].get<double>();
      if (!std::isfinite(x)) fail(at, "is not a finite number");
      if (non_negative && x < 0) fail(at, fmt::format("is {:g}: a time or size cannot be negative", x));
      out.push_back(x);
    }
    return out;
  }

  /// One finite, non-negative number (a statement's figure); 0 when absent or null and not
  /// required.
  double number(const ordered_json& o, const std::string& path, const char* key,
                bool required = false) const {
    const auto& v = member(o, path, key, ordered_json::value_t::number_float, required);
    if (v.is_null()) return 0;
    return finite_non_negative(v, join(path, key));
  }

  std::optional<double> optional_number(const ordered_json& o, const std::string& path,
                                        const char* key) const {
    const auto& v = member(o, path, key, ordered_json::value_t::number_float, false);
    if (v.is_null()) return std::nullopt;
    return finite_non_negative(v, join(path, key));
  }

  std::vector<std::string> strings(const ordered_json& o, const std::string& path,
                                   const char* key) const {
    std::vector<std::string> out;
    const auto& a = member(o, path, key, ordered_json::value_t::array, false);
    if (a.is_null()) return out;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string()) {
        fail(fmt::format("{}.{}[{}]", path, key, i),
             fmt::format("is {} (expected a string)", a[i].type_name()));
      }
      out.push_back(a[i].get<std::string>());
    }
    return out;
  }

  std::map<std::string, std::string> string_map(const ordered_json& o, const std::string& path,
                                                const char* key) const {
    std::map<std::string, std::string> out;
    const auto& m = member(o, path, key, ordered_json::value_t::object, false);
    if (m.is_null()) return out;
    for (const auto& [k, v] : m.items()) {
      if (!v.is_string()) {
        fail(fmt::format("{}.{}.{}", path, key, k),
             fmt::format("is {} (expected a string)", v.type_name()));
      }
      out[k] = v.get<std::string>();
    }
    return out;
  }

  double finite_non_negative(const ordered_json& v, const std::string& at) const {
    double x = v.get<double>();
    if (!std::isfinite(x)) fail(at, "is not a finite number");
    if (x < 0) fail(at, fmt::format("is {:g}: a count, time or size cannot be negative", x));
    return x;
  }

  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

 private:
  static const char* kind(ordered_json::value_t type) {
    switch (type) {
      case ordered_json::value_t::string: return "a string";
      case ordered_json::value_t::array: return "an array";
      case ordered_json::value_t::object: return "an object";
      case ordered_json::value_t::boolean: return "true or false";
      case ordered_json::value_t::number_integer: return "an integer";
      default: return "a number";
    }
  }
  std::string m_name;
};

// A time (ms) or size (bytes) cannot be negative; a command's own metric may be.
bool non_negative_unit(const std::string& unit) { return unit == "ms" || unit == "bytes"; }

bool is_hex(const std::string& s, std::size_t size) {
  return s.size() == size && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// pg_stat_statements.queryid as results.json writes it: a bigint's decimal text.
bool is_queryid(const std::string& s) {
  const std::size_t digits = s.rfind('-', 0) == 0 ? 1 : 0;
  return s.size() > digits && s.size() <= 20 &&
         s.find_first_not_of("0123456789", digits) == std::string::npos;
}

// A stage's statement table (`queries`): absent or null is no table, [] an empty one.
std::optional<std::vector<results::QueryStats>> read_queries(const Reader& r, const ordered_json& s,
                                                             const std::string& path) {
  const auto& a = r.member(s, path, "queries", ordered_json::value_t::array, false);
  if (a.is_null()) return std::nullopt;
  std::vector<results::QueryStats> out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string at = fmt::format("{}.queries[{}]", path, i);
    const ordered_json& q = a[i];
    if (!q.is_object()) r.fail(at, fmt::format("is {} (expected an object)", q.type_name()));
    results::QueryStats x;
    x.text_id = r.text(q, at, "text_id", false);
    if (!x.text_id.empty() && !is_hex(x.text_id, 16)) {
      r.fail(at + ".text_id", fmt::format("\"{}\" is not 16 hex digits", x.text_id));
    }
    x.query = r.text(q, at, "query");
    x.queryid = r.text(q, at, "queryid", false);
    if (!x.queryid.empty() && !is_queryid(x.queryid)) {
      r.fail(at + ".queryid", fmt::format("\"{}\" is not a queryid (decimal digits)", x.queryid));
    }
    x.calls = r.number(q, at, "calls", true);
    x.rows = r.number(q, at, "rows");
    x.plan_ms = r.number(q, at, "plan_ms");
    x.exec_ms = r.number(q, at, "exec_ms");
    x.jit_ms = r.number(q, at, "jit_ms");
    x.jit_functions = r.number(q, at, "jit_functions");
    x.blocks = r.optional_number(q, at, "blocks");
    x.blocks_per_call = r.optional_number(q, at, "blocks_per_call");
    out.push_back(std::move(x));
  }
  return out;
}

StagePoint read_stage(const Reader& r, const ordered_json& s, const std::string& path) {
  if (!s.is_object()) r.fail(path, fmt::format("is {} (expected an object)", s.type_name()));
  StagePoint p;
  p.name = r.text(s, path, "name");
  if (p.name.empty()) r.fail(path + ".name", "is empty");
  const std::string kind = r.text(s, path, "kind", false);
  if (!kind.empty()) {
    auto k = results::stage_kind_from(kind);
    if (!k) r.fail(path + ".kind", fmt::format("is \"{}\" (expected sql or command)", kind));
    p.kind = *k;
  }
  const std::string cold = r.text(s, path, "cold", false);
  if (!cold.empty()) {
    auto c = results::cold_mode_from(cold);
    if (!c) r.fail(path + ".cold", fmt::format("is \"{}\" (expected process or restart)", cold));
    p.cold_mode = *c;
  }
  p.runs = r.integer(s, path, "runs");
  p.warm = r.integer(s, path, "warm");
  p.settings = r.string_map(s, path, "settings");
  const auto& failed = r.member(s, path, "failed", ordered_json::value_t::boolean, false);
  p.failed = !failed.is_null() && failed.get<bool>();
  p.snapshot = r.text(s, path, "snapshot", false);
  if (!p.snapshot.empty() && !results::snapshot_status_from(p.snapshot)) {
    r.fail(path + ".snapshot", fmt::format("is \"{}\" (not a snapshot status)", p.snapshot));
  }
  p.regressions = r.strings(s, path, "regressions");
  const auto& metrics = r.member(s, path, "metrics", ordered_json::value_t::object);
  for (const auto& [name, m] : metrics.items()) {
    const std::string at = path + ".metrics." + name;
    if (!m.is_object()) r.fail(at, fmt::format("is {} (expected an object)", m.type_name()));
    results::Metric metric;
    metric.unit = r.text(m, at, "unit");
    const bool non_negative = non_negative_unit(metric.unit);
    metric.cold = r.numbers(m, at, "cold", non_negative);
    metric.warm = r.numbers(m, at, "warm", non_negative);
    p.metrics.emplace_back(name, std::move(metric));
  }
  p.queries = read_queries(r, s, path);
  return p;
}

}  // namespace

const results::Metric* StagePoint::find(std::string_view name) const {
  for (const auto& [n, m] : metrics) {
    if (n == name) return &m;
  }
  return nullptr;
}

const StagePoint* Record::find(std::string_view name) const {
  for (const auto& s : stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Record reduce(const results::Results& r, const CommitFacts& facts, std::string branch,
              std::string fingerprint, std::string recorded_at, const std::string& source) {
  if (r.git.commit.empty()) {
    throw Error(ExitCode::usage, source,
                r.git.unborn ? "the run was made in a git repository without commits: commit, "
                               "run again, then record"
                             : "the results name no commit: record a run made in a git checkout");
  }
  if (!is_sha(r.git.commit)) {
    throw Error(ExitCode::usage, source,
                fmt::format("git.commit \"{}\" is not a full commit SHA", r.git.commit));
  }
  if (r.stopped) {
    throw Error(ExitCode::usage, source,
                fmt::format("the run stopped in its {} phase before measuring every stage "
                            "({}): nothing recorded; fix it and record a complete run",
                            results::to_string(r.stopped->phase), r.stopped->error.substr(0, r.stopped->error.find('\n'))));
  }
  Record rec;
  rec.commit = r.git.commit;
  rec.parent = facts.parent;
  rec.branch = branch.empty() ? r.git.branch : std::move(branch);
  rec.subject = facts.subject;
  rec.date = facts.date;
  rec.recorded_at = std::move(recorded_at);
  rec.tool_version = r.tool_version;
  rec.fingerprint = std::move(fingerprint);
  rec.ci_run_url = r.ci_run_url;
  rec.environment = r.environment;
  for (const auto& s : r.stages) {
    StagePoint p;
    p.name = s.name;
    p.kind = s.kind;
    p.cold_mode = s.cold_mode;
    p.runs = s.runs;
    p.warm = s.warm;
    p.settings = s.settings;
    p.failed = s.failed();
    if (s.snapshot) p.snapshot = std::string(results::to_string(s.snapshot->status));
    p.metrics = s.metrics;
    // A profiled stage has a statement table, even an empty one (a command that ran no
    // statement); an unprofiled one has none, so a baseline never reads it as "0 calls".
    if (!s.queries.empty() || s.find("db_queries")) {
      p.queries.emplace();
      for (const auto& q : s.queries) {
        results::QueryStats x = q;
        x.total_cost.reset();  // a plan's estimate, not a measurement of the run
        p.queries->push_back(std::move(x));
      }
    }
    if (r.gate) {
      std::set<std::string> seen;
      for (const auto& v : r.gate->metrics) {
        if (v.stage == s.name && v.verdict == results::Verdict::regression &&
            seen.insert(v.metric).second) {
          p.regressions.push_back(v.metric);
        }
      }
    }
    rec.stages.push_back(std::move(p));
  }
  return rec;
}

std::string file_name(const Record& record) { return record.commit + ".json"; }

std::string to_json(const Record& rec) {
  ordered_json j;
  j["schema"] = k_history_schema;
  j["commit"] = rec.commit;
  j["parent"] = rec.parent;
  j["branch"] = rec.branch;
  j["subject"] = rec.subject;
  j["date"] = rec.date;
  j["recorded_at"] = rec.recorded_at;
  j["tool"] = {{"name", "coldgate"}, {"version", rec.tool_version}};
  j["fingerprint"] = rec.fingerprint;
  j["ci_run_url"] = rec.ci_run_url;
  j["environment"] = results::environment_json(rec.environment);
  ordered_json stages = ordered_json::array();
  for (const auto& s : rec.stages) {
    ordered_json st;
    st["name"] = s.name;
    st["kind"] = results::to_string(s.kind);
    st["cold"] = results::to_string(s.cold_mode);
    st["runs"] = s.runs;
    st["warm"] = s.warm;
    st["settings"] = string_map(s.settings);
    st["failed"] = s.failed;
    st["snapshot"] = s.snapshot;
    st["regressions"] = s.regressions;
    ordered_json metrics = ordered_json::object();
    for (const auto& [name, m] : s.metrics) {
      metrics[name] = {{"unit", m.unit}, {"cold", results::json_samples(m.cold)}, {"warm", results::json_samples(m.warm)}};
    }
    st["metrics"] = std::move(metrics);
    if (s.queries) {
      ordered_json queries = ordered_json::array();
      for (const auto& q : *s.queries) {
        auto optional = [](const std::optional<double>& v) {
          return v ? results::json_number(*v) : ordered_json();
        };
        queries.push_back({{"text_id", q.text_id},
                           {"query", q.query},
                           {"queryid", q.queryid},
                           {"calls", results::json_number(q.calls)},
                           {"rows", results::json_number(q.rows)},
                           {"plan_ms", results::json_number(q.plan_ms)},
                           {"exec_ms", results::json_number(q.exec_ms)},
                           {"jit_ms", results::json_number(q.jit_ms)},
                           {"jit_functions", results::json_number(q.jit_functions)},
                           {"blocks", optional(q.blocks)},
                           {"blocks_per_call", optional(q.blocks_per_call)}});
      }
      st["queries"] = std::move(queries);
    }
    stages.push_back(std::move(st));
  }
  j["stages"] = std::move(stages);
  // A subject git gave in another encoding must not make the record unwritable: invalid
  // UTF-8 becomes U+FFFD.
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

Record from_json(std::string_view text, const std::string& name) {
  Reader r(name);
  if (text.size() > k_max_record_bytes) {
    throw Error(ExitCode::usage, name,
                fmt::format("{} bytes: larger than any history file ({} MiB at most); not a "
                            "coldgate history file",
                            text.size(), k_max_record_bytes >> 20));
  }
  ordered_json j;
  try {
    j = ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(ExitCode::usage, name,
                fmt::format("not JSON at byte {}: not a coldgate history file", e.byte));
  } catch (const nlohmann::json::exception& e) {
    // 1e400: nlohmann refuses a number no double holds (out_of_range.406).
    throw Error(ExitCode::usage, name,
                "holds a number beyond the range of a double: not a coldgate history file");
  }
  if (!j.is_object()) {
    throw Error(ExitCode::usage, name,
                fmt::format("the document is {} (expected an object): not a coldgate history file",
                            j.type_name()));
  }
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string()) {
    throw Error(ExitCode::usage, name, "no \"schema\" member: not a coldgate history file");
  }
  const std::string found = schema->get<std::string>();
  if (found != k_history_schema) {
    const std::string prefix = "coldgate-history/";
    if (found.rfind(prefix, 0) != 0) {
      throw Error(ExitCode::usage, name,
                  fmt::format("schema \"{}\": not a coldgate history file", found));
    }
    // coldgate-history/2 and later: a newer coldgate wrote it; anything else is no version.
    const std::string version = found.substr(prefix.size());
    const bool newer = !version.empty() && version.find_first_not_of("0123456789") ==
                                               std::string::npos && version != "0" && version != "1";
    throw Error(ExitCode::usage, name,
                newer ? fmt::format("schema {} is not {}: written by a newer coldgate; upgrade "
                                    "coldgate to read it",
                                    found, k_history_schema)
                      : fmt::format("schema {} is not {}: not a history file this coldgate "
                                    "can read",
                                    found, k_history_schema));
  }
  Record rec;
  rec.commit = r.text(j, "", "commit");
  if (!is_sha(rec.commit)) r.fail("commit", fmt::format("\"{}\" is not a full commit SHA", rec.commit));
  rec.parent = r.text(j, "", "parent", false);
  if (!rec.parent.empty() && !is_sha(rec.parent)) {
    r.fail("parent", fmt::format("\"{}\" is not a full commit SHA", rec.parent));
  }
  rec.branch = r.text(j, "", "branch", false);
  rec.subject = r.text(j, "", "subject", false);
  rec.date = r.text(j, "", "date");
  rec.recorded_at = r.text(j, "", "recorded_at", false);
  const auto& tool = r.member(j, "", "tool", ordered_json::value_t::object, false);
  if (!tool.is_null()) rec.tool_version = r.text(tool, "tool", "version", false);
  rec.fingerprint = r.text(j, "", "fingerprint", false);
  rec.ci_run_url = r.text(j, "", "ci_run_url", false);
  const auto& env = r.member(j, "", "environment", ordered_json::value_t::object, false);
  if (!env.is_null()) {
    auto& e = rec.environment;
    e.host = r.text(env, "environment", "host", false);
    e.cpus = r.integer(env, "environment", "cpus");
    e.cpu_model = r.text(env, "environment", "cpu_model", false);
    e.kernel = r.text(env, "environment", "kernel", false);
    e.os = r.text(env, "environment", "os", false);
    e.provider = r.text(env, "environment", "provider", false);
    const auto& pg = r.member(env, "environment", "postgres", ordered_json::value_t::object, false);
    if (!pg.is_null()) {
      e.postgres_version = r.text(pg, "environment.postgres", "version", false);
      e.postgres_version_num = r.integer(pg, "environment.postgres", "version_num");
      e.postgres_settings = r.string_map(pg, "environment.postgres", "settings");
    }
  }
  const auto& stages = r.member(j, "", "stages", ordered_json::value_t::array);
  std::set<std::string> names;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const std::string path = fmt::format("stages[{}]", i);
    StagePoint p = read_stage(r, stages[i], path);
    if (!names.insert(p.name).second) {
      r.fail(path + ".name", fmt::format("stage \"{}\" appears twice", p.name));
    }
    rec.stages.push_back(std::move(p));
  }
  return rec;
}

}  // namespace coldgate::history
