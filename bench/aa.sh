#!/usr/bin/env bash
# A/A check of the gate: the demo run twice on the same commit, then `coldgate compare` of the
# two results. Nothing changed, so no verdict may be `regression` (`slower` is noise the gate
# tolerates). Prints the verdict counts and every non-`same` row; exit 1 on any regression.
# Usage: bench/aa.sh [COLDGATE_BINARY]   (default build/coldgate, built when missing). Needs jq.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/build/coldgate}
[[ -x $BIN ]] || "$ROOT/ci/build.sh" release coldgate
WORK=$(mktemp -d /tmp/coldgate-aa-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo none)"
for side in a b; do
  start=$SECONDS
  # --ci: nothing under snapshots/ is written; the demo's snapshots are committed and match.
  rc=0
  CI= "$BIN" run -c config/demo.yaml --ci --out "$WORK/$side" >/dev/null 2>"$WORK/$side.err" || rc=$?
  if [[ ! -s $WORK/$side/results.json ]]; then
    echo "run $side wrote no results (exit $rc):" >&2; cat "$WORK/$side.err" >&2; exit 2
  fi
  echo "run $side: $((SECONDS - start)) s, exit $rc ($(tail -1 "$WORK/$side.err"))"
done

status=0
"$BIN" compare "$WORK/a/results.json" "$WORK/b/results.json" -c config/demo.yaml --out "$WORK/cmp" \
  >/dev/null 2>"$WORK/cmp.err" || status=$?
cat "$WORK/cmp.err"
echo
echo "verdicts: $(jq -r '[.gate.metrics[].verdict] | group_by(.) | map("\(.[0]) \(length)") | join(", ")' "$WORK/cmp/results.json")"
echo
echo "| stage | metric | A median | B median | ratio | verdict |"
echo "|---|---|---:|---:|---:|---|"
jq -r '.gate.metrics[] | select(.verdict != "same")
  | "| \(.stage) | \(.metric) | \(.base_median) | \(.head_median) | \(if .ratio then (.ratio * 100 | round / 100 | tostring) + "×" else "—" end) | \(.verdict) |"' \
  "$WORK/cmp/results.json"
regressions=$(jq '[.gate.metrics[] | select(.verdict == "regression")] | length' "$WORK/cmp/results.json")
echo
if [[ $regressions -ne 0 || $status -ne 0 ]]; then
  echo "A/A FAILED: $regressions regression(s), compare exit $status"
  exit 1
fi
echo "A/A passed: no regression (compare exit 0)"
