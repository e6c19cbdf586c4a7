#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "canon/canon.hpp"

namespace coldgate::config {

/// Durations are kept in milliseconds; YAML accepts `250ms`, `1.5s`, `10m`, `1h` (a bare number
/// is an error: the unit must be written).
using Duration = std::chrono::milliseconds;

/// Where a value stood in the YAML file (1-based line and column), for error messages.
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
  /// "file:line:col".
  std::string str() const;
};

/// Which provider gives the running server.
enum class Provider { local, container, external };
/// How a cold run is made cold: a fresh process, or a server restart before it as well.
enum class ColdMode { process, restart };
/// Which state of the stages' database a cold run finds: `run` a fresh copy of it as setup left
/// it before every cold run, `stage` one copy before the stage's first run, `none` whatever the
/// earlier runs and stages left (docs/configuration.md, "Isolation").
enum class Isolation { run, stage, none };
/// The isolation of a stage that sets none, and of `defaults:` without `isolation:`.
inline constexpr Isolation k_default_isolation = Isolation::run;
/// How the result of a SQL stage is decoded in the measured process.
enum class Decode { none, json };
/// How a command stage's `settings` reach its client sessions: `PGOPTIONS` (libpq clients), or
/// `ALTER ROLE CURRENT_USER IN DATABASE … SET` for each run (clients that ignore PGOPTIONS).
enum class SettingsVia { pgoptions, role };

/// What a statement whose growth over the data scales got worse is (`gate.growth`): a
/// regression, a warning, or not judged.
enum class GrowthGate { fail, warn, off };

/// One `env:` value: its text as written — `${NAME}` is expanded at run time
/// (expand_env_values()), when the run's server is known — and where it stood.
struct EnvValue {
  std::string text;
  std::string key;  // its key path, "env.DB_URL", "stages[2].env.DB_URL"
  Location where;   // of the value
};

/// `env:` — variable name → value, for setup `command:` steps and command stages.
using EnvMap = std::map<std::string, EnvValue>;

/// `database:` — the server coldgate starts or connects to.
struct Database {
  Provider provider = Provider::local;
  std::optional<int> version;         // PostgreSQL major; local: binaries, container: image tag
  std::filesystem::path bindir;       // local: server programs' folder (absolute); "" = searched
  std::string image;                  // container image; "" = postgres:<version or 15>
  std::string engine;                 // container: "docker" | "podman"; "" = first on PATH
  std::vector<std::string> run_args;  // container: extra `run` arguments
  std::string url;                    // external: libpq URL or key=value string
  std::string restart_command;        // external: shell command that restarts the server
  std::string name = "coldgate";      // database name
  std::map<std::string, std::string> settings;  // server settings (`-c k=v`)
  std::map<std::string, Location> settings_where;  // of each setting's name, for its errors
  /// The server-side profile (pg_stat_statements around every run); false turns it off for
  /// every stage, and local/container servers then start without the extension preloaded.
  bool profile = true;
  /// One unmeasured plan run per profiled stage that captures each statement's actual plan
  /// (auto_explain, on local and container servers); false skips it.
  bool plans = true;
  Location where;
};

/// How a commit reaches its schema on an existing database (top-level `migrate:`): the
/// application's migrate command, or a folder of `*.sql` files applied in name order (the
/// Flyway/dbmate/golang-migrate convention), each as `psql -f` applies it (no wrapping
/// transaction, so CREATE INDEX CONCURRENTLY works).
struct Migrate {
  std::vector<std::string> argv;  // command given as a list: run without a shell
  std::string shell;              // command given as a string: run with /bin/sh -c
  std::filesystem::path sql_dir;  // absolute; "" for a command
  std::string sql_dir_given;      // as the config wrote it, for messages
  Location where;                 // the `migrate:` value
  std::string key;                // "migrate.command", "migrate.sql_dir"
  /// True when neither a command nor a folder is set (no `migrate:` key).
  bool empty() const { return argv.empty() && shell.empty() && sql_dir.empty(); }
};

/// One `setup:` step, run in order before the stages.
struct SetupStep {
  /// `migrate` is the plain step `- migrate`: the config's `migrate:` run at that point.
  enum class Kind { sql, psql, restore, command, analyze, migrate };
  Kind kind = Kind::sql;
  std::filesystem::path file;     // sql / psql / restore: absolute path (resolved against the config's folder)
  std::string file_given;         // that path as the config wrote it, for messages
  std::vector<std::string> argv;  // command given as a list: run without a shell
  std::string shell;              // command given as a string: run with /bin/sh -c
  /// psql: the database psql connects to first (`psql: {file, database}`), for a script that
  /// drops and creates the stages' database and `\c`s into it; "" = the stages' database.
  std::string database;
  /// psql: `psql -v name=value` for each (`psql: {file, variables}`), read as :name / :'name'.
  std::map<std::string, std::string> variables;
  EnvMap env;            // command, migrate: the top-level `env:`
  Migrate migrate;       // migrate: the config's `migrate:`
  Location where;        // the list item
  Location value_where;  // the file's or the command's value, where check_setup() points
  std::string key;       // its key path, "setup[0].sql", "setup[1].psql.file", "setup[2].command"
};

/// The most `snapshot.max_depth` may raise the nesting limit to (Go's encoding/json limit): a
/// document of 10,000 levels prints as ~200 MB of canonical text from 60 KB, 30,000 as 1.8 GB.
inline constexpr std::size_t k_max_snapshot_depth = 10000;

/// `snapshot:` of a stage.
struct Snapshot {
  std::filesystem::path path;  // committed snapshot, absolute (resolved against the config's folder)
  std::string from;            // command stages: the file the program writes (absolute); "" otherwise
  bool from_stdout = false;    // command stages: the document is the program's stdout (the default)
  canon::Options canon;        // ordered / identity / redact / redact_ids / max_depth
  Location where;
  Location path_where;         // of the `path:` value; `where` when the path is the default
};

/// Gate thresholds (`gate:` at top level; `stages[].gate` overrides per stage).
struct Gate {
  double max_ratio = 10;                        // regression at or above this ratio
  double warn_ratio = 2;                        // slower / faster beyond this ratio
  Duration min_delta{20};                       // smallest time difference that can regress
  std::uint64_t min_delta_bytes = 16ull << 20;  // smallest memory difference that can regress
  std::vector<std::string> metrics;             // gated metrics; empty = all _ms and peak_rss_bytes
  bool require_same_environment = false;
  double max_query_ratio = 2;                   // db_queries: regression at or above this ratio
  int min_query_delta = 10;                     // … and at least this many statements more
  double max_blocks_ratio = 10;  // a statement's shared blocks per call: regression at this ratio …
  /// … and at least this many blocks per call more: 100 blocks (800 KiB) is past what an index
  /// lookup reads (root, inner pages, leaf, heap: 3–6; in a fresh backend its first plan over a
  /// table adds the catalog pages it looks up, about 50) and below a sequential scan of a table
  /// of 100k narrow rows (~640 blocks).
  double min_blocks_delta = 100;
  bool statements = true;  // per-statement verdicts (calls, blocks per call) on
  /// `ab` and `stack`: more interleaved runs per side, at most this many, when a time verdict
  /// lies near its threshold, so that noise does not decide it.
  int max_extra_runs = 10;
  /// A statement whose calls, rows or blocks per call grow with a worse class than the
  /// baseline's over the scales (constant → linear: an index lost; a new linear calls term: a
  /// new N+1) fails the gate, warns, or is not judged. Only with `scales:`.
  GrowthGate growth = GrowthGate::fail;
};

/// `gate.migration`: how head's migration, measured on base's data, is judged (`ab`, `stack`).
struct MigrationGate {
  /// A pre-existing table of at least this many rows (at the largest scale) rewritten, given an
  /// index built without CONCURRENTLY or a constraint valid at once, is a regression whatever
  /// the machine's speed: each holds a lock that blocks writes (a rewrite, a CHECK: reads too)
  /// for time linear in the rows, and 10,000 rows is where Squawk's and strong_migrations'
  /// examples stop being toy tables.
  std::uint64_t max_rewrite_rows = 10000;
  /// The longest a probe reading or writing a pre-existing table may wait on the migration: 1 s,
  /// where a web request's budget (hundreds of ms) is spent several times over.
  Duration max_stall{1000};
  /// How long a strong lock request may wait behind an open transaction before it counts as
  /// "without lock_timeout": 10 s, the lock_timeout strong_migrations' initializer sets.
  Duration max_lock_wait{10000};
  /// A strong lock requested without lock_timeout: fail, warn (default) or not judged.
  GrowthGate lock_timeout = GrowthGate::warn;
};

/// Cold runs per variant of a remedy trial (`--try`) unless `try_runs` says otherwise.
inline constexpr int k_default_try_runs = 3;

/// A remedy of the user's own that `--try` measures beside those of the diagnoses
/// (`stages[].remedies`).
struct UserRemedy {
  std::string name;                             // as the trial's table shows it
  std::map<std::string, std::string> settings;  // set on top of the stage's own
  Location where;
};

/// Calls of one statement in one cold run from which it is reported as `repeated_query` (N+1).
inline constexpr int k_default_repeated_threshold = 20;

/// Largest result a stage may return unless `max_result_bytes` says otherwise: 256 MiB, the
/// bytes of all values of a SQL result as text, or of a command's snapshot document.
inline constexpr std::uint64_t k_default_max_result_bytes = std::uint64_t{256} << 20;

/// One measurement stage: a SQL query (`sql:` file or `query:` text) or a `command:`.
struct Stage {
  std::string name;
  std::filesystem::path sql;                  // absolute, or empty
  std::string query;                          // inline SQL, or empty
  std::vector<std::string> params;            // $1, $2 … as text; "" where params_null[i]
  std::vector<bool> params_null;              // params_null[i]: parameter i is SQL NULL
  std::map<std::string, std::string> settings;        // SQL: SET LOCAL in the query's transaction;
                                                      // command: its clients' (settings_via)
  std::map<std::string, Location> settings_where;     // of each setting's name
  SettingsVia settings_via = SettingsVia::pgoptions;  // command stages only
  Decode decode = Decode::none;
  std::vector<std::string> command;           // argv, no shell
  std::string shell;                          // command given as a string
  /// The command's program value (a list's first item, else the string), where
  /// check_stages() points, and its key path ("stages[2].command[0]", "stages[2].command").
  Location command_where;
  std::string command_key;
  EnvMap env;  // command stages: the top-level `env:` with the stage's own `env:` on top
  int runs = 5;                               // cold runs (defaults.runs unless set)
  int warm = 5;                               // warm repetitions after each cold run
  ColdMode cold = ColdMode::process;
  Isolation isolation = k_default_isolation;  // defaults.isolation unless set
  Duration timeout{10 * 60 * 1000};
  std::uint64_t max_result_bytes = k_default_max_result_bytes;  // defaults.max_result_bytes unless set
  std::optional<Snapshot> snapshot;
  bool profile = true;                        // database.profile unless set: pg_stat_statements per run
  int repeated_threshold = k_default_repeated_threshold;  // defaults.repeated_threshold unless set
  /// Requests (page loads, API calls) one run of this command stage makes (`requests:`, 1 unless
  /// set): repeated_query judges a statement's calls per request, so the stage's own loop — one
  /// call per request — is no N+1, and an N+1 is calls per request that grow with the rows.
  int requests = 1;
  int try_runs = k_default_try_runs;          // defaults.try_runs unless set
  std::vector<UserRemedy> remedies;           // tried by --try beside the diagnoses' remedies
  /// The data scales it is measured at (its own `scales:`, else the top-level one), ascending;
  /// empty or one entry: only at the scale the stages' database is loaded at.
  std::vector<double> scales;
  Gate gate;                                  // top-level gate with this stage's overrides applied
  Location where;
  /// True for command stages (command or shell set), false for SQL stages.
  bool is_command() const { return !command.empty() || !shell.empty(); }
};

/// `report:`.
struct Report {
  std::string title = "coldgate";  // heading, and the key of the PR comment marker
  bool comment = false;            // post the PR comment after `run`
};

/// `history:` — where `coldgate history` and `run --baseline history` keep the main branch's
/// recorded results.
struct History {
  /// `git:BRANCH` (a branch of this repository) or a folder relative to the config's folder;
  /// history::parse_store reads it.
  std::string store = "git:coldgate-history";
  Location where;  // of the `store:` value; the config file itself when it is the default
};

/// A whole validated `coldgate.yaml` (`version: 1`, docs/architecture.md "Config").
struct Config {
  std::filesystem::path file;      // the config file, absolute
  std::filesystem::path base_dir;  // its folder: relative paths in it resolve here
  int version = 1;
  Database database;
  std::vector<SetupStep> setup;
  std::vector<std::string> build;  // shell commands that build the code under test (coldgate ab)
  EnvMap env;                      // top-level `env:`: setup command steps and command stages
  int default_runs = 5;
  int default_warm = 5;
  ColdMode default_cold = ColdMode::process;
  Isolation default_isolation = k_default_isolation;
  Duration default_timeout{10 * 60 * 1000};
  std::uint64_t default_max_result_bytes = k_default_max_result_bytes;
  int default_repeated_threshold = k_default_repeated_threshold;
  int default_try_runs = k_default_try_runs;
  /// Top-level `scales:`: the data scales, ascending; its first is the scale setup loads the
  /// stages' database at (every stage's list starts there too).
  std::vector<double> scales;
  /// Production's data over scale 1's (`production_scale:`): the report projects each
  /// statement's counts and time there from the growth fits.
  std::optional<double> production_scale;
  std::vector<Stage> stages;
  Gate gate;
  MigrationGate migration_gate;  // `gate.migration`
  Migrate migrate;               // `migrate:`; empty() when absent
  Report report;
  History history;
  /// The scale the stages' database is loaded at: the first of the scales' lists, else 1.
  double load_scale() const;
  /// Every scale any selected stage is measured at but load_scale(), ascending: each gets a
  /// database of its own, set up at that scale.
  std::vector<double> extra_scales(const std::vector<Stage>& selected) const;
  /// True when setup has an `analyze:` step (every table then has statistics).
  bool setup_analyzes() const {
    for (const auto& step : setup) {
      if (step.kind == SetupStep::Kind::analyze) return true;
    }
    return false;
  }
};

/// Loads and validates a config file. `${VAR}` and `${VAR:-default}` are expanded in every
/// string scalar. Throws Error(usage) whose `where` is `file:line:col` and whose text names the
/// key path (`stages[2].snapshot.path: …`): invalid YAML (a plain value holding ': ' with the
/// quoted value as the hint), unknown key (with "did you mean"), wrong type, missing required
/// value, duplicate stage name, both `sql` and `command`, missing stage file, unset variable,
/// unsupported version. What `setup:` names is checked apart, by check_setup(): commands that
/// do not run setup (comment, compare, accept) read a config whose setup file is missing.
Config load(const std::filesystem::path& file);

/// As load(), from YAML text; `file` is used for messages and as the base for relative paths.
Config parse(std::string_view yaml, const std::filesystem::path& file);

/// Checks that what `setup:` names is there, as each step would look for it, so that a missing
/// file or program is a config error before any server starts: sql/psql/restore files exist
/// (sql and psql a file, restore a file or a dump folder), relative to the config's folder; a
/// command's program (a list's first item, or a plain first word of a shell string) is found
/// relative to the config's folder when it has a '/', else on PATH, and is executable. Throws
/// Error(usage) at the value's `file:line:col` naming the key path, with what to do.
void check_setup(const Config& config);

/// Checks, as check_setup() checks a setup command's, that the program of each command stage
/// among `stages` is there — a list's first item, or a plain first word of a shell string;
/// found relative to the config's folder when it has a '/', else on PATH (a shell string's
/// also in the local server's bindir, which the run puts first on its PATH) — so that a stage
/// whose program is missing is a config error (exit 2) before any server starts. Throws
/// Error(usage) at the value's `file:line:col` naming the key path and the stage.
void check_stages(const Config& config, const std::vector<Stage>& stages);

/// The run's connection facts an `env:` value's `${NAME}` finds before the process environment:
/// PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE DATABASE_URL JDBC_DATABASE_URL.
const std::vector<std::string>& connection_fact_names();

/// `env` for one run, as "NAME=value" entries for a child's environment: each `${NAME}` from
/// `facts` (connection_fact_names() → this run's values) first, else the process environment;
/// `${NAME:-default}` and `$${` as at load time. Values of names that look secret (…PASSWORD…,
/// …TOKEN…) are registered as secrets. Throws Error(usage) at the value's `file:line:col` for
/// a variable unset now that was set when the config loaded.
std::vector<std::string> expand_env_values(const EnvMap& env,
                                           const std::map<std::string, std::string>& facts);

/// The keys each mapping of a config accepts, by key path with `[]` for list items ("" = top
/// level, "database", "setup[]", "stages[]", "stages[].snapshot", "stages[].gate", "gate", …).
/// The one table behind "did you mean" hints and the JSON Schema (config/coldgate.schema.json).
const std::map<std::string, std::vector<std::string>>& known_keys();

/// The repository a config belongs to: the nearest folder at or above the config's folder that
/// holds `.git` (a folder, or the file of a git worktree); without one, the current folder when
/// the config's folder is inside it, else the config's folder.
std::filesystem::path repository_root(const Config& config);

/// The folder snapshot diffs name their files from: the git repository holding the config (the
/// nearest folder at or above its folder with `.git`), else the config's folder.
std::filesystem::path label_root(const Config& config);

/// Refuses a config that would make coldgate write outside its repository: throws Error(usage)
/// at the `path:` value's `file:line:col` when a snapshot path (next to which candidates and
/// pending `.new` files are written) resolves — `..` and symlinks of existing folders followed
/// — outside repository_root(). `coldgate run`/`accept` skip it with --allow-outside.
void require_paths_inside(const Config& config);

/// Parses a duration such as "500ms", "1.5s", "10m", "1h"; throws Error(usage) with `where`.
Duration parse_duration(std::string_view text, const std::string& where);

/// Parses a size such as "16MiB", "512KiB", "1GB", "100B" into bytes; throws Error(usage).
std::uint64_t parse_size(std::string_view text, const std::string& where);

}  // namespace coldgate::config
