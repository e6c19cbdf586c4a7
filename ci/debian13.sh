#!/usr/bin/env bash
# The Debian 13 (trixie) lane: this checkout's working tree (tracked files and untracked ones
# that are not ignored, so uncommitted changes are tested; no build*/ folders), built and tested
# in a clean trixie root, as root:
#   bash ci/setup.sh --test      (what a fresh trixie needs, from the host's Debian mirror)
#   bash ci/build.sh asan        (GCC 14, ASan + UBSan, warnings as errors)
#   bash ci/build.sh strict coldgate  (GCC 14, Release, warnings as errors: the README's build)
#   ctest -L unit --output-on-failure [ARGS]
#   ctest -L postgres --output-on-failure [ARGS]   (both lanes run; the exit is non-zero if
#                                                  either fails)
# The root is debootstrap'd (minbase) once from the mirror the host uses (ci/debian-sources.sh)
# and cached as /var/cache/coldgate/trixie-root.tar; each run unpacks a fresh copy (seconds).
# Downloaded .debs and npm's cache are kept in /var/cache/coldgate/trixie-{apt,npm}/, so a later
# run installs without downloading again. The root runs under chroot in its own mount and PID
# namespaces (unshare): /proc (its own), /sys and /dev (bind), /dev/shm (a fresh tmpfs) are
# mounted only there, so whatever way this script ends — an error, Ctrl-C, a signal, even
# SIGKILL — the kernel drops the mounts and kills every process of the root with the
# namespace; the EXIT trap then removes the copy.
#
#   sudo bash ci/debian13.sh                     # setup, asan build, unit + postgres lanes
#   sudo bash ci/debian13.sh -R Profile          # extra arguments go to both ctest calls
#   sudo bash ci/debian13.sh --demo              # then the demo: bash ci/demo.sh
#   sudo bash ci/debian13.sh --no-tests --package  # only the Debian package (ci/package.sh),
#                                                # copied out to build-debian13/
# Options (before the ctest arguments; `--` ends them):
#   --demo          after the lanes, run `bash ci/demo.sh` (Release build, the bundled demo)
#   --package       after the lanes, build the .deb with ci/package.sh and copy it to
#                   build-debian13/ (ci/package-test.sh --deb FILE --image debian:trixie-slim
#                   tests it)
#   --no-tests      skip the asan build and the ctest lanes (setup still runs)
#   --cmd 'CMD'     run CMD (bash, in the copy's root folder, after ci/setup.sh --test) instead of
#                   the build and the lanes
#   --keep-build    keep build-asan/ between runs (/var/cache/coldgate/trixie-build-asan/):
#                   a rebuild compiles only what changed. Default: a clean build
#   --rebuild-root  debootstrap the cached root again
# Needs root (debootstrap, chroot, mounts). Exit: 0 all passed, 1 a lane/demo/package failed,
# 2 usage, 3 infrastructure. Timings: docs/ci.md "Debian 13 lane".
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "ci/debian13.sh: $*" >&2; }
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }

demo=false package=false tests=true keep_build=false rebuild_root=false cmd=
ctest_args=()
while (($# > 0)); do
  case "$1" in
    --demo) demo=true ;;
    --package) package=true ;;
    --no-tests) tests=false ;;
    --keep-build) keep_build=true ;;
    --rebuild-root) rebuild_root=true ;;
    --cmd) [[ $# -ge 2 ]] || { say "--cmd needs a command"; exit 2; }; cmd=$2; shift ;;
    -h | --help) usage ;;
    --) shift; ctest_args+=("$@"); break ;;
    *) ctest_args+=("$1") ;;
  esac
  shift
done

if [[ $(id -u) -ne 0 ]]; then
  say "needs root (debootstrap, chroot, mounts): sudo bash ci/debian13.sh $*"
  exit 3
fi
for tool in debootstrap unshare setpriv flock chroot git tar; do
  command -v "$tool" >/dev/null || { say "needs $tool (apt-get install debootstrap util-linux git tar)"; exit 3; }
done

start=$SECONDS
elapsed() { local s=$((SECONDS - start)); echo "$((s / 60)) min $((s % 60)) s"; }
suite=trixie
cache=/var/cache/coldgate
tarball=$cache/$suite-root.tar
src=$PWD
out=$src/build-debian13
mkdir -p "$cache/$suite-apt" "$cache/$suite-npm"

# shellcheck source=ci/debian-sources.sh
source ci/debian-sources.sh

# 1. The cached root: debootstrap minbase, the host's mirror, apt sources for trixie.
if $rebuild_root || [[ ! -f "$tarball" ]]; then
  mirror=$(debian_mirror)
  boot=$(mktemp -d /var/tmp/coldgate-$suite-bootstrap.XXXXXX)
  trap 'rm -rf "$boot" "$tarball.part"' EXIT
  say "debootstrap $suite (minbase) from $mirror into $tarball (log: $boot.log)"
  debootstrap --variant=minbase "$suite" "$boot" "$mirror" >"$boot.log" 2>&1 || {
    tail -n 20 "$boot.log" >&2; say "debootstrap failed"; exit 3; }
  rm -f "$boot.log" "$boot"/etc/apt/sources.list
  debian_sources "$suite" >"$boot/etc/apt/sources.list.d/debian.sources"
  rm -f "$boot"/var/cache/apt/archives/*.deb
  find "$boot/var/lib/apt/lists" -maxdepth 1 -type f -delete
  chmod 755 "$boot"  # mktemp's 0700 would be the root's /, which apt's _apt cannot enter
  tar -C "$boot" -cf "$tarball.part" .
  mv "$tarball.part" "$tarball"
  rm -rf "$boot"
  trap - EXIT
  say "cached $tarball ($(du -m "$tarball" | cut -f1) MiB) at $(elapsed)"
fi

# 2. A fresh copy of it, and of the working tree. Each run holds a lock on its copy's folder; the
# copies of runs that could not remove theirs (killed by SIGKILL) are removed here.
for old in /var/tmp/coldgate-"$suite".*/; do
  [[ -e "$old/lock" ]] && flock -n "$old/lock" true && { say "removing ${old%/}, left by a killed run"; rm -rf "$old"; }
done
work=$(mktemp -d /var/tmp/coldgate-$suite.XXXXXX)
exec 9>"$work/lock"
flock 9
root=$work/root
runner=
# shellcheck disable=SC2317  # the EXIT trap
cleanup() {
  local code=$? pids=() p
  trap - EXIT INT TERM HUP
  if [[ -n "$runner" ]] && kill -0 "$runner" 2>/dev/null; then
    kill -KILL "$runner" 2>/dev/null || true  # unshare: its --kill-child ends the namespace
    wait "$runner" 2>/dev/null || true
  fi
  # The PID namespace takes its processes with it; any left with their root in the copy
  # (there should be none) are ended by id before the copy goes.
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    pids=()
    for p in /proc/[0-9]*; do
      [[ "$(readlink "$p/root" 2>/dev/null)" == "$root"* ]] && pids+=("${p#/proc/}")
    done
    ((${#pids[@]} == 0)) && break
    say "ending processes left in the root: ${pids[*]}"
    kill -KILL "${pids[@]}" 2>/dev/null || true
    sleep 1
  done
  # Mounts are in the namespace only; this is a check, never a reason to delete through a mount.
  if grep -qF " $work" /proc/self/mountinfo; then
    say "mounts left under $work (not removed): $(grep -F " $work" /proc/self/mountinfo | cut -d' ' -f5 | tr '\n' ' ')"
    ((code != 0)) || code=3
  else
    local t=$SECONDS
    rm -rf "$work"
    say "removed the copy in $((SECONDS - t)) s"
  fi
  say "total $(elapsed) (exit $code)"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir "$root"
tar -C "$root" -xf "$tarball"
chmod 755 "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# The host's own CA certificates (a proxy's or a company's, if any): ca-certificates adds them to
# the root's trust store when ci/setup.sh installs it, for npm's HTTPS as on the host.
mkdir -p "$root/usr/local/share/ca-certificates"
cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
mkdir -p "$root/coldgate"
# Tracked files that still exist, plus untracked ones that are not ignored; no build*/ folders.
git ls-files -z --cached --others --exclude-standard --deduplicate \
  | while IFS= read -r -d '' f; do
      [[ "$f" == build*/* ]] && continue
      [[ -e "$f" || -L "$f" ]] && printf '%s\0' "$f"
    done \
  | tar -C "$src" --null -T - -cf - | tar -C "$root/coldgate" -xf -
# The repository too, so `git status` in the copy shows the same uncommitted changes.
if [[ -d .git ]]; then cp -a .git "$root/coldgate/.git"; fi
if $keep_build; then
  mkdir -p "$cache/$suite-build-asan" "$root/coldgate/build-asan"
fi
say "fresh $suite root with the working tree ($(git ls-files | wc -l) tracked files, $(git ls-files -o --exclude-standard | wc -l) untracked) in $work at $(elapsed)"

# 3. What runs inside: setup, then the build and the lanes (or --cmd), then --demo / --package.
cat >"$root/coldgate-lane.sh" <<'EOF'
#!/bin/bash
# Written by ci/debian13.sh: runs as PID 1 of the root's namespace, under chroot.
set -uo pipefail
cd /coldgate
tests=$1 demo=$2 package=$3 cmd=$4
shift 4
start=$SECONDS phase=$SECONDS
lap() { local s=$((SECONDS - phase)); phase=$SECONDS; echo "ci/debian13.sh: [trixie] $1 ($s s)" >&2; }
failed=()
source ci/sanitizer-env.sh
# apt downloads as _apt into these (the archives are the host's cache, bind-mounted).
mkdir -p /var/lib/apt/lists/partial /var/cache/apt/archives/partial
chown _apt:root /var/lib/apt/lists/partial /var/cache/apt/archives/partial
if command -v update-ca-certificates >/dev/null; then update-ca-certificates >/dev/null 2>&1 || true; fi
. /etc/os-release
echo "ci/debian13.sh: [trixie] $PRETTY_NAME, $(nproc) cores" >&2
bash ci/setup.sh --test || { lap "ci/setup.sh --test FAILED"; exit 3; }
lap "ci/setup.sh --test: $(g++ --version | head -n1); $(dpkg-query -W -f='${Package} ${Version}' libpqxx-dev); $(ls -d /usr/lib/postgresql/*/bin | tr '\n' ' ')"
if [[ -n "$cmd" ]]; then
  bash -euo pipefail -c "$cmd" || failed+=("--cmd")
  lap "--cmd done"
elif $tests; then
  if bash ci/build.sh asan; then
    lap "ci/build.sh asan"
    (cd build-asan && ctest -L unit --output-on-failure -j "$(nproc)" --timeout 600 "$@") || failed+=("ctest -L unit")
    lap "ctest -L unit"
    (cd build-asan && ctest -L postgres --output-on-failure -j "$(nproc)" --timeout 600 "$@") || failed+=("ctest -L postgres")
    lap "ctest -L postgres"
    bash ci/build.sh strict coldgate || failed+=("ci/build.sh strict")
    lap "ci/build.sh strict coldgate"
  else
    failed+=("ci/build.sh asan")
    lap "ci/build.sh asan FAILED"
  fi
fi
if $demo; then
  bash ci/demo.sh || failed+=("ci/demo.sh")
  lap "ci/demo.sh"
fi
if $package; then
  if deb=$(bash ci/package.sh); then
    mkdir -p /out && cp "$deb" /out/ && dpkg-deb -f "$deb" Package Version Depends Recommends >&2
  else
    failed+=("ci/package.sh")
  fi
  lap "ci/package.sh"
fi
if ((${#failed[@]} > 0)); then
  echo "ci/debian13.sh: [trixie] FAILED: ${failed[*]} ($((SECONDS - start)) s inside)" >&2
  exit 1
fi
echo "ci/debian13.sh: [trixie] passed ($((SECONDS - start)) s inside)" >&2
EOF

# Mount namespace (private: nothing propagates back), PID namespace (this bash is its PID 1:
# when it ends, every process of the root is killed), and setpriv's parent-death signal: if this
# script dies, even by SIGKILL, unshare gets SIGKILL, and --kill-child ends the namespace.
# (env --default-signal: bash starts a background job with SIGINT ignored, which the tests,
# some of which interrupt what they start, must not inherit.)
# shellcheck disable=SC2016  # expanded by the inner bash
inner='set -euo pipefail
root=$1; shift
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --make-rslave "$root/sys"
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"
mount --bind "$CACHE/trixie-apt" "$root/var/cache/apt/archives"
mkdir -p "$root/root/.npm" "$root/out"
mount --bind "$CACHE/trixie-npm" "$root/root/.npm"
mount --bind "$OUT" "$root/out"
if [[ "$KEEP_BUILD" == true ]]; then mount --bind "$CACHE/trixie-build-asan" "$root/coldgate/build-asan"; fi
exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  ${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
  bash /coldgate-lane.sh "$@"'
mkdir -p "$out"
what=("ci/setup.sh --test")
if [[ -n "$cmd" ]]; then what+=("--cmd: $cmd"); elif $tests; then what+=("ci/build.sh asan" "ctest -L unit / -L postgres ${ctest_args[*]}" "ci/build.sh strict"); fi
if $demo; then what+=("ci/demo.sh"); fi
if $package; then what+=("ci/package.sh"); fi
printf -v joined '%s, ' "${what[@]}"
say "running in the $suite root: ${joined%, }"
CACHE=$cache OUT=$out KEEP_BUILD=$keep_build \
  setpriv --pdeathsig KILL unshare --mount --propagation private --pid --fork --kill-child \
  env --default-signal=INT,QUIT bash -c "$inner" bash "$root" "$tests" "$demo" "$package" "$cmd" "${ctest_args[@]}" &
runner=$!
code=0
wait "$runner" || code=$?
runner=
if $package && ((code == 0)); then
  debs=("$out"/coldgate_*_amd64.deb)
  say "package: ${debs[*]}"
fi
exit "$code"
