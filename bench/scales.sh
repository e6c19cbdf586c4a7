#!/usr/bin/env bash
# What data scales cost on the demo's run (docs/BENCHMARKS.md "data scales"): `coldgate run -c
# config/demo.yaml` as shipped (game-server and account-lookup at scales [1, 4]), the same at
# [1, 4, 16], and the anchor, the same config without `scales:` — interleaved, round after
# round, on the same machine, so that each variant's cost is a ratio to the anchor measured
# beside it.
#
#   bench/scales.sh [--rounds N] [--coldgate PATH]
#     --rounds N       rounds of the three variants (default 3)
#     --coldgate PATH  the binary (default build/coldgate, built by `bash ci/build.sh release`)
#
# Prints one line per run and then, per variant: the median wall time of the whole run, its
# ratio to the anchor's, and what the extra scales took (their setup steps, from results.json's
# `setup`, and the time beyond the anchor's). Needs jq. Exit 1 when a run fails.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

rounds=3 coldgate=build/coldgate
while (($#)); do
  case "$1" in
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --coldgate) coldgate=${2:?--coldgate needs a path}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/scales.sh: unknown argument '$1' (--rounds N, --coldgate PATH)" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench/scales.sh: --rounds '$rounds' is not a positive number" >&2; exit 2; }
[[ -x $coldgate ]] || { echo "bench/scales.sh: $coldgate is missing: bash ci/build.sh release" >&2; exit 2; }
command -v jq >/dev/null || { echo "bench/scales.sh: jq is missing (apt-get install jq)" >&2; exit 2; }

work=$(mktemp -d)
# The variants sit beside demo.yaml: its relative paths resolve against its folder.
variants=(one two three)
trap 'rm -rf "$work" config/.bench-scales-*.yaml' EXIT
grep -q 'scales: \[1, 4\]' config/demo.yaml || { echo "bench/scales.sh: config/demo.yaml has no 'scales: [1, 4]'" >&2; exit 2; }
sed -E '/^ *scales: \[1, 4\]/d' config/demo.yaml >config/.bench-scales-one.yaml
cp config/demo.yaml config/.bench-scales-two.yaml
sed -E 's/scales: \[1, 4\]/scales: [1, 4, 16]/' config/demo.yaml >config/.bench-scales-three.yaml

declare -A walls
for ((r = 1; r <= rounds; r++)); do
  for v in "${variants[@]}"; do
    out=$work/$v-$r
    t0=$(date +%s.%N)
    if ! "$coldgate" run -c "config/.bench-scales-$v.yaml" --out "$out" --ci >"$out.log" 2>&1; then
      echo "bench/scales.sh: round $r, $v: the run failed; $(tail -3 "$out.log")" >&2
      exit 1
    fi
    wall=$(echo "$(date +%s.%N) - $t0" | bc)
    extra_setup=$(jq '[.setup[] | select(.label | test("^scale ")) | .wall_ms] | add // 0' "$out/results.json")
    printf 'round %d %-5s %6.1f s  (setup at the extra scales %5.1f s)\n' "$r" "$v" "$wall" "$(echo "$extra_setup / 1000" | bc -l)"
    walls[$v]+="$wall "
  done
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
anchor=$(echo "${walls[one]}" | median)
echo
echo "variant                                  median wall   ratio to the anchor"
for v in "${variants[@]}"; do
  m=$(echo "${walls[$v]}" | median)
  case $v in
    one) what="no scales (the anchor)" ;;
    two) what="scales [1, 4] (as shipped)" ;;
    three) what="scales [1, 4, 16]" ;;
  esac
  printf '%-40s %8.1f s     %.2f×\n' "$what" "$m" "$(echo "$m / $anchor" | bc -l)"
done
