// Where a config may make coldgate write: inside its repository (issue "Secrets and hostile
// input": a config from a pull request must not write over ~/.bashrc or /etc).
#include <fmt/format.h>

#include <system_error>

#include "config/config.hpp"
#include "util/error.hpp"

namespace coldgate::config {
namespace {

namespace fs = std::filesystem;

// `p` with symlinks of its existing leading folders resolved and `..` applied.
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : r;
}

// True when `path` is `root` or below it.
bool inside(const fs::path& path, const fs::path& root) {
  const fs::path rel = resolved(path).lexically_relative(resolved(root));
  return !rel.empty() && *rel.begin() != "..";
}

// The nearest folder at or above `dir` holding `.git` (a folder, or a worktree's file); empty
// when there is none.
fs::path git_root(const fs::path& dir) {
  std::error_code ec;
  for (fs::path d = dir; !d.empty(); d = d.parent_path()) {
    if (fs::exists(d / ".git", ec)) return d;
    if (d == d.root_path()) break;
  }
  return {};
}

}  // namespace

fs::path label_root(const Config& config) {
  fs::path git = git_root(config.base_dir);
  return git.empty() ? config.base_dir : git;
}

fs::path repository_root(const Config& config) {
  std::error_code ec;
  if (fs::path git = git_root(config.base_dir); !git.empty()) return git;
  // No git (an exported tree, a container without .git): the folder coldgate runs in, when the
  // config is inside it (`coldgate run -c config/demo.yaml` from the checkout), else the config's.
  const fs::path cwd = fs::current_path(ec);
  if (!ec && inside(config.base_dir, cwd)) return cwd;
  return config.base_dir;
}

void require_paths_inside(const Config& config) {
  const fs::path root = repository_root(config);
  for (std::size_t i = 0; i < config.stages.size(); ++i) {
    const Stage& stage = config.stages[i];
    if (!stage.snapshot || inside(stage.snapshot->path, root)) continue;
    throw usage_error(
        stage.snapshot->path_where.str(),
        fmt::format("stages[{}].snapshot.path: {} leaves the repository {}; use a path inside "
                    "it, or pass --allow-outside",
                    i, stage.snapshot->path.string(), root.string()));
  }
}

}  // namespace coldgate::config
