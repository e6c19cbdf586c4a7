#!/usr/bin/env bash
# The server-side profile's cost, on the bundled demo (docs/BENCHMARKS.md "server-side profile"):
#  1. run time: BEFORE (a coldgate without the profile, which ran one extra EXPLAIN ANALYZE per
#     SQL stage) against AFTER, N demo runs each, interleaved (before, after, before, …); for each
#     AFTER run also the sum of its measured runs (every cold and warm wall_ms sample) plus setup,
#     and the run's wall time against that sum;
#  2. overhead: AFTER on the demo as is against the demo with `database.profile: false` (servers
#     start without pg_stat_statements, no reset/read), N runs each, interleaved; per stage the
#     median of the runs' cold wall medians, and on/off as a ratio.
# Usage: bench/profile.sh BEFORE_BINARY AFTER_BINARY [N [PARTS]]   (N default 3, PARTS "1 2").
# Needs jq and bc.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BEFORE=${1:?usage: bench/profile.sh BEFORE_BINARY AFTER_BINARY [N]}
AFTER=${2:?usage: bench/profile.sh BEFORE_BINARY AFTER_BINARY [N]}
N=${3:-3}
PARTS=${4:-1 2}
WORK=$(mktemp -d /tmp/coldgate-profile-XXXXXX)
OFF=$ROOT/config/.demo-profile-off.yaml  # beside demo.yaml: its relative paths still resolve
trap 'rm -rf "$WORK" "$OFF"' EXIT
cd "$ROOT"
sed 's/^  provider: local$/  provider: local\n  profile: false/' config/demo.yaml > "$OFF"
grep -q '^  profile: false$' "$OFF" || { echo "could not turn the profile off in $OFF" >&2; exit 2; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD); $N runs per variant, interleaved"

# run NAME BINARY CONFIG: one demo run in CI mode; prints its wall seconds.
run() {
  local out=$WORK/$1 t0 t1
  t0=$(date +%s.%N)
  CI= "$2" run -c "$3" --ci --out "$out" >/dev/null 2>"$out.err" || true
  t1=$(date +%s.%N)
  [[ -s $out/results.json ]] || { echo "$1 wrote no results:" >&2; cat "$out.err" >&2; exit 2; }
  echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# The sum of every measured run of a results file (cold and warm wall_ms) plus setup, in s.
measured() {
  jq '([.stages[].metrics.wall_ms | (.cold + .warm)[]] | add) / 1000 + ([.setup[].wall_ms] | add) / 1000' "$1"
}

if [[ " $PARTS " == *" 1 "* ]]; then
echo
echo "1. run time, before → after"
for ((i = 1; i <= N; i++)); do
  b=$(run "before$i" "$BEFORE" config/demo.yaml)
  a=$(run "after$i" "$AFTER" config/demo.yaml)
  m=$(measured "$WORK/after$i/results.json")
  printf 'round %d: before %.1f s, after %.1f s (measured runs + setup %.1f s, %.2f×)\n' \
    "$i" "$b" "$a" "$m" "$(echo "$a / $m" | bc -l)"
  echo "$b" >> "$WORK/before.s"; echo "$a" >> "$WORK/after.s"
  echo "$(echo "$a / $m" | bc -l)" >> "$WORK/ratio"
done
printf 'median: before %.1f s, after %.1f s (%.2f×); after / (measured runs + setup): %.2f×\n' \
  "$(median < "$WORK/before.s")" "$(median < "$WORK/after.s")" \
  "$(echo "$(median < "$WORK/after.s") / $(median < "$WORK/before.s")" | bc -l)" \
  "$(median < "$WORK/ratio")"
fi
[[ " $PARTS " == *" 2 "* ]] || exit 0

echo
echo "2. overhead, profile on against profile: false (cold wall medians per stage)"
for ((i = 1; i <= N; i++)); do
  run "on$i" "$AFTER" config/demo.yaml >/dev/null
  run "off$i" "$AFTER" "$OFF" >/dev/null
done
printf '%-18s %12s %12s %8s\n' stage "on (ms)" "off (ms)" "on/off"
for stage in $(jq -r '.stages[].name' "$WORK/on1/results.json"); do
  for v in on off; do
    for ((i = 1; i <= N; i++)); do
      jq --arg s "$stage" '.stages[] | select(.name == $s) | .metrics.wall_ms.cold | sort |
        if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end' \
        "$WORK/$v$i/results.json"
    done | median > "$WORK/$v.$stage"
  done
  on=$(cat "$WORK/on.$stage"); off=$(cat "$WORK/off.$stage")
  printf '%-18s %12.1f %12.1f %7.3f×\n' "$stage" "$on" "$off" "$(echo "$on / $off" | bc -l)"
done
