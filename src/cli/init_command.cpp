// `coldgate init`: a commented starter coldgate.yaml for one's own project.
#include "cli/init_command.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string_view>

#include <fmt/core.h>
#include <unistd.h>

#include "cli/orm.hpp"
#include "config/config.hpp"
#include "db/connection.hpp"
#include "db/connection_info.hpp"
#include "results/format.hpp"
#include "session/session.hpp"
#include "setup/setup.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/secrets.hpp"
#include "util/text.hpp"

namespace coldgate::cli {

namespace {

namespace fs = std::filesystem;

// The variable the written url reads its password from (a *PASSWORD* name: masked in errors).
constexpr std::string_view k_password_variable = "COLDGATE_DB_PASSWORD";

using util::lower;
using util::trim;

// `text` with each `${` written `$${`, so the config's ${ENV} expansion leaves it as it is.
std::string env_escaped(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') out += '$';
    out += text[i];
  }
  return out;
}

// `text` as a YAML scalar: plain when that reads back as the same string, else double-quoted.
std::string yaml_scalar(std::string_view text) {
  static const char* k_words[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
  const std::string folded = lower(text);
  bool plain = !text.empty() &&
               std::none_of(std::begin(k_words), std::end(k_words),
                            [&](const char* w) { return folded == w; }) &&
               !std::all_of(text.begin(), text.end(), [](char c) {
                 return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
               });
  for (std::size_t i = 0; plain && i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    plain = std::isalnum(c) || c == '_' || c == '.' || c == '/' || (i > 0 && c == '-');
  }
  if (plain) return std::string(text);
  std::string out = "\"";
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// A string of the user's (a path, a database name) as the config must hold it.
std::string yaml_text(std::string_view text) { return yaml_scalar(env_escaped(text)); }

// `code` with `comment` beside it, comments lined up at column 35 as in docs/configuration.md.
std::string commented(std::string_view code, std::string_view comment) {
  std::string out(code);
  out.append(out.size() < 34 ? 34 - out.size() : 2, ' ');
  return out + "# " + std::string(comment) + "\n";
}

std::string shell_quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

// The url as the config holds it — each password replaced by ${COLDGATE_DB_PASSWORD} (quotes
// kept), the rest env_escaped() — and the password's text as written there (what the variable
// must hold, so the expansion gives back the url as given); "" when it has none.
std::pair<std::string, std::string> without_password(const std::string& url) {
  auto spans = db::password_spans(url);
  std::string secret;
  std::string out;
  std::size_t pos = 0;
  for (auto [offset, length] : spans) {
    std::string_view value = std::string_view(url).substr(offset, length);
    if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
      ++offset;
      length -= 2;
      value = value.substr(1, value.size() - 2);
    }
    if (value.empty()) continue;
    if (!secret.empty() && secret != value) {
      throw usage_error("--from-url", "has two different passwords; pass one");
    }
    secret = value;
    out += env_escaped(std::string_view(url).substr(pos, offset - pos));
    out += fmt::format("${{{}}}", k_password_variable);
    pos = offset + length;
  }
  out += env_escaped(std::string_view(url).substr(pos));
  return {out, secret};
}

struct Starter {
  std::string database;  // the `database:` section
  std::string env;       // the `env:` section, or "" for none
  std::string migrate;   // the `migrate:` section, or "" for none
  std::string setup;     // the `setup:` section (comments only when there is nothing to load)
};

std::string dump_step(const DumpKind& kind, const std::string& rel) {
  switch (kind.step) {
    case DumpKind::Step::sql:
      return commented("  - sql: " + yaml_text(rel), "through libpq, in one transaction");
    case DumpKind::Step::restore:
      return commented("  - restore: " + yaml_text(rel),
                       "pg_restore --no-owner --no-privileges");
    case DumpKind::Step::psql:
      if (!kind.database.empty()) {
        return commented("  - psql: {file: " + yaml_text(rel) + ", database: postgres}",
                         fmt::format("the script creates {} itself", kind.database));
      }
      return commented("  - psql: " + yaml_text(rel), "COPY … FROM stdin and meta-commands need psql");
  }
  return {};
}

Starter local_starter(const DumpKind* kind, const std::string& rel) {
  Starter s;
  s.database = "database:\n";
  s.database += commented("  provider: local", "a throwaway cluster of this machine's PostgreSQL");
  std::string version = "default: the newest installed";
  if (kind && !kind->server_version.empty()) {
    version = fmt::format("the dump is from PostgreSQL {}; {}", kind->server_version, version);
  }
  std::string major = "15";
  if (kind && !kind->server_version.empty()) {
    // Before 10 a major version had two parts (9.6), and coldgate supports 10 or newer.
    std::string first = kind->server_version.substr(0, kind->server_version.find('.'));
    bool digits = std::all_of(first.begin(), first.end(),
                              [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
    if (digits && first.size() >= 2) major = first;
  }
  s.database += commented("  # version: " + major, version);
  std::string name = kind ? (!kind->database.empty() ? kind->database : kind->connects) : "";
  if (!name.empty()) {
    s.database += commented("  name: " + yaml_text(name),
                            kind->database.empty()
                                ? "the dump connects to it: the stages run in it"
                                : "the dump creates it: the stages run in it");
  }
  s.database += commented("  # settings: {shared_buffers: 256MB}", "as production has them");
  if (kind) {
    s.setup = commented("setup:", "loads the data, one step per item");
    s.setup += dump_step(*kind, rel);
    s.setup += commented("  - analyze: true", "statistics for the planner");
  } else {
    s.setup = commented("# setup:", "loads your data, one step per item");
    s.setup += commented("#   - psql: db/dump.sql", "pg_dump --no-owner app > db/dump.sql");
    s.setup += commented("#   - restore: db/app.dump", "pg_dump -Fc (or -Fd) output");
    s.setup += commented("#   - analyze: true", "statistics for the planner");
  }
  return s;
}

// The `migrate:` and `setup:` sections of `--setup`: each command a `command:` step run with
// /bin/sh -c in the config's folder (so `cd_prefix`, "cd .. && " when the config is not in the
// folder init ran the commands in), then analyze; named after the ORM when init recognised one.
// The first command that is the ORM's migrate command is the config's `migrate:` instead, and
// its step `- migrate`, so that `coldgate ab` runs the pull request's migration on base's data.
void commands_setup(Starter& s, const std::vector<std::string>& commands, const OrmRecipe* orm,
                    const std::string& cd_prefix) {
  constexpr std::string_view k_how = "/bin/sh -c, with PGHOST … DATABASE_URL set";
  s.setup = commented("setup:", "loads the data, one step per item");
  if (orm) {
    s.setup += fmt::format(
        "  # {} ({}): the application's own migrations and seeds build the database,\n"
        "  # as `coldgate init --setup` ran them.\n",
        orm->name, orm->evidence);
  }
  bool commented_how = false;
  for (const auto& command : commands) {
    if (s.migrate.empty() && orm && is_migrate_command(*orm, command)) {
      s.migrate = "# coldgate ab runs the pull request's migration on a copy of base's data.\n"
                  "migrate:\n";
      s.migrate += commented("  command: " + yaml_text(cd_prefix + command), k_how);
      s.setup += commented("  - migrate", "the migrate: command above");
      continue;
    }
    std::string line = "  - command: " + yaml_text(cd_prefix + command);
    s.setup += commented_how ? line + "\n" : commented(line, k_how);
    commented_how = true;
  }
  s.setup += commented("  - analyze: true", "statistics for the planner");
}

// The `env:` section of `--setup`: what the commands read from init's environment, so that they
// run the same where that environment is not (CI); a secret by reference only.
std::string env_section(const std::vector<EnvEntry>& env, const OrmRecipe* orm) {
  if (env.empty()) return {};
  std::string s = fmt::format(
      "# What the setup commands{} read from the environment when `coldgate init --setup`\n"
      "# ran them, so that they run the same in CI. A secret is read from coldgate's\n"
      "# environment: set it there (a CI secret).\n"
      "env:\n",
      orm ? fmt::format(" ({})", orm->name) : "");
  for (const auto& e : env) {
    std::string line = "  " + e.name + ": ";
    if (e.secret) {
      s += commented(line + yaml_scalar(fmt::format("${{{}}}", e.name)), "a secret: from the environment");
    } else {
      s += line + yaml_text(e.value) + "\n";
    }
  }
  return s;
}

Starter external_starter(const std::string& url, bool has_password) {
  Starter s;
  s.database = "database:\n";
  s.database += commented("  provider: external", "a server coldgate does not start or stop");
  if (has_password) {
    s.database += fmt::format("  # the password comes from the environment: export {}=…\n",
                              k_password_variable);
  }
  s.database += "  url: " + yaml_scalar(url) + "\n";
  s.database += commented("  # restart_command: sudo systemctl restart postgresql", "needed for cold: restart");
  s.setup = commented("# setup:", "loads data into that database!");
  s.setup += commented("#   - psql: db/dump.sql", "plain pg_dump output");
  s.setup += commented("#   - analyze: true", "statistics for the planner");
  return s;
}

// The bookkeeping tables as an SQL list, wrapped to start each line at `indent` columns.
std::string bookkeeping_list(std::size_t indent) {
  std::string out = "(";
  std::size_t column = indent + 1;
  const auto& tables = bookkeeping_tables();
  for (std::size_t i = 0; i < tables.size(); ++i) {
    std::string item = "'" + tables[i] + "'" + (i + 1 < tables.size() ? "," : ")");
    if (i > 0 && column + 1 + item.size() > 96) {
      out += "\n" + std::string(indent + 1, ' ');
      column = indent + 1;
    } else if (i > 0) {
      out += ' ';
      ++column;
    }
    out += item;
    column += item.size();
  }
  return out;
}

// The query of the first stage: every table's exact row count, so the first run gives a real
// snapshot on any database (query_to_xml runs the count per table inside one statement).
std::string row_counts_query() {
  std::string s =
      "      select coalesce(json_object_agg(t.table_schema || '.' || t.table_name,\n"
      "               (xpath('/row/n/text()', query_to_xml(\n"
      "                  format('select count(*) as n from %I.%I', t.table_schema, t.table_name),\n"
      "                  false, true, '')))[1]::text::bigint), '{}')\n"
      "      from information_schema.tables as t\n"
      "      where t.table_type = 'BASE TABLE'\n"
      "        and t.table_schema not in ('pg_catalog', 'information_schema')\n"
      "        -- migration tools' bookkeeping: a new migration adds a row there, not data\n";
  const std::string lead = "        and t.table_name not in ";
  s += lead + bookkeeping_list(lead.size()) + "\n";
  return s;
}

// What the command stage prints: each table's columns and their types (a folded YAML scalar:
// no SQL comment can be in it).
std::string columns_query() {
  std::string s =
      "        select coalesce(json_object_agg(s.name, s.columns), '{}')\n"
      "        from (select c.table_schema || '.' || c.table_name as name,\n"
      "                     json_object_agg(c.column_name, c.data_type) as columns\n"
      "              from information_schema.columns as c\n"
      "              join information_schema.tables as t\n"
      "                on t.table_schema = c.table_schema and t.table_name = c.table_name\n"
      "              where t.table_type = 'BASE TABLE'\n"
      "                and t.table_schema not in ('pg_catalog', 'information_schema')\n";
  const std::string lead = "                and t.table_name not in ";
  s += lead + bookkeeping_list(lead.size()) + "\n";
  s += "              group by 1) as s\n";
  return s;
}

// A stage's `snapshot:` block with its path (and `from:` for a command stage).
std::string snapshot_block(std::string_view stage, bool command) {
  std::string s = "    snapshot:\n";
  s += commented(fmt::format("      path: snapshots/{}.json", stage),
                 "coldgate review (or accept) writes it");
  if (command) s += commented("      from: stdout", "or the file the program writes");
  return s;
}

std::string stages_section() {
  std::string s = "stages:\n";
  s += "  # A SQL stage: each cold run is a fresh process that connects and runs the query;\n"
       "  # column 1 of row 1 is the snapshot. This one counts the rows of every table, so the\n"
       "  # first run gives a real snapshot: replace it with the query your application runs at\n"
       "  # start-up. Both stages below read the catalog, which is coldgate's query, not your\n"
       "  # application's: `profile: false` keeps the server-side profile and its diagnoses\n"
       "  # (say, planning the catalog views) out of them; drop it once a stage runs yours.\n"
       "  # The profile would not show this one's counts anyway: they run inside query_to_xml,\n"
       "  # and it sees statements a client sends. Their plans (an index-only scan) depend on\n"
       "  # the visibility map, which setup's `analyze: true` sets (it vacuums too).\n"
       "  # Neither looks at migration tools' bookkeeping tables (django_migrations, …).\n";
  s += "  - name: table-rows\n";
  s += "    query: |\n";
  s += row_counts_query();
  s += commented("    decode: json", "parse the result as JSON in the measured process");
  s += commented("    profile: false", "a catalog query of coldgate's: see above");
  s += snapshot_block("table-rows", false);
  s += "\n";
  s += "  # A SQL stage with its query in a file of its own (write the file, then uncomment):\n";
  s += "  # - name: settings-load\n";
  s += "  #   sql: queries/settings-load.sql\n";
  s += commented("  #   params: [1]", "$1, $2 … bound as parameters, never spliced");
  s += commented("  #   settings: {jit: \"off\"}", "SET LOCAL in the query's transaction");
  s += "  #   decode: json\n";
  s += "  #   snapshot:\n";
  s += "  #     path: snapshots/settings-load.json\n";
  s += "\n";
  s += "  # A command stage: any program that exits, measured as a whole, with PGHOST, PGPORT,\n"
       "  # PGUSER, PGPASSWORD, PGDATABASE and DATABASE_URL set; what it prints is the snapshot.\n"
       "  # This one prints every table's columns through psql: replace it with your\n"
       "  # application's start-up, e.g. command: [./bin/app, --exit-when-ready].\n";
  s += "  - name: schema\n";
  s += "    command:\n";
  s += "      - psql\n";
  s += commented("      - --no-psqlrc", "-X: no ~/.psqlrc");
  s += "      - --no-align\n";
  s += "      - --tuples-only\n";
  s += "      - --command\n";
  s += "      - >-\n";
  s += columns_query();
  s += commented("    profile: false", "a catalog query of coldgate's: see above");
  s += snapshot_block("schema", true);
  return s;
}

std::string starter_text(const Starter& s, const std::string& invocation) {
  std::string out;
  out += fmt::format("# coldgate.yaml, written by `{}`: edit it for your project.\n", invocation);
  out += "# Every key and its default: docs/configuration.md of coldgate. Next: `coldgate run`\n"
         "# (the first run fails, exit 1: no snapshot is committed yet), `coldgate review` to\n"
         "# take the snapshots, `coldgate run` again (exit 0), then commit them with this file.\n";
  out += "version: 1\n\n";
  out += s.database + "\n";
  if (!s.env.empty()) out += s.env + "\n";
  if (!s.migrate.empty()) out += s.migrate + "\n";
  out += s.setup + "\n";
  out += commented("# defaults:", "of every stage");
  out += commented("#   runs: 5", "cold runs, each a fresh process");
  out += commented("#   warm: 5", "warm runs after each cold run");
  out += commented("#   cold: process", "restart: also restart the server");
  out += commented("#   timeout: 10m", "per run");
  out += "\n";
  out += stages_section();
  out += "\n";
  out += commented("# gate:", "when a change fails against its baseline");
  out += commented("#   max_ratio: 10", "this many times slower …");
  out += commented("#   min_delta: 20ms", "… and at least this much");
  out += "\n";
  out += "# report:\n";
  out += commented("#   title: coldgate", "the report's heading");
  return out;
}

}  // namespace

namespace {

// A word the shell reads as it is; else single-quoted.
std::string shell_word(std::string_view s) {
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-./=:@%+,").find(c) !=
                                                              std::string_view::npos;
  });
  return plain ? std::string(s) : shell_quoted(s);
}

// `coldgate init --setup '…' …` for `commands` (with `-o PATH` unless it is the default).
std::string init_line(const std::vector<std::string>& commands, const std::string& output) {
  std::string line = "coldgate init";
  for (const auto& c : commands) line += " --setup " + shell_quoted(c);
  if (output != "coldgate.yaml") line += " -o " + shell_word(output);
  return line;
}

// What --setup left in the database: each table (schema.name) with its exact row count.
struct TableCount {
  std::string name;
  std::string table;  // without its schema
  long long rows = 0;
};

std::vector<TableCount> table_counts(const db::ConnectionInfo& database) {
  db::Connection conn(database);
  auto result = conn.exec(
      "select t.table_schema || '.' || t.table_name, t.table_name,"
      "       (xpath('/row/n/text()', query_to_xml("
      "          format('select count(*) as n from %I.%I', t.table_schema, t.table_name),"
      "          false, true, '')))[1]::text::bigint"
      " from information_schema.tables as t"
      " where t.table_type = 'BASE TABLE'"
      "   and t.table_schema not in ('pg_catalog', 'information_schema')"
      " order by 1",
      "init --setup");
  std::vector<TableCount> out;
  for (const auto& row : result) {
    out.push_back({row[0].c_str(), row[1].c_str(), std::atoll(row[2].c_str())});
  }
  return out;
}

std::string rows_text(long long n) {
  return fmt::format("{} row{}", results::format_value(static_cast<double>(n), "count"), n == 1 ? "" : "s");
}

// Runs `commands` as setup command steps on a throwaway local cluster, in the current folder,
// and says what they left; throws Error naming the command that failed, with its stderr's tail.
// The cluster is gone when this returns or throws.
void run_setup_commands(const std::vector<std::string>& commands) {
  util::install_interrupt_handlers();
  config::Config cfg;
  cfg.base_dir = fs::current_path();
  for (std::size_t i = 0; i < commands.size(); ++i) {
    config::SetupStep step;
    step.kind = config::SetupStep::Kind::command;
    step.shell = commands[i];
    step.key = fmt::format("--setup[{}]", i);
    cfg.setup.push_back(std::move(step));
  }
  std::vector<TableCount> tables;
  {
    session::Session session(cfg.database, "coldgate-init-",
                             [](const std::string& line) { std::cerr << "coldgate: " << line << '\n'; });
    try {
      session.setup(cfg);
    } catch (const setup::StepFailure& e) {
      // "setup command `X` failed (exit status 1):\n<stderr tail>" → one line about X, the tail
      const std::string message = e.what();
      const std::string first = message.substr(0, message.find('\n'));
      const std::string rest = first.size() < message.size() ? message.substr(first.size()) : "";
      std::string label = e.label().starts_with("command ") ? e.label().substr(8) : e.label();
      std::string how = first;
      if (auto at = first.find("` failed ("); at != std::string::npos) {
        how = first.substr(at + 2);
        if (how.ends_with(":")) how.pop_back();
      }
      throw Error(e.code(), "init --setup " + shell_quoted(label),
                  how + "; nothing written, the cluster removed: fix the command (or the "
                        "project) and run init again" + (rest.empty() ? "" : ":" + rest));
    }
    tables = table_counts(session.provider().connection_info());
  }
  const auto& bookkeeping = bookkeeping_tables();
  std::vector<TableCount> data;
  std::vector<TableCount> kept_out;
  long long rows = 0;
  for (const auto& t : tables) {
    bool tool = std::find(bookkeeping.begin(), bookkeeping.end(), t.table) != bookkeeping.end();
    (tool ? kept_out : data).push_back(t);
    if (!tool) rows += t.rows;
  }
  if (data.empty()) {
    std::cerr << "coldgate: warning: the setup commands left no table in the database: do they "
                 "connect through DATABASE_URL (or PGHOST, PGPORT, PGUSER, PGPASSWORD, "
                 "PGDATABASE)?\n";
  }
  std::string listed;
  constexpr std::size_t k_shown = 8;
  for (std::size_t i = 0; i < data.size() && i < k_shown; ++i) {
    listed += fmt::format("{}{} {}", i ? ", " : "", data[i].name,
                          results::format_value(static_cast<double>(data[i].rows), "count"));
  }
  if (data.size() > k_shown) listed += fmt::format(", … {} more", data.size() - k_shown);
  std::cout << fmt::format("the setup commands made {} table{} with {}{}\n", data.size(),
                           data.size() == 1 ? "" : "s", rows_text(rows),
                           listed.empty() ? "" : " (" + listed + ")");
  if (!kept_out.empty()) {
    std::string names;
    for (const auto& t : kept_out) {
      names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", t.name, rows_text(t.rows));
    }
    std::cout << "migration bookkeeping, left out of the stages: " << names << '\n';
  }
}

}  // namespace

std::vector<EnvEntry> orm_environment(const OrmRecipe& orm,
                                      const std::vector<std::string>& environment) {
  std::vector<EnvEntry> out;
  for (const auto& entry : environment) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) continue;
    const std::string name = entry.substr(0, eq);
    const bool read = std::any_of(orm.variables.begin(), orm.variables.end(), [&](const auto& v) {
      return v.ends_with('_') ? name.starts_with(v) && name.size() > v.size() : name == v;
    });
    if (!read) continue;
    EnvEntry e{name, entry.substr(eq + 1), false};
    e.secret = util::is_secret_name(name) || !db::password_spans(e.value).empty();
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const auto& a, const auto& b) { return a.name == b.name; }),
            out.end());
  return out;
}

std::string setup_config(const std::vector<std::string>& commands, const OrmRecipe* orm,
                         const std::string& cd_prefix, const std::vector<EnvEntry>& env) {
  Starter starter = local_starter(nullptr, "");
  starter.env = env_section(env, orm);
  commands_setup(starter, commands, orm, cd_prefix);
  return starter_text(starter, init_line(commands, "coldgate.yaml"));
}

int run_init(const InitArgs& args) {
  const fs::path output = args.output;
  std::error_code ec;
  if (fs::exists(output, ec) || fs::is_symlink(output, ec)) {
    throw usage_error(output.string(), "already exists, and init never overwrites a file: pass "
                                       "-o PATH for another one, or remove it");
  }
  if (!args.from_dump.empty() && !args.from_url.empty()) {
    throw usage_error("init", "--from-dump and --from-url exclude each other; pass one");
  }
  if (!args.setup.empty() && (!args.from_dump.empty() || !args.from_url.empty())) {
    throw usage_error("init", "--setup excludes --from-dump and --from-url; pass one");
  }
  for (const auto& command : args.setup) {
    if (trim(command).empty()) throw usage_error("init", "--setup needs a command; pass one");
  }
  const fs::path folder = fs::absolute(output).parent_path().lexically_normal();
  const fs::path here = fs::current_path();
  const std::optional<OrmRecipe> orm = recognise_orm(here);
  std::string invocation = "coldgate init";
  std::vector<std::string> notes;  // printed after "wrote"
  Starter starter;
  std::string text;  // the file, when a branch writes it whole
  if (!args.from_url.empty()) {
    // Refuses a malformed URL, and masks its password in every later error.
    const db::ConnectionInfo server = db::ConnectionInfo::parse(args.from_url, "--from-url");
    auto [url, secret] = without_password(args.from_url);
    starter = external_starter(url, !secret.empty());
    invocation += " --from-url URL";
    std::cout << "external server " << server.display() << " → database.provider external\n";
    if (!secret.empty()) {
      notes.push_back(fmt::format(
          "the password is not written into {}: its url reads ${{{}}}; before coldgate run:\n"
          "  export {}={}",
          output.string(), k_password_variable, k_password_variable, shell_quoted(secret)));
    }
  } else if (!args.from_dump.empty()) {
    const fs::path dump = args.from_dump;
    DumpKind kind = detect_dump(dump);
    std::string rel = fs::absolute(dump).lexically_normal().lexically_proximate(folder).generic_string();
    starter = local_starter(&kind, rel);
    invocation += " --from-dump " + rel;
    const char* step = kind.step == DumpKind::Step::sql    ? "sql"
                       : kind.step == DumpKind::Step::psql ? "psql"
                                                           : "restore";
    std::cout << "detected " << dump.string() << ": " << kind.what << " → setup step " << step;
    if (!kind.database.empty()) std::cout << " in database postgres; the stages use " << kind.database;
    std::cout << '\n';
    if (!kind.also_created.empty()) {
      std::string others;
      for (const auto& db : kind.also_created) others += (others.empty() ? "" : ", ") + db;
      notes.push_back(fmt::format("the dump also creates {}: set database.name to the one the "
                                  "stages should use",
                                  others));
    }
  } else if (!args.setup.empty()) {
    if (orm) std::cout << "recognised " << orm->name << " (" << orm->evidence << ")\n";
    run_setup_commands(args.setup);
    // The steps run in the config's folder: from elsewhere they first go where init ran them.
    const fs::path rel = here.lexically_normal().lexically_proximate(folder);
    const std::string cd_prefix = rel == "." ? "" : "cd " + shell_word(rel.generic_string()) + " && ";
    // What the ORM reads from this shell is written as the config's env:, so that setup runs
    // the same where the shell's variables are not.
    std::vector<EnvEntry> env;
    if (orm) {
      std::vector<std::string> environment;
      for (char** e = environ; e && *e; ++e) environment.emplace_back(*e);
      env = orm_environment(*orm, environment);
    }
    text = setup_config(args.setup, orm ? &*orm : nullptr, cd_prefix, env);
    if (!env.empty()) {
      std::string names;
      std::string secrets;
      for (const auto& e : env) {
        names += (names.empty() ? "" : ", ") + e.name;
        if (e.secret) secrets += (secrets.empty() ? "" : ", ") + e.name;
      }
      std::string note = fmt::format("the setup commands ran with {} from this shell: written as "
                                     "the config's env:",
                                     names);
      if (!secrets.empty()) {
        note += fmt::format(", the secret{} {} as a reference to the environment: set {} where "
                            "coldgate runs (a CI secret)",
                            secrets.find(',') == std::string::npos ? "" : "s", secrets,
                            secrets.find(',') == std::string::npos ? "it" : "them");
      }
      notes.push_back(note);
    }
  } else if (orm) {
    // An ORM's database comes from its migrations and seeders, which init runs with --setup:
    // a starter written now would stand in the way of that line.
    std::cout << fmt::format("recognised {} ({}): its migrations and seeds make the database; "
                             "run them through init:\n  {}\n",
                             orm->name, orm->evidence, init_line(orm->setup, args.output));
    const bool migrates = std::any_of(orm->setup.begin(), orm->setup.end(), [&](const auto& c) {
      return is_migrate_command(*orm, c);
    });
    if (migrates) {
      std::cout << "its migrate command becomes the config's migrate:, which coldgate ab runs on "
                   "a copy of base's data\n";
    }
    if (!orm->note.empty()) std::cout << "note: " << orm->note << '\n';
    std::cout << "nothing written (with commands of your own, pass those as --setup)\n";
    return 0;
  } else {
    starter = local_starter(nullptr, "");
    notes.push_back("no data is loaded yet: uncomment a setup step for your dump (or run coldgate "
                    "init --from-dump FILE, or --setup 'COMMAND' for your migrations, instead)");
  }

  if (text.empty()) text = starter_text(starter, invocation);
  if (!util::create_file_atomic(output, text)) {
    throw usage_error(output.string(), "already exists, and init never overwrites a file: pass "
                                       "-o PATH for another one, or remove it");
  }
  std::cout << "wrote " << output.string()
            << ": stages table-rows (a query) and schema (a command), each with a snapshot\n";
  for (const auto& note : notes) std::cout << note << '\n';
  std::string config = output.lexically_normal() == "coldgate.yaml" ? "" : " -c " + output.string();
  std::cout << fmt::format("next: coldgate run{}   (the first run exits 1: no snapshot is committed "
                           "yet; then coldgate review{})\n",
                           config, config);
  return 0;
}

}  // namespace coldgate::cli
