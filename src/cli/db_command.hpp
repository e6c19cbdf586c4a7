#pragma once

#include <filesystem>
#include <string>

namespace coldgate::cli {

/// `coldgate db up|down|url [-c FILE]`. Returns the exit code; throws Error.
///  up   — starts the configured provider, runs `setup:`, prints the database URL (password
///         included) as one line on stdout, progress on stderr, then keeps the server until
///         SIGINT/SIGTERM (Ctrl-C, or `db down`), stops it and returns 0. Refuses (exit 2) when a
///         `db up` of the same config is already running.
///  url  — prints the URL of the running `db up` of this config (one line); exit 2 when none.
///  down — sends SIGTERM to the running `db up` of this config and waits (≤ 60 s) until it has
///         torn the server down; prints "stopped" on stderr; exit 2 when none is running (after
///         stopping what a `db up` killed before it was up left). When that `db up` was killed
///         (its state file outlived it), stops the cluster or container and removes the work
///         folder it left, says so on stderr, and returns 0.
/// The running `db up` is recorded in `<cache>/up/<sha256 of the config's path>.state` (mode
/// 0600: the URL holds the password); every action first removes the state files whose `db up`
/// is gone (remove_stale_up_states).
int run_db(const std::string& action, const std::string& config_path);

/// Removes `<cache_dir>/up/*.state` files whose `db up` no longer runs (killed with SIGKILL, so
/// it could not remove its own): they hold a URL with its password; and the `$TMPDIR/coldgate-up-*`
/// work folders such a `db up` left. Files of a `db up` in another PID namespace are left
/// alone. Returns how many state files it removed; never throws.
int remove_stale_up_states(const std::filesystem::path& cache_dir) noexcept;

/// The state file of a `db up` of `config_path` (absolute path hashed) under `cache_dir`.
std::filesystem::path db_up_state_path(const std::filesystem::path& cache_dir,
                                       const std::filesystem::path& config_path);

}  // namespace coldgate::cli
