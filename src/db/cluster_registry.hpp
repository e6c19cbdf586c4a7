#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "util/process.hpp"

namespace coldgate::db {

/// $XDG_CACHE_HOME/coldgate, else $HOME/.cache/coldgate, else /tmp/coldgate-cache-<uid>.
std::filesystem::path default_cache_dir();

/// A marker `<cache>/runs/<run dir name>.run` saying which process owns which throwaway
/// cluster, so a run killed by SIGKILL is cleaned up by the next one. Removed by the destructor.
class RunMarker {
 public:
  /// Writes the marker for `run_dir` (the folder holding the cluster's `data_dir`) owned by us.
  RunMarker(const std::filesystem::path& cache_dir, const std::filesystem::path& run_dir,
            const std::filesystem::path& data_dir);
  ~RunMarker();
  RunMarker(const RunMarker&) = delete;
  RunMarker& operator=(const RunMarker&) = delete;
  /// Records the postmaster's PID (after each start; forgets the segments); atomic rewrite.
  void set_postmaster(pid_t pid);
  /// Records the postmaster's /dev/shm segments (shared_memory_segments_of, once it is ready), for
  /// remove_stale_clusters to unlink after a SIGKILL; atomic rewrite, throws as write_file_atomic.
  void set_segments(const std::vector<std::string>& names);
  /// The marker file.
  const std::filesystem::path& path() const { return m_path; }

 private:
  void write() const;
  std::filesystem::path m_path;
  std::filesystem::path m_run_dir;
  std::filesystem::path m_data_dir;
  pid_t m_postmaster = 0;  // 0 until the server started
  std::vector<std::string> m_segments;  // "PostgreSQL.<digits>" in /dev/shm
};

/// True when `name` is exactly `PostgreSQL.<digits>`: a dynamic shared memory segment's name in
/// /dev/shm (dynamic_shared_memory_type=posix). Nothing else is ever unlinked.
bool is_shared_memory_segment_name(const std::string& name);

/// The names (is_shared_memory_segment_name) of the /dev/shm segments `pid` maps, from one read
/// of /proc/<pid>/maps, sorted and unique; empty when it cannot be read. Never throws.
std::vector<std::string> shared_memory_segments_of(pid_t pid);

/// The segments (as shared_memory_segments_of) that the processes of the server of `data_dir`
/// map now: every process whose working folder it is (a postmaster and each of its children
/// chdir to it), a killed postmaster's backends included. The postmaster alone maps only the
/// control segment; its backends also map those made later (the statistics' area, parallel
/// queries'), which a SIGKILL leaves as well. Empty when none is found; never throws.
std::vector<std::string> shared_memory_segments_of_cluster(const std::filesystem::path& data_dir);

/// True when some process works in `data_dir` (a postmaster and each of its children chdir to
/// it), or when /proc cannot tell; a cluster no process uses can be changed safely. Never throws.
bool processes_in_cluster(const std::filesystem::path& data_dir);

/// Unlinks each `/dev/shm/<name>` of `names` (only is_shared_memory_segment_name ones, regular
/// files) that still exists: what a postgres server ended by SIGKILL leaves. A server's control
/// segment among them (the one its postmaster maps) adds every segment it lists as in use: those
/// its processes made after the names were recorded, mapped or not. Its processes that
/// still map one (/proc/<pid>/maps, scanned only when one exists; a server's backends outlive a
/// killed postmaster until their next wait) get SIGKILL and are waited for, up to `limit`; a
/// segment that another process maps stays, and is added to `*kept` (when given) as
/// "/dev/shm/<name> (mapped by <pid> (<command line>) …)". Returns how many it removed; never
/// throws.
int remove_orphaned_segments(const std::vector<std::string>& names,
                             std::chrono::milliseconds limit = std::chrono::seconds(30),
                             std::vector<std::string>* kept = nullptr);

/// For every marker whose owner process is gone (markers of another PID namespace are left
/// alone, as in remove_stale_work_dirs()): stops its postmaster (SIGQUIT, then SIGKILL
/// after 5 s) when /proc/<pid>/cmdline shows it is that cluster's postgres, removes the run
/// folder, the /dev/shm segments it recorded that a killed server left (remove_orphaned_segments)
/// and the marker; also the unmarked `$TMPDIR/coldgate-pg-*` folders of makers killed
/// before they wrote a marker (remove_stale_work_dirs). Serialized by flock on
/// `<cache>/runs/.lock`. Returns how many clusters were removed. Never throws: a marker it cannot
/// handle is left for the next run; what it had to keep (a segment some process maps, a run
/// folder it could not remove) is added to `*kept` when given, one "what (why)" each.
int remove_stale_clusters(const std::filesystem::path& cache_dir,
                          std::vector<std::string>* kept = nullptr);

/// Our PID namespace as /proc/self/ns/pid names it ("pid:[4026531836]"); "" when unreadable. A
/// PID means nothing in another namespace (a container sharing /tmp or $HOME), so what was
/// marked there is never judged here.
std::string pid_namespace();

/// Removes the temp files of writes a SIGKILL cut short in the cache's folders
/// (util::remove_abandoned_temp_files): runs/, up/, server-journal/, versions/, and in
/// templates/ also a template copy a killed run was putting into place
/// (remove_abandoned_template_copies).
/// Returns how many; never throws.
int remove_stale_cache_temp_files(const std::filesystem::path& cache_dir) noexcept;

/// Writes `<dir>/owner` (our PID and start time) so that remove_stale_work_dirs() can tell when
/// the run that made `dir` is gone. Throws Error(infrastructure) when it cannot write it.
void mark_owner(const std::filesystem::path& dir);

/// `<prefix><our pid>-`: the name a work or cluster folder starts with (then mkdtemp's
/// XXXXXX), so that one whose maker was killed before it marked the folder is told apart.
std::string work_dir_prefix(const std::string& prefix);

/// Removes each folder `<parent>/<prefix>*` whose `owner` file (mark_owner) names a process that
/// no longer runs: the temp folder of a run killed by SIGKILL, after ending the process groups
/// it recorded in its `children/` (util::kill_recorded_groups), and the /dev/shm segments that
/// the servers it left (its registry markers in default_cache_dir()) mapped just before that
/// (remove_orphaned_segments), which its markers may not name yet. A folder without an owner file
/// is removed only when it holds nothing but empty folders and its name (work_dir_prefix) names
/// a process that is gone; folders marked in another PID namespace are left alone. Returns how
/// many it removed, and adds the processes it ended to `*processes_killed` when given; never
/// throws.
int remove_stale_work_dirs(const std::filesystem::path& parent, const std::string& prefix,
                           int* processes_killed = nullptr);

/// This process as one line for what it leaves where no marker file can go (a database copy on
/// an external server): "boot=<kernel boot id> pid_ns=<pid_namespace()> pid=<PID> start=<start
/// time>". The boot id tells machines (and boots) apart, which PID and namespace alone do not.
std::string owner_tag();

/// True when `tag` (an owner_tag()) names a process of this boot and PID namespace that no
/// longer runs: what it left may be removed. False while that process runs, for a tag of
/// another machine, boot or namespace (not ours to judge), and for text that is no owner tag.
bool owner_tag_gone(const std::string& tag);

/// The end of a database name that names this process as its owner, for what coldgate makes on
/// a server before it can comment on it (CREATE DATABASE takes no COMMENT):
/// "_cg_<PID>_<start time, base 36>_<boot id and PID namespace, 6 hex>_<6 random hex>", at
/// most 36 bytes; the random part keeps apart the names one process makes.
std::string owner_name_suffix();

/// True when `name` ends in an owner_name_suffix() of a process of this boot and PID namespace
/// that no longer runs (as owner_tag_gone); false for any other name.
bool owner_name_gone(const std::string& name);

/// util::process_start_time, for the owners of markers.
using util::process_start_time;

/// True when `pid` is a postgres process started with `-D data_dir` (from /proc/<pid>/cmdline).
bool is_postmaster_of(pid_t pid, const std::filesystem::path& data_dir);

}  // namespace coldgate::db
