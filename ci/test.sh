#!/usr/bin/env bash
# Installs what is missing, builds with ASan+UBSan and runs the whole test suite with ctest,
# including the container provider's tests on real podman/docker containers (needs root). The
# package lane (the .deb installed in clean containers, label `package`) is ci/package-lane.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $(id -u) -ne 0 ]]; then
  exec sudo --preserve-env=CI,PATH,COLDGATE_TEST_TMPDIR bash "$0" "$@"
fi

bash ci/setup.sh --test
# PostgreSQL 13–18 server binaries for the version matrix (tests/db/versions_test.cpp), fetched
# once into build-tools/pg/ and checked against pinned checksums: the tests find them there.
bash ci/pg-versions.sh >/dev/null
bash ci/build.sh asan

cleanup=()
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT

# podman, the postgres:15 test image and podman's Docker-compatible API for the docker CLI.
service_pid_file=/run/coldgate-podman/service.pid
before=$(cat "$service_pid_file" 2>/dev/null || true)
export "$(bash ci/setup-podman.sh)"
after=$(cat "$service_pid_file" 2>/dev/null || true)
if [[ -n "$after" && "$after" != "$before" ]]; then
  cleanup+=("kill $after 2>/dev/null || true")  # the service we started ends with us
fi

source ci/test-env.sh  # TMPDIR on a tmpfs when there is room, the sanitizers' options
cd build-asan
ctest --output-on-failure -j "$(nproc)" --timeout 600 -LE package
