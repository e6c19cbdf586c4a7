#include "cli/commands.hpp"
#include "cli/comment_command.hpp"
#include "cli/db_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <tuple>

#include <fmt/core.h>

#include "ab/git.hpp"
#include "canon/canon.hpp"
#include "cli/history_command.hpp"
#include "config/config.hpp"
#include "db/cluster_registry.hpp"
#include "diff/diff.hpp"
#include "gate/gate.hpp"
#include "gate/merge.hpp"
#include "history/baseline.hpp"
#include "history/history.hpp"
#include "session/run.hpp"
#include "results/json.hpp"
#include "report/outputs.hpp"
#include "snapshot/snapshot.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/suggest.hpp"
#include "util/text.hpp"
#include "util/secrets.hpp"

namespace coldgate::cli {

namespace {

// Writes all of `text` to stdout; a closed pipe or full disk is an infrastructure error.
void write_stdout(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    throw Error(ExitCode::infrastructure, "stdout", "write failed");
  }
}

// Reads a document argument: a path, or "-" for stdin; returns {bytes, name for messages}.
std::pair<std::string, std::string> read_input(const std::string& arg) {
  if (arg == "-") return {util::read_stdin(), "stdin"};
  return {util::read_file(arg), arg};
}

config::Config load_config(const std::string& path) {
  require_config(path);
  return config::load(path);
}

}  // namespace

void require_config(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw usage_error(path, "config file not found; pass -c FILE, or run in the folder of your "
                            "coldgate.yaml (docs/configuration.md of coldgate describes one)");
  }
}

config::Config load_snapshot_config(const std::string& path, bool allow_outside) {
  auto cfg = load_config(path);
  if (!allow_outside) config::require_paths_inside(cfg);
  return cfg;
}

std::vector<snapshot::Claim> snapshot_claims(const config::Config& cfg) {
  std::vector<snapshot::Claim> claims;
  for (const auto& stage : cfg.stages) {
    if (stage.snapshot) claims.push_back({stage.name, stage.snapshot->path, stage.snapshot->canon});
  }
  return claims;
}

std::string accept_command(const std::string& config_path) {
  if (std::filesystem::path(config_path).lexically_normal() == "coldgate.yaml") {
    return "coldgate accept";
  }
  return "coldgate accept -c " + config_path;
}

bool ci_mode(std::optional<bool> flag) {
  if (flag) return *flag;
  const char* ci = std::getenv("CI");
  return ci && (std::string_view(ci) == "true" || std::string_view(ci) == "1");
}

bool use_color(const std::string& when) {
  if (when == "always") return true;
  if (when == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  return ::isatty(STDOUT_FILENO) == 1;
}

int run_canon(const CanonArgs& args) {
  auto [input, source] = read_input(args.input);
  canon::Options options;
  options.ordered = args.ordered;
  if (!args.identity.empty()) options.identity = args.identity;
  options.redact = args.redact;
  options.redact_ids = args.redact_ids;
  options.max_depth = args.max_depth;
  for (const auto& p : options.ordered) canon::validate_pattern(p);
  for (const auto& p : options.redact) canon::validate_pattern(p);

  if (!args.check && args.output.empty()) {
    // Straight to stdout in pieces: a large document's text is never held whole.
    canon::canonicalize_to(input, options, source, [](std::string_view piece) {
      if (std::fwrite(piece.data(), 1, piece.size(), stdout) != piece.size()) {
        throw Error(ExitCode::infrastructure, "stdout", "write failed");
      }
    });
    if (std::fflush(stdout) != 0) throw Error(ExitCode::infrastructure, "stdout", "write failed");
    return 0;
  }
  std::string out = canon::canonicalize(input, options, source);
  if (args.check) {
    if (out == input) return 0;
    std::cerr << "coldgate: " << source << ": not in canonical form; rewrite it with: coldgate canon -o "
              << (args.input == "-" ? "FILE" : args.input) << ' '
              << (args.input == "-" ? "FILE" : args.input) << '\n';
    return static_cast<int>(ExitCode::gate_failed);
  }
  util::write_file_atomic(args.output, out);
  return 0;
}

int run_diff(const DiffArgs& args) {
  if (args.a == "-" && args.b == "-") throw usage_error("diff", "only one side can be stdin");
  auto [text_a, source_a] = read_input(args.a);
  auto [text_b, source_b] = read_input(args.b);
  std::string a = canon::canonicalize(text_a, {}, source_a);
  std::string b = canon::canonicalize(text_b, {}, source_b);
  if (a == b) {
    if (!args.output.empty()) util::write_file_atomic(args.output, "");  // no stale diff left
    return 0;
  }

  diff::Options options;
  options.arrangement = canon::Options{};  // how both sides were canonicalized above
  options.max_paths = args.max_paths;
  options.context_lines = args.context;
  options.label_a = source_a;
  options.label_b = source_b;
  if (!args.output.empty()) {
    diff::Options full = options;
    full.max_lines = 0;
    util::write_file_atomic(args.output, diff::render(a, b, full));
    options.full_diff_path = args.output;
  }
  options.max_lines = args.max_lines;
  options.color = use_color(args.color);
  write_stdout(diff::render(a, b, options));
  return static_cast<int>(ExitCode::gate_failed);
}

int run_accept(const AcceptArgs& args) {
  auto mode = ci_mode(args.ci) ? snapshot::Mode::ci : snapshot::Mode::local;
  if (mode == snapshot::Mode::ci) {
    // Refuse before reading the config: CI must never write under snapshots/.
    snapshot::accept({}, args.stages, mode);
  }
  auto cfg = load_snapshot_config(args.config, args.allow_outside);
  const snapshot::Source source = candidate_source(args, cfg);
  auto cwd = std::filesystem::current_path();
  for (const auto& a : snapshot::accept(snapshot_claims(cfg), args.stages, mode, source)) {
    std::cout << "accepted " << a.stage << ": " << a.path.lexically_proximate(cwd).string() << '\n';
  }
  return 0;
}

snapshot::Source candidate_source(const AcceptArgs& args, const config::Config& cfg) {
  snapshot::Source source;
  if (args.from.empty()) return source;
  std::error_code ec;
  if (!std::filesystem::is_directory(args.from, ec)) {
    throw usage_error("--from", fmt::format("{} is not a folder: name the --out folder of the run "
                                            "that wrote the candidates (coldgate-out, or a "
                                            "downloaded artifact)",
                                            args.from));
  }
  source.from = args.from;
  source.root = config::repository_root(cfg);
  return source;
}

namespace {

// `--baseline history[:N]`: the last N recorded results of the base branch reachable from
// HEAD, summarized for the gate (history::baseline_results); the annotation marks the gate's
// base as history and adds the trend. No record at all: no_baseline says so.
session::Baseline history_baseline(const config::Config& cfg, const RunArgs& args, int n) {
  session::Baseline b;
  b.name = args.baseline;
  const history::StoreSpec spec = store_spec(args.store, &cfg);
  history::Loaded loaded = history::read_records(spec, cfg.base_dir, "origin");
  if (!loaded.absent.empty()) loaded.warnings.insert(loaded.warnings.begin(), loaded.absent);
  for (const auto& w : loaded.warnings) std::cerr << "coldgate: warning: " << w << '\n';
  b.warnings = loaded.warnings;
  std::string branch;
  for (const char* var : {"GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"}) {
    if (const char* v = std::getenv(var); v && *v && branch.empty()) branch = v;
  }
  const std::string head = ab::git(cfg.base_dir, {"rev-parse", "--verify", "--quiet", "HEAD"})
                               .value_or("");
  std::vector<history::Record> used =
      history::select(std::move(loaded.records), cfg.base_dir, head, branch, n);
  if (used.empty()) {
    b.no_baseline = fmt::format("no recorded results{} in {}{}: record the base branch with "
                                "coldgate history record",
                                branch.empty() ? "" : " of " + branch, spec.text,
                                args.allow_no_baseline ? " (--allow-no-baseline: head runs alone)"
                                                       : "");
    return b;
  }
  b.results = history::baseline_results(used);
  b.name = fmt::format("history:{} ({})", n, spec.text);
  b.annotate = [used = std::move(used), store = spec.text, n](results::Results& r) {
    if (r.gate) r.gate->base_source = results::BaseSource::history;
    r.history = history::trend(used, r, store, n);
    // Records keep no diagnoses: nothing says which of head's the base had, so none is marked
    // new and none gone.
    std::erase_if(r.diagnoses, [](const results::Diagnosis& d) { return d.change == results::DiagnosisChange::gone; });
    for (auto& d : r.diagnoses) d.change = results::DiagnosisChange::none;
  };
  return b;
}

}  // namespace

int run_run(const RunArgs& args) {
  remove_stale_up_states(db::default_cache_dir());  // a killed `db up`'s URL and password
  // Options that cannot work are refused before anything is touched: a mistyped --baseline
  // must not cost the last run's outputs.
  const std::optional<int> history_n = history::parse_history_baseline(args.baseline);
  if (!history_n && !args.store.empty()) {
    throw usage_error("--store", "only --baseline history[:N] reads the history store");
  }
  if (!history_n && args.allow_no_baseline) {
    throw usage_error("--allow-no-baseline", "only --baseline history[:N] can find no baseline");
  }
  std::error_code ec;
  if (!args.baseline.empty() && !history_n && !std::filesystem::exists(args.baseline, ec)) {
    // "histroy:5", "History": a history baseline misspelt reads as a file that is not there.
    const std::string word = args.baseline.substr(0, args.baseline.find(':'));
    const bool like_history = util::edit_distance(util::lower(word), "history") <= 2;
    throw usage_error("--baseline",
                      fmt::format("'{}' is no file{}", args.baseline,
                                  like_history ? "; did you mean history or history:N (the "
                                                 "recorded results of the base branch)?"
                                               : ": give a results.json, or history[:N]"));
  }
  // Then: a run that stops before its reports (a config that does not load) must not leave an
  // earlier run's report.md to pass for its own.
  std::filesystem::path out = args.out;
  // Held to the end (the comment included): another coldgate with this --out stops at once.
  util::FileLock out_lock = report::lock_outputs(out, "run");
  report::clear_outputs(out, args.stages.empty() && args.shard.empty());
  session::JobOptions options;
  if (!args.shard.empty()) {
    std::tie(options.shard_index, options.shard_count) = session::parse_shard(args.shard);
  }
  // The baseline is read and checked before measuring: a bad file fails in a second, not after
  // minutes of cold runs.
  session::Baseline baseline;
  baseline.name = args.baseline;
  if (!args.baseline.empty() && !history_n) {
    baseline.results = results::from_json(util::read_file(args.baseline), args.baseline);
    gate::check_samples(*baseline.results, args.baseline);
  }
  auto cfg = load_snapshot_config(args.config, args.allow_outside);
  if (history_n) baseline = history_baseline(cfg, args, *history_n);
  options.stages = args.stages;
  options.out_dir = args.out;
  options.ci = ci_mode(args.ci);
  options.update_snapshots = args.update_snapshots;
  options.try_remedies = args.try_remedies;
  options.accept_command = accept_command(args.config);
  options.progress = measure::detect_progress_style(options.ci);
  if (options.ci && args.update_snapshots) {
    throw usage_error("--update-snapshots", "refused in CI mode: CI never writes under snapshots/; "
                                            "run it locally, or pass --no-ci");
  }
  // Results may be piped to a reader that quits early (`coldgate run | head`): a failed write
  // must not kill us before the server is stopped.
  ::signal(SIGPIPE, SIG_IGN);
  auto [results, gate_error, stop_error] =
      session::run(cfg, options, std::move(baseline), std::cout);
  // A run that stopped: its error as always, then the verdict that says it, as the last line.
  if (stop_error) std::cerr << "coldgate: error: " << util::mask_secrets(stop_error->message()) << '\n';
  std::cerr << "coldgate: " << gate::verdict(results) << "; results in "
            << (out / "results.json").string() << '\n';
  int code = stop_error                ? static_cast<int>(stop_error->code())
             : gate::passed(results) ? 0
                                     : static_cast<int>(ExitCode::gate_failed);
  // No recorded result to gate against is an error once the reports say so, whatever the
  // gate said, as under `ab`.
  if (!stop_error && !results.no_baseline.empty() && !args.allow_no_baseline) {
    std::cerr << "coldgate: error: --baseline " << args.baseline << ": " << results.no_baseline
              << " (pass --allow-no-baseline to pass without one)\n";
    code = static_cast<int>(ExitCode::infrastructure);
  }
  // report.comment alone comments only in CI mode, and only where a forge is detected. After
  // SIGINT/SIGTERM coldgate stops: a later `coldgate comment` posts that report.
  bool stopped_by_signal = stop_error && stop_error->code() == ExitCode::interrupted;
  if (!stopped_by_signal && (args.comment || (cfg.report.comment && options.ci))) {
    CommentArgs comment;
    comment.out = args.out;
    comment.config = args.config;
    comment.optional = !args.comment;
    try {
      run_comment(comment);
    } catch (const Error& e) {
      // The gate's verdict outranks the comment: a failed comment only fails a passing run.
      if (e.code() == ExitCode::interrupted || (code == 0 && !gate_error)) throw;
      std::cerr << "coldgate: warning: comment not posted: " << e.message() << '\n';
    }
  }
  if (gate_error) throw *gate_error;
  return code;
}

namespace {

// -c FILE when given (it must exist), else ./coldgate.yaml when there is one, else no config.
std::optional<config::Config> optional_config(const std::string& path) {
  if (!path.empty()) return load_config(path);
  std::error_code ec;
  if (std::filesystem::exists("coldgate.yaml", ec)) return config::load("coldgate.yaml");
  return std::nullopt;
}

results::Results read_results(const std::string& path) {
  results::Results r = results::from_json(util::read_file(path), path);
  gate::check_samples(r, path);
  return r;
}

}  // namespace

int run_compare(const CompareArgs& args) {
  results::Results base = read_results(args.base);
  results::Results head = read_results(args.head);
  gate::Thresholds thresholds;  // built-in defaults without a config
  if (auto cfg = optional_config(args.config)) thresholds = gate::Thresholds::from(*cfg);
  if (head.git.base.empty()) head.git.base = base.git.commit;
  head.gate = gate::compare(head, base, args.base, thresholds);
  gate::mark_diagnoses(head, base, thresholds);

  ::signal(SIGPIPE, SIG_IGN);
  std::filesystem::path out = args.out;
  util::FileLock out_lock = report::lock_outputs(out, "compare");
  report::write_outputs(head, &base, out, std::cout);
  std::cerr << "coldgate: " << gate::verdict(head) << "; results in "
            << (out / "results.json").string() << '\n';
  return gate::passed(head) ? 0 : static_cast<int>(ExitCode::gate_failed);
}

int run_merge(const MergeArgs& args) {
  std::vector<gate::NamedResults> inputs;
  for (const auto& path : args.inputs) inputs.emplace_back(path, read_results(path));
  gate::MergeOptions options;
  options.force = args.force;
  if (auto cfg = optional_config(args.config)) {
    for (const auto& s : cfg->stages) options.stage_order.push_back(s.name);
  }
  results::Results merged = gate::merge(inputs, options);
  util::write_file_atomic(args.output, results::to_json(merged));
  bool any_gate = std::any_of(inputs.begin(), inputs.end(), [](const auto& i) { return i.second.gate.has_value(); });
  if (any_gate && !merged.gate) {
    std::cerr << "coldgate: merge: gate blocks left out (not every file has one against the same "
                 "baseline); gate the merged file with coldgate compare BASE.json "
              << args.output << '\n';
  }
  std::cerr << "coldgate: merged " << inputs.size() << " file" << (inputs.size() == 1 ? "" : "s")
            << " (" << merged.stages.size() << " stage" << (merged.stages.size() == 1 ? "" : "s")
            << ") into " << args.output << '\n';
  return 0;
}

}  // namespace coldgate::cli
