#include "setup/setup.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <memory>

#include <fmt/core.h>

#include "db/connection.hpp"
#include "db/own_connections.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

namespace coldgate::setup {

namespace fs = std::filesystem;

namespace {

using Kind = config::SetupStep::Kind;

// A path as the user wrote it: relative to the config's folder when inside it.
std::string shown(const fs::path& file, const fs::path& base_dir) {
  if (base_dir.empty()) return file.string();
  auto rel = file.lexically_relative(base_dir);
  if (rel.empty() || *rel.begin() == "..") return file.string();
  return rel.string();
}

std::string where_of(const config::SetupStep& step, const std::string& fallback) {
  return step.where.file.empty() ? fallback : step.where.str();
}

std::string client_program(const Context& c, const std::string& name) {
  if (c.client_bindir) {
    auto p = *c.client_bindir / name;
    if (util::find_program(p.string())) return p.string();
  }
  return name;
}

std::string command_text(const config::SetupStep& step) {
  if (!step.shell.empty()) return step.shell;
  std::string out;
  for (const auto& a : step.argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::string label_of(const config::SetupStep& step, const fs::path& base_dir) {
  switch (step.kind) {
    case Kind::sql: return "sql " + shown(step.file, base_dir);
    case Kind::psql: return "psql " + shown(step.file, base_dir);
    case Kind::restore: return "restore " + shown(step.file, base_dir);
    case Kind::command: return "command " + command_text(step);
    case Kind::analyze: return "analyze";
    case Kind::migrate:
      return step.migrate.sql_dir.empty() ? "migrate " + command_text(step)
                                          : "migrate " + shown(step.migrate.sql_dir, base_dir);
  }
  return "";
}

// What a client program of a step says and how it ended.
struct ToolRun {
  util::ExitStatus status;
  std::string tail;  // the last 20 lines of stderr (stdout when stderr is empty)
};

// Runs a step's program with the PG* environment of `database` and `mapping` (a command step's
// `env:`) on top. A program that cannot start throws Error(`missing`) at `where`, naming the
// step as `what` with `hint`.
ToolRun run_tool(const std::vector<std::string>& argv, const Context& c,
                 const db::ConnectionInfo& database, const std::string& where,
                 const std::string& what, ExitCode missing, const std::string& hint,
                 const config::EnvMap& mapping = {}) {
  util::SpawnOptions opts{.argv = argv,
                          .cwd = c.base_dir,
                          .env = database.env(),
                          .env_unset = db::ConnectionInfo::env_names()};
  // The server's own client programs come first, as for a stage's command: a setup script's
  // `psql` or `pg_restore` must match the server, not whatever version PATH holds.
  if (c.client_bindir) {
    const char* path = std::getenv("PATH");
    opts.env.push_back(
        fmt::format("PATH={}:{}", c.client_bindir->string(), path ? path : "/usr/bin:/bin"));
  }
  opts.env.push_back("COLDGATE_SCALE=" + scale_text(c.scale));
  for (auto& entry : config::expand_env_values(mapping, database.facts()))
    opts.env.push_back(std::move(entry));
  util::RunOutput r;
  try {
    r = util::run(opts);
  } catch (const Error& e) {  // could not start: say which step
    if (e.code() == ExitCode::interrupted) throw;
    throw Error(missing, where, fmt::format("{} cannot start: {}{}", what, e.message(), hint));
  }
  return {r.status, util::stderr_excerpt(r.err.empty() ? r.out : r.err, 20)};
}

Error tool_failed(ExitCode code, const std::string& where, const std::string& what,
                  const ToolRun& run) {
  return Error(code, where,
               fmt::format("{} failed ({}){}{}", what, run.status.describe(),
                           run.tail.empty() ? "" : ":\n", run.tail));
}

constexpr std::string_view k_client_hint =
    " (install PostgreSQL's client programs, e.g. the Debian package postgresql-client)";

// Where psql says its script failed: "dump.sql:12" from "psql:dump.sql:12: ERROR:  …", or "".
std::string psql_error_place(std::string_view stderr_text) {
  for (std::size_t pos = 0; pos < stderr_text.size();) {
    std::size_t end = std::min(stderr_text.find('\n', pos), stderr_text.size());
    std::string_view line = stderr_text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.starts_with("psql:")) continue;
    std::size_t cut = std::string_view::npos;
    for (std::string_view severity : {": ERROR:", ": FATAL:", ": error:"}) {
      cut = std::min(cut, line.find(severity));
    }
    if (cut == std::string_view::npos || cut <= 5 || line[5] == ' ') continue;  // "psql: error: …"
    std::string_view place = line.substr(5, cut - 5);  // FILE:LINE
    std::size_t colon = place.rfind(':');
    if (colon == std::string_view::npos || colon + 1 == place.size()) continue;
    std::string_view number = place.substr(colon + 1);
    if (!std::all_of(number.begin(), number.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      continue;
    return std::string(place);
  }
  return "";
}

// The positive number right after the first `key` in `text` ("LINE 5: …" → 5), or 0; `*end`
// is set past its digits.
long number_after(std::string_view text, std::string_view key, std::size_t* end = nullptr) {
  std::size_t pos = text.find(key);
  if (pos == std::string_view::npos) return 0;
  const char* begin = text.data() + pos + key.size();
  long value = 0;
  auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), value);
  if (ec != std::errc() || value <= 0) return 0;
  if (end) *end = static_cast<std::size_t>(ptr - text.data());
  return value;
}

// psql names the line where a statement ended (`psql:dump.sql:102:`): for a COPY's bad row the
// `\.` line, for a typo the line of the `;`. The server's place within the statement makes it
// exact: `CONTEXT:  COPY orders, line 2` is the second line after the COPY line, and
// `LINE 5: <text>` with its caret is the last line up to psql's one that holds that text, at the
// caret's column. `place` ("dump.sql:102") is kept when the script cannot tell more.
std::string exact_psql_place(const std::string& place, const config::SetupStep& step,
                             const std::string& file, std::string_view tail) {
  std::size_t colon = place.rfind(':');
  if (colon == std::string::npos || place.substr(0, colon) != file) return place;  // \i'ncluded
  const long end_line = std::atol(place.c_str() + colon + 1);

  long copy_row = 0;  // the bad row's line within the COPY data, 1 = the line after COPY
  if (std::size_t context = tail.find("CONTEXT:  COPY "); context != std::string_view::npos) {
    std::string_view rest = tail.substr(context);
    rest = rest.substr(0, std::min(rest.find('\n'), rest.size()));
    copy_row = number_after(rest, ", line ");
  }
  std::string snippet;      // the statement's line as the server shows it
  long snippet_column = -1;  // the caret's 0-based place in it, -1 unknown
  if (copy_row == 0) {
    std::size_t after = 0;
    if (number_after(tail, "\nLINE ", &after) == 0 || tail.compare(after, 2, ": ") != 0) {
      return place;
    }
    std::size_t text_begin = after + 2;
    std::size_t text_end = std::min(tail.find('\n', text_begin), tail.size());
    snippet = std::string(tail.substr(text_begin, text_end - text_begin));
    bool cut_front = snippet.starts_with("...");
    if (cut_front) snippet.erase(0, 3);
    if (snippet.ends_with("...")) snippet.erase(snippet.size() - 3);
    if (snippet.empty()) return place;
    // The caret line is indented as far as "LINE 5: " plus the caret's place in the text.
    std::size_t line_begin = tail.rfind('\n', text_begin - 1) + 1;
    std::size_t caret_line = text_end + 1;
    std::size_t caret = caret_line < tail.size() ? tail.find('^', caret_line) : std::string_view::npos;
    if (!cut_front && caret != std::string_view::npos && tail.find('\n', caret_line) > caret &&
        caret - caret_line >= text_begin - line_begin) {
      snippet_column = static_cast<long>((caret - caret_line) - (text_begin - line_begin));
    }
  }

  std::ifstream in(step.file, std::ios::binary);
  std::string line;
  long number = 0;
  long found = 0;
  long found_column = 0;  // 1-based byte column, 0 unknown
  while (number < end_line && std::getline(in, line)) {
    ++number;
    if (copy_row > 0) {
      std::size_t first = line.find_first_not_of(" \t");
      if (first != std::string::npos &&
          (line.compare(first, 5, "COPY ") == 0 || line.compare(first, 5, "copy ") == 0)) {
        found = number;
      }
    } else if (std::size_t at = line.find(snippet); at != std::string::npos) {
      found = number;
      found_column = snippet_column >= 0 ? static_cast<long>(at) + snippet_column + 1 : 0;
    }
  }
  if (found == 0 || number != end_line) return place;
  if (copy_row > 0) return fmt::format("{}:{}", file, found + copy_row);
  return found_column > 0 ? fmt::format("{}:{}:{}", file, found, found_column)
                          : fmt::format("{}:{}", file, found);
}

// psql's exit status 2 is "the connection to the server went bad" (its docs, "Exit Status"):
// infrastructure when the server was lost, not when a script's \c names a missing database.
bool lost_server(const std::string& text) {
  for (const char* marker : {"server closed the connection unexpectedly",
                             "connection to server was lost", "no connection to the server"}) {
    if (text.find(marker) != std::string::npos) return true;
  }
  return false;
}

// Tables, partitioned tables, views, materialized views and foreign tables outside the
// system schemas: what a stage could read.
constexpr std::string_view k_count_user_relations =
    "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') "
    "AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
    "AND n.nspname NOT LIKE 'pg\\_toast%'";

// Whether a line of the first MiB of `script` (where pg_dump --create and hand-written scripts
// put it) is `CREATE DATABASE name`.
bool creates_database(const std::filesystem::path& script, const std::string& name) {
  std::string head = util::read_file_prefix(script, std::size_t{1} << 20);
  std::string_view rest = head;
  while (!rest.empty()) {
    std::size_t end = std::min(rest.find('\n'), rest.size());
    if (auto db = database_statement(rest.substr(0, end), "create"); db && *db == name) return true;
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  return false;
}

// On this run's own server, the stages' database is made empty before setup; a script run from
// another database that creates it (pg_dump --create without --clean) would fail with "already
// exists". Dropped only while it holds nothing a stage could read.
void make_room_for(const config::SetupStep& step, const Context& c) {
  if (!c.own_server || step.database.empty() || step.database == c.database.dbname) return;
  if (!creates_database(step.file, c.database.dbname)) return;
  db::ConnectionInfo other = c.database;
  other.dbname = step.database;
  db::Connection conn(other);
  if (conn.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", {c.database.dbname})
          .empty()) {
    return;
  }
  {
    db::Connection stages(c.database);
    if (stages.exec(std::string(k_count_user_relations), "setup")[0][0].as<long long>() > 0) {
      return;
    }
  }
  conn.exec("DROP DATABASE " + conn.raw().quote_name(c.database.dbname), "setup");
}

void run_psql(const config::SetupStep& step, const Context& c, const std::string& file) {
  // psql runs in the config's folder and is given the path from there, so its messages say
  // "psql:dump.sql:12: ERROR: …" as the user wrote the file's name.
  std::vector<std::string> argv{client_program(c, "psql"), "-v", "ON_ERROR_STOP=1", "-X", "-q",
                                "-v", "scale=" + scale_text(c.scale)};
  for (const auto& [name, value] : step.variables) {
    argv.push_back("-v");
    argv.push_back(name + "=" + value);
  }
  argv.push_back("-f");
  argv.push_back(file);
  make_room_for(step, c);
  db::ConnectionInfo database = c.database;
  if (!step.database.empty()) database.dbname = step.database;
  const std::string what = "psql -f " + file;
  ToolRun run = run_tool(argv, c, database, where_of(step, file), what,
                         ExitCode::infrastructure, std::string(k_client_hint));
  if (run.status.ok()) return;
  std::string place = psql_error_place(run.tail);
  if (!place.empty()) place = exact_psql_place(place, step, file, run.tail);
  std::string where = place.empty() ? where_of(step, file) : place;
  ExitCode code = ExitCode::gate_failed;
  if (run.status.exit_code == 2 && lost_server(run.tail)) code = ExitCode::infrastructure;
  if (!step.database.empty() &&
      run.tail.find(fmt::format("database \"{}\" does not exist", step.database)) !=
          std::string::npos &&
      place.empty()) {
    // psql could not even connect to the database the config names.
    throw Error(ExitCode::usage, where_of(step, file),
                fmt::format("{}.database: the server has no database {}; name one it has "
                            "(postgres, or the stages' {})",
                            step.key.substr(0, step.key.rfind('.')), step.database,
                            c.database.dbname));
  }
  throw tool_failed(code, where, what, run);
}

// The byte offset of 1-based `line` and character `column` in UTF-8 `text` (as PostgreSQL
// counts a statement position), or npos when the text is shorter.
std::size_t offset_of(const std::string& text, int line, int column) {
  std::size_t i = 0;
  for (int l = 1; l < line; ++l) {
    i = text.find('\n', i);
    if (i == std::string::npos) return i;
    ++i;
  }
  for (int col = 1; col < column && i < text.size(); ++col) {
    ++i;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  }
  return i < text.size() ? i : std::string::npos;
}

// A sql: step's syntax error at a backslash is a psql meta-command (\c, \copy, \set, …) the
// server cannot run: the same error with the fix, or `e` itself.
Error with_meta_command_hint(const Error& e, const std::string& sql, const std::string& file) {
  const std::string& where = e.where();
  if (e.code() != ExitCode::gate_failed || !where.starts_with(file + ":")) return e;
  std::string_view place = std::string_view(where).substr(file.size() + 1);
  std::size_t colon = place.find(':');
  int line = 0;
  int column = 0;
  if (colon == std::string_view::npos ||
      std::from_chars(place.data(), place.data() + colon, line).ec != std::errc() ||
      std::from_chars(place.data() + colon + 1, place.data() + place.size(), column).ec !=
          std::errc()) {
    return e;
  }
  std::size_t at = offset_of(sql, line, column);
  if (at == std::string::npos || sql[at] != '\\') return e;
  std::size_t end = at + 1;
  while (end < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[end])) || sql[end] == '.' ||
                              sql[end] == '!' || sql[end] == '?')) {
    ++end;
  }
  std::string meta = sql.substr(at, std::max<std::size_t>(end - at, 2));
  return Error(ExitCode::gate_failed, where,
               fmt::format("{} is a psql meta-command, which a sql: step cannot run (it sends "
                           "the file to the server as SQL); load the file with psql: {}",
                           meta, file));
}

}  // namespace

std::string scale_text(double scale) {
  return fmt::format("{:g}", scale);
}

std::vector<fs::path> migration_files(const config::Migrate& migrate) {
  std::vector<fs::path> files;
  if (migrate.sql_dir.empty()) return files;
  std::error_code ec;
  for (fs::directory_iterator it(migrate.sql_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".sql" && it->is_regular_file(ec)) files.push_back(it->path());
  }
  if (ec) {
    throw Error(ExitCode::infrastructure, migrate.where.str(),
                fmt::format("{}: cannot read {}: {}", migrate.key, migrate.sql_dir_given,
                            ec.message()));
  }
  // Byte order of the names: 0001_x.sql before 0002_y.sql, as Flyway and dbmate sort them.
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  return files;
}

void run_migration(const config::Migrate& migrate, const Context& c,
                   const std::vector<fs::path>& files, const config::EnvMap& env) {
  config::SetupStep step;
  step.where = migrate.where;
  step.value_where = migrate.where;
  step.key = migrate.key;
  step.env = env;
  if (migrate.sql_dir.empty()) {
    step.kind = Kind::command;
    step.argv = migrate.argv;
    step.shell = migrate.shell;
    run_step(step, c);
    return;
  }
  step.kind = Kind::psql;
  for (const auto& file : files) {
    step.file = file;
    step.file_given = shown(file, c.base_dir);
    run_step(step, c);
  }
}

StepResult run_step(const config::SetupStep& step, const Context& c) {
  util::throw_if_interrupted();
  auto t0 = std::chrono::steady_clock::now();
  StepResult result{"", label_of(step, c.base_dir)};
  std::string file = shown(step.file, c.base_dir);
  switch (step.kind) {
    case Kind::sql: {
      result.kind = "sql";
      std::string sql = util::read_file(step.file);
      try {
        db::run_script(c.database, sql, file);
      } catch (const Error& e) {
        throw with_meta_command_hint(e, sql, file);
      }
      break;
    }
    case Kind::psql: {
      result.kind = "psql";
      run_psql(step, c, file);
      break;
    }
    case Kind::restore: {
      result.kind = "restore";
      const std::string what = "pg_restore " + file;
      ToolRun run = run_tool({client_program(c, "pg_restore"), "--no-owner", "--no-privileges",
                              "--exit-on-error", "-d", c.database.dbname, step.file.string()},
                             c, c.database, where_of(step, file), what, ExitCode::infrastructure,
                             std::string(k_client_hint));
      if (!run.status.ok()) throw tool_failed(ExitCode::gate_failed, where_of(step, file), what, run);
      break;
    }
    case Kind::command: {
      result.kind = "command";
      std::string text = command_text(step);
      std::vector<std::string> argv =
          step.shell.empty() ? step.argv : std::vector<std::string>{"/bin/sh", "-c", step.shell};
      // A program named by a path runs from the config's folder, as config::check_setup finds it.
      if (step.shell.empty() && argv[0].find('/') != std::string::npos &&
          fs::path(argv[0]).is_relative()) {
        argv[0] = (c.base_dir / argv[0]).lexically_normal().string();
      }
      const std::string where = where_of(step, "setup command");
      const std::string what = "setup command `" + text + "`";
      ToolRun run = run_tool(argv, c, c.database, where, what, ExitCode::usage,
                             "; install it, or fix the command in the config", step.env);
      if (!run.status.ok()) throw tool_failed(ExitCode::gate_failed, where, what, run);
      break;
    }
    case Kind::migrate: {
      result.kind = "migrate";
      run_migration(step.migrate, c, migration_files(step.migrate), step.env);
      break;
    }
    case Kind::analyze: {
      result.kind = "analyze";
      db::Connection conn(c.database);
      try {
        db::CancelOnInterrupt cancel(conn);  // a large database takes a while
        // VACUUM too: a table just loaded has no visibility map and no hint bits, which a
        // long-lived table has. Without them an index-only scan reads the heap for every row
        // and the first read of each page writes it, until autovacuum comes by — before one
        // side's runs and not the other's, a plan change that nothing explains.
        // The load's commits may be asynchronous (synchronous_commit off, as the local server
        // runs): until the WAL holding them is flushed VACUUM sets no hint bit, so it marks no
        // page all-visible. CHECKPOINT flushes it (the template's copy makes one anyway); a
        // role that may not run one goes without.
        try {
          conn.exec("CHECKPOINT", where_of(step, "analyze"));
        } catch (const Error&) {
          util::throw_if_interrupted();
        }
        conn.exec("VACUUM (ANALYZE)", where_of(step, "analyze"));
      } catch (const Error&) {
        util::throw_if_interrupted();
        throw;
      }
      break;
    }
  }
  result.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

std::optional<std::string> database_statement(std::string_view line, std::string_view verb) {
  line = util::trim(line);
  if (!util::starts_with_word(line, verb)) return std::nullopt;
  line = util::trim(line.substr(verb.size()));
  if (!util::starts_with_word(line, "database")) return std::nullopt;
  line = util::trim(line.substr(8));
  if (verb == "drop" && util::starts_with_word(line, "if")) {
    line = util::trim(line.substr(2));
    if (!util::starts_with_word(line, "exists")) return std::nullopt;
    line = util::trim(line.substr(6));
  }
  if (line.empty()) return std::nullopt;
  std::string name;
  if (line.front() == '"') {
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          name.push_back('"');
          ++i;
          continue;
        }
        return name;
      }
      name.push_back(line[i]);
    }
    return std::nullopt;
  }
  for (char c : line) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '$') break;
    name.push_back(c);
  }
  if (name.empty()) return std::nullopt;
  return util::lower(name);
}


std::vector<StepResult> run_setup(const std::vector<config::SetupStep>& steps, const Context& c,
                                  const std::function<void(const StepResult&)>& on_step) {
  std::vector<StepResult> out;
  for (const auto& step : steps) {
    try {
      out.push_back(run_step(step, c));
    } catch (const Error& e) {
      throw StepFailure(e, label_of(step, c.base_dir));
    }
    if (on_step) on_step(out.back());
  }
  return out;
}

std::string stage_database_warning(const std::vector<config::SetupStep>& steps,
                                   const Context& c, db::OwnConnections* own) {
  const std::string count_sql(k_count_user_relations);
  std::vector<std::pair<long long, std::string>> others;  // tables, database
  std::vector<std::string> names;
  {
    // One connection for both questions: each costs the server a backend.
    std::unique_ptr<db::Connection> fresh;
    db::Connection& conn = db::kept_or_new(own, c.database, fresh);
    if (conn.exec(count_sql, "setup")[0][0].as<long long>() > 0) return "";
    for (const auto& row :
         conn.exec("SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate "
                   "AND datname <> current_database() ORDER BY datname LIMIT 50",
                   "setup")) {
      names.push_back(row[0].c_str());
    }
  }
  const std::string maintenance = db::maintenance_database(c.database).dbname;
  for (const auto& name : names) {
    db::ConnectionInfo info = c.database;
    info.dbname = name;
    try {
      // The maintenance database's is kept for isolation's template; any other closes here.
      std::unique_ptr<db::Connection> fresh;
      db::Connection& conn = db::kept_or_new(name == maintenance ? own : nullptr, info, fresh);
      long long n = conn.exec(count_sql, "setup")[0][0].as<long long>();
      if (n > 0) others.emplace_back(n, name);
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted) throw;  // else: a database we may not read
    }
  }
  if (others.empty()) return "";
  std::sort(others.begin(), others.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  const auto& [count, name] = others.front();
  std::string also;
  for (std::size_t i = 1; i < others.size() && i < 4; ++i) {
    also += fmt::format("{}{} ({})", also.empty() ? "" : ", ", others[i].second, others[i].first);
  }
  if (others.size() > 4) also += fmt::format(", … ({} in all)", others.size());
  // The script to load from another database: the one psql step that runs in the stages'.
  std::string script = "FILE";
  std::size_t psql_steps = 0;
  for (const auto& s : steps) {
    if (s.kind == Kind::psql && s.database.empty()) {
      ++psql_steps;
      script = shown(s.file, c.base_dir);
    }
  }
  if (psql_steps != 1) script = "FILE";
  return fmt::format(
      "after setup the stages' database {} has no tables, but database {} has {}{}{} (did a "
      "setup script's \\c move there?); set database.name: {} so the stages use it, with "
      "psql: {{file: {}, database: postgres}} if the script creates {}",
      c.database.dbname, name, count, count == 1 ? " table" : " tables",
      also.empty() ? "" : " (also " + also + ")", name, script, name);
}

}  // namespace coldgate::setup
