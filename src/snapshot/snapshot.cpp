#include "snapshot/snapshot.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <system_error>

#include "diff/diff.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::snapshot {

namespace fs = std::filesystem;

namespace {

// Absolute, normalized form of `p` for comparisons (symlinks resolved where they exist).
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(fs::absolute(p), ec);
  return ec ? fs::absolute(p).lexically_normal() : out;
}

// True when `p` lies inside folder `dir` (both resolved).
bool is_under(const fs::path& p, const fs::path& dir) {
  fs::path rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

void remove_if_present(const fs::path& p) {
  std::error_code ec;
  fs::remove(p, ec);
  if (ec) {
    throw Error(ExitCode::infrastructure, p.string(),
                fmt::format("cannot remove: {}", ec.message()));
  }
}

std::string counts_text(const diff::PathSummary& s) {
  std::size_t total = s.changed + s.added + s.removed;
  if (total == 0) return "the texts differ";
  return fmt::format("{} {} ({} changed, {} added, {} removed)", total,
                     total == 1 ? "path differs" : "paths differ", s.changed, s.added, s.removed);
}

std::string shown(const fs::path& p) { return util::display_path(p); }

// What to do next, for the message: accept locally, commit the artifact in CI.
std::string next_step(const Claim& claim, const fs::path& pending, const Settings& settings,
                      bool has_diff) {
  if (settings.mode == Mode::ci) {
    return fmt::format("the candidate is {} in the job's artifacts: review it and commit it as {}",
                       shown(pending), shown(claim.path));
  }
  return fmt::format("review {}{}, then run: {} {}", shown(pending),
                     has_diff ? fmt::format(" (whole diff: {}.diff)", shown(pending)) : "",
                     settings.accept_command, claim.stage);
}

}  // namespace

std::string_view to_string(Status status) {
  switch (status) {
    case Status::match:
      return "match";
    case Status::changed:
      return "changed";
    case Status::missing:
      return "missing";
    case Status::obsolete:
      return "obsolete";
    case Status::malformed:
      return "malformed";
    case Status::nondeterministic:
      return "nondeterministic";
  }
  return "unknown";
}

std::string malformed_reason(std::string_view text, const canon::Options& options) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") return "starts with a UTF-8 BOM";
  if (text.find("\r\n") != std::string_view::npos) return "has CRLF line endings";
  std::string canonical;
  try {
    canonical = canon::canonicalize(text, options, "snapshot");
  } catch (const Error& e) {
    return fmt::format("is not valid JSON ({})", e.message());
  }
  if (canonical == text) return {};
  // Name the first line that differs from the canonical form.
  std::size_t line = 1;
  std::size_t n = std::min(canonical.size(), text.size());
  for (std::size_t i = 0; i < n && canonical[i] == text[i]; ++i) {
    if (text[i] == '\n') ++line;
  }
  return fmt::format(
      "is not in canonical form from line {} (unsorted, re-indented or edited by "
      "hand?)",
      line);
}

fs::path pending_path(const fs::path& committed, const Settings& settings) {
  if (settings.mode == Mode::local) return fs::path(committed.string() + ".new");
  fs::path absolute = resolved(committed);
  fs::path cwd = resolved(fs::current_path());
  fs::path rel = is_under(absolute, cwd) ? absolute.lexically_relative(cwd) : committed.filename();
  fs::path pending = settings.out_dir / "snapshots" / rel;
  // A snapshot folder of its own (not the checkout's root) must stay untouched in CI.
  fs::path folder = absolute.parent_path();
  bool own_folder = folder != cwd && !is_under(cwd, folder);
  if (own_folder && is_under(resolved(pending), folder)) {
    throw usage_error(pending.string(),
                      fmt::format("in CI mode candidates never go under the snapshots folder {}; "
                                  "choose another --out",
                                  committed.parent_path().string()));
  }
  return pending;
}

Verdict check(const Claim& claim, std::string_view candidate, const Settings& settings) {
  if (settings.update && settings.mode == Mode::ci) {
    throw usage_error("--update-snapshots",
                      "refusing to write snapshots in CI mode (CI=true); run with --no-ci");
  }
  Verdict v;
  v.stage = claim.stage;
  v.committed = claim.path;
  v.candidate_sha256 = util::sha256_hex(candidate);
  const fs::path local_pending(claim.path.string() + ".new");
  const fs::path local_pending_diff(local_pending.string() + ".diff");

  std::error_code ec;
  bool exists = fs::exists(claim.path, ec);
  std::string committed = exists ? util::read_file(claim.path) : std::string();
  std::string why;  // the status, said for humans
  if (!exists) {
    v.status = Status::missing;
    why = fmt::format("{} does not exist", shown(claim.path));
  } else if (committed == candidate) {
    v.status = Status::match;
    if (settings.mode == Mode::local) {
      remove_if_present(local_pending);
      remove_if_present(local_pending_diff);
    }
    return v;
  } else if (canon::is_canonical(committed, claim.canon)) {
    v.status = Status::changed;
    why = counts_text(diff::summarize(committed, candidate, 0));
  } else {
    v.status = Status::malformed;
    std::string reason = malformed_reason(committed, claim.canon);
    why = fmt::format("{} {}", shown(claim.path),
                      reason.empty() ? "is not in canonical form" : reason);
  }

  diff::Options options;
  options.label_a = claim.path.string();
  if (settings.update) {
    // --update-snapshots: the candidate replaces the snapshot; nothing stays pending.
    util::write_file_atomic(claim.path, candidate);
    remove_if_present(local_pending);
    remove_if_present(local_pending_diff);
    options.label_b = claim.path.string() + " (updated)";
    if (exists) v.diff = diff::render(committed, candidate, options);
    v.message = exists ? fmt::format("snapshot updated: {} was {}: {}", claim.path.string(),
                                     to_string(v.status), why)
                       : fmt::format("snapshot created: {} (was missing)", claim.path.string());
    return v;
  }

  v.pending = pending_path(claim.path, settings);
  util::write_file_atomic(v.pending, candidate);
  const fs::path pending_diff(v.pending.string() + ".diff");
  if (exists) {
    options.label_b = v.pending.string();
    diff::Options full = options;
    full.max_lines = 0;
    util::write_file_atomic(pending_diff, diff::unified(committed, candidate, full));
    options.full_diff_path = pending_diff.string();
    v.diff = diff::render(committed, candidate, options);
  } else {
    remove_if_present(pending_diff);
  }
  v.message = fmt::format("snapshot {}: {}; {}", to_string(v.status), why,
                          next_step(claim, v.pending, settings, exists));
  return v;
}

std::vector<fs::path> find_obsolete(const fs::path& dir, const std::vector<Claim>& claims) {
  std::vector<fs::path> obsolete;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return obsolete;
  std::vector<fs::path> claimed;
  for (const Claim& claim : claims) claimed.push_back(resolved(claim.path));
  std::sort(claimed.begin(), claimed.end());
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec) {
    throw Error(ExitCode::infrastructure, dir.string(),
                fmt::format("cannot list: {}", ec.message()));
  }
  for (; it != end; it.increment(ec)) {
    if (ec) {
      throw Error(ExitCode::infrastructure, dir.string(),
                  fmt::format("cannot list: {}", ec.message()));
    }
    // `.new` and `.diff` files end in other extensions, so they are never taken for snapshots.
    if (!it->is_regular_file(ec) || it->path().extension() != ".json") continue;
    if (!std::binary_search(claimed.begin(), claimed.end(), resolved(it->path()))) {
      obsolete.push_back(it->path());
    }
  }
  std::sort(obsolete.begin(), obsolete.end());
  return obsolete;
}

}  // namespace coldgate::snapshot
