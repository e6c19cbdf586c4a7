#!/usr/bin/env bash
# The plan capture's cost, on the bundled demo (docs/BENCHMARKS.md "plan capture"):
#  1. overhead if plans were taken in the measured runs: the demo as is (auto_explain preloaded,
#     off in the measured runs) against the demo with auto_explain.log_min_duration = 0 for the
#     whole server (every measured run logs its plans: ANALYZE, BUFFERS, VERBOSE, no timing,
#     JSON), N runs each, interleaved; per stage the median of the runs' cold wall_ms medians,
#     and on/off as a ratio. The design takes plans in the measured runs only if every ratio
#     stays within 1.03;
#  2. what the plan run costs instead: the demo as is against `database.plans: false` (no plan
#     run), N runs each, interleaved; the run's wall time, and per run the plan runs' share.
# Usage: bench/plan_capture.sh BINARY [N [PARTS]]   (N default 5, PARTS "1 2"). Needs jq and bc.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(realpath "${1:?usage: bench/plan_capture.sh BINARY [N [PARTS]]}")
N=${2:-5}
PARTS=${3:-1 2}
WORK=$(mktemp -d /tmp/coldgate-plans-XXXXXX)
ON=$ROOT/config/.demo-plans-logged.yaml   # beside demo.yaml: its relative paths still resolve
OFF=$ROOT/config/.demo-plans-off.yaml
trap 'rm -rf "$WORK" "$ON" "$OFF"' EXIT
cd "$ROOT"
sed 's/^    jit: "on" .*$/    jit: "on"\n    auto_explain.log_min_duration: "0"/' config/demo.yaml > "$ON"
grep -q 'auto_explain.log_min_duration: "0"' "$ON" || { echo "could not edit $ON" >&2; exit 2; }
sed 's/^  provider: local .*$/  provider: local\n  plans: false/' config/demo.yaml > "$OFF"
grep -q '^  plans: false$' "$OFF" || { echo "could not edit $OFF" >&2; exit 2; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD); $N runs per variant, interleaved"

# run NAME CONFIG: one demo run in CI mode; prints its wall seconds.
run() {
  local out=$WORK/$1 t0 t1
  t0=$(date +%s.%N)
  CI= "$BIN" run -c "$2" --ci --out "$out" >/dev/null 2>"$out.err" || true
  t1=$(date +%s.%N)
  [[ -s $out/results.json ]] || { echo "$1 wrote no results:" >&2; cat "$out.err" >&2; exit 2; }
  echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
cold_median() {
  jq --arg s "$2" '.stages[] | select(.name == $s) | .metrics.wall_ms.cold | sort |
    if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end' "$1"
}

if [[ " $PARTS " == *" 1 "* ]]; then
echo
echo "1. plans in every measured run (log_min_duration = 0) against none (cold wall medians per stage)"
for ((i = 1; i <= N; i++)); do
  run "off$i" config/demo.yaml >/dev/null
  run "on$i" "$ON" >/dev/null
done
printf '%-18s %12s %12s %8s\n' stage "logged (ms)" "as is (ms)" "ratio"
for stage in $(jq -r '.stages[].name' "$WORK/on1/results.json"); do
  for v in on off; do
    for ((i = 1; i <= N; i++)); do cold_median "$WORK/$v$i/results.json" "$stage"; done |
      median > "$WORK/$v.$stage"
  done
  on=$(cat "$WORK/on.$stage"); off=$(cat "$WORK/off.$stage")
  printf '%-18s %12.1f %12.1f %7.3f×\n' "$stage" "$on" "$off" "$(echo "$on / $off" | bc -l)"
done
fi
[[ " $PARTS " == *" 2 "* ]] || exit 0

echo
echo "2. the plan run: run wall time with it against database.plans: false"
for ((i = 1; i <= N; i++)); do
  a=$(run "with$i" config/demo.yaml)
  b=$(run "without$i" "$OFF")
  planned=$(jq '[.stages[].queries[] | select(.plan != null)] | length' "$WORK/with$i/results.json")
  printf 'round %d: with plan runs %.1f s (%s statements with a plan), without %.1f s\n' \
    "$i" "$a" "$planned" "$b"
  echo "$a" >> "$WORK/with.s"; echo "$b" >> "$WORK/without.s"
done
printf 'median: with %.1f s, without %.1f s (%.3f×)\n' "$(median < "$WORK/with.s")" \
  "$(median < "$WORK/without.s")" \
  "$(echo "$(median < "$WORK/with.s") / $(median < "$WORK/without.s")" | bc -l)"
