#!/usr/bin/env bash
# Builds a local Debian base image, `debian:<suite>-slim` (or `debian:<suite>`), with debootstrap
# (minbase) + `podman import`, for machines that reach Debian's package mirror but no container
# registry: debian:bookworm-slim (Debian 12, the default) or debian:trixie-slim (Debian 13). Its apt
# sources are the host's, for that suite (ci/debian-sources.sh), so it installs from the same
# mirror. Cached in podman's storage: a second run returns at once.
# Usage: ci/base-image.sh [TAG]   (default debian:bookworm-slim)
set -euo pipefail
cd "$(dirname "$0")/.."

tag=${1:-debian:bookworm-slim}
if podman image exists "$tag"; then
  exit 0
fi
case "$tag" in
  debian:*) suite=${tag#debian:}; suite=${suite%-slim} ;;
  *) suite= ;;
esac
if [[ ! "$suite" =~ ^[a-z]+$ ]] || [[ ! -e "/usr/share/debootstrap/scripts/$suite" ]]; then
  echo "ci/base-image.sh: cannot build $tag: only debian:<suite>[-slim] of a suite debootstrap knows (bookworm, trixie, …)" >&2
  exit 2
fi
# shellcheck source=ci/debian-sources.sh
source ci/debian-sources.sh
mirror=$(debian_mirror)

root=$(mktemp -d /var/tmp/coldgate-rootfs.XXXXXX)
trap 'rm -rf "$root" "$root.log"' EXIT
echo "ci/base-image.sh: debootstrap $suite (minbase) from $mirror"
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.log" 2>&1 || {
  tail -n 20 "$root.log" >&2; exit 3; }
# Same mirror as the host, so images built from this one install from it.
rm -f "$root/etc/apt/sources.list"
debian_sources "$suite" >"$root/etc/apt/sources.list.d/debian.sources"
rm -f "$root"/var/cache/apt/archives/*.deb
find "$root/var/lib/apt/lists" -maxdepth 1 -type f -delete
chmod 755 "$root"  # mktemp's 0700 would be the image's /, which apt's _apt user cannot enter
tar -C "$root" -c . | podman import --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "ci/base-image.sh: imported $tag"
