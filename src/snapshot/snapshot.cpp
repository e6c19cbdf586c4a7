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
  std::string out = fmt::format("{} {} ({} changed, {} added, {} removed)", total,
                                total == 1 ? "path differs" : "paths differ", s.changed, s.added,
                                s.removed);
  // Elements paired by identity: "280 elements added" says more than their 4,200 paths.
  if (!s.paired.empty()) out += "; " + diff::paired_text(s.paired.front());
  if (s.paired.size() > 1) out += fmt::format(" and {} more arrays", s.paired.size() - 1);
  return out;
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
  if (settings.mode == Mode::ci && settings.artifacts) {
    return fmt::format("the candidate is {} in the job's artifacts: review it and commit it as {}",
                       shown(pending), shown(claim.path));
  }
  // Outside CI the file is on this machine: where, and how to take it from there.
  const std::string from = settings.mode == Mode::ci ? " --from " + shown(settings.out_dir) : "";
  return fmt::format("review {}{}, then run: {} {}{}", shown(pending),
                     has_diff ? fmt::format(" (whole diff: {}.diff)", shown(pending)) : "",
                     settings.accept_command, claim.stage, from);
}

// The status of `candidate` against the committed file (`committed`; null when there is none),
// why, said for humans, and what a diff compares the candidate with.
struct Classified {
  Status status = Status::missing;
  std::string why;           // "" for a match
  bool other_rules = false;  // changed, and the committed file was written under other rules
  std::string arranged;      // then: its content arranged under the current ones
  /// What a diff compares the candidate with: the committed bytes, or `arranged`.
  std::string_view before(const std::string& committed) const {
    return other_rules ? std::string_view(arranged) : std::string_view(committed);
  }
};

Classified classify(const Claim& claim, const std::string* committed, std::string_view candidate) {
  Classified c;
  if (committed == nullptr) {
    c.why = fmt::format("{} does not exist", shown(claim.path));
    return c;
  }
  if (*committed == candidate) {
    c.status = Status::match;
    return c;
  }
  Committed read = read_committed(*committed, claim.canon);
  if (!read.malformed.empty()) {
    c.status = Status::malformed;
    c.why = fmt::format("{} {}", shown(claim.path), read.malformed);
  } else if (read.arranged == candidate) {
    c.status = Status::rearranged;
    c.why = fmt::format("{} is arranged under changed rules, content identical", shown(claim.path));
  } else {
    c.status = Status::changed;
    c.other_rules = read.arranged != *committed;
    if (c.other_rules) c.arranged = std::move(read.arranged);
    c.why = counts_text(diff::summarize(c.before(*committed), candidate, 0, &claim.canon));
    if (c.other_rules) {
      c.why += fmt::format(" once {}, arranged under other rules, is arranged under the current ones",
                           shown(claim.path));
    }
  }
  return c;
}

// The diff options both check() and view_pending() start from: both sides are canonical under
// the claim's rules unless the committed file is malformed.
diff::Options diff_options(const Claim& claim, const Classified& c, std::string label_a) {
  diff::Options options;
  if (c.status == Status::changed) options.arrangement = claim.canon;
  options.label_a = std::move(label_a);
  if (c.other_rules) options.label_a += " (arranged under the current rules)";
  return options;
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
  // Outside the current folder (`ab`'s and `stack`'s worktrees) the path inside the repository
  // keeps two snapshots of one name in two folders apart; the file name is the last resort.
  const fs::path root = settings.label_root.empty() ? fs::path() : resolved(settings.label_root);
  fs::path rel = is_under(absolute, cwd)                    ? absolute.lexically_relative(cwd)
                 : !root.empty() && is_under(absolute, root) ? absolute.lexically_relative(root)
                                                             : committed.filename();
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
  Classified c = classify(claim, exists ? &committed : nullptr, candidate);
  v.status = c.status;
  const std::string& why = c.why;  // the status, said for humans
  const std::string_view before = c.before(committed);
  if (v.status == Status::match) {
    if (settings.mode == Mode::local) {
      remove_if_present(local_pending);
      remove_if_present(local_pending_diff);
    }
    return v;
  }
  const bool has_diff = exists && v.status != Status::rearranged;

  diff::Options options = diff_options(claim, c, label(claim.path, settings));
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

fs::path candidate_path(const Claim& claim, const Source& source) {
  std::error_code ec;
  if (source.from.empty()) {
    fs::path pending(claim.path.string() + ".new");
    return fs::is_regular_file(pending, ec) ? pending : fs::path();
  }
  const fs::path folder = source.from / "snapshots";
  const fs::path absolute = resolved(claim.path);
  std::vector<fs::path> names;
  for (const fs::path& base : {resolved(fs::current_path()), source.root.empty()
                                                                  ? fs::path()
                                                                  : resolved(source.root)}) {
    if (!base.empty() && is_under(absolute, base)) names.push_back(absolute.lexically_relative(base));
  }
  names.push_back(claim.path.filename());
  for (const fs::path& name : names) {
    fs::path file = (folder / name).lexically_normal();
    if (fs::is_regular_file(file, ec)) return file;
  }
  return {};
}

PendingView view_pending(const Claim& claim, bool color, const Source& source) {
  fs::path pending = candidate_path(claim, source);
  if (pending.empty()) {
    pending = source.from.empty() ? fs::path(claim.path.string() + ".new")
                                  : source.from / "snapshots" / claim.path.filename();
  }
  const std::string candidate = util::read_file(pending);
  std::error_code ec;
  bool exists = fs::exists(claim.path, ec);
  const std::string committed = exists ? util::read_file(claim.path) : std::string();
  Classified c = classify(claim, exists ? &committed : nullptr, candidate);
  PendingView view;
  view.status = c.status;
  if (c.status == Status::match) {
    view.message = fmt::format("the candidate is identical to {}", shown(claim.path));
    return view;
  }
  view.message = c.status == Status::rearranged
                     ? fmt::format("snapshot rearranged: {}: accepting rewrites it", c.why)
                     : fmt::format("snapshot {}: {}", to_string(c.status), c.why);
  if (!canon::is_canonical(candidate, claim.canon)) {
    std::string reason = malformed_reason(candidate, claim.canon);
    view.message += fmt::format("; the candidate {}, so it cannot be accepted",
                                reason.empty() ? "is not in canonical form" : reason);
  }
  if (c.status == Status::rearranged) return view;  // the same content: nothing to show

  diff::Options options = diff_options(claim, c, exists ? shown(claim.path) : "/dev/null");
  options.color = color;
  options.label_b = shown(pending);
  if (exists) {
    const fs::path full(pending.string() + ".diff");
    if (fs::is_regular_file(full, ec)) options.full_diff_path = shown(full);
    view.diff = diff::render(c.before(committed), candidate, options);
  } else {
    // Nothing to compare with: the candidate itself, as a new file's diff shows it.
    options.full_diff_path = shown(pending);
    view.diff = diff::unified("", candidate, options);
  }
  return view;
}

fs::path reject(const Claim& claim, const Source& source) {
  fs::path pending = candidate_path(claim, source);
  if (pending.empty()) return pending;  // nothing pending: nothing to delete
  remove_if_present(pending);
  remove_if_present(fs::path(pending.string() + ".diff"));
  return pending;
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
