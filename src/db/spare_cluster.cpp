// The spare cluster: a used throwaway cluster made equal to its template again and kept for the
// next run, because on a journalling filesystem creating a file costs ~20× rewriting one.
#include "db/spare_cluster.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "util/error.hpp"

namespace coldgate::db {

namespace fs = std::filesystem;

namespace {

struct TreeEntry {
  std::string rel;  // path below the tree's root
  struct stat st {};
};

bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

// Every entry below `root`, parents before children, symlinks not followed; throws
// filesystem_error when it cannot be read.
std::vector<TreeEntry> walk(const fs::path& root) {
  std::vector<TreeEntry> out;
  for (fs::recursive_directory_iterator it(root), end; it != end; ++it) {
    TreeEntry e;
    e.rel = it->path().lexically_relative(root).string();
    if (::lstat(it->path().c_str(), &e.st) != 0) {
      throw fs::filesystem_error("lstat", it->path(), std::error_code(errno, std::generic_category()));
    }
    out.push_back(std::move(e));
  }
  return out;
}

// `to` gets `from`'s bytes, mode and times (created when missing, owned by `owner`'s uid/gid
// when we may give files away); false on any error.
bool copy_file_as(const fs::path& from, const fs::path& to, const struct stat& st,
                  const struct stat& owner) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return false;
  // Over the old bytes, then cut to length: ext4 flushes a file truncated to zero and written
  // again when it is closed (auto_da_alloc), ~3 ms each.
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, st.st_mode & 07777);
  bool ok = out >= 0;
  bool ranges = true;  // copy_file_range, until a filesystem pair refuses it
  for (off_t left = st.st_size; ok && left > 0;) {
    ssize_t n = ranges ? ::copy_file_range(in, nullptr, out, nullptr, static_cast<size_t>(left), 0)
                       : -1;
    if (n < 0 && ranges && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
      ranges = false;
      continue;
    }
    if (n < 0 && !ranges) {
      char buf[1 << 16];
      n = ::read(in, buf, sizeof buf);
      if (n > 0 && ::write(out, buf, static_cast<size_t>(n)) != n) n = -1;
    }
    if (n <= 0) {  // an error, or the template is shorter than it said
      ok = false;
      break;
    }
    left -= n;
  }
  struct stat after {};
  ok = ok && ::fstat(out, &after) == 0 &&
       (after.st_size == st.st_size || (after.st_size > st.st_size && ::ftruncate(out, st.st_size) == 0 &&
                                        ::fstat(out, &after) == 0 && after.st_size == st.st_size));
  ok = ok && ::fchmod(out, st.st_mode & 07777) == 0;
  if (ok && ::geteuid() == 0 && (after.st_uid != owner.st_uid || after.st_gid != owner.st_gid)) {
    ok = ::fchown(out, owner.st_uid, owner.st_gid) == 0;
  }
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  ok = ok && ::futimens(out, times) == 0;
  if (out >= 0 && ::close(out) != 0) ok = false;
  ::close(in);
  return ok;
}

// Makes the tree `data` equal to `tmpl` (see park_spare_cluster); throws filesystem_error, false
// when a file could not be written or the result is not equal.
bool reset_to(const fs::path& tmpl, const fs::path& data) {
  const std::vector<TreeEntry> want = walk(tmpl);
  std::unordered_map<std::string, std::size_t> by_rel;
  by_rel.reserve(want.size() * 2);
  for (std::size_t i = 0; i < want.size(); ++i) by_rel.emplace(want[i].rel, i);
  struct stat owner {};
  if (::lstat(data.c_str(), &owner) != 0) return false;

  std::vector<fs::path> extra;
  std::vector<std::size_t> rewrite;
  std::unordered_set<std::size_t> present;
  for (fs::recursive_directory_iterator it(data), end; it != end; ++it) {
    const std::string rel = it->path().lexically_relative(data).string();
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) return false;
    const auto found = by_rel.find(rel);
    const bool kind_matches = found != by_rel.end() && (st.st_mode & S_IFMT) ==
                                                           (want[found->second].st.st_mode & S_IFMT);
    if (!kind_matches || S_ISLNK(st.st_mode) || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
      extra.push_back(it->path());  // a new relation, WAL segment, pid file, tablespace link…
      if (S_ISDIR(st.st_mode)) it.disable_recursion_pending();
      continue;
    }
    present.insert(found->second);
    const struct stat& t = want[found->second].st;
    if (S_ISREG(st.st_mode) && (st.st_size != t.st_size || !same_time(st.st_mtim, t.st_mtim) ||
                                (st.st_mode & 07777) != (t.st_mode & 07777))) {
      rewrite.push_back(found->second);
    } else if (S_ISDIR(st.st_mode) && (st.st_mode & 07777) != (t.st_mode & 07777)) {
      if (::chmod(it->path().c_str(), t.st_mode & 07777) != 0) return false;
    }
  }
  for (const auto& p : extra) fs::remove_all(p);
  for (const std::size_t i : rewrite) {
    if (!copy_file_as(tmpl / want[i].rel, data / want[i].rel, want[i].st, owner)) return false;
  }
  for (std::size_t i = 0; i < want.size(); ++i) {  // parents come before their children
    if (present.count(i)) continue;
    const TreeEntry& e = want[i];
    const fs::path to = data / e.rel;
    if (S_ISDIR(e.st.st_mode)) {
      if (::mkdir(to.c_str(), e.st.st_mode & 07777) != 0) return false;
      if (::geteuid() == 0 && ::lchown(to.c_str(), owner.st_uid, owner.st_gid) != 0) return false;
    } else if (S_ISREG(e.st.st_mode)) {
      if (!copy_file_as(tmpl / e.rel, to, e.st, owner)) return false;
    } else {
      return false;  // the template holds nothing else; a tree that does is not ours to copy
    }
  }
  // What the next run starts from must be the template: check it as a copy would be checked.
  const std::vector<TreeEntry> now = walk(data);
  if (now.size() != want.size()) return false;
  for (const auto& e : now) {
    const auto found = by_rel.find(e.rel);
    if (found == by_rel.end()) return false;
    const struct stat& t = want[found->second].st;
    if ((e.st.st_mode & S_IFMT) != (t.st_mode & S_IFMT)) return false;
    if (S_ISREG(e.st.st_mode) && (e.st.st_size != t.st_size || !same_time(e.st.st_mtim, t.st_mtim)))
      return false;
  }
  return true;
}

bool same_filesystem(const fs::path& a, const fs::path& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev;
}

}  // namespace

void copy_cluster_files(const fs::path& from, const fs::path& to) {
  auto fail = [&](const fs::path& where) {
    return Error(ExitCode::infrastructure, where.string(),
                 fmt::format("cannot copy cluster template {}: {}", from.string(),
                             std::strerror(errno)));
  };
  struct stat root {};
  if (::lstat(from.c_str(), &root) != 0) throw fail(from);
  if (::mkdir(to.c_str(), root.st_mode & 07777) != 0) throw fail(to);
  const bool root_user = ::geteuid() == 0;
  auto own = [&](const fs::path& p, const struct stat& st) {
    if (root_user && ::lchown(p.c_str(), st.st_uid, st.st_gid) != 0) throw fail(p);
  };
  own(to, root);
  try {
    for (const TreeEntry& e : walk(from)) {
      const fs::path target = to / e.rel;
      if (S_ISDIR(e.st.st_mode)) {
        if (::mkdir(target.c_str(), e.st.st_mode & 07777) != 0) throw fail(target);
        own(target, e.st);
      } else if (S_ISREG(e.st.st_mode)) {
        errno = EIO;
        if (!copy_file_as(from / e.rel, target, e.st, e.st)) throw fail(target);
      } else if (S_ISLNK(e.st.st_mode)) {
        fs::create_symlink(fs::read_symlink(from / e.rel), target);
        own(target, e.st);
      }
    }
  } catch (const fs::filesystem_error& err) {
    throw Error(ExitCode::infrastructure, err.path1().string(),
                fmt::format("cannot copy cluster template {}: {}", from.string(),
                            err.code().message()));
  }
}

fs::path spare_path(const fs::path& template_dir) {
  return fs::path(template_dir.string() + ".spare");
}

bool take_spare_cluster(const fs::path& template_dir, const fs::path& data_dir) noexcept {
  // rename(2) fails (ENOENT, EXDEV) unless the spare is there and on data_dir's filesystem.
  return ::rename(spare_path(template_dir).c_str(), data_dir.c_str()) == 0;
}

bool park_spare_cluster(const fs::path& template_dir, const fs::path& data_dir) noexcept {
  try {
    const fs::path spare = spare_path(template_dir);
    std::error_code ec;
    if (fs::exists(spare, ec) || !same_filesystem(template_dir, data_dir.parent_path())) return false;
    if (!reset_to(template_dir, data_dir)) return false;
    // A spare another run parked meanwhile makes this fail (ENOTEMPTY): one is enough.
    return ::rename(data_dir.c_str(), spare.c_str()) == 0;
  } catch (...) {
    return false;
  }
}

}  // namespace coldgate::db
