#!/usr/bin/env bash
# The package lane: the Release build free of warnings (ci/build.sh strict: -O2 finds some the
# -O0 ASan build cannot), then the .deb of the ASan build (cpack) installed with apt-get from
# Debian's mirror in clean debian:bookworm containers (podman) — the demo run there, the man
# page and the completion (Package.container) — and the GitHub Action's `package` input replayed as the
# runner does (ActionHarness.package): the tests labelled `package`. About 9 minutes, serial on
# the container engine, so ci/test.sh leaves them out; run this before changing packaging/,
# ci/package*.sh, the install rules or the action, and before a release.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $(id -u) -ne 0 ]]; then
  exec sudo --preserve-env=CI,PATH bash "$0" "$@"
fi

bash ci/setup.sh --test
# The package and the README's build are Release: their optimizer-only warnings fail here.
bash ci/build.sh strict coldgate
bash ci/build.sh asan

service_pid_file=/run/coldgate-podman/service.pid
before=$(cat "$service_pid_file" 2>/dev/null || true)
export "$(bash ci/setup-podman.sh)"
after=$(cat "$service_pid_file" 2>/dev/null || true)
if [[ -n "$after" && "$after" != "$before" ]]; then
  trap 'kill "$after" 2>/dev/null || true' EXIT  # the service we started ends with us
fi

source ci/sanitizer-env.sh
cd build-asan
ctest --output-on-failure --timeout 1200 -L package
