#!/usr/bin/env bash
# Builds a local `debian:bookworm-slim` image with debootstrap + `podman import`, for machines
# that reach Debian's package mirror but no container registry. Cached in podman's storage:
# a second run returns at once. Usage: ci/base-image.sh [TAG]   (default debian:bookworm-slim)
set -euo pipefail

tag=${1:-debian:bookworm-slim}
if podman image exists "$tag"; then
  exit 0
fi
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}

root=$(mktemp -d /var/tmp/coldgate-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "ci/base-image.sh: debootstrap bookworm (minbase) from $mirror"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 || {
  tail -n 20 "$root.log" >&2; rm -f "$root.log"; exit 3; }
rm -f "$root.log"
# Same apt sources as the host, so images built from this one install from the same mirror.
cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | podman import --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "ci/base-image.sh: imported $tag"
