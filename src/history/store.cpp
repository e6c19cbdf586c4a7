// History stores: a folder of `<commit>.json` files, or a branch of the project's repository
// written with git plumbing only (hash-object, mktree, commit-tree, update-ref, push), so the
// checkout, its index and HEAD are never touched; the branch moves only by a compare-and-swap
// (update-ref given the old value, or a push the remote takes only as a fast-forward).
#include "history/store.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <system_error>

#include "db/cluster_registry.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate::history {
namespace fs = std::filesystem;
namespace {

// ---------------------------------------------------------------------------------------------
// Names

// Why `branch` is not a branch name git accepts, or "" when it is. The rules of
// git-check-ref-format(1) for `--branch` (a name under refs/heads/), checked here so that
// parsing a store needs no git and no repository.
std::string branch_name_problem(std::string_view branch) {
  if (branch.empty()) return "it is empty";
  if (branch.front() == '-') return "it starts with '-'";
  if (branch == "HEAD") return "HEAD is not a branch name";
  // git would take it, as the branch refs/heads/refs/heads/x: surely not what was meant.
  if (branch.starts_with("refs/")) return "it is a ref, not a branch's name (drop refs/heads/)";
  if (branch == "@") return "'@' alone is not a branch name";
  if (branch.front() == '/' || branch.back() == '/') return "it starts or ends with '/'";
  if (branch.back() == '.') return "it ends with '.'";
  if (branch.find("..") != std::string_view::npos) return "it contains '..'";
  if (branch.find("//") != std::string_view::npos) return "it contains '//'";
  if (branch.find("@{") != std::string_view::npos) return "it contains '@{'";
  for (unsigned char c : branch) {
    if (c < 0x20 || c == 0x7f) return "it contains a control character";
    if (c == ' ') return "it contains a space";
    if (std::string_view("~^:?*[\\").find(static_cast<char>(c)) != std::string_view::npos) {
      return fmt::format("it contains '{}'", static_cast<char>(c));
    }
  }
  std::size_t start = 0;
  while (start <= branch.size()) {
    std::size_t end = branch.find('/', start);
    if (end == std::string_view::npos) end = branch.size();
    std::string_view part = branch.substr(start, end - start);
    if (!part.empty() && part.front() == '.') return "a part of it starts with '.'";
    if (part.size() >= 5 && part.substr(part.size() - 5) == ".lock") {
      return "a part of it ends with '.lock'";
    }
    start = end + 1;
  }
  return "";
}

std::string store_label(const StoreSpec& spec) {
  if (!spec.text.empty()) return spec.text;
  return spec.kind == StoreSpec::Kind::git ? "git:" + spec.branch : util::display_path(spec.dir);
}

// A file name at the top of a store: no folder part, nothing a git tree or a folder cannot hold.
void check_file_name(const StoreSpec& spec, const std::string& name) {
  const bool bad = name.empty() || name == "." || name == ".." ||
                   std::any_of(name.begin(), name.end(),
                               [](unsigned char c) { return c == '/' || c < 0x20 || c == 0x7f; });
  if (bad) {
    throw usage_error(store_label(spec),
                      fmt::format("'{}' is not a file name a history store can hold (one plain "
                                  "name such as <commit>.json)",
                                  name));
  }
}

bool is_json_name(std::string_view name) {
  return name.size() > 5 && name.substr(name.size() - 5) == ".json";
}

// ---------------------------------------------------------------------------------------------
// Folder stores

std::vector<StoredFile> read_folder(const StoreSpec& spec, std::vector<std::string>& warnings) {
  std::vector<StoredFile> files;
  std::error_code ec;
  auto status = fs::status(spec.dir, ec);
  if (status.type() == fs::file_type::not_found) return files;  // nothing recorded yet
  if (ec) {
    throw Error(ExitCode::infrastructure, util::display_path(spec.dir),
                "cannot read the history folder: " + ec.message());
  }
  if (status.type() != fs::file_type::directory) {
    throw usage_error(util::display_path(spec.dir),
                      "the history store is not a folder; give a folder (--store DIR) or "
                      "git:BRANCH");
  }
  std::vector<std::string> names;
  for (fs::directory_iterator it(spec.dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) {
    throw Error(ExitCode::infrastructure, util::display_path(spec.dir),
                "cannot list the history folder: " + ec.message());
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    const fs::path path = spec.dir / name;
    const std::string where = util::display_path(path);
    // A writer's temp file (util::write_file_atomic: "<name>.tmp-XXXXXX") is not a stray.
    if (name.find(".json.tmp-") != std::string::npos) continue;
    std::error_code type_ec;
    const bool folder = fs::is_directory(path, type_ec);
    if (folder) {
      warnings.push_back(where + ": a folder in the history store, skipped");
      continue;
    }
    if (!is_json_name(name)) {
      warnings.push_back(where + ": not a .json file, skipped");
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) {
      warnings.push_back(where + ": cannot be read, skipped");
      continue;
    }
    files.push_back({name, text.str(), where});
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// Git

struct GitRun {
  bool ok = false;
  std::string out;  // stdout as git wrote it (blob contents are bytes: nothing is trimmed)
  std::string err;
  int signal = 0;   // the signal that ended git, 0 when it exited
};

std::string trim_end(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string first_line(const std::string& text) {
  std::string t = trim_end(text);
  std::size_t start = t.find_first_not_of("\n\r ");
  if (start == std::string::npos) return "";
  t.erase(0, start);
  auto nl = t.find('\n');
  return nl == std::string::npos ? t : t.substr(0, nl);
}

// A private temp folder marked with its owner, so that the next store operation removes what a
// SIGKILLed one left (db::remove_stale_work_dirs).
util::TempDir owned_temp() {
  constexpr const char* prefix = "coldgate-history-";
  util::TempDir tmp(prefix);
  db::mark_owner(tmp.path());
  db::remove_stale_work_dirs(util::temp_base(), prefix);
  return tmp;
}

// The git runs of one store operation in one repository.
class Git {
 public:
  explicit Git(fs::path repo) : m_repo(std::move(repo)) {
    if (!util::find_program("git")) {
      throw Error(ExitCode::infrastructure, "git",
                  "git is not installed; a git history store needs it (or use a folder store: "
                  "--store DIR)");
    }
  }

  // `git ARGS` in the repository. Messages are read in the C locale (a rejected push is told
  // apart by git's words); no prompt for credentials, as nobody could answer one.
  GitRun run(std::vector<std::string> args, const fs::path& stdin_path = {},
             std::size_t max_out = 64u << 20) const {
    util::SpawnOptions o;
    o.argv = {"git"};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.cwd = m_repo;
    o.stdin_path = stdin_path;
    o.env = m_env;
    o.env.push_back("LC_ALL=C");
    o.env.push_back("GIT_TERMINAL_PROMPT=0");
    o.max_capture_bytes = max_out;
    auto r = util::run(o, std::chrono::minutes(10));
    return {r.status.ok(), std::move(r.out), std::move(r.err), r.status.signal};
  }

  // Like run(), but a failure is Error(infrastructure) naming `where` and git's first line.
  std::string must(const std::string& where, std::vector<std::string> args,
                   const fs::path& stdin_path = {}) const {
    const std::string what = "git " + args.front();
    auto r = run(std::move(args), stdin_path);
    if (!r.ok) {
      throw Error(ExitCode::infrastructure, where,
                  fmt::format("{} failed: {}", what, first_line(r.err)));
    }
    return r.out;
  }

  // Throws Error(usage) when the folder is not in a git repository.
  void require_repository(const std::string& where) const {
    std::error_code ec;
    if (!fs::is_directory(m_repo, ec)) {
      throw usage_error(where, fmt::format("{} is not a folder; a git history store needs the "
                                           "project's git checkout (or use --store DIR)",
                                           util::display_path(m_repo)));
    }
    auto r = run({"rev-parse", "--git-dir"});
    if (!r.ok) {
      throw usage_error(where, fmt::format("{} is not inside a git repository ({}); use a folder "
                                           "store instead (--store DIR)",
                                           util::display_path(m_repo), first_line(r.err)));
    }
  }

  // The repository's common git folder (where refs and their locks live), absolute.
  fs::path common_dir(const std::string& where) const {
    fs::path dir = trim_end(must(where, {"rev-parse", "--git-common-dir"}));
    return dir.is_absolute() ? dir : (m_repo / dir).lexically_normal();
  }

  // The commit `ref` names, or nullopt when it does not exist.
  std::optional<std::string> commit_of(const std::string& ref) const {
    auto r = run({"rev-parse", "--verify", "--quiet", ref + "^{commit}"});
    if (!r.ok) return std::nullopt;
    return trim_end(r.out);
  }

  // Commits made from here on get `coldgate <coldgate@localhost>` when git knows no identity
  // (user.name/user.email, GIT_AUTHOR_*, EMAIL), without touching the user's config.
  void default_identity() {
    for (const char* who : {"AUTHOR", "COMMITTER"}) {
      if (run({"-c", "user.useConfigOnly=true", "var", fmt::format("GIT_{}_IDENT", who)}).ok) {
        continue;
      }
      m_env.push_back(fmt::format("GIT_{}_NAME=coldgate", who));
      m_env.push_back(fmt::format("GIT_{}_EMAIL=coldgate@localhost", who));
    }
  }

 private:
  fs::path m_repo;
  std::vector<std::string> m_env;  // "K=V" added to every git run
};

// One entry of `git ls-tree -z`.
struct TreeEntry {
  std::string mode;
  std::string type;  // blob, tree, commit (a submodule)
  std::string oid;
  std::string name;
};

std::vector<TreeEntry> list_tree(const Git& git, const std::string& where,
                                 const std::string& commit) {
  std::string out = git.must(where, {"ls-tree", "-z", commit});
  std::vector<TreeEntry> entries;
  std::size_t pos = 0;
  while (pos < out.size()) {
    std::size_t end = out.find('\0', pos);
    if (end == std::string::npos) end = out.size();
    std::string_view line(out.data() + pos, end - pos);
    pos = end + 1;
    // "<mode> SP <type> SP <object> TAB <file>"
    auto tab = line.find('\t');
    auto sp1 = line.find(' ');
    auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (tab == std::string_view::npos || sp2 == std::string_view::npos || sp2 > tab) {
      throw Error(ExitCode::infrastructure, where,
                  fmt::format("cannot read git ls-tree's line '{}'", line));
    }
    entries.push_back(
        {std::string(line.substr(0, sp1)), std::string(line.substr(sp1 + 1, sp2 - sp1 - 1)),
         std::string(line.substr(sp2 + 1, tab - sp2 - 1)), std::string(line.substr(tab + 1))});
  }
  return entries;
}

// The contents of every blob in `oids`, by one `git cat-file --batch` (a store of a few
// hundred files is read by one process, not one per file).
std::map<std::string, std::string> read_blobs(const Git& git, const std::string& where,
                                              const std::set<std::string>& oids) {
  std::map<std::string, std::string> blobs;
  if (oids.empty()) return blobs;
  util::TempDir tmp = owned_temp();
  std::string list;
  for (const auto& oid : oids) list += oid + "\n";
  const fs::path input = tmp.path() / "objects";
  util::write_file_atomic(input, list, 0600);
  constexpr std::size_t k_max_bytes = std::size_t{1} << 30;
  auto r = git.run({"cat-file", "--batch"}, input, k_max_bytes);
  if (!r.ok) {
    throw Error(ExitCode::infrastructure, where,
                "git cat-file --batch failed: " + first_line(r.err));
  }
  const std::string& out = r.out;
  std::size_t pos = 0;
  while (pos < out.size()) {
    std::size_t nl = out.find('\n', pos);
    if (nl == std::string::npos) break;
    std::string header = out.substr(pos, nl - pos);
    pos = nl + 1;
    // "<oid> SP <type> SP <size>" or "<oid> SP missing"
    std::istringstream fields(header);
    std::string oid, type;
    std::size_t size = 0;
    if (!(fields >> oid >> type) || type == "missing") {
      throw Error(ExitCode::infrastructure, where,
                  fmt::format("git cat-file could not read object {}", oid));
    }
    if (!(fields >> size) || pos + size > out.size()) {
      throw Error(ExitCode::infrastructure, where,
                  fmt::format("git cat-file's answer for {} is cut short (a history store "
                              "over 1 GiB?)",
                              oid));
    }
    blobs[oid] = out.substr(pos, size);
    pos += size + 1;  // the contents, then LF
  }
  for (const auto& oid : oids) {
    if (!blobs.count(oid)) {
      throw Error(ExitCode::infrastructure, where,
                  fmt::format("git cat-file gave no contents for object {}", oid));
    }
  }
  return blobs;
}

std::vector<StoredFile> read_git(const StoreSpec& spec, const fs::path& repo,
                                 const std::string& remote, std::vector<std::string>& warnings) {
  const std::string label = store_label(spec);
  Git git(repo);
  git.require_repository(label);
  // The local branch first: on a name both hold, its file wins.
  std::vector<std::string> tips;
  if (auto local = git.commit_of("refs/heads/" + spec.branch)) tips.push_back(*local);
  if (!remote.empty()) {
    auto fetched = git.commit_of(fmt::format("refs/remotes/{}/{}", remote, spec.branch));
    if (fetched && (tips.empty() || tips.front() != *fetched)) tips.push_back(*fetched);
  }
  std::map<std::string, TreeEntry> chosen;  // by name
  std::set<std::string> skipped;
  for (const auto& tip : tips) {
    for (auto& e : list_tree(git, label, tip)) {
      const std::string where = fmt::format("git:{}:{}", spec.branch, e.name);
      if (e.type != "blob" || !is_json_name(e.name)) {
        if (skipped.insert(e.name).second) {
          warnings.push_back(where + (e.type == "tree" ? ": a folder in the history branch, skipped"
                                                       : ": not a .json file, skipped"));
        }
        continue;
      }
      chosen.emplace(e.name, std::move(e));  // keeps the first (local) one
    }
  }
  std::set<std::string> oids;
  for (const auto& [name, e] : chosen) oids.insert(e.oid);
  auto blobs = read_blobs(git, label, oids);
  std::vector<StoredFile> files;
  for (const auto& [name, e] : chosen) {
    files.push_back({name, blobs.at(e.oid), fmt::format("git:{}:{}", spec.branch, name)});
  }
  return files;
}

// A pause before the next attempt after a lost race: jittered, growing, at most 200 ms, cut
// short by SIGINT/SIGTERM (then Error(interrupted)).
void back_off(int lost) {
  thread_local std::minstd_rand rng{std::random_device{}()};
  const int cap_ms = std::min(200, 25 << std::min(lost - 1, 3));
  const int ms = std::uniform_int_distribution<int>(cap_ms / 2, cap_ms)(rng);
  if (int fd = util::interrupt_fd(); fd >= 0) {
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, ms);
  } else {
    timespec ts{0, static_cast<long>(ms) * 1000000L};
    ::nanosleep(&ts, nullptr);
  }
  util::throw_if_interrupted();
}

// Says why attempt `attempt` of `attempts` lost (options.on_retry), then pauses (back_off).
void retry_after(const WriteOptions& options, int attempt, int attempts, std::string_view why) {
  if (options.on_retry) {
    options.on_retry(fmt::format("{}; trying again ({} of {})", why, attempt + 1, attempts));
  }
  back_off(attempt);
}

constexpr std::string_view k_remote_moved = "the remote branch moved (another writer pushed first)";

// What every attempt of one write shares: the file's blob and the commit message, in a
// private temp folder removed on every exit path.
struct Pending {
  util::TempDir tmp = owned_temp();
  std::string name;
  std::string blob;
  fs::path message_file;
};

// A commit of `tip`'s tree (none: an empty tree) with the pending file added or replaced,
// whose parent is `tip`; with `carry`, also the files of that commit's tree that `tip` lacks
// (records made in this checkout without --push, which the push must not drop).
std::string make_commit(const Git& git, const std::string& where, const Pending& p,
                        const std::optional<std::string>& tip,
                        const std::optional<std::string>& carry = std::nullopt) {
  std::string listing;
  std::set<std::string> names;
  if (tip) {
    for (const auto& e : list_tree(git, where, *tip)) {
      names.insert(e.name);
      if (e.name == p.name) continue;
      listing += fmt::format("{} {} {}\t{}", e.mode, e.type, e.oid, e.name);
      listing.push_back('\0');
    }
  }
  if (carry) {
    for (const auto& e : list_tree(git, where, *carry)) {
      if (e.name == p.name || names.count(e.name) || e.type != "blob") continue;
      listing += fmt::format("{} {} {}\t{}", e.mode, e.type, e.oid, e.name);
      listing.push_back('\0');
    }
  }
  listing += fmt::format("100644 blob {}\t{}", p.blob, p.name);
  listing.push_back('\0');
  const fs::path tree_input = p.tmp.path() / "tree";
  util::write_file_atomic(tree_input, listing, 0600);
  const std::string tree = trim_end(git.must(where, {"mktree", "-z"}, tree_input));
  // Machine-written records are not signed: a signing prompt could not be answered here.
  std::vector<std::string> args = {"commit-tree", "--no-gpg-sign", tree, "-F",
                                   p.message_file.string()};
  if (tip) {
    args.push_back("-p");
    args.push_back(*tip);
  }
  return trim_end(git.must(where, std::move(args)));
}

bool mentions(std::string_view text, std::initializer_list<std::string_view> signs) {
  return std::any_of(signs.begin(), signs.end(), [&](std::string_view sign) {
    return text.find(sign) != std::string_view::npos;
  });
}

// A local update-ref lost the race: the branch moved since it was read (or another writer holds
// its lock this very moment).
bool lost_local_race(std::string_view err) {
  return mentions(err, {"but expected", "reference already exists", ".lock': File exists"});
}

// A push the remote refused because its branch moved since the fetch: git's own check
// (fetch first, non-fast-forward, stale info) or the remote's failed compare-and-swap (git's
// "failed to update ref", a forge's "cannot lock ref … but expected …").
bool lost_push_race(std::string_view summary) {
  return mentions(summary, {"fetch first", "non-fast-forward", "stale info", "failed to update ref",
                            "cannot lock ref", "but expected", "incorrect old value",
                            "reference already exists"});
}

std::string short_sha(const std::string& sha) {
  return sha.substr(0, 7);
}

// ---------------------------------------------------------------------------------------------
// Ref locks that killed writers left
//
// git never removes a lock file it did not make: a git killed while it updates a ref leaves
// `<ref>.lock`, and every later update of that ref fails until someone removes it. coldgate
// removes one only when it provably belongs to a coldgate writer that is gone, and its git too:
// - a write holds a shared flock(2) on <git common dir>/coldgate-history/writers from start to
//   end, on a descriptor its git children inherit, so the lock is held while the writer or any
//   git it started still runs (the orphaned git of a SIGKILLed writer, still finishing, too);
// - before each git run that may lock a ref of the store, the writer leaves a claim naming those
//   refs (claims/<pid>-<start>-<n>), removed once that git has exited by itself;
// - a writer that gets the flock exclusively (so no other writer and no git of one runs) removes
//   every claim and, where the ref a claim names has a `.lock`, that lock.
// A lock no claim names (the user's own git, or one that is still running) is never touched.
class Writers {
 public:
  // Takes the shared flock (created when missing) and sweeps what gone writers left.
  Writers(const fs::path& common_dir, const std::string& where,
          std::function<void(const std::string&)> note)
      : m_common(common_dir), m_dir(common_dir / "coldgate-history"), m_note(std::move(note)) {
    std::error_code ec;
    fs::create_directories(m_dir / "claims", ec);
    // No O_CLOEXEC: the git children inherit the descriptor, and with it the shared lock.
    m_fd = ::open((m_dir / "writers").c_str(), O_RDWR | O_CREAT, 0644);
    if (m_fd < 0 || !lock(LOCK_SH)) {
      throw Error(ExitCode::infrastructure, where,
                  fmt::format("cannot lock {}: {}", util::display_path(m_dir / "writers"),
                              std::strerror(errno)));
    }
    sweep();
  }
  ~Writers() {
    if (m_fd >= 0) ::close(m_fd);
  }
  Writers(const Writers&) = delete;
  Writers& operator=(const Writers&) = delete;

  // `git args` that may lock `refs`, with a claim on them for its lifetime; the claim stays when
  // git did not exit by itself (killed, or we were interrupted: Error(interrupted) propagates).
  GitRun run(const Git& git, const std::vector<std::string>& refs, std::vector<std::string> args) {
    const fs::path claim =
        m_dir / "claims" /
        fmt::format("{}-{}-{}", ::getpid(), db::process_start_time(::getpid()), ++m_claims);
    std::string text;
    for (const auto& ref : refs) text += ref + "\n";
    util::write_file_atomic(claim, text);
    GitRun r = git.run(std::move(args));
    std::error_code ec;
    if (r.signal == 0) fs::remove(claim, ec);
    return r;
  }

  // When no other writer (nor a git of one) runs: removes every claim and the ref locks they
  // name, saying so through note. Returns true when a lock was removed.
  bool sweep() {
    if (!lock(LOCK_EX | LOCK_NB)) {
      lock(LOCK_SH);  // a failed conversion may have dropped the shared lock: take it again
      return false;
    }
    bool removed = false;
    std::error_code ec;
    util::remove_abandoned_temp_files(m_dir / "claims");
    std::vector<fs::path> claims;
    for (const auto& e : fs::directory_iterator(m_dir / "claims", ec)) {
      if (!util::is_temp_file_name(e.path().filename().string())) claims.push_back(e.path());
    }
    for (const auto& claim : claims) {
      std::ifstream in(claim);
      for (std::string ref; std::getline(in, ref);) {
        if (!ref.starts_with("refs/") || ref.find("..") != std::string::npos) continue;
        const fs::path lock_file = m_common / (ref + ".lock");
        if (fs::remove(lock_file, ec)) {
          removed = true;
          if (m_note) {
            m_note(fmt::format("removed {}, left by the git of a coldgate history writer that "
                               "was killed",
                               util::display_path(lock_file)));
          }
        }
      }
      fs::remove(claim, ec);
    }
    lock(LOCK_SH);
    return removed;
  }

 private:
  bool lock(int how) {
    for (;;) {
      if (::flock(m_fd, how) == 0) return true;
      if (errno != EINTR) return false;
    }
  }

  fs::path m_common;
  fs::path m_dir;
  std::function<void(const std::string&)> m_note;
  int m_fd = -1;
  int m_claims = 0;
};

// A lost update that is a lock held (`<ref>.lock': File exists`), not a moved branch.
bool locked(std::string_view err) {
  return err.find(".lock': File exists") != std::string_view::npos;
}

// Why every attempt on `ref` lost, and what to do: a lock that stayed is named, with git's own
// remedy, since a lock no claim of a gone writer names is not coldgate's to remove.
std::string lost_every_time(int attempts, const std::string& name, const std::string& ref,
                            const fs::path& common_dir, const std::string& last) {
  if (locked(last)) {
    const std::string lock_file = util::display_path(common_dir / (ref + ".lock"));
    return fmt::format("{} attempts to add {} found {} locked ({} exists: another git is "
                       "updating it, or a git that was killed left it); when no git runs in "
                       "this repository, remove {} and run it again",
                       attempts, name, ref, lock_file, lock_file);
  }
  return fmt::format("{} attempts to add {} to {} all lost the race to other writers (the "
                     "branch moved each time; last: {}); run it again",
                     attempts, name, ref, last);
}

std::string write_local(const Git& git, Writers& writers, const fs::path& common_dir,
                        const StoreSpec& spec, const Pending& p, const WriteOptions& options) {
  const std::string label = store_label(spec);
  const std::string ref = "refs/heads/" + spec.branch;
  const int attempts = std::max(1, options.max_attempts);
  std::string last;  // git's words for the last lost update
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    const auto tip = git.commit_of(ref);
    const std::string commit = make_commit(git, label, p, tip);
    // The old value makes it a compare-and-swap; "" means the ref must not exist yet.
    auto r = writers.run(git, {ref}, {"update-ref", "-m", "coldgate history: " + p.name, ref,
                                      commit, tip.value_or("")});
    if (r.ok) return fmt::format("{} at {}", label, short_sha(commit));
    if (!lost_local_race(r.err) && git.commit_of(ref) == tip) {
      throw Error(ExitCode::infrastructure, label,
                  fmt::format("git update-ref {} failed: {}", ref, first_line(r.err)));
    }
    last = first_line(r.err);
    if (locked(r.err) && writers.sweep()) continue;  // a gone writer's lock: at once again
    if (attempt < attempts) {
      retry_after(options, attempt, attempts, "the branch moved while this record was made");
    }
  }
  throw Error(ExitCode::infrastructure, label,
              lost_every_time(attempts, p.name, ref, common_dir, last));
}

// What `git push --porcelain` says of our ref when it was refused: the summary of its line
// "!\t<src>:<dst>\t[rejected] (fetch first)", or "" when no ref was refused.
std::string rejection(const std::string& out) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("!\t", 0) != 0) continue;
    auto tab = line.find('\t', 2);
    return tab == std::string::npos ? line.substr(2) : line.substr(tab + 1);
  }
  return "";
}

// The first line the remote itself wrote ("remote: …": a hook's reason), without the prefix.
std::string remote_said(const std::string& err) {
  std::istringstream lines(err);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("remote: ", 0) == 0) {
      std::string said = trim_end(line.substr(8));
      if (!said.empty()) return said;
    }
  }
  return "";
}

// After a push landed: moves `ref` to `commit` unless it holds `commit` or a later commit of
// the remote already (another writer in this checkout pushed after us), by compare-and-swap,
// re-read a few times when another writer moves it meanwhile. Best effort: the record is on the
// remote whatever happens here, and the next fetch brings it.
void advance_ref(const Git& git, Writers& writers, const std::string& ref,
                 const std::string& commit, const std::string& reflog) {
  for (int attempt = 1; attempt <= 4; ++attempt) {
    const auto current = git.commit_of(ref);
    if (current == commit) return;
    if (current && git.run({"merge-base", "--is-ancestor", commit, *current}).ok) return;
    if (writers.run(git, {ref}, {"update-ref", "-m", reflog, ref, commit, current.value_or("")})
            .ok) {
      return;
    }
  }
}

std::string write_pushed(const Git& git, Writers& writers, const StoreSpec& spec,
                         const Pending& p, const WriteOptions& options) {
  const std::string label = store_label(spec);
  const std::string local_ref = "refs/heads/" + spec.branch;
  const std::string tracking = fmt::format("refs/remotes/{}/{}", options.remote, spec.branch);
  const std::string access_hint =
      "check the remote (git remote -v) and that this job may fetch from and push to it (GitHub "
      "Actions: permissions: contents: write)";
  const int attempts = std::max(1, options.max_attempts);
  std::string last;  // git's words for the last refusal
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    // The remote's tip is the parent; a remote without the branch yet starts it.
    std::optional<std::string> tip;
    auto fetched = writers.run(git, {tracking},
                               {"fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
                                options.remote, "+" + local_ref + ":" + tracking});
    if (fetched.ok) {
      tip = git.commit_of(tracking);
    } else if (lost_local_race(fetched.err)) {
      // Another writer in this checkout moved the remote-tracking ref during our fetch (or a
      // gone one left its lock: then at once again).
      last = first_line(fetched.err);
      if (locked(fetched.err) && writers.sweep()) continue;
      if (attempt < attempts) retry_after(options, attempt, attempts, k_remote_moved);
      continue;
    } else if (fetched.err.find("couldn't find remote ref") == std::string::npos) {
      throw Error(ExitCode::infrastructure, label,
                  fmt::format("git fetch {} failed: {}; {}", options.remote,
                              first_line(fetched.err), access_hint));
    }
    // Records this checkout holds that the remote lacks (recorded without --push) go along:
    // moving the local branch to the pushed commit must not drop them.
    std::optional<std::string> carry = git.commit_of(local_ref);
    if (carry && (carry == tip ||
                  (tip && git.run({"merge-base", "--is-ancestor", *carry, *tip}).ok))) {
      carry.reset();
    }
    const std::string commit = make_commit(git, label, p, tip, carry);
    // Never forced: the remote takes it only as a fast-forward of what it holds.
    auto pushed = writers.run(git, {tracking},
                              {"push", "--porcelain", options.remote, commit + ":" + local_ref});
    if (pushed.ok) {
      advance_ref(git, writers, tracking, commit, "coldgate history: pushed " + p.name);
      advance_ref(git, writers, local_ref, commit, "coldgate history: " + p.name);
      return fmt::format("{} at {} (pushed to {})", label, short_sha(commit), options.remote);
    }
    const std::string rejected = rejection(pushed.out);
    if (rejected.empty() || !lost_push_race(rejected)) {
      std::string why = rejected.empty() ? first_line(pushed.err) : rejected;
      if (auto said = remote_said(pushed.err); !rejected.empty() && !said.empty()) {
        why += " (remote: " + said + ")";
      }
      throw Error(ExitCode::infrastructure, label,
                  fmt::format("git push {} failed: {}; {}", options.remote, why, access_hint));
    }
    last = rejected;
    if (attempt < attempts) retry_after(options, attempt, attempts, k_remote_moved);
  }
  throw Error(ExitCode::infrastructure, label,
              fmt::format("{} attempts to push {} to {} all lost the race to other writers (the "
                          "remote branch moved each time; last: {}); run it again",
                          attempts, p.name, options.remote, last));
}

}  // namespace

StoreSpec parse_store(std::string_view text, const fs::path& base_dir, const std::string& where) {
  StoreSpec spec;
  spec.text = std::string(text);
  if (text.empty()) {
    throw usage_error(where,
                      "no history store given: git:BRANCH (e.g. git:coldgate-history) "
                      "or a folder");
  }
  if (text.rfind("git:", 0) == 0) {
    spec.kind = StoreSpec::Kind::git;
    spec.branch = std::string(text.substr(4));
    if (spec.branch.empty()) {
      throw usage_error(where, fmt::format("'{}' names no branch: give git:BRANCH, e.g. "
                                           "git:coldgate-history",
                                           text));
    }
    if (auto problem = branch_name_problem(spec.branch); !problem.empty()) {
      throw usage_error(where, fmt::format("'{}' is not a branch name git accepts ({}); give "
                                           "git:BRANCH, e.g. git:coldgate-history",
                                           spec.branch, problem));
    }
    return spec;
  }
  spec.kind = StoreSpec::Kind::folder;
  spec.branch.clear();
  fs::path dir(text);
  spec.dir = (dir.is_absolute() ? dir : base_dir / dir).lexically_normal();
  return spec;
}

std::vector<StoredFile> read_files(const StoreSpec& spec, const fs::path& repo,
                                   const std::string& remote, std::vector<std::string>& warnings) {
  if (spec.kind == StoreSpec::Kind::folder) return read_folder(spec, warnings);
  return read_git(spec, repo, remote, warnings);
}

std::string write_file(const StoreSpec& spec, const fs::path& repo, const std::string& name,
                       const std::string& contents, const WriteOptions& options) {
  check_file_name(spec, name);
  if (spec.kind == StoreSpec::Kind::folder) {
    const fs::path path = spec.dir / name;
    util::remove_abandoned_temp_files(spec.dir);  // what a killed writer left
    util::write_file_atomic(path, contents);
    return util::display_path(path);
  }
  const std::string label = store_label(spec);
  if (options.push && (options.remote.empty() || options.remote.front() == '-')) {
    throw usage_error(label, fmt::format("'{}' is not a git remote to push the history to (e.g. "
                                         "origin)",
                                         options.remote));
  }
  Git git(repo);
  git.require_repository(label);
  git.default_identity();
  const fs::path common_dir = git.common_dir(label);
  Writers writers(common_dir, label, options.on_retry);
  Pending p;
  p.name = name;
  const fs::path blob_input = p.tmp.path() / "contents";
  util::write_file_atomic(blob_input, contents, 0600);
  p.blob = trim_end(git.must(label, {"hash-object", "-w", "--stdin"}, blob_input));
  p.message_file = p.tmp.path() / "message";
  util::write_file_atomic(p.message_file,
                          options.message.empty() ? "coldgate history: " + name : options.message,
                          0600);
  return options.push ? write_pushed(git, writers, spec, p, options)
                      : write_local(git, writers, common_dir, spec, p, options);
}

}  // namespace coldgate::history
