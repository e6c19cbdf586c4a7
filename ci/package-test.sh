#!/usr/bin/env bash
# The package test: builds the Debian package (ci/package.sh), then, in a fresh container of a
# clean install of the distribution it was built on (the debootstrap'd debian:<codename>-slim of
# ci/base-image.sh, no registry: debian:bookworm-slim on Debian 12, debian:trixie-slim on Debian
# 13; --image for a .deb built elsewhere), does what a user does:
#   1. `apt-get update && apt-get install -y ./coldgate_<version>_amd64.deb`: it must install
#      with its Depends and Recommends (the distribution's PostgreSQL with its LLVM JIT, psql, git,
#      python3-psycopg2, Chart.js) from Debian's mirror, and put coldgate on PATH;
#   2. runs the bundled demo as a non-root user, as the man page says:
#      `cp -r /usr/share/coldgate/demo coldgate-demo && cd coldgate-demo &&
#       coldgate run -c config/demo.yaml` — exit 0 and the "passed" line;
#   3. `man coldgate` (after installing man-db) shows the page with its COMMANDS section;
#   4. bash-completion's own loader finds the completion, which completes commands and options.
# Needs root (rootful podman, as ci/test.sh). Removes its container and its folder; the base
# image stays in podman's storage. Timings: docs/ci.md "The Debian package".
#   sudo bash ci/package-test.sh               # builds the package with ci/package.sh
#   bash ci/package-test.sh --deb FILE.deb     # checks FILE.deb instead (ctest Package.container:
#                                              # the test build's own package); exit 77 if not root
#   sudo bash ci/package-test.sh --deb build-debian13/coldgate_0.1.0_amd64.deb --image debian:trixie-slim
#                                              # a .deb built on another distribution (here the
#                                              # Debian 13 lane's, ci/debian13.sh --package)
set -euo pipefail
cd "$(dirname "$0")/.."

given=
image=
usage="usage: ci/package-test.sh [--deb FILE.deb] [--image debian:SUITE-slim]"
while (($# > 0)); do
  case "$1" in
    --deb) given=${2:?ci/package-test.sh: --deb needs the .deb file}; shift ;;
    --image) image=${2:?ci/package-test.sh: --image needs a tag}; shift ;;
    *) echo "ci/package-test.sh: unknown argument '$1' ($usage)" >&2; exit 2 ;;
  esac
  shift
done
# The distribution this runs on, which is where ci/package.sh builds the package.
image=${image:-debian:$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")-slim}
if [[ $(id -u) -ne 0 ]]; then
  if [[ -n "$given" ]]; then echo "ci/package-test.sh: skipped: needs root (rootful podman)" >&2; exit 77; fi
  exec sudo --preserve-env=PATH bash "$0" "$@"
fi

say() { echo "ci/package-test.sh: $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }
name=coldgate-package-test-$$
start=$SECONDS
phase=$SECONDS
lap() { lap_s=$((SECONDS - phase)); phase=$SECONDS; }  # seconds since the last lap, in $lap_s

# podman (ci/setup-podman.sh when missing; podman_service_stop at the end), then the base image
# (debootstrap when missing).
# shellcheck source=ci/podman-ready.sh
source ci/podman-ready.sh
work=$(mktemp -d /var/tmp/coldgate-package-test.XXXXXX)
cleanup() {
  podman rm -f "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
  podman_service_stop
}
trap cleanup EXIT
bash ci/base-image.sh "$image" >&2
lap; say "podman and the base image ready (${lap_s} s)"

if [[ -n "$given" ]]; then
  [[ -f "$given" ]] || fail "--deb $given: no such file"
  deb=$(realpath -- "$given")
  say "checking $deb"
else
  say "building the package (ci/package.sh; log: $work/package.log)"
  deb=$(bash ci/package.sh 2>"$work/package.log") || { tail -n 40 "$work/package.log" >&2; fail "the package did not build"; }
  lap; say "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB) in ${lap_s} s"
fi
dpkg-deb -f "$deb" Package Version Architecture Depends Recommends >&2

# The folder the .deb is in, readable by apt's _apt user (no "unsandboxed" note).
chmod 755 "$work"
cp "$deb" "$work/"
deb_name=$(basename "$deb")
# SYS_PTRACE: an ASan build's LeakSanitizer (the test build's package) stops the world with ptrace.
podman run -d --name "$name" --network=host --cap-add=SYS_PTRACE -v "$work":/pkg:ro "$image" \
  sleep infinity >/dev/null
inside() { podman exec "$name" bash -euo pipefail -c "$1"; }

# 1. The install, as the issue says it.
say "in a fresh $image container: apt-get update && apt-get install -y ./$deb_name"
if ! inside "cd /pkg && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y ./$deb_name" \
  >"$work/install.log" 2>&1; then
  tail -n 30 "$work/install.log" >&2
  fail "apt-get install ./$deb_name failed in a clean container"
fi
lap; say "installed in ${lap_s} s"
version=$(dpkg-deb -f "$deb" Version)
got=$(inside 'command -v coldgate && coldgate --version')
[[ "$got" == $'/usr/bin/coldgate\ncoldgate '"$version" ]] || fail "coldgate on PATH: expected /usr/bin/coldgate, coldgate $version; got: $got"
# The newest server installed, which the demo's local provider takes (no version: pin).
# shellcheck disable=SC2016  # expanded inside the container
major=$(inside 'ls /usr/lib/postgresql/*/bin/postgres 2>/dev/null | sed -n "s|^/usr/lib/postgresql/\([0-9]*\)/bin/postgres$|\1|p" | sort -n | tail -n1')
[[ -n "$major" ]] || fail "the Recommends installed no PostgreSQL server (no /usr/lib/postgresql/*/bin/postgres)"
inside "test -f /usr/lib/postgresql/$major/lib/llvmjit.so && command -v psql >/dev/null && command -v git >/dev/null &&
        python3 -c 'import psycopg2' && test -f /usr/share/javascript/chart.js/chart.min.js" \
  || fail "the Recommends (postgresql with its JIT, postgresql-client, git, python3-psycopg2, libjs-chart.js) are not installed"
say "coldgate $version at /usr/bin/coldgate, with PostgreSQL $major (LLVM JIT), psql, git, psycopg2 and Chart.js"

# 2. The demo, as a user who is not root, in a copy of the shipped folder.
say "the demo as user 'demo': cp -r /usr/share/coldgate/demo coldgate-demo && cd coldgate-demo && coldgate run -c config/demo.yaml"
inside 'useradd --create-home demo'
code=0
podman exec --user demo --workdir /home/demo "$name" bash -euo pipefail -c \
  'cp -r /usr/share/coldgate/demo coldgate-demo && cd coldgate-demo && coldgate run -c config/demo.yaml' \
  >"$work/report.txt" 2>"$work/progress.txt" || code=$?
lap
if [[ $code -ne 0 ]]; then
  cat "$work/report.txt" >&2
  tail -n 30 "$work/progress.txt" >&2
  fail "the demo exited $code in the container (report and progress above)"
fi
passed=$(grep '^coldgate: passed: ' "$work/progress.txt" || true)
[[ -n "$passed" ]] || { tail -n 10 "$work/progress.txt" >&2; fail "the demo exited 0 without a 'coldgate: passed:' line"; }
say "demo ran in ${lap_s} s: $passed"

# 3. The man page (the package ships it; reading it takes man-db, which minbase lacks).
inside 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends man-db bash-completion' \
  >"$work/man-db.log" 2>&1 || { tail -n 20 "$work/man-db.log" >&2; fail "installing man-db and bash-completion failed"; }
page=$(inside 'MANPAGER=cat MANWIDTH=100 man coldgate 2>&1')
for want in "coldgate - measure PostgreSQL-backed start-up cold" "COMMANDS" "coldgate run [OPTIONS]" \
  "-c, --config TEXT" "cp -r /usr/share/coldgate/demo coldgate-demo"; do
  grep -qF -- "$want" <<<"$page" || { head -n 30 <<<"$page" >&2; fail "man coldgate does not show '$want'"; }
done
# The option's default as CLI11 prints it: TEXT=coldgate.yaml (bookworm's 2.3), TEXT [coldgate.yaml]
# (trixie's 2.4).
grep -qE -- '-c, --config TEXT(=| \[)coldgate\.yaml' <<<"$page" \
  || { grep -F -- "--config" <<<"$page" >&2; fail "man coldgate does not show run's -c default, coldgate.yaml"; }
say "man coldgate: $(wc -l <<<"$page") lines, with the COMMANDS section"

# 4. The completion, loaded the way bash-completion loads it on the first Tab.
# shellcheck disable=SC2016  # expanded inside the container
reply=$(inside 'source /usr/share/bash-completion/bash_completion
  __load_completion coldgate || { echo "not found by bash-completion"; exit 1; }
  complete -p coldgate
  COMP_WORDS=(coldgate d); COMP_CWORD=1; _coldgate coldgate d coldgate; echo "${COMPREPLY[*]}"
  COMP_WORDS=(coldgate run --u); COMP_CWORD=2; _coldgate coldgate --u run; echo "${COMPREPLY[*]}"')
[[ "$reply" == $'complete -F _coldgate coldgate\ndiff db\n--update-snapshots' ]] \
  || fail "the completion in the container: expected 'complete -F _coldgate coldgate', 'diff db', '--update-snapshots'; got: $reply"
say "bash completion: coldgate d<Tab> → diff db; coldgate run --u<Tab> → --update-snapshots"
lap
say "PASS in $((SECONDS - start)) s"
