#!/usr/bin/env bash
# What the composite action's `package` input saves: the action's two ways of getting coldgate,
# each timed in a fresh container of the clean bookworm base image (ci/base-image.sh), as a
# `container: debian:bookworm` job starts:
#   build    ci/setup.sh (compiler, -dev packages, PostgreSQL 15) + ci/build.sh release coldgate
#            — a pull request whose src/ changed (the binary cache misses);
#   cached   ci/setup.sh alone — the binary from actions/cache (the build's packages are still
#            installed: the action runs ci/setup.sh on every job);
#   package  apt-get install ./coldgate_<version>_amd64.deb (its Depends and Recommends).
# Each includes its `apt-get update`. Needs root (podman). The package comes from ci/package.sh.
#   sudo bash bench/package.sh        # results: docs/ci.md "The Debian package"
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) -eq 0 ]] || exec sudo --preserve-env=PATH bash "$0" "$@"

image=debian:bookworm-slim
bash ci/base-image.sh "$image" >&2
deb=$(bash ci/package.sh 2>/dev/null)
work=$(mktemp -d /var/tmp/coldgate-bench-package.XXXXXX)
name=coldgate-bench-package-$$
trap 'podman rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
chmod 755 "$work"
cp "$deb" "$work/"
git ls-files -z | tar --null -T - -cf - | tar -C "$work" -xf -   # the checkout, without build dirs

timed() {  # NAME SCRIPT: runs SCRIPT in a fresh container, prints NAME and its seconds
  local started=$SECONDS
  podman run --rm --name "$name" --network=host -v "$work":/src:ro "$image" bash -euo pipefail -c \
    "export DEBIAN_FRONTEND=noninteractive; $2" >"$work.$1.log" 2>&1 \
    || { tail -n 20 "$work.$1.log" >&2; rm -f "$work.$1.log"; echo "bench/package.sh: $1 failed" >&2; exit 1; }
  rm -f "$work.$1.log"
  printf '%-8s %4d s\n' "$1" $((SECONDS - started))
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
timed build 'cp -r /src /tmp/src && cd /tmp/src && bash ci/setup.sh && bash ci/build.sh release coldgate'
timed cached 'cp -r /src /tmp/src && cd /tmp/src && bash ci/setup.sh'
timed package "apt-get update -qq && apt-get install -y -qq /src/$(basename "$deb")"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
