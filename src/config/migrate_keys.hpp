#pragma once
// Readers of `migrate:` and `gate.migration`, for the loader. Internal to the config module.

#include <yaml-cpp/yaml.h>

#include "config/config.hpp"
#include "config/reader.hpp"

namespace coldgate::config::detail {

/// `migrate: {command: ARGV|TEXT}` or `{sql_dir: DIR}`; throws Error(usage) at the node for
/// both, neither, or a value of the wrong type (the folder's existence: check_setup()).
Migrate read_migrate(const Reader& r, const YAML::Node& node);

/// `gate.migration: {max_rewrite_rows, max_stall, max_lock_wait, lock_timeout}` on top of the
/// defaults; throws Error(usage) at a bad value.
MigrationGate read_migration_gate(const Reader& r, const YAML::Node& node);

}  // namespace coldgate::config::detail
