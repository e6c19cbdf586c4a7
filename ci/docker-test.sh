#!/usr/bin/env bash
# The image test: builds the Dockerfile with podman (no registry: the base debian:bookworm-slim
# is made by ci/base-image.sh), then, in a copy of this checkout mounted at /work as docs/ci.md's
# `docker run --rm -v "$PWD":/work coldgate run` does:
#   1. checks the container runs coldgate as its non-root user;
#   2. removes the copy's snapshots/*.json and runs the whole demo with --update-snapshots:
#      it must pass, and every snapshot it writes must equal the committed one byte for byte
#      (cmp), with no snapshot more or less;
#   3. runs the gate in CI mode (CI=true) on the fast stages: it must pass.
# Needs root (rootful podman, as ci/test.sh). Removes its containers, the copy and the image;
# the build stage's layers stay in podman's storage as cache, so a rerun with an unchanged src/
# skips the compile (the runtime stage's apt-get runs again).
#   sudo bash ci/docker-test.sh       # timings: docs/ci.md "The Docker image"
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $(id -u) -ne 0 ]]; then
  exec sudo --preserve-env=PATH bash "$0" "$@"
fi

say() { echo "ci/docker-test.sh: $*" >&2; }
image=localhost/coldgate:docker-test
name=coldgate-docker-test-$$
start=$SECONDS
phase=$SECONDS
lap() { lap_s=$((SECONDS - phase)); phase=$SECONDS; }  # seconds since the last lap, in $lap_s

# podman (ci/setup-podman.sh when missing; podman_service_stop at the end), then the base image
# (debootstrap when missing).
# shellcheck source=ci/podman-ready.sh
source ci/podman-ready.sh
bash ci/base-image.sh >&2

work=$(mktemp -d /var/tmp/coldgate-docker-test.XXXXXX)
cleanup() {
  podman rm -f "$name" >/dev/null 2>&1 || true
  podman rmi "$image" >/dev/null 2>&1 || true
  rm -rf "$work"
  podman_service_stop
}
trap cleanup EXIT
lap; say "podman and the base image ready (${lap_s} s)"

say "podman build -t $image . (log: $work.build.log)"
if ! podman build --network=host --pull=never -t "$image" . >"$work.build.log" 2>&1; then
  tail -n 40 "$work.build.log" >&2
  rm -f "$work.build.log"
  say "FAIL: the image did not build"
  exit 1
fi
rm -f "$work.build.log"
lap; say "built (${lap_s} s)"

# The copy: the checkout's tracked and untracked-but-not-ignored files, as the user's checkout
# would be, owned by the image's user (uid 1000) as a checkout is by its owner.
git ls-files -z --cached --others --exclude-standard \
  | tar --null --ignore-failed-read -T - -cf - | tar -C "$work" -xf -
rm -f "$work"/snapshots/*.json
chown -R 1000:1000 "$work"

run() {  # podman run with docs/ci.md's mount; the rest are coldgate's arguments
  podman run --rm --name "$name" -v "$work":/work "$@"
}

# 1. Non-root.
who=$(run --entrypoint id "$image" -u)
[[ "$who" == 1000 ]] || { say "FAIL: the container runs as uid $who, not 1000"; exit 1; }
version=$(run "$image" --version)
say "runs as uid $who: $version"

# 2. The demo, writing its snapshots; then byte-for-byte against the committed ones.
say "running the demo in the image: coldgate run -c config/demo.yaml --update-snapshots"
if ! run "$image" run -c config/demo.yaml --update-snapshots >"$work/report.txt" 2>"$work/progress.txt"; then
  tail -n 30 "$work/progress.txt" >&2
  say "FAIL: coldgate run failed inside the image (report: above)"
  exit 1
fi
lap; say "demo ran (${lap_s} s)"
produced=$(cd "$work/snapshots" && ls -- *.json)
committed=$(cd snapshots && ls -- *.json)
if [[ "$produced" != "$committed" ]]; then
  say "FAIL: the image wrote snapshots [${produced//$'\n'/ }], committed are [${committed//$'\n'/ }]"
  exit 1
fi
for f in $committed; do
  if ! cmp -- "snapshots/$f" "$work/snapshots/$f"; then
    say "FAIL: snapshots/$f differs from the one made inside the image"
    exit 1
  fi
done
say "$(wc -w <<<"$committed") snapshots made inside the image equal the committed ones byte for byte"

# 3. The gate in CI mode (nothing written under snapshots/), on the fast stages.
rm -rf "$work/coldgate-out"
if ! run -e CI=true "$image" run -c config/demo.yaml --stage account-lookup --stage shop-client \
  >"$work/report.txt" 2>"$work/progress.txt"; then
  cat "$work/report.txt" >&2
  tail -n 30 "$work/progress.txt" >&2
  say "FAIL: the gate in CI mode failed inside the image"
  exit 1
fi
lap; say "the gate passes in CI mode (${lap_s} s)"
say "PASS in $((SECONDS - start)) s"
