#!/usr/bin/env bash
# The README's first command (`bash ci/demo.sh`) on a fresh Debian 12 machine: a clean clone of
# COMMIT in a new bookworm container (ci/base-image.sh's debootstrap'd image, nothing installed
# beyond it), timed end to end and by phase: packages (ci/setup.sh, apt-get from Debian's mirror),
# the release build, the demo run. Target: ≤ 5 min (docs/BENCHMARKS.md, "The README's first
# command on a fresh machine").
# Usage: bench/readme_first_command.sh [COMMIT]   (default HEAD; root, podman: ci/setup-podman.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COMMIT=${1:-HEAD}
IMAGE=localhost/debian:bookworm-slim
podman image exists "$IMAGE" || bash "$ROOT/ci/base-image.sh" >&2
WORK=$(mktemp -d /tmp/coldgate-readme-XXXXXX)
name=coldgate-readme-$$
trap 'podman rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
git clone -q "$ROOT" "$WORK/src"
git -C "$WORK/src" checkout -q "$COMMIT"
echo "commit $(git -C "$WORK/src" rev-parse --short HEAD); machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
# Each line of the command's stderr stamped with the seconds since it started: the phases are
# read off the first line each one prints.
podman run --name "$name" --network=host -v "$WORK/src":/src -w /src "$IMAGE" bash -c '
  start=$(date +%s%N)
  stamp() { local t=$(( ($(date +%s%N) - start) / 100000000 )); printf "%5d.%d s" $((t / 10)) $((t % 10)); }
  bash ci/demo.sh > /tmp/demo.out 2> >(while IFS= read -r line; do echo "$(stamp)  $line"; done > /tmp/demo.err)
  status=$?
  took=$(stamp)
  sleep 1
  grep -E "ci/setup.sh|ci/build.sh|ci/demo.sh|\[1/|Linking CXX executable coldgate|passed|failed" /tmp/demo.err | cut -c1-160
  tail -3 /tmp/demo.out
  echo "the README first command: exit $status after $took"
  exit $status'
