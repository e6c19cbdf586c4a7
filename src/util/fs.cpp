#include "util/fs.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>

#include <fmt/core.h>

#include "util/error.hpp"
#include "util/memory.hpp"

namespace coldgate::util {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Closes the descriptor it owns; the temp file of write_file_atomic is removed unless committed.
class TempFile {
 public:
  explicit TempFile(const std::filesystem::path& target) {
    m_path = target.string() + ".tmp-XXXXXX";
    m_fd = ::mkstemp(m_path.data());
    if (m_fd < 0) {
      throw Error(ExitCode::infrastructure, target.string(),
                  fmt::format("cannot create temp file: {}", errno_text(errno)));
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (m_fd >= 0) ::close(m_fd);
    if (!m_committed) ::unlink(m_path.c_str());
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
  int m_fd = -1;  // -1 once closed
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

}  // namespace coldgate::util
