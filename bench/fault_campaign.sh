#!/usr/bin/env bash
# Replays the fault campaign of the newer paths (docs/RELIABILITY.md "Faults in the newer
# paths") as its fault tests inject it, then checks the machine as a hostile operator would
# after the next run: no /dev/shm/PostgreSQL.* segment that no process maps, no template temp
# copy in a cache folder, no `coldgate-*` work or cluster folder in TMPDIR, no git worktree of
# the tests' repositories (each test's folder is removed with it), no coldgate process.
#
#   bench/fault_campaign.sh [--rounds N]   (default 1; each round runs every case once)
#
# Runs in build-asan/ (built by `bash ci/build.sh asan` when missing), after ci/test.sh's set-up,
# in ci/test.sh's environment (ci/test-env.sh), as root. Logs: bench/out/fault-campaign/<start>/.
# The last line says "F of N rounds failed"; exit 0 when none did, 1 otherwise, 2 on usage.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

rounds=1
while (($#)); do
  case "$1" in
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/fault_campaign.sh: unknown argument '$1' (--rounds N)" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "bench/fault_campaign.sh: run as root (the tests mount tmpfs)" >&2; exit 2; }

# The seven faults' tests: an external database never left missing (1), a stage's own peak
# memory (2), a full disk, a SIGTERM at a stopped postmaster and a server lost under a command
# stage (3–5: LostServer), the shared memory of killed runs (6), a deeply nested document (7).
cases='^(ExternalIsolationFaults|PeakRssFaults|LostServer|SharedMemoryFaults|TemplateCopyFaults|DeepDocument)\.'

[[ -x build-asan/tests/coldgate_faults_tests ]] || bash ci/build.sh asan >/dev/null
cleanup=()
# shellcheck disable=SC2154  # c: the loop variable inside the trap string
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT
# shellcheck source=ci/test-env.sh
source ci/test-env.sh
out=bench/out/fault-campaign/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"

# Segments no live process maps: what a killed server left (one `lstat` is not enough: a live
# server's segment is mapped by its processes).
orphaned_segments() {
  local mapped seg
  mapped=$(cat /proc/[0-9]*/maps 2>/dev/null | grep -o '/dev/shm/PostgreSQL\.[0-9]*' | sort -u || true)
  for seg in /dev/shm/PostgreSQL.*; do
    [[ -e $seg ]] || continue
    grep -qxF "$seg" <<<"$mapped" || echo "$seg"
  done
}

failed=0
for ((round = 1; round <= rounds; round++)); do
  before=$(orphaned_segments | sort)
  status=0
  (cd build-asan && ctest -j "$(($(nproc) + 1))" --timeout 600 -L faults -R "$cases") \
    >"$out/round-$round.log" 2>&1 || status=$?
  left=()
  while read -r seg; do
    [[ -n $seg ]] && left+=("segment $seg")
  done < <(comm -13 <(echo "$before") <(orphaned_segments | sort))
  for f in "${TMPDIR:-/tmp}"/coldgate-*; do [[ -e $f ]] && left+=("folder $f"); done
  for f in "${XDG_CACHE_HOME:-$HOME/.cache}"/coldgate/templates/*.tmp-*; do
    [[ -e $f ]] && left+=("template temp copy $f")
  done
  if pgrep -f "$ROOT/build-asan/coldgate " >/dev/null; then left+=("a coldgate process"); fi
  summary=$(grep -E '^[0-9]+% tests passed' "$out/round-$round.log" || echo "no ctest summary")
  echo "round $round: $summary; left behind: ${#left[@]}${left:+ (${left[*]})}"
  if ((status != 0 || ${#left[@]} > 0)); then failed=$((failed + 1)); fi
done
echo "$failed of $rounds rounds failed"
((failed == 0))
