#!/usr/bin/env bash
# What the test suite's environment (ci/test.sh, ci/test-env.sh) saves, each pair measured in
# the same run with hyperfine:
#   - a copy of a cached initdb'd cluster (what every local server of the suite starts from,
#     `cp -a` of ~1,300 files) made and removed on ext4 (/tmp, or DIR) vs a tmpfs (/dev/shm);
#   - a sanitized coldgate started (`--version`, with CI's ASAN_OPTIONS) as built, without PIE,
#     vs the same objects linked as a PIE: every cold run's probe and every test is one start.
#
# Usage: bench/suite_env.sh [RUNS] [DIR]     (default 20, /tmp; needs hyperfine, build-asan/)
# Writes bench/out/suite_env/*.json (hyperfine's export) and prints the two comparisons.
set -euo pipefail
RUNS=${1:-20}
DISK=${2:-/tmp}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/bench/out/suite_env
mkdir -p "$OUT"
command -v hyperfine >/dev/null || { echo "bench/suite_env.sh: hyperfine is missing (apt-get install hyperfine)" >&2; exit 2; }
[[ -x $ROOT/build-asan/coldgate ]] || bash "$ROOT/ci/build.sh" asan
WORK=$(mktemp -d "$DISK/coldgate-bench-XXXXXX")
SHM=$(mktemp -d /dev/shm/coldgate-bench-XXXXXX)
trap 'rm -rf "$WORK" "$SHM"' EXIT

# A cluster template as the local provider caches it: made by a run of coldgate's own.
cat >"$WORK/coldgate.yaml" <<'YAML'
version: 1
database: { provider: local }
stages:
  - name: one
    query: SELECT 1
YAML
XDG_CACHE_HOME=$WORK/cache "$ROOT/build-asan/coldgate" run -c "$WORK/coldgate.yaml" --out "$WORK/out" >/dev/null 2>&1 || true
template=$(find "$WORK/cache/coldgate/templates" -mindepth 1 -maxdepth 1 -type d | head -1)
[[ -n $template ]] || { echo "bench/suite_env.sh: no cluster template was cached under $WORK/cache" >&2; exit 3; }
echo "cluster template: $(find "$template" | wc -l) files, $(du -sh "$template" | cut -f1)"
hyperfine --runs "$RUNS" --warmup 2 --export-json "$OUT/copy.json" \
  -n "copy on $(findmnt -no FSTYPE -T "$DISK") ($DISK)" "cp -a --reflink=auto $template $WORK/c && rm -rf $WORK/c" \
  -n "copy on tmpfs (/dev/shm)" "cp -a --reflink=auto $template $SHM/c && rm -rf $SHM/c"

# The same link as build-asan's, without -no-pie.
link=$(cd "$ROOT/build-asan" && ninja -t commands coldgate | tail -1 | sed 's/^: && //; s/ && :$//')
link=${link/ -no-pie/}
link=${link/ -o coldgate / -o $WORK/coldgate-pie }
(cd "$ROOT/build-asan" && eval "$link")
file_type() { readelf -h "$1" | awk '/Type:/{print $2}'; }
echo "coldgate as built: $(file_type "$ROOT/build-asan/coldgate"); relinked: $(file_type "$WORK/coldgate-pie")"
unset ASAN_OPTIONS UBSAN_OPTIONS
source "$ROOT/ci/sanitizer-env.sh"  # CI's options, whatever the caller's
hyperfine --runs "$RUNS" --warmup 3 -N --export-json "$OUT/start.json" \
  -n "coldgate --version, no PIE (as built)" "$ROOT/build-asan/coldgate --version" \
  -n "coldgate --version, PIE" "$WORK/coldgate-pie --version"
