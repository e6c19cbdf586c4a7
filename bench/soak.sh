#!/usr/bin/env bash
# Soak test of the gate: N consecutive demo runs (`coldgate run -c config/demo.yaml --ci`), each
# compared against the first run's results.json. Nothing changes between runs, so the gate must
# report zero regressions; after every run no postgres / coldgate / probe process, no temp folder
# and no container of the run may remain; the orchestrator's open file descriptors (sampled every
# 100 ms from /proc/<pid>/fd while it runs) must not grow from run to run: a leak raises every
# later run's counts, while a sample that catches a child's pipes for a moment does not, so
# the second half of the runs is compared with the first (highest minimum and highest maximum
# of each half; a leak of one descriptor per run shows as +N/2).
# The server-side profile is on (the demo's default): every stage must have its query counts,
# and the counts — db_queries, db_rows, db_jit_functions per cold and warm sample, and each
# statement's calls and rows in the stage's statement table — must be identical in every run to
# run 1's. pg_stat_statements is reset before each measured run, so a reset that did not happen
# (or counted another run's statements) shows as a count that grew.
#
# Usage: bench/soak.sh [N=50] [COLDGATE_BINARY=build/coldgate]     (needs jq)
# The binary is copied first, so rebuilding during a soak does not change what is measured.
# Temp folders go to a private $TMPDIR, so other coldgate processes on the machine (a test suite
# running meanwhile) are not counted as leaks. Prints one line per run and a summary; exit 1 on
# any failure, false regression, leak or fd growth.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-50}
SRC_BIN=${2:-$ROOT/build/coldgate}
[[ -x $SRC_BIN ]] || bash "$ROOT/ci/build.sh" release coldgate
command -v jq >/dev/null || { echo "soak.sh: needs jq" >&2; exit 2; }

WORK=$(mktemp -d /tmp/soak-XXXXXX)
chmod 755 "$WORK"  # the local provider's server account must reach its cluster folder below
mkdir -m 1777 "$WORK/tmp"
BIN=$WORK/coldgate
cp "$SRC_BIN" "$BIN"
cleanup() {
  [[ -n ${sampler:-} ]] && kill "$sampler" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$ROOT"

# Processes whose command line mentions our private temp folder or binary (postgres of our
# clusters run with -D $WORK/tmp/coldgate-pg-*; probes are `$BIN probe …`).
leftover_processes() {
  local pid cmd
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [[ $pid == "$$" ]] && continue
    cmd=$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null) || continue
    [[ $cmd == *"$WORK/"* && $cmd != *soak.sh* && $cmd != *" ls "* ]] && echo "$pid: $cmd"
  done
  return 0
}
leftover_containers() {
  local tool
  for tool in docker podman; do
    if command -v $tool >/dev/null; then
      timeout 20 $tool ps -aq --filter label=coldgate.run 2>/dev/null || true
      return 0
    fi
  done
}

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD 2>/dev/null || echo none)"
echo "runs: $N; binary copied from $SRC_BIN"
failures=0 regressions=0 leaks=0 fd_growth=0 count_changes=0 done_runs=0
fd_mins=() fd_maxes=()
started=$SECONDS
for ((i = 1; i <= N; i++)); do
  out=$WORK/run$i
  args=(run -c config/demo.yaml --ci --out "$out")
  [[ $i -gt 1 ]] && args+=(--baseline "$WORK/run1/results.json")
  t0=$SECONDS
  TMPDIR=$WORK/tmp CI= GITHUB_ACTIONS= "$BIN" "${args[@]}" >"$out.stdout" 2>"$out.stderr" &
  pid=$!
  # fd sampler: every 100 ms while the orchestrator runs.
  (
    while [[ -d /proc/$pid/fd ]]; do
      n=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l) && [[ $n -gt 0 ]] && echo "$n"
      sleep 0.1
    done
  ) >"$out.fds" &
  sampler=$!
  rc=0
  wait "$pid" || rc=$?
  wait "$sampler" 2>/dev/null || true
  sampler=""
  fd_min=$(sort -n "$out.fds" | head -1)
  fd_max=$(sort -n "$out.fds" | tail -1)
  problems=()
  [[ $rc -eq 0 ]] || { problems+=("exit $rc: $(tail -1 "$out.stderr")"); failures=$((failures + 1)); }
  if [[ -s $out/results.json ]]; then
    reg=$(jq '[(.gate // {metrics: []}).metrics[] | select(.verdict == "regression") | "\(.stage) \(.metric) \(.ratio)"] | join(", ")' -r "$out/results.json")
    if [[ -n $reg ]]; then
      problems+=("regression: $reg")
      regressions=$((regressions + 1))
    fi
    # The counts of every stage, in a canonical order (jq -S), compared with run 1's.
    jq -S '[.stages[] | {stage: .name,
              counts: (.metrics | with_entries(select(.key == "db_queries" or .key == "db_rows"
                                                       or .key == "db_jit_functions"))
                                | map_values({cold, warm})),
              statements: ([.queries[]? | {query, calls, rows}] | sort_by(.query))}]' \
      "$out/results.json" >"$out.counts"
    unprofiled=$(jq -r '[.[] | select(.counts.db_queries == null) | .stage] | join(", ")' "$out.counts")
    if [[ -n $unprofiled ]]; then
      problems+=("no profile: $unprofiled")
      count_changes=$((count_changes + 1))
    elif [[ $i -eq 1 ]]; then
      cp "$out.counts" "$WORK/counts1.json"
      queries=$(jq -r '[.[] | "\(.stage) \(.counts.db_queries.cold[0])"] | join(", ")' "$out.counts")
    elif ! cmp -s "$out.counts" "$WORK/counts1.json"; then
      changed=$(diff "$WORK/counts1.json" "$out.counts" | grep '^[<>]' | head -4 | tr -s ' \n' ' ')
      problems+=("counts differ from run 1: $changed")
      count_changes=$((count_changes + 1))
    fi
  else
    problems+=("no results.json")
  fi
  procs=$(leftover_processes)
  dirs=$(ls -A "$WORK/tmp")
  containers=$(leftover_containers)
  if [[ -n $procs || -n $dirs || -n $containers ]]; then
    problems+=("leak: processes [$procs] temp [$dirs] containers [$containers]")
    leaks=$((leaks + 1))
  fi
  fd_mins+=("${fd_min:-0}")
  fd_maxes+=("${fd_max:-0}")
  done_runs=$i
  printf 'run %d: exit %d, %d s, fds %s..%s, %s\n' "$i" "$rc" $((SECONDS - t0)) "${fd_min:-?}" \
    "${fd_max:-?}" "${problems[*]:-ok}"
  [[ $i -eq 1 && -n ${queries:-} ]] && echo "  run 1's db_queries per stage (every later run must match): $queries"
  # Keep the first run (the baseline) and the last one's output only.
  [[ $i -gt 2 ]] && rm -rf "$WORK/run$((i - 1))" "$WORK/run$((i - 1))".*
done
# fd trend: highest minimum and highest maximum of the first half vs the second half.
highest() { printf '%s\n' "$@" | sort -n | tail -1; }
h=$(((done_runs + 1) / 2))
fd_trend="not judged below 10 runs"
# With few runs a half is one or two runs, and a child's pipes caught at one sample decide it:
# the trend is judged from 10 runs on (bench/soak.sh's default is 50).
if ((done_runs >= 10)); then
  first_min=$(highest "${fd_mins[@]:0:h}") first_max=$(highest "${fd_maxes[@]:0:h}")
  second_min=$(highest "${fd_mins[@]:h}") second_max=$(highest "${fd_maxes[@]:h}")
  fd_trend="runs 1-$h: min ≤ $first_min, max ≤ $first_max; runs $((h + 1))-$done_runs: min ≤ $second_min, max ≤ $second_max"
  ((second_min > first_min || second_max > first_max)) && fd_growth=1
fi
echo "summary: $done_runs runs in $((SECONDS - started)) s; failed runs $failures; runs with a" \
  "false regression $regressions; runs whose counts differ from run 1 $count_changes; runs with" \
  "leaks $leaks; fd growth $fd_growth ($fd_trend)"
failed=()
((failures == 0)) || failed+=("failed runs")
((regressions == 0)) || failed+=("false regressions")
((count_changes == 0)) || failed+=("counts that differ from run 1")
((leaks == 0)) || failed+=("leaks")
((fd_growth == 0)) || failed+=("fd growth")
if ((${#failed[@]})); then
  echo "FAIL: ${failed[*]}"
  exit 1
fi
echo "PASS"
