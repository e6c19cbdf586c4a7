#!/usr/bin/env bash
# A/A check of the gate: the demo run N+1 times on the same commit, then `coldgate compare` of
# each run against the one before (N comparisons). Nothing changed, so:
#   - no verdict may be `regression` (exit 1 of this script);
#   - no verdict may carry a badge (`slower`, `faster`) and no GitHub annotation may be printed
#     (`::warning`/`::error` with GITHUB_ACTIONS=true): the noise floor (gate.min_delta) and the
#     ratios must absorb A/A noise, sub-millisecond stages included.
# Prints the verdict counts per comparison and every row that is not `same`.
# Usage: bench/aa.sh [COLDGATE_BINARY] [N]   (default build/coldgate, built when missing; N=1).
# Needs jq (bash ci/setup.sh --bench).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/build/coldgate}
N=${2:-1}
[[ -x $BIN ]] || "$ROOT/ci/build.sh" release coldgate
WORK=$(mktemp -d /tmp/coldgate-aa-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo none); $((N + 1)) runs, $N comparisons"
for ((i = 0; i <= N; i++)); do
  start=$SECONDS
  # --ci: nothing under snapshots/ is written; the demo's snapshots are committed and match.
  rc=0
  CI= "$BIN" run -c config/demo.yaml --ci --out "$WORK/$i" >/dev/null 2>"$WORK/$i.err" || rc=$?
  if [[ ! -s $WORK/$i/results.json ]]; then
    echo "run $i wrote no results (exit $rc):" >&2; cat "$WORK/$i.err" >&2; exit 2
  fi
  echo "run $i: $((SECONDS - start)) s, exit $rc ($(tail -1 "$WORK/$i.err"))"
done

regressions=0 badges=0 annotations=0 failed=0
echo
echo "| comparison | verdicts | badges | annotations |"
echo "|---|---|---:|---:|"
for ((i = 1; i <= N; i++)); do
  cmp=$WORK/cmp-$i
  status=0
  GITHUB_ACTIONS=true "$BIN" compare "$WORK/$((i - 1))/results.json" "$WORK/$i/results.json" \
    -c config/demo.yaml --out "$cmp" >"$cmp.out" 2>"$cmp.err" || status=$?
  [[ $status -eq 0 ]] || failed=$((failed + 1))
  verdicts=$(jq -r '[.gate.metrics[].verdict] | group_by(.) | map("\(.[0]) \(length)") | join(", ")' "$cmp/results.json")
  r=$(jq '[.gate.metrics[] | select(.verdict == "regression")] | length' "$cmp/results.json")
  b=$(jq '[.gate.metrics[] | select(.verdict == "slower" or .verdict == "faster")] | length' "$cmp/results.json")
  a=$(grep -c '^::\(warning\|error\)' "$cmp.out" || true)
  regressions=$((regressions + r)) badges=$((badges + b)) annotations=$((annotations + a))
  echo "| run $((i - 1)) → run $i | $verdicts | $b | $a |"
done
echo
echo "Rows that are not \`same\`:"
for ((i = 1; i <= N; i++)); do
  jq -r --arg i "$i" '.gate.metrics[] | select(.verdict != "same")
    | "  run \($i): \(.stage) \(.metric) \(.base_median) → \(.head_median) \(.verdict): \(.reason)"' \
    "$WORK/cmp-$i/results.json"
done
echo
if [[ $regressions -ne 0 || $badges -ne 0 || $annotations -ne 0 || $failed -ne 0 ]]; then
  echo "A/A FAILED: $regressions regression(s), $badges badge(s), $annotations annotation(s), $failed failing compare(s)"
  exit 1
fi
echo "A/A passed: $N comparisons, no regression, no badge, no annotation"
