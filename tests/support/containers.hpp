#pragma once

#include <string>
#include <vector>

#include "db/container_provider.hpp"

namespace coldgate::testing {

/// The socket ci/setup-podman.sh starts `podman system service` on.
inline constexpr const char* k_podman_service = "unix:///run/coldgate-podman/podman.sock";

/// "K=V" entries an engine call needs in tests: for docker, DOCKER_HOST (from our environment,
/// else k_podman_service); nothing for podman.
std::vector<std::string> engine_env(const std::string& engine);

/// Why `engine` cannot run the test image postgres:15 (not on PATH, image missing, service not
/// answering), ending in "run ci/setup-podman.sh as root first"; "" when it can. Container tests
/// ASSERT this is empty: a machine that is not set up fails them, never skips them.
std::string container_setup_problem(const std::string& engine);

/// Options for a test container through `engine`: postgres:15, database coldgate_test.
db::ContainerOptions container_options(const std::string& engine);

/// Runs `engine args…` (with engine_env()) and returns its trimmed stdout; throws
/// std::runtime_error with its stderr when it fails.
std::string engine_call(const std::string& engine, const std::vector<std::string>& args);

/// True when `engine args…` exits with status 0 (output discarded).
bool engine_ok(const std::string& engine, const std::vector<std::string>& args);

/// IDs of all containers (any state) labelled coldgate.run=<run_id>, as `engine ps -a` lists
/// them; throws std::runtime_error when the engine fails.
std::vector<std::string> containers_of_run(const std::string& engine, const std::string& run_id);

}  // namespace coldgate::testing
