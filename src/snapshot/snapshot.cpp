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

// `p` as diff headers name it: relative to settings.label_root when inside it.
std::string label(const fs::path& p, const Settings& settings) {
  if (settings.label_root.empty()) return p.string();
  const fs::path file = resolved(p);
  const fs::path root = resolved(settings.label_root);
  return is_under(file, root) ? file.lexically_relative(root).generic_string() : shown(p);
}

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
    case Status::rearranged:
      return "rearranged";
  }
  return "unknown";
}

Committed read_committed(std::string_view text, const canon::Options& options) {
  Committed out;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    out.malformed = "starts with a UTF-8 BOM";
    return out;
  }
  if (text.find("\r\n") != std::string_view::npos) {
    out.malformed = "has CRLF line endings";
    return out;
  }
  try {
    out.arranged = canon::canonicalize(text, options, "snapshot");
  } catch (const Error& e) {
    out.malformed = fmt::format("is not valid JSON ({})", e.message());
    return out;
  }
  if (out.arranged == text) return out;
  // Written under other rules, every array keeps the order it has: only ordered, identity
  // and redact differ, and the writer's form (indent, key order, numbers, escapes) is there.
  canon::Options as_written = options;
  as_written.ordered = {"/**"};
  as_written.redact.clear();
  as_written.redact_ids = false;
  std::string form;
  try {
    form = canon::canonicalize(text, as_written, "snapshot");
  } catch (const Error& e) {  // max_output_bytes: redaction had kept it under the limit
    out.arranged.clear();
    out.malformed = fmt::format("is not a snapshot ({})", e.message());
    return out;
  }
  if (form == text) return out;
  // Name the first line that differs from the canonical form.
  std::size_t line = 1;
  std::size_t n = std::min(form.size(), text.size());
  for (std::size_t i = 0; i < n && form[i] == text[i]; ++i) {
    if (text[i] == '\n') ++line;
  }
  out.arranged.clear();
  out.malformed = fmt::format(
      "is not in canonical form from line {} (unsorted keys, re-indented or edited by hand?)",
      line);
  return out;
}

std::string malformed_reason(std::string_view text, const canon::Options& options) {
  Committed committed = read_committed(text, options);
  if (!committed.malformed.empty()) return committed.malformed;
  if (committed.arranged != text) {
    return "is arranged under other snapshot rules (ordered, identity or redact) than the "
           "stage's";
  }
  return {};
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
  // What the diff compares the candidate with: the committed bytes, or, for a file written
  // under other rules, the same content arranged under the current ones.
  std::string_view before = committed;
  bool other_rules = false;  // `before` is the committed content arranged under the current rules
  Committed read;
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
  } else if (read = read_committed(committed, claim.canon); !read.malformed.empty()) {
    v.status = Status::malformed;
    why = fmt::format("{} {}", shown(claim.path), read.malformed);
  } else if (read.arranged == candidate) {
    v.status = Status::rearranged;
    why = fmt::format("{} is arranged under changed rules, content identical", shown(claim.path));
  } else {
    v.status = Status::changed;
    before = read.arranged;
    other_rules = read.arranged != committed;
    why = counts_text(diff::summarize(before, candidate, 0));
    if (other_rules) {
      why += fmt::format(" once {}, arranged under other rules, is arranged under the current ones",
                         shown(claim.path));
    }
  }
  const bool has_diff = exists && v.status != Status::rearranged;

  diff::Options options;
  // Both sides are canonical under the claim's rules unless the committed file is malformed.
  if (v.status == Status::changed) options.arrangement = claim.canon;
  options.label_a = label(claim.path, settings);
  if (other_rules) options.label_a += " (arranged under the current rules)";
  if (settings.update) {
    // --update-snapshots: the candidate replaces the snapshot; nothing stays pending.
    util::write_file_atomic(claim.path, candidate);
    remove_if_present(local_pending);
    remove_if_present(local_pending_diff);
    options.label_b = label(claim.path, settings) + " (updated)";
    if (has_diff) v.diff = diff::render(before, candidate, options);
    v.message = exists ? fmt::format("snapshot updated: {} was {}: {}", claim.path.string(),
                                     to_string(v.status), why)
                       : fmt::format("snapshot created: {} (was missing)", claim.path.string());
    return v;
  }

  v.pending = pending_path(claim.path, settings);
  util::write_file_atomic(v.pending, candidate);
  const fs::path pending_diff(v.pending.string() + ".diff");
  if (has_diff) {
    options.label_b = label(v.pending, settings);
    diff::Options full = options;
    full.max_lines = 0;
    util::write_file_atomic(pending_diff, diff::unified(before, candidate, full));
    options.full_diff_path = label(pending_diff, settings);
    v.diff = diff::render(before, candidate, options);
  } else {
    remove_if_present(pending_diff);
  }
  if (v.status == Status::rearranged && settings.mode == Mode::local) {
    v.message = fmt::format("snapshot rearranged: {}: run {} {} to rewrite it", why,
                            settings.accept_command, claim.stage);
  } else {
    v.message = fmt::format("snapshot {}: {}; {}", to_string(v.status), why,
                            next_step(claim, v.pending, settings, has_diff));
  }
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
