#include "cli/commands.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/core.h>

#include "canon/canon.hpp"
#include "config/config.hpp"
#include "diff/diff.hpp"
#include "gate/gate.hpp"
#include "measure/job.hpp"
#include "report/results_json.hpp"
#include "report/outputs.hpp"
#include "snapshot/snapshot.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

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
    throw usage_error(path, "config file not found; pass -c FILE or create coldgate.yaml "
                            "(see config/example.yaml)");
  }
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

  std::string out = canon::canonicalize(input, options, source);
  if (args.check) {
    if (out == input) return 0;
    std::cerr << "coldgate: " << source << ": not in canonical form; rewrite it with: coldgate canon -o "
              << (args.input == "-" ? "FILE" : args.input) << ' '
              << (args.input == "-" ? "FILE" : args.input) << '\n';
    return static_cast<int>(ExitCode::gate_failed);
  }
  if (!args.output.empty()) {
    util::write_file_atomic(args.output, out);
  } else {
    write_stdout(out);
  }
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
  auto cfg = load_config(args.config);
  std::vector<snapshot::Claim> claims;
  for (const auto& stage : cfg.stages) {
    if (stage.snapshot) claims.push_back({stage.name, stage.snapshot->path, stage.snapshot->canon});
  }
  auto cwd = std::filesystem::current_path();
  for (const auto& a : snapshot::accept(claims, args.stages, mode)) {
    std::cout << "accepted " << a.stage << ": " << a.path.lexically_proximate(cwd).string() << '\n';
  }
  return 0;
}

int run_run(const RunArgs& args) {
  if (!args.baseline.empty() || !args.shard.empty()) {
    throw usage_error(args.baseline.empty() ? "run --shard" : "run --baseline",
                      "not built yet (arrives with the gate and its reports)");
  }
  auto cfg = load_config(args.config);
  measure::JobOptions options;
  options.stages = args.stages;
  options.out_dir = args.out;
  options.ci = ci_mode(args.ci);
  options.update_snapshots = args.update_snapshots;
  if (std::filesystem::path(args.config).lexically_normal() != "coldgate.yaml") {
    options.accept_command = "coldgate accept -c " + args.config;
  }
  options.progress = measure::detect_progress_style(options.ci);
  if (options.ci && args.update_snapshots) {
    throw usage_error("--update-snapshots", "refused in CI mode: CI never writes under snapshots/; "
                                            "run it locally, or pass --no-ci");
  }
  // Results may be piped to a reader that quits early (`coldgate run | head`): a failed write
  // must not kill us before the server is stopped.
  ::signal(SIGPIPE, SIG_IGN);
  // What an earlier run left must not pass for this run's output if this one stops early.
  std::filesystem::path out = args.out;
  std::error_code ec;
  for (const char* name : {"results.json", "report.md"}) std::filesystem::remove(out / name, ec);
  if (std::filesystem::is_directory(out / "explain", ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(out / "explain", ec)) {
      if (entry.path().extension() == ".json") std::filesystem::remove(entry.path(), ec);
    }
  }
  measure::Results results = measure::run_job(cfg, options);
  report::write_outputs(results, nullptr, out, std::cout);
  std::cerr << "coldgate: " << gate::verdict(results) << "; results in "
            << (out / "results.json").string() << '\n';
  return gate::passed(results) ? 0 : static_cast<int>(ExitCode::gate_failed);
}

}  // namespace coldgate::cli
