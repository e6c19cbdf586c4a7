#include "cli/comment_command.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <iostream>
#include <optional>

#include "config/config.hpp"
#include "forge/forge.hpp"
#include "gate/gate.hpp"
#include "report/report.hpp"
#include "results/json.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::cli {
namespace {

constexpr std::string_view k_marker_prefix = "<!-- coldgate:report:";
constexpr std::string_view k_marker_suffix = " -->";

// The key of a first line `<!-- coldgate:report:<key> -->`, or "".
std::string key_of_first_line(const std::string& text) {
  std::string_view line(text);
  line = line.substr(0, line.find('\n'));
  if (line.ends_with('\r')) line.remove_suffix(1);
  if (!line.starts_with(k_marker_prefix) || !line.ends_with(k_marker_suffix)) return "";
  line.remove_prefix(k_marker_prefix.size());
  line.remove_suffix(k_marker_suffix.size());
  return std::string(line);
}

std::string config_title(const std::string& path) {
  std::error_code ec;
  if (!path.empty()) return config::load(path).report.title;
  if (std::filesystem::exists("coldgate.yaml", ec)) return config::load("coldgate.yaml").report.title;
  return "";
}

void warn(const std::string& text) { std::cerr << "coldgate: warning: comment: " << text << '\n'; }

// report.md as the comment's body: with the marker of --key (else its own, else the config's
// report.title) on its first line, cut under the comment limit.
std::string comment_body(const CommentArgs& args, const std::filesystem::path& out,
                         std::string& marker) {
  std::filesystem::path report_file = out / "report.md";
  std::error_code ec;
  if (!std::filesystem::exists(report_file, ec)) {
    throw usage_error(util::display_path(report_file),
                      "not found: run `coldgate run` (or compare) first, or pass --out DIR");
  }
  std::string body = util::read_file(report_file);
  std::string found = key_of_first_line(body);
  std::string key = !args.key.empty() ? report::marker_key(args.key)
                    : !found.empty()  ? found
                                      : report::marker_key(config_title(args.config));
  marker = forge::marker_line(key);
  if (found.empty()) {
    body = marker + "\n" + body;
  } else if (found != key) {
    body = marker + body.substr(body.find('\n') == std::string::npos ? body.size() : body.find('\n'));
  }
  std::string footer = args.footer.empty() ? "" : "\n" + args.footer + "\n";
  if (!footer.empty() && !body.ends_with('\n')) body += '\n';
  if (body.size() + footer.size() > report::k_max_report_bytes) {
    std::filesystem::path full = out / "report-full.md";
    body = report::cut_markdown(body, report::k_max_report_bytes - footer.size(),
                                util::display_path(std::filesystem::exists(full, ec) ? full : report_file));
  }
  return body + footer;
}

// Where the comment goes. Without a forge: an error, a warning with --optional (nullopt), or
// for --dry-run the requests with "(none)" in place of a missing token.
std::optional<forge::Target> comment_target(const CommentArgs& args) {
  forge::TargetOptions options{args.forge, args.token_env, args.pr};
  try {
    return forge::resolve_target(options, forge::process_env);
  } catch (const forge::NotConfigured& e) {
    if (args.dry_run) {
      auto env = [&](const std::string& name) -> std::optional<std::string> {
        auto v = forge::process_env(name);
        bool token_var = name == (args.token_env.empty() ? "GITHUB_TOKEN" : args.token_env) ||
                         name == (args.token_env.empty() ? "COLDGATE_GITLAB_TOKEN" : args.token_env);
        if (token_var && (!v || v->empty())) return std::string("(none)");
        return v;
      };
      try {
        forge::Target target = forge::resolve_target(options, env);
        std::cerr << "coldgate: comment: note: " << e.what() << '\n';
        return target;
      } catch (const forge::NotConfigured& again) {
        throw Error(ExitCode::infrastructure, "comment", again.what());
      }
    }
    if (args.optional) {
      warn(std::string(e.what()) + "; nothing posted");
      return std::nullopt;
    }
    throw Error(ExitCode::infrastructure, "comment",
                std::string(e.what()) + " (pass --optional to make this a warning)");
  }
}

void print_outcome(const forge::Outcome& outcome, const forge::Target& target) {
  switch (outcome.action) {
    case forge::Action::created:
      std::cout << fmt::format("comment created on {}{}\n", target.what,
                               outcome.url.empty() ? "" : ": " + outcome.url);
      break;
    case forge::Action::updated:
      std::cout << fmt::format("comment {} updated on {}{}\n", outcome.id, target.what,
                               outcome.url.empty() ? "" : ": " + outcome.url);
      break;
    case forge::Action::skipped:
      std::cout << fmt::format("no comment on {}: the gate passes and none exists yet (--mode on-change)\n",
                               target.what);
      break;
  }
}

}  // namespace

int run_comment(const CommentArgs& args) {
  std::string mode = args.mode.empty() ? "always" : args.mode;
  if (mode != "always" && mode != "on-change" && mode != "never") {
    throw usage_error("--mode", "'" + mode + "' is not always, on-change or never");
  }
  if (mode == "never") {
    std::cerr << "coldgate: comment: --mode never; nothing posted\n";
    return 0;
  }
  std::filesystem::path out = args.out;
  std::string marker;
  std::string body = comment_body(args, out, marker);

  // on-change: a passing gate only updates an existing comment.
  bool create = true;
  std::string passing_note;
  if (mode == "on-change") {
    std::filesystem::path results_file = out / "results.json";
    results::Results results =
        results::from_json(util::read_file(results_file), util::display_path(results_file));
    create = !gate::passed(results);
    if (!create) passing_note = " (the gate passes: only an existing comment is updated)";
  }

  std::optional<forge::Target> found = comment_target(args);
  if (!found) return 0;
  const forge::Target& target = *found;
  if (args.dry_run) {
    std::cout << fmt::format(
        "would GET {} (and following pages) to find the comment with marker {}, then {} {}<id> "
        "of that comment, or else {}POST {}: body {} bytes{}\n",
        target.list_url, marker, target.update_method, target.item_url,
        create ? "" : "(not: the gate passes) ", target.create_url, body.size(), passing_note);
    return 0;
  }
  // The artifact of a pull_request run carries the number to the workflow_run recipe
  // (ci/github/coldgate-comment.yml), which cannot read it from its own event.
  if (target.number_from_event && target.kind == forge::Kind::github) {
    util::write_file_atomic(out / "pr-number", std::to_string(target.number) + "\n");
  }

  forge::RetryPolicy policy;
  policy.max_total_ms = std::max(1L, args.timeout_s) * 1000;
  forge::Log log;
  if (args.verbose) log = [](const std::string& line) { std::cerr << "coldgate: http " << line << '\n'; };
  try {
    print_outcome(forge::upsert_comment(target, marker, body, create, policy, log), target);
  } catch (const forge::ForkReadOnly& e) {
    warn(e.what());
  }
  return 0;
}

}  // namespace coldgate::cli
