#pragma once

#include <filesystem>

namespace coldgate::db {

/// Copies the data folder `from` to `to` (which must not exist) keeping each entry's mode, owner
/// (when we are root) and times, as `cp -a` does without its per-file attribute calls, and
/// reflinking where the filesystem can (copy_file_range). Throws Error(infrastructure) naming the
/// entry and errno's text; what was copied so far is left for the caller to remove.
void copy_cluster_files(const std::filesystem::path& from, const std::filesystem::path& to);

/// `<template>.spare`: one stopped cluster made equal to the template `<template>` again, which
/// the next run takes by rename instead of copying the template. Creating ~1,300 files is most of
/// a copy's cost (~0.3 ms each on ext4) where rewriting the few a run changed costs microseconds.
std::filesystem::path spare_path(const std::filesystem::path& template_dir);

/// Moves the spare of `template_dir` to `data_dir` (which must not exist) when there is one on
/// `data_dir`'s filesystem; true when it did. Two runs racing for it: one gets it, the other
/// false. Never throws.
bool take_spare_cluster(const std::filesystem::path& template_dir,
                        const std::filesystem::path& data_dir) noexcept;

/// Makes `data_dir` — a cluster materialized from `template_dir` whose server has exited, none
/// of its processes left — equal to the template again and renames it to the spare when there
/// is none yet (on the same filesystem). A file is rewritten from the template unless its size
/// and modification time are the template's (rsync's quick check: a write sets the time, the
/// copy keeps the template's); what the template does not have is removed, what it has and
/// `data_dir` lost is copied; new entries get `data_dir`'s owner. True when parked; false leaves
/// `data_dir` (equal to the template or not) for the caller to remove. Never throws.
bool park_spare_cluster(const std::filesystem::path& template_dir,
                        const std::filesystem::path& data_dir) noexcept;

}  // namespace coldgate::db
