#!/usr/bin/env bash
# Runs the faults and postgres lanes again and again while another process keeps every core
# busy, and counts the runs that failed: the proof that no verdict of the suite depends on the
# machine's speed or on who wins a race (docs/RELIABILITY.md "The suite under load").
#
#   bench/suite_under_load.sh [--runs N] [--load 'COMMAND'] [--labels REGEX]
#     --runs N         consecutive runs (default 10)
#     --load COMMAND   what keeps the cores busy, started before the first run and ended after
#                      the last (default: stress-ng --cpu <nproc>, every core at 100%)
#     --labels REGEX   the ctest labels run (default ^(faults|postgres)$)
#
# Each run is `ctest -j <nproc+1> --timeout 600 -L REGEX` (as ci/test.sh) in build-asan/ (built by
# `bash ci/build.sh asan` when missing), after ci/test.sh's set-up (ci/setup.sh --test,
# ci/pg-versions.sh), in the environment of ci/test.sh (ci/test-env.sh).
# Logs: bench/out/under-load/<start>/run-<k>.log; a line per run (start, seconds, tests, failed,
# the failed tests' names) in bench/out/under-load/<start>/runs.tsv and on stdout; the last line
# says "F of N runs failed". Exit 0 when none failed, 1 otherwise, 2 on a usage error.
# Needs root (as ci/test.sh) and stress-ng for the default load (apt-get install stress-ng).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

runs=10 load="" labels='^(faults|postgres)$'
while (($#)); do
  case "$1" in
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --load) load=${2:?--load needs a command}; shift 2 ;;
    --labels) labels=${2:?--labels needs a regular expression}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/suite_under_load.sh: unknown argument '$1' (--runs N, --load CMD, --labels RE)" >&2; exit 2 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench/suite_under_load.sh: --runs '$runs' is not a positive number" >&2; exit 2; }
if [[ $(id -u) -ne 0 ]]; then
  echo "bench/suite_under_load.sh: run it as root, as ci/test.sh runs the suite" >&2; exit 2
fi
cores=$(nproc)
if [[ -z $load ]]; then
  command -v stress-ng >/dev/null || { echo "bench/suite_under_load.sh: stress-ng is missing (apt-get install stress-ng), or give --load" >&2; exit 2; }
  load="stress-ng --cpu $cores --quiet"
fi
# What ci/test.sh sets up before its tests, and these lanes need: the test packages and the
# Sequelize example's node_modules (ci/setup.sh --test), and the PostgreSQL 13–18 binaries of
# the version matrix (ci/pg-versions.sh). Both return at once when done before.
bash ci/setup.sh --test
bash ci/pg-versions.sh >/dev/null
[[ -x build-asan/tests/coldgate_postgres_tests ]] || bash ci/build.sh asan

cleanup=()
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT
source ci/test-env.sh

out=bench/out/under-load/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
setsid bash -c "exec $load" >"$out/load.log" 2>&1 &
load_pid=$!
cleanup=("kill -TERM -- -$load_pid 2>/dev/null || true; wait $load_pid 2>/dev/null || true" "${cleanup[@]}")
sleep 1
kill -0 "$load_pid" 2>/dev/null || { echo "bench/suite_under_load.sh: the load '$load' ended at once: $(tail -3 "$out/load.log")" >&2; exit 2; }

echo "commit $(git rev-parse --short HEAD), $cores cores, load: $load, labels: $labels, TMPDIR=${TMPDIR:-/tmp}" | tee "$out/about.txt"
printf 'run\tstart\tseconds\ttests\tfailed\tfailed_tests\n' >"$out/runs.tsv"
failed_runs=0
for ((k = 1; k <= runs; k++)); do
  start=$(date -u +%FT%TZ) t0=$(date +%s)
  set +e
  (cd build-asan && ctest --output-on-failure -j "$((cores + 1))" --timeout 600 -L "$labels") >"$out/run-$k.log" 2>&1
  status=$?
  set -e
  seconds=$(($(date +%s) - t0))
  tests=$(grep -oP 'tests failed out of \K[0-9]+' "$out/run-$k.log" || echo 0)
  failed=$(grep -oP '[0-9]+(?= tests failed out of)' "$out/run-$k.log" || echo "?")
  names=$(sed -n '/The following tests FAILED/,$p' "$out/run-$k.log" | grep -oP '^\s+\d+ - \K\S+' | paste -sd, - || true)
  # A run that ran no test proves nothing: it counts as failed.
  ((status == 0 && tests > 0)) || failed_runs=$((failed_runs + 1))
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$k" "$start" "$seconds" "$tests" "$failed" "${names:--}" | tee -a "$out/runs.tsv"
done
echo "$failed_runs of $runs runs failed (logs: $out)" | tee -a "$out/about.txt"
((failed_runs == 0))
