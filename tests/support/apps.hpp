#pragma once

#include <filesystem>
#include <string>

namespace coldgate::testing {

/// tests/apps/<name> copied into `to` as a clone holds it — without what a run of it left
/// (__pycache__, node_modules), file modes kept — and made a git repository.
void clone_example_app(const std::string& name, const std::filesystem::path& to);

}  // namespace coldgate::testing
