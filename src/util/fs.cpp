#include "util/fs.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include <fmt/core.h>

#include "util/error.hpp"
#include "util/memory.hpp"

namespace coldgate::util {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// The temp file of write_file_atomic, removed unless committed. It holds an exclusive flock(2)
// from its creation until the destructor (after the rename), on a descriptor of its own that
// outlives the close of the written one: a temp file nobody holds locked is one whose writer is
// gone (remove_abandoned_temp_files), whatever its PID namespace or host.
class TempFile {
 public:
  explicit TempFile(const std::filesystem::path& target) {
    // A cleaner that locked and removed the name between mkostemp and our flock leaves us an
    // unlinked file: try a fresh name.
    for (int attempt = 0; attempt < 8; ++attempt) {
      m_path = target.string() + ".tmp-XXXXXX";
      m_fd = ::mkostemp(m_path.data(), O_CLOEXEC);
      if (m_fd < 0) {
        throw Error(ExitCode::infrastructure, target.string(),
                    fmt::format("cannot create temp file: {}", errno_text(errno)));
      }
      m_lock_fd = ::fcntl(m_fd, F_DUPFD_CLOEXEC, 0);
      while (m_lock_fd >= 0 && ::flock(m_lock_fd, LOCK_EX) != 0 && errno == EINTR) {
      }
      struct stat st {};
      if (m_lock_fd < 0 || ::fstat(m_fd, &st) != 0 || st.st_nlink > 0) return;
      ::close(m_lock_fd);
      ::close(m_fd);
      m_lock_fd = m_fd = -1;
    }
    throw Error(ExitCode::infrastructure, target.string(),
                "cannot create temp file: each one was removed under us");
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (m_fd >= 0) ::close(m_fd);
    if (!m_committed) ::unlink(m_path.c_str());
    if (m_lock_fd >= 0) ::close(m_lock_fd);  // the lock goes last: after the rename or unlink
  }
  int fd() const { return m_fd; }
  const std::string& path() const { return m_path; }
  void close_fd() {
    int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) {
      throw Error(ExitCode::infrastructure, m_path, fmt::format("close: {}", errno_text(errno)));
    }
  }
  void committed() { m_committed = true; }

 private:
  std::string m_path;
  int m_fd = -1;       // -1 once closed
  int m_lock_fd = -1;  // holds the flock (a dup of m_fd, open until the destructor)
  bool m_committed = false;
};

void fsync_dir(const std::filesystem::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);  // best effort: some file systems refuse fsync on folders
    ::close(fd);
  }
}

// `path` opened for binary reading; throws Error(usage) naming it when it is a folder or
// cannot be opened.
std::ifstream open_for_reading(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw usage_error(path.string(), "is a folder; expected a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw usage_error(path.string(), fmt::format("cannot read file: {}", errno_text(errno)));
  }
  return in;
}

}  // namespace

std::string read_file_prefix(const std::filesystem::path& path, std::size_t max_bytes) {
  std::ifstream in = open_for_reading(path);
  std::string data(max_bytes, '\0');
  in.read(data.data(), static_cast<std::streamsize>(max_bytes));
  if (in.bad()) {
    throw usage_error(path.string(), fmt::format("read error: {}", errno_text(errno)));
  }
  data.resize(static_cast<std::size_t>(in.gcount()));
  return data;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in = open_for_reading(path);
  std::string data;
  in.seekg(0, std::ios::end);
  auto size = in.tellg();
  if (size > 0) {
    data.reserve(static_cast<std::size_t>(size));
    advise_huge_pages(data.data(), data.capacity());
    data.resize(static_cast<std::size_t>(size));
    in.seekg(0);
    in.read(data.data(), size);
  } else {
    in.seekg(0);
    data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (in.bad()) {
    throw usage_error(path.string(), fmt::format("read error: {}", errno_text(errno)));
  }
  return data;
}

std::string read_stdin() {
  std::string data;
  std::array<char, 1 << 16> buf;
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buf.data(), buf.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(ExitCode::infrastructure, "stdin", fmt::format("read error: {}", errno_text(errno)));
    }
    data.append(buf.data(), static_cast<std::size_t>(n));
  }
  return data;
}

namespace {

void create_parent(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      throw Error(ExitCode::infrastructure, path.parent_path().string(),
                  fmt::format("cannot create folder: {}", ec.message()));
    }
  }
}

// Fills `tmp` (a temp file beside `path`) with `contents`, fsynced, with `mode`, and closes it;
// the caller then puts it in place.
void fill_temp(TempFile& tmp, const std::filesystem::path& path, std::string_view contents,
               unsigned mode) {
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(tmp.fd(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(ExitCode::infrastructure, path.string(),
                  fmt::format("write failed: {} (nothing was replaced)", errno_text(errno)));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(tmp.fd()) != 0) {
    throw Error(ExitCode::infrastructure, path.string(),
                fmt::format("fsync failed: {} (nothing was replaced)", errno_text(errno)));
  }
  // mkstemp made it 0600; widening is best effort (a file system without modes keeps its own).
  if (mode != 0600) ::fchmod(tmp.fd(), static_cast<mode_t>(mode));
  tmp.close_fd();
}

}  // namespace

void write_file_atomic(const std::filesystem::path& path, std::string_view contents,
                       unsigned mode) {
  create_parent(path);
  TempFile tmp(path);
  fill_temp(tmp, path, contents, mode);
  rename_atomic(tmp.path(), path);
  tmp.committed();
}

bool create_file_atomic(const std::filesystem::path& path, std::string_view contents) {
  create_parent(path);
  TempFile tmp(path);
  fill_temp(tmp, path, contents, 0644);
  // link(2) puts the whole file in place only when the name is free; the temp name goes with tmp.
  if (::link(tmp.path().c_str(), path.c_str()) != 0) {
    if (errno == EEXIST) return false;
    throw Error(ExitCode::infrastructure, path.string(),
                fmt::format("cannot create: {}", errno_text(errno)));
  }
  fsync_dir(path.parent_path());
  return true;
}

bool is_temp_file_name(std::string_view name) {
  auto pos = name.rfind(".tmp-");
  return pos != std::string_view::npos && pos > 0 && name.size() == pos + 11;
}

int remove_abandoned_temp_files(const std::filesystem::path& dir) noexcept {
  int removed = 0;
  try {
    std::error_code ec;
    std::vector<std::filesystem::path> candidates;  // not while iterating: we remove entries
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      if (is_temp_file_name(e.path().filename().string())) candidates.push_back(e.path());
    }
    for (const auto& p : candidates) {
      int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
      if (fd < 0) continue;  // gone meanwhile (renamed into place), or not a file of ours
      struct stat held {}, named {};
      // Locked: its writer still runs. Still the file of that name: not renamed meanwhile.
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &held) == 0 &&
          S_ISREG(held.st_mode) && ::lstat(p.c_str(), &named) == 0 &&
          held.st_dev == named.st_dev && held.st_ino == named.st_ino &&
          ::unlink(p.c_str()) == 0) {
        ++removed;
      }
      ::close(fd);
    }
  } catch (const std::exception&) {  // best effort: what is left is removed next time
  }
  return removed;
}

void rename_atomic(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    throw Error(ExitCode::infrastructure, to.string(),
                fmt::format("cannot rename {} into place: {}", from.string(), errno_text(errno)));
  }
  fsync_dir(to.parent_path());
}

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &len, EVP_sha256(), nullptr) != 1) {
    throw Error(ExitCode::infrastructure, "sha256", "OpenSSL EVP_Digest failed");
  }
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(k_hex[digest[i] >> 4]);
    out.push_back(k_hex[digest[i] & 0xf]);
  }
  return out;
}

std::string display_path(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec || p.is_relative()) return p.string();
  std::filesystem::path rel = p.lexically_proximate(cwd);
  return rel.empty() ? p.string() : rel.string();
}

std::filesystem::path temp_base() {
  const char* base = std::getenv("TMPDIR");
  return base && *base ? base : "/tmp";
}

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = (temp_base() / (prefix + "XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw Error(ExitCode::infrastructure, tmpl,
                fmt::format("cannot create temp folder: {}", errno_text(errno)));
  }
  m_path = tmpl;
}

TempDir::TempDir(TempDir&& other) noexcept : m_path(std::move(other.m_path)) {
  other.m_path.clear();
}

TempDir::~TempDir() {
  if (m_path.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(m_path, ec);
}

FileLock::FileLock(const std::filesystem::path& path) : FileLock(path, true, nullptr) {}

FileLock::FileLock(const std::filesystem::path& path, bool wait, bool* taken) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (m_fd < 0) {
    throw Error(ExitCode::infrastructure, path.string(),
                fmt::format("cannot open lock file: {}", errno_text(errno)));
  }
  while (::flock(m_fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(m_fd);
    m_fd = -1;
    if (err == EWOULDBLOCK && !wait) {
      *taken = true;
      return;
    }
    throw Error(ExitCode::infrastructure, path.string(),
                fmt::format("cannot lock: {}", errno_text(err)));
  }
}

std::optional<FileLock> FileLock::try_lock(const std::filesystem::path& path) {
  bool taken = false;
  FileLock lock(path, false, &taken);
  if (taken) return std::nullopt;
  return lock;
}

FileLock::FileLock(FileLock&& other) noexcept : m_fd(other.m_fd) {
  other.m_fd = -1;
}

FileLock::~FileLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing the last descriptor releases the flock
}

void FileLock::describe(std::string_view text) noexcept {
  if (m_fd < 0 || ::ftruncate(m_fd, 0) != 0) return;
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::pwrite(m_fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace coldgate::util
