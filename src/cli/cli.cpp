#include "cli/cli.hpp"

#include <cstring>
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli/ab_command.hpp"
#include "cli/commands.hpp"
#include "cli/comment_command.hpp"
#include "cli/explain_command.hpp"
#include "cli/history_command.hpp"
#include "cli/db_command.hpp"
#include "cli/init_command.hpp"
#include "cli/review_command.hpp"
#include "cli/stack_command.hpp"
#include "db/cluster_registry.hpp"
#include "measure/probe.hpp"
#include "util/error.hpp"
#include "util/secrets.hpp"
#include "util/suggest.hpp"

namespace coldgate::cli {

namespace {

// Adds a subcommand's options to `sub` and returns what runs when it was the one parsed.
using Register = std::function<std::function<int()>(CLI::App& sub)>;

// One row of the subcommand table (docs/architecture.md "Command line").
struct Subcommand {
  const char* name;
  const char* summary;
  Register add;
  bool hidden = false;
};

void add_config_option(CLI::App& sub, std::string& config) {
  sub.add_option("-c,--config", config, "config file")->capture_default_str();
}

// --ci / --no-ci: leaves `ci` empty when neither is given, so the CI variable decides.
void add_ci_flags(CLI::App& sub, std::optional<bool>& ci) {
  auto* on = sub.add_flag_callback("--ci", [&ci] { ci = true; },
                                   "CI mode: never write under snapshots/ (default: on when CI=true)");
  auto* off = sub.add_flag_callback("--no-ci", [&ci] { ci = false; }, "local mode even when CI=true");
  on->excludes(off);
}

// accept's and review's options: the stages, -c, --ci/--no-ci, --allow-outside, --from.
void add_snapshot_options(CLI::App& sub, AcceptArgs& args, const char* stages_help) {
  sub.add_option("stage", args.stages, stages_help);
  add_config_option(sub, args.config);
  add_ci_flags(sub, args.ci);
  sub.add_flag("--allow-outside", args.allow_outside,
               "let snapshot paths of the config leave its repository");
  sub.add_option("--from", args.from,
                 "take the candidates a run wrote under DIR/snapshots/ (run --ci, ab: their "
                 "--out, e.g. coldgate-out) instead of the .new files")
      ->type_name("DIR");
}

std::vector<Subcommand> subcommands() {
  return {
      {"run", "run every stage, check snapshots, gate against a baseline",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<RunArgs>();
         add_config_option(sub, args->config);
         sub.add_option("--stage", args->stages, "run only this stage (repeatable)")
             ->allow_extra_args(false);
         sub.add_option("--out", args->out, "folder for results.json, report.md, CI candidates")
             ->capture_default_str();
         sub.add_flag("--update-snapshots", args->update_snapshots,
                      "write new documents over the committed snapshots (local mode only)");
         add_ci_flags(sub, args->ci);
         sub.add_option("--baseline", args->baseline,
                        "results.json of the base to gate against, or history[:N]: the median of "
                        "the last N (5) recorded results of the base branch");
         sub.add_option("--store", args->store,
                        "with --baseline history: the history store (default: history.store, else "
                        "git:coldgate-history)");
         sub.add_flag("--allow-no-baseline", args->allow_no_baseline,
                      "with --baseline history: no recorded result is not an error (head runs "
                      "alone)");
         sub.add_option("--shard", args->shard,
                        "I/N: run the I-th stage and every N-th after it (CI matrices; then coldgate merge)");
         sub.add_flag("--allow-outside", args->allow_outside,
                      "let snapshot paths of the config leave its repository");
         sub.add_flag("--comment", args->comment, "then post or update the PR comment (see coldgate comment)");
         sub.add_flag("--try", args->try_remedies,
                      "then measure each diagnosed stage's remedies (jit = off, ANALYZE, …) "
                      "interleaved with the stage as it is, snapshots compared");
         return [args] { return run_run(*args); };
       }},
      {"compare", "gate HEAD.json against BASE.json results",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<CompareArgs>();
         sub.add_option("base", args->base, "baseline results.json")->required();
         sub.add_option("head", args->head, "head results.json")->required();
         sub.add_option("-c,--config", args->config, "config with the gate thresholds (default: ./coldgate.yaml when present)");
         sub.add_option("--out", args->out, "folder for results.json (with the gate block) and report.md")
             ->capture_default_str();
         return [args] { return run_compare(*args); };
       }},
      {"accept", "promote pending .new snapshots (or a run's, --from DIR) over the committed ones",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<AcceptArgs>();
         add_snapshot_options(sub, *args, "stages to accept (default: all pending)");
         return [args] { return run_accept(*args); };
       }},
      {"review", "walk the pending .new snapshots on a terminal: accept, reject or skip each",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<ReviewArgs>();
         add_snapshot_options(sub, *args, "stages to review (default: all pending)");
         sub.footer(
             "Shows each pending snapshot in turn (the stage, why it does not match, the path\n"
             "summary and the diff, capped at 200 lines) and reads one key, without Enter:\n"
             "  a  accept: the candidate replaces the snapshot, atomically (as coldgate accept STAGE)\n"
             "  r  reject: delete the candidate (<snapshot>.new, or under --from DIR) and its .diff\n"
             "  s  skip: leave it pending\n"
             "  q  quit: leave this one and the rest pending (also Esc, Ctrl-D)\n"
             "Then it prints what was done: review: N accepted, N rejected, N skipped. Ctrl-C ends it\n"
             "the same way (exit 130); the terminal's mode is restored on every exit. Without a\n"
             "terminal (stdin or stdout not one) and in CI mode it refuses (exit 2): use coldgate accept.");
         return [args] { return run_review(*args); };
       }},
      {"init", "write a commented starter coldgate.yaml (--from-dump FILE, --from-url URL, --setup CMD)",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<InitArgs>();
         auto* dump = sub.add_option(
             "--from-dump", args->from_dump,
             "a pg_dump of your data: the setup step is chosen by its kind (see below)")
             ->type_name("FILE");
         auto* url = sub.add_option("--from-url", args->from_url,
                                    "an existing server's libpq URL: provider external")
                       ->type_name("URL");
         dump->excludes(url);
         auto* setup = sub.add_option(
             "--setup", args->setup,
             "a shell command that migrates or seeds your database (repeatable, in order): "
             "run on a throwaway cluster, then written as a setup step")
             ->type_name("CMD")
             ->allow_extra_args(false);
         setup->excludes(dump);
         setup->excludes(url);
         sub.add_option("-o,--output", args->output, "the config to write (never overwritten)")
             ->type_name("PATH")
             ->capture_default_str();
         sub.footer(
             "--from-dump detects the kind of dump: a custom-format (PGDMP…), tar or directory\n"
             "(toc.dat) archive → restore: FILE; SQL with psql meta-commands (a line starting with\n"
             "\\, as after COPY … FROM stdin) → psql: FILE, and when the script creates a database\n"
             "and \\connects to it, psql: {file: FILE, database: postgres} with database.name set to\n"
             "it; other SQL → sql: FILE. Paths are written relative to the config's folder.\n"
             "--from-url writes the URL with its password replaced by ${COLDGATE_DB_PASSWORD} and\n"
             "prints the export line to set it. --setup runs your application's own migrate and\n"
             "seed commands (/bin/sh -c, in this folder, with PGHOST PGPORT PGUSER PGPASSWORD\n"
             "PGDATABASE DATABASE_URL set) on a throwaway local cluster and writes them as setup\n"
             "command: steps. Without any of the three, in a folder of Django (manage.py), Rails\n"
             "(bin/rails), Alembic (alembic.ini), EF Core (*.csproj) or Prisma, TypeORM, Sequelize\n"
             "or Knex (package.json), it prints the init --setup line to run and writes nothing.\n"
             "The stages: table-rows (a query of every table's row count) and schema (a command\n"
             "printing the tables' columns through psql), each with its snapshot path, leaving out\n"
             "migration tools' bookkeeping tables, and a sql: file stage commented out. Next:\n"
             "coldgate run.");
         return [args] { return run_init(*args); };
       }},
      {"canon", "print the canonical form of a JSON document",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<CanonArgs>();
         sub.add_option("file", args->input, "JSON file, or - for stdin")->capture_default_str();
         sub.add_option("-o,--output", args->output, "write to FILE (atomically) instead of stdout");
         // One value per occurrence (repeat the option for more), so a file name after it is
         // not taken for a pattern.
         sub.add_option("--ordered", args->ordered, "JSON Pointer pattern of an array whose order matters (repeatable)")
             ->allow_extra_args(false);
         sub.add_option("--identity", args->identity, "member that identifies array elements (repeatable; default: $id, id)")
             ->allow_extra_args(false);
         sub.add_option("--redact", args->redact, "JSON Pointer pattern of values to redact (repeatable)")
             ->allow_extra_args(false);
         sub.add_flag("--redact-ids", args->redact_ids, "number equal redacted values ([id-1], [id-2] …)");
         sub.add_flag("--check", args->check, "print nothing; exit 1 when the input is not canonical");
         sub.add_option("--max-depth", args->max_depth, "deepest nesting accepted")->capture_default_str();
         return [args] { return run_canon(*args); };
       }},
      {"diff", "canonical diff of two JSON documents (exit 1 when they differ)",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<DiffArgs>();
         sub.add_option("a", args->a, "first document")->required();
         sub.add_option("b", args->b, "second document")->required();
         sub.add_option("--max-lines", args->max_lines, "diff lines shown, 0 = all")->capture_default_str();
         sub.add_option("--paths", args->max_paths, "changed paths listed")->capture_default_str();
         sub.add_option("-U,--context", args->context, "context lines")->capture_default_str();
         sub.add_option("--color", args->color, "auto | always | never")
             ->check(CLI::IsMember({"auto", "always", "never"}))
             ->capture_default_str();
         sub.add_option("-o,--output", args->output, "also write the whole diff to FILE");
         return [args] { return run_diff(*args); };
       }},
      {"explain", "EXPLAIN (ANALYZE, BUFFERS) of one stage or its statements, with diagnoses; --try measures their remedies",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<ExplainArgs>();
         sub.add_option("stage", args->stage, "a stage of the config (SQL or command)")->required();
         add_config_option(sub, args->config);
         sub.add_flag("--json", args->json,
                      "print EXPLAIN's JSON output (a command stage's or --statement's: "
                      "[{queryid, query, duration_ms, shape_id, plan}]; with --try: the trial's) "
                      "instead");
         sub.add_option("--statement", args->statement,
                        "print only this statement's plan (its queryid, as the statement table "
                        "and the plans list it)");
         sub.add_option("--top", args->top,
                        "a command stage: the plans of its N costliest statements, 0 = all")
             ->check(CLI::NonNegativeNumber)
             ->capture_default_str();
         sub.add_flag("--try", args->try_remedies,
                      "measure the remedies of the stage's diagnoses, interleaved with the stage "
                      "as it is, each snapshot compared with as is's");
         return [args] {
           require_config(args->config);
           return run_explain(*args);
         };
       }},
      {"comment", "post or update the pull request comment",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<CommentArgs>();
         sub.add_option("--out", args->out, "folder with report.md (and results.json)")->capture_default_str();
         sub.add_option("-c,--config", args->config, "config whose report.title keys the comment (default: ./coldgate.yaml when present)");
         sub.add_option("--mode", args->mode, "always | on-change (no new comment while the gate passes) | never")
             ->check(CLI::IsMember({"always", "on-change", "never"}));
         sub.add_option("--forge", args->forge, "github | gitlab (default: detected from the CI environment)")
             ->check(CLI::IsMember({"github", "gitlab"}));
         sub.add_option("--token-env", args->token_env, "variable holding the token (default GITHUB_TOKEN / COLDGATE_GITLAB_TOKEN)");
         sub.add_option("--pr", args->pr, "pull request number / merge request IID (default: from the CI environment)")
             ->check(CLI::PositiveNumber);
         sub.add_option("--key", args->key, "marker key (default: report.md's marker, else report.title)");
         sub.add_option("--timeout", args->timeout_s, "seconds for each request with its retries")
             ->check(CLI::PositiveNumber)
             ->capture_default_str();
         sub.add_flag("--dry-run", args->dry_run, "print the requests instead of sending them");
         sub.add_flag("--optional", args->optional, "no token, PR number or forge: warn and exit 0");
         sub.add_flag("--verbose", args->verbose, "log every request and response (the token masked)");
         return [args] { return run_comment(*args); };
       }},
      {"ab", "interleaved A/B of two commits on one runner (stacked pull requests)",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<AbArgs>();
         add_config_option(sub, args->config);
         sub.add_option("--base", args->base,
                        "base ref; compared at its merge-base with head (default: GITHUB_BASE_REF, "
                        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME)");
         sub.add_option("--head", args->head, "head ref")->capture_default_str();
         sub.add_option("--out", args->out, "folder for results, report, worktrees (ab/) and cache/")
             ->capture_default_str();
         sub.add_flag("--allow-no-baseline", args->allow_no_baseline,
                      "pass when the base cannot be had: head is measured alone and the report "
                      "says nothing was compared (else exit 3)");
         sub.add_flag("--no-cache", args->no_cache, "measure the base even when <out>/cache/ has it");
         sub.add_flag("--try", args->try_fixes,
                      "measure each migration regression's fix (CONCURRENTLY, NOT VALID + VALIDATE) on copies of base's data");
         sub.add_flag("--record", args->record,
                      "measure head alone and store it in <out>/cache/, the base of later pull "
                      "requests (a branch push in CI)");
         sub.add_option("--store", args->store,
                        "history store of the report's trend: git:BRANCH or a folder (default: "
                        "history.store, else git:coldgate-history)");
         sub.add_flag("--no-trend", args->no_trend,
                      "leave the history store unread: no trend of the base branch's recorded "
                      "results in the report");
         add_ci_flags(sub, args->ci);
         return [args] { return run_ab(*args); };
       }},
      {"stack", "measure a stack of pull requests once each, interleaved; gate each on the one below",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<StackArgs>();
         sub.add_option("refs", args->refs,
                        "REF0 (the base, e.g. main) REF1 … REFn, bottom-up: each on the one before it");
         add_config_option(sub, args->config);
         sub.add_option("--out", args->out, "folder for stack/ (per pull request k: stack/<k>-<ref>/) and cache/")
             ->capture_default_str();
         auto* github = sub.add_flag("--github", args->github,
                                     "discover the refs: the open pull requests from the default branch up to the current branch's");
         auto* gitlab = sub.add_flag("--gitlab", args->gitlab, "likewise from the open merge requests");
         github->excludes(gitlab);
         sub.add_option("--token-env", args->token_env, "variable holding the token (default GITHUB_TOKEN / COLDGATE_GITLAB_TOKEN)");
         sub.add_flag("--comment", args->comment, "comment each pull request's report on it (with --github/--gitlab)");
         sub.add_option("--max-commits", args->max_commits, "at most this many refs (REF0 included)")
             ->capture_default_str();
         sub.add_flag("--no-cache", args->no_cache, "measure every commit even when <out>/cache/ has it");
         sub.add_flag("--try", args->try_fixes,
                      "measure each migration regression's fix on copies of the data below it");
         add_ci_flags(sub, args->ci);
         return [args] { return run_stack(*args); };
       }},
      {"merge", "merge results of sharded runs",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<MergeArgs>();
         sub.add_option("files", args->inputs, "results.json of each shard")->required();
         sub.add_option("-o,--output", args->output, "merged results file (written atomically)")->required();
         sub.add_option("-c,--config", args->config, "config giving the stage order (default: ./coldgate.yaml when present)");
         sub.add_flag("--force", args->force, "merge results of different commits or environments");
         return [args] { return run_merge(*args); };
       }},
      {"db", "the configured database, by hand: up | down | url",
       [](CLI::App& sub) -> std::function<int()> {
         auto action = std::make_shared<std::string>();
         auto config = std::make_shared<std::string>("coldgate.yaml");
         sub.add_option("action", *action,
                        "up: start it, run setup, print the URL, keep it until Ctrl-C; "
                        "url: print the URL of a running `db up`; down: stop it")
             ->required()
             ->check(CLI::IsMember({"up", "down", "url"}));
         add_config_option(sub, *config);
         return [action, config] {
           require_config(*config);
           return run_db(*action, *config);
         };
       }},
      {"history", "the main branch's recorded results: record | page",
       [](CLI::App& sub) -> std::function<int()> {
         auto args = std::make_shared<HistoryArgs>();
         sub.add_option("action", args->action,
                        "record: add --results to the history store; page: write the trend "
                        "dashboard (-o DIR)")
             ->required()
             ->check(CLI::IsMember({"record", "page"}));
         add_config_option(sub, args->config);
         sub.add_option("--store", args->store,
                        "history store: git:BRANCH or a folder (default: history.store, else "
                        "git:coldgate-history)");
         sub.add_option("--results", args->results, "record: the results.json to record")
             ->capture_default_str();
         sub.add_option("--branch", args->branch,
                        "record: the branch to record it under (default: the results' branch); "
                        "page: only records of this branch");
         sub.add_flag("--push", args->push,
                      "record: push the git store's branch to --remote, retrying a rejected push");
         sub.add_option("--remote", args->remote, "git stores: the remote pushed to and read")
             ->capture_default_str();
         sub.add_option("-o,--out", args->out, "page: the folder to write index.html into");
         sub.add_option("--repo-url", args->repo_url,
                        "page: the repository's web address for commit links (default: from the "
                        "remote's URL)");
         return [args] {
           return args->action == "record" ? run_history_record(*args) : run_history_page(*args);
         };
       }},
      {"probe", "one measured process (internal)",
       [](CLI::App& sub) -> std::function<int()> {
         auto request = std::make_shared<std::string>();
         sub.add_option("request", *request, "request file written by coldgate run")->required();
         return [request] { return measure::run_probe(*request); };
       },
       true},
  };
}

std::vector<std::string> names(const std::vector<Subcommand>& table, bool with_hidden) {
  std::vector<std::string> out;
  for (const auto& s : table) {
    if (with_hidden || !s.hidden) out.emplace_back(s.name);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  util::add_secrets_from_environment();  // masked in every error message (src/main.cpp)
  const auto table = subcommands();

  // CLI11 reports an unknown subcommand as stray arguments; name it and suggest the closest one.
  if (argc > 1 && argv[1][0] != '-') {
    std::string word = argv[1];
    auto known = names(table, true);
    if (std::find(known.begin(), known.end(), word) == known.end()) {
      throw usage_error("", fmt::format("unknown command '{}'{}; see coldgate --help", word,
                                        util::did_you_mean(word, names(table, false))));
    }
  }

  CLI::App app{"coldgate — measures PostgreSQL-backed start-up and data loading cold, keeps\n"
               "canonical JSON snapshots, and fails the build on a changed snapshot or a\n"
               "regression of an order of magnitude.",
               "coldgate"};
  app.set_version_flag("--version", std::string("coldgate ") + COLDGATE_VERSION);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 pass, 1 the gate says no, 2 usage or config error, 3 infrastructure, "
             "130 interrupted.");

  std::map<std::string, std::function<int()>> actions;
  for (const auto& s : table) {
    CLI::App* sub = app.add_subcommand(s.name, s.summary);
    if (s.hidden) sub->group("");
    actions[s.name] = s.add(*sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where;
    for (const auto* sub : app.get_subcommands()) where = sub->get_name();
    throw usage_error(where, std::string(e.what()) + "; see coldgate " +
                                 (where.empty() ? "" : where + " ") + "--help");
  }
  auto parsed = app.get_subcommands();
  if (parsed.empty()) throw usage_error("", "no command given; see coldgate --help");
  const std::string command = parsed.front()->get_name();
  // What a killed coldgate left half-written in the cache (a template copy: 30 MB and more) is
  // the next command's to remove, whichever it is: most never start a server. A probe is a
  // child of a run, which did this at its start.
  if (command != "probe") db::remove_stale_cache_temp_files(db::default_cache_dir());
  return actions.at(command)();
}

}  // namespace coldgate::cli
