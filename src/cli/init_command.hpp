#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace coldgate::cli {

struct OrmRecipe;

/// Arguments of `coldgate init`.
struct InitArgs {
  std::string from_dump;                // --from-dump FILE: a pg_dump file or directory archive
  std::string from_url;                 // --from-url URL: an existing server (provider external)
  std::vector<std::string> setup;       // --setup CMD…: shell commands that migrate and seed
  std::string output = "coldgate.yaml"; // -o PATH: the file to write
};

/// What `coldgate init --from-dump` found in a dump, and so which setup step loads it.
struct DumpKind {
  enum class Step { sql, psql, restore };
  Step step = Step::sql;
  std::string what;      // for humans: "a custom-format archive (starts with PGDMP)", …
  std::string database;  // the database a psql script creates and \connects to, else ""
  std::string connects;  // the database a psql script \connects to without creating it, else ""
  std::vector<std::string> also_created;  // further databases the script creates (pg_dumpall)
  std::string server_version;  // "15.4" from "-- Dumped from database version 15.4", else ""
};

/// Reads `path` as `coldgate init` does: a folder with toc.dat, a file starting with `PGDMP` or
/// a tar archive (`ustar` at byte 257) is a pg_restore archive; text with a line starting with
/// `\` (a psql meta-command, also `\.` after `COPY … FROM stdin;` data) or a `COPY … FROM stdin`
/// is a psql script, one that runs `CREATE DATABASE x` and `\connect x` (or `\c x`) names `x`
/// (and whether a `DROP DATABASE [IF EXISTS] x` comes first);
/// other text is plain SQL. Throws Error(usage) naming the path for a missing, empty, gzip or
/// binary file and for a folder without toc.dat, each with what to do.
DumpKind detect_dump(const std::filesystem::path& path);

/// Writes a commented starter config to args.output — `database:` (local, or external for
/// --from-url with the password replaced by `${COLDGATE_DB_PASSWORD}`), the setup step the
/// dump needs with its path relative to the config's folder, one stage of each kind (a query of
/// every table's row count and a command printing the tables' columns through psql, both with
/// snapshot paths, plus a `sql:` file stage commented out) — and prints what it detected and the
/// next command. With --setup it first runs those commands in the current folder (as setup
/// `command:` steps, on a throwaway local cluster), says what tables they made and writes them as
/// the setup steps (setup_config(): the recognised ORM's migrate command as `migrate:`, and what
/// of its environment that ORM reads as `env:`, orm_environment()); without
/// a dump, URL or --setup in a folder whose ORM recognise_orm() knows, it writes nothing and
/// prints the `coldgate init --setup …` line to run. Returns 0. Throws
/// Error(usage) when args.output exists (it never overwrites), for --setup with --from-dump or
/// --from-url and for both of those, and for what detect_dump() or the URL's parser refuses; a
/// --setup command that fails throws its setup step's error (exit 1 when it exits non-zero),
/// named `init --setup 'CMD'`, with nothing written.
int run_init(const InitArgs& args);

/// A variable of init's environment that the recognised ORM reads (OrmRecipe::variables), for
/// the config's `env:`.
struct EnvEntry {
  std::string name;
  std::string value;    // as the environment has it
  /// A secret (a name util::is_secret_name() knows, a value with a URL's or conninfo's
  /// password): the config reads it from coldgate's environment, `${NAME}`, never holds it.
  bool secret = false;
};

/// The entries of `environment` ("NAME=value", as environ holds them) that `orm` reads — a
/// name of OrmRecipe::variables, or one starting with a prefix of it (`TYPEORM_`) — with a
/// value, in name order. Never throws but std::bad_alloc.
std::vector<EnvEntry> orm_environment(const OrmRecipe& orm,
                                      const std::vector<std::string>& environment);

/// The config `init --setup` writes for `commands` (shell commands, in order) without running
/// them: a local `database:`, each command a setup `command:` step prefixed with `cd_prefix`
/// ("" or "cd DIR && ", the folder init ran them in seen from the config's), then `analyze:
/// true`, and the starter stages. The first command that is `orm`'s migrate command
/// (is_migrate_command) is written as the top-level `migrate: {command: …}` and its step as
/// `- migrate`; `orm` may be null (no ORM recognised). `env` (orm_environment()) is written as
/// the top-level `env:`: each value as it is (a literal `${` as `$${`), a secret as `${NAME}`.
/// Never throws but std::bad_alloc.
std::string setup_config(const std::vector<std::string>& commands, const OrmRecipe* orm,
                         const std::string& cd_prefix, const std::vector<EnvEntry>& env = {});

}  // namespace coldgate::cli
