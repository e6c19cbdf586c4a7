#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace coldgate::util {

/// Whole contents of `path` as bytes; throws Error(usage) naming the path when it cannot be read.
std::string read_file(const std::filesystem::path& path);

/// The first `max_bytes` bytes of `path` (all of it when shorter), for sniffing a large file's
/// head; throws Error(usage) naming the path when it cannot be read.
std::string read_file_prefix(const std::filesystem::path& path, std::size_t max_bytes);

/// Reads all of standard input; throws Error(infrastructure) on a read error.
std::string read_stdin();

/// Writes `contents` to `path` atomically: a temp file in the same folder (`<path>.tmp-XXXXXX`,
/// flock(2)ed by the writer until it is renamed), fsync, then rename, so readers see the old file
/// or the new one, never a partial one. The file gets `mode` (umask not applied); the temp file
/// is 0600 from its creation (mkstemp), so a file holding a secret (mode 0600) is never readable
/// by others, not even while it is written. Creates missing parent folders. Throws
/// Error(infrastructure) with the path and errno text; the temp file is removed.
void write_file_atomic(const std::filesystem::path& path, std::string_view contents,
                       unsigned mode = 0644);

/// Writes `contents` to `path` as write_file_atomic() does, but only when `path` does not exist
/// yet (the whole file appears under its name by link(2), or nothing does): false, and nothing
/// written, when it exists. Throws Error(infrastructure) with the path and errno text.
bool create_file_atomic(const std::filesystem::path& path, std::string_view contents);

/// True for the name of a temp file of write_file_atomic() or create_file_atomic():
/// `<name>.tmp-XXXXXX`.
bool is_temp_file_name(std::string_view name);

/// Removes the temp files of write_file_atomic() in `dir` (not below) whose writer is gone: a
/// SIGKILLed process leaves its temp file, and nobody holds its flock any more. A temp file that
/// is still being written stays. Returns how many it removed; never throws.
int remove_abandoned_temp_files(const std::filesystem::path& dir) noexcept;

/// Renames `from` over `to` atomically (same file system) and fsyncs the folder;
/// throws Error(infrastructure) naming both paths.
void rename_atomic(const std::filesystem::path& from, const std::filesystem::path& to);

/// Lowercase hex SHA-256 of `bytes` (FIPS 180-4, via OpenSSL).
std::string sha256_hex(std::string_view bytes);

/// `p` as messages show it: relative to the current folder when absolute (lexically, so "../x"
/// for a sibling), unchanged when already relative or when the current folder is unknown.
std::string display_path(const std::filesystem::path& p);

/// Where temporary folders go: $TMPDIR when set and not empty, else /tmp.
std::filesystem::path temp_base();

/// A private (mode 0700) folder under temp_base(), removed with its contents when
/// the object is destroyed. Move-only. Throws Error(infrastructure) when it cannot be created.
class TempDir {
 public:
  /// Creates `<tmp>/<prefix>XXXXXX`.
  explicit TempDir(const std::string& prefix);
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  /// The folder; empty once moved from.
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

/// An exclusive flock(2) on a file (created, mode 0644, with its folder, when missing), held
/// while the object lives. The kernel drops it when the holder ends however it ends (SIGKILL
/// too) and the descriptor is close-on-exec, so no child keeps it: a lock never outlives its
/// holder and never needs removing.
class FileLock {
 public:
  /// Blocks until the lock is ours; throws Error(infrastructure) naming the file.
  explicit FileLock(const std::filesystem::path& path);
  /// The lock when no one holds it, else nullopt at once (flock LOCK_NB); throws as the
  /// constructor when the file cannot be opened.
  static std::optional<FileLock> try_lock(const std::filesystem::path& path);
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  /// Replaces the file's contents with `text` (who holds the lock, for whoever finds it
  /// taken). Best effort, never throws: a failed write leaves the file empty or as it was.
  void describe(std::string_view text) noexcept;

 private:
  FileLock(const std::filesystem::path& path, bool wait, bool* taken);
  int m_fd = -1;  // -1 once moved from
};

}  // namespace coldgate::util
