#!/usr/bin/env bash
# Installs what is missing, builds with ASan+UBSan and runs the whole test suite with ctest,
# including the container provider's tests on real podman/docker containers (needs root). The
# package lane (the .deb installed in clean containers, label `package`) is ci/package-lane.sh.
# Each phase prints its time ("ci/test.sh: build took N s") on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $(id -u) -ne 0 ]]; then
  exec sudo --preserve-env=CI,PATH,COLDGATE_TEST_TMPDIR bash "$0" "$@"
fi

phase_start=$SECONDS
took() {  # took <phase>: the time since the last phase ended
  echo "ci/test.sh: $1 took $((SECONDS - phase_start)) s" >&2
  phase_start=$SECONDS
}

cleanup=()
# shellcheck disable=SC2154
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT

bash ci/setup.sh --test
took "installing the packages (ci/setup.sh --test)"

# Two set-ups that wait on the network and on dpkg, not on the compiler, run beside the build:
# PostgreSQL 13–18 server binaries for the version matrix (tests/db/versions_test.cpp, fetched
# once into build-tools/pg/ and checked against pinned checksums), and podman with the
# postgres:15 test image and podman's Docker-compatible API for the docker CLI.
side=$(mktemp -d)
bash ci/pg-versions.sh >/dev/null 2>"$side/pg-versions.log" &
# shellcheck disable=SC2034  # both read by side_setup as ${!1}
pg_versions_pid=$!
service_pid_file=/run/coldgate-podman/service.pid
before=$(cat "$service_pid_file" 2>/dev/null || true)
bash ci/setup-podman.sh >"$side/podman.env" 2>"$side/podman.log" &
# shellcheck disable=SC2034
podman_pid=$!
# Killed on an early exit only while not yet waited for: a reaped pid may belong to another process.
cleanup+=("kill \${pg_versions_pid:-} \${podman_pid:-} 2>/dev/null || true; wait 2>/dev/null || true; rm -rf '$side'")

bash ci/build.sh asan
took "the ASan+UBSan build (ci/build.sh asan)"

side_setup() {  # side_setup <pid variable> <name> <log>: waits for it; its log; its failure ends the run
  local status=0
  wait "${!1}" || status=$?
  printf -v "$1" '%s' ""
  cat "$3" >&2
  ((status == 0)) || { echo "ci/test.sh: $2 failed (exit $status)" >&2; exit "$status"; }
}
side_setup pg_versions_pid "ci/pg-versions.sh" "$side/pg-versions.log"
side_setup podman_pid "ci/setup-podman.sh" "$side/podman.log"
export "$(cat "$side/podman.env")"
after=$(cat "$service_pid_file" 2>/dev/null || true)
if [[ -n "$after" && "$after" != "$before" ]]; then
  cleanup+=("kill $after 2>/dev/null || true")  # the service we started ends with us
fi
took "waiting for ci/pg-versions.sh and ci/setup-podman.sh after the build"

source ci/test-env.sh  # TMPDIR on a tmpfs when there is room, the sanitizers' options
cd build-asan
# ctest starts the costliest tests first. A clean clone has no measured costs, so every server
# test costs the same (tests/CMakeLists.txt) and one of 100 s may start last and hold the run's
# end; tests/ctest-costs.txt, the seconds each test took in a full run, seeds ctest's cost file.
# Refresh it from a full run's build-asan/Testing/Temporary/CTestCostData.txt:
#   awk 'NF == 3 {print $1, 1, $3} END {print "---"}' CTestCostData.txt > tests/ctest-costs.txt
mkdir -p Testing/Temporary
[[ -s Testing/Temporary/CTestCostData.txt ]] || cp ../tests/ctest-costs.txt Testing/Temporary/CTestCostData.txt
status=0
# One job more than cores: the postgres tests wait on servers and children a quarter of the
# time, which a third job fills (CPU busy 77% at -j2, 94% at -j3 on 2 cores).
ctest --output-on-failure -j "$(($(nproc) + 1))" --timeout 600 -LE package || status=$?
took "the tests (ctest -LE package)"
exit "$status"
