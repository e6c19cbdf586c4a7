#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "results/results.hpp"

namespace coldgate::ab {

/// What makes the timings of two runs comparable, hashed to 16 hex digits (SHA-256 prefix):
/// coldgate's version, the provider, PostgreSQL's major version and non-default settings, CPU
/// model and count, kernel, and the bytes of the config file used. Host name and OS release
/// are left out (CI runners differ in name only).
std::string fingerprint(const results::Environment& environment, const std::string& config_text);

/// `<dir>/<commit>-<fingerprint>.json`.
std::filesystem::path cache_file(const std::filesystem::path& dir, const std::string& commit,
                                 const std::string& fingerprint);

/// The cached results at `file`; nullopt when there are none or the file does not read as
/// results of this schema (a damaged entry is measured again, not trusted).
std::optional<results::Results> load_cached(const std::filesystem::path& file);

/// Writes `results` to `file` atomically (temp + rename); throws Error(infrastructure).
void store_cached(const std::filesystem::path& file, const results::Results& results);

}  // namespace coldgate::ab
