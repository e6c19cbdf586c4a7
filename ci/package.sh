#!/usr/bin/env bash
# Builds coldgate's Debian package, build-pkg/coldgate_<version>_amd64.deb: installs what the
# packaging needs (ci/setup.sh --package: help2man, dpkg-dev, file), builds Release with the man
# page (ci/build.sh package), then `cpack -G DEB`. Prints the package's path on stdout, the
# rest on stderr. The package is for the distribution it is built on (Depends: from
# dpkg-shlibdeps there; Recommends: the distribution's postgresql, no pinned major). Check it
# with `dpkg-deb -I` and `dpkg-deb -c`; ci/package-test.sh installs it in a clean container of
# that distribution (debian:bookworm-slim, debian:trixie-slim) and runs the demo there.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/setup.sh --package >&2
bash ci/build.sh package >&2
rm -f build-pkg/coldgate_*.deb
(cd build-pkg && cpack -G DEB >&2)
debs=(build-pkg/coldgate_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || { echo "ci/package.sh: cpack made no single build-pkg/coldgate_*.deb: ${debs[*]}" >&2; exit 3; }
echo "$PWD/${debs[0]}"
