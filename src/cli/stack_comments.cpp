// `coldgate stack --comment`: each pull request's report as its own comment, through
// `coldgate comment`'s machinery (run_comment) so marker, cut, retries and the fork warning
// are the same.
#include <fmt/core.h>

#include <filesystem>

#include "cli/comment_command.hpp"
#include "cli/stack_command.hpp"
#include "forge/forge.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::cli {

void comment_stack(const StackArgs& args, const std::vector<report::StackEntry>& entries,
                   const std::string& summary_url) {
  std::string forge_name = args.github ? "github" : args.gitlab ? "gitlab" : "";
  // A missing token or forge is an error here (stack has no --optional); said once, before any
  // comment is posted.
  forge::Kind kind = forge::Kind::github;
  try {
    kind = forge::resolve_repository({forge_name, args.token_env, 0}, forge::process_env).kind;
  } catch (const forge::NotConfigured& e) {
    throw Error(ExitCode::infrastructure, "--comment", e.what());
  }
  std::filesystem::path stack_dir = std::filesystem::path(args.out) / "stack";
  std::string summary = summary_url.empty()
                            ? "`" + util::display_path(stack_dir / "summary.md") + "`"
                            : "[stack summary](" + summary_url + ")";
  for (const report::StackEntry& entry : entries) {
    if (entry.number <= 0) continue;
    CommentArgs comment;
    comment.out = (stack_dir / entry.report).parent_path().string();
    comment.config = args.config;
    comment.forge = forge_name;
    comment.token_env = args.token_env;
    comment.pr = entry.number;
    comment.footer = fmt::format("{} {} of {} in this stack: {}",
                                 kind == forge::Kind::github ? "Pull request" : "Merge request", entry.index,
                                 entries.size(), summary);
    run_comment(comment);
  }
}

}  // namespace coldgate::cli
