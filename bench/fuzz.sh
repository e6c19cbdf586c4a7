#!/usr/bin/env bash
# Runs the libFuzzer targets in fuzz/ on kept corpora, and keeps count of every execution.
#
#   bench/fuzz.sh [SECONDS [TARGET...]]     each target SECONDS (default 60), one after another
#   bench/fuzz.sh --runs N [TARGET...]      each target until N executions in this pass
#   bench/fuzz.sh --background --budget DURATION [--runs N] [--slice SECONDS] [TARGET...]
#                                           a campaign that needs no person: detached, the
#                                           targets in turn (slices of --slice s, default 300),
#                                           until each has N executions in this pass (when
#                                           --runs is given) or DURATION (90m, 3h, 36000) is spent;
#                                           at `nice -n 19`, so it takes only the CPU that builds
#                                           and tests leave idle
#   bench/fuzz.sh --status                  a running campaign's progress, and the totals
#   bench/fuzz.sh --stop                    ends a running campaign after its current slice's
#                                           libFuzzer is stopped (its inputs so far are kept)
#   bench/fuzz.sh --totals                  cumulative executions per target (the ledger)
#   bench/fuzz.sh --merge [TARGET...]       adds to the checked-in seeds a small set of the kept
#                                           corpus's inputs that reach what the seeds do not
#                                           (libFuzzer -set_cover_merge=1)
#
# Targets: canon config results explain history profile metrics (all by default).
# Corpora are kept in bench/out/fuzz/corpus/<target>/ from pass to pass (seeded from
# tests/fuzz/corpus/<target>/, whose inputs are added again each run); what a campaign found
# reaches the repository by --merge. Every run of a target appends a line to
# tests/fuzz/ledger.tsv (date, commit, target, executions, seconds, exec/s, corpus, findings):
# the cumulative figures in docs/RELIABILITY.md are its sums (--totals). Findings
# (crash-/leak-/timeout-/oom-/slow-unit- files) are kept in bench/out/fuzz/<target>/;
# reproduce one with build-fuzz/fuzz/fuzz_X bench/out/fuzz/X/crash-…. Exit 1 on any finding.
# Builds build-fuzz/ (clang, -DCOLDGATE_FUZZ=ON) when a target is missing.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
ALL=(canon config results explain history profile metrics)
OUT=bench/out/fuzz
LEDGER=tests/fuzz/ledger.tsv
PIDFILE=$OUT/campaign.pid
LOG=$OUT/campaign.log

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }

seconds=60 runs="" background=0 budget="" slice=300 action=run
targets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --background) background=1; shift ;;
    --budget) budget=${2:?--budget needs a duration}; shift 2 ;;
    --slice) slice=${2:?--slice needs seconds}; shift 2 ;;
    --status) action=status; shift ;;
    --stop) action=stop; shift ;;
    --totals) action=totals; shift ;;
    --merge) action=merge; shift ;;
    --campaign) action=campaign; shift ;;  # the detached process itself
    -h | --help) usage 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *)
      if [[ ${#targets[@]} -eq 0 && $action == run && -z $runs && $1 =~ ^[0-9]+$ ]]; then
        seconds=$1
      else
        targets+=("$1")
      fi
      shift ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=("${ALL[@]}")
for t in "${targets[@]}"; do
  [[ " ${ALL[*]} " == *" $t "* ]] || { echo "fuzz.sh: no target '$t' (one of: ${ALL[*]})" >&2; exit 2; }
done

# Seconds from "90m", "3h", "45s", "36000".
to_seconds() {
  case $1 in
    *h) echo $((${1%h} * 3600)) ;;
    *m) echo $((${1%m} * 60)) ;;
    *s) echo "${1%s}" ;;
    *) echo "$1" ;;
  esac
}

totals() {
  [[ -s $LEDGER ]] || { echo "no ledger yet ($LEDGER)"; return; }
  awk -F'\t' 'NR > 1 { e[$3] += $4; s[$3] += $5; f[$3] += $8; n[$3]++ }
    END { printf "%-8s %6s %14s %10s %9s\n", "target", "passes", "executions", "seconds", "findings";
          for (t in e) printf "%-8s %6d %14d %10d %9d\n", t, n[t], e[t], s[t], f[t] }' "$LEDGER" |
    { read -r header; echo "$header"; sort; }
}

campaign_pid() {
  local pid
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  kill -0 "$pid" 2>/dev/null && echo "$pid"
}

case $action in
  totals) totals; exit 0 ;;
  status)
    if pid=$(campaign_pid); then
      echo "campaign running (pid $pid); its log, $LOG:"
    else
      echo "no campaign running; the last one's log, $LOG:"
    fi
    tail -n 12 "$LOG" 2>/dev/null || echo "  (none)"
    echo
    totals
    exit 0 ;;
  stop)
    pid=$(campaign_pid) || { echo "no campaign running"; exit 0; }
    kill -TERM "$pid"
    echo "stopped campaign $pid (the current target's inputs so far are kept)"
    exit 0 ;;
esac

for t in "${targets[@]}"; do
  [[ -x build-fuzz/fuzz/fuzz_$t ]] || { bash ci/build.sh fuzz; break; }
done

if [[ $action == merge ]]; then
  for t in "${targets[@]}"; do
    [[ -d $OUT/corpus/$t ]] || { echo "$t: no kept corpus"; continue; }
    before=$(ls tests/fuzz/corpus/$t | wc -l)
    "build-fuzz/fuzz/fuzz_$t" -set_cover_merge=1 -max_len=65536 -rss_limit_mb=2048 "tests/fuzz/corpus/$t" \
      "$OUT/corpus/$t" >"$OUT/$t.merge.log" 2>&1
    echo "$t: seeds $before → $(ls tests/fuzz/corpus/$t | wc -l) ($(du -sh tests/fuzz/corpus/$t | cut -f1))"
  done
  exit 0
fi

if [[ $background -eq 1 ]]; then
  [[ -n $budget ]] || { echo "fuzz.sh: --background needs --budget DURATION" >&2; exit 2; }
  if pid=$(campaign_pid); then echo "fuzz.sh: a campaign runs already (pid $pid); --status or --stop" >&2; exit 2; fi
  mkdir -p "$OUT"
  args=(--campaign --budget "$budget" --slice "$slice")
  [[ -n $runs ]] && args+=(--runs "$runs")
  # nice 19: a campaign of hours shares the machine with builds and test lanes, which must not
  # slow down; libFuzzer then runs on what they leave (exec/s in the ledger show the load).
  # setsid makes a new session, and with autogroup scheduling (sched_autogroup_enabled) a
  # session's group gets a full share whatever its processes' nice: the group's nice is set too.
  setsid nohup bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 "$@"' \
    campaign bash "$0" "${args[@]}" "${targets[@]}" >"$LOG" 2>&1 </dev/null &
  echo "$!" >"$PIDFILE"
  echo "campaign started (pid $!, nice 19, budget $budget${runs:+, until $runs executions per target}); follow it with bench/fuzz.sh --status"
  exit 0
fi

WORK=$(mktemp -d /tmp/coldgate-fuzz-XXXXXX)
current="" stopping=0
on_exit() {
  if [[ -n $current ]]; then kill "$current" 2>/dev/null || true; wait "$current" 2>/dev/null || true; fi
  rm -rf "$WORK"
  if [[ $action == campaign ]]; then rm -f "$PIDFILE"; fi
  return 0
}
# SIGTERM (--stop) and SIGINT end the libFuzzer run under way with SIGINT, on which libFuzzer
# prints its final statistics: that run's executions are counted like any other's, then no
# further run starts.
on_signal() {
  stopping=1
  if [[ -n $current ]]; then kill -INT "$current" 2>/dev/null || true; fi
  return 0
}
trap on_exit EXIT
trap on_signal TERM INT
commit=$(git rev-parse --short HEAD 2>/dev/null || echo none)
[[ -s $LEDGER ]] || printf 'date\tcommit\ttarget\texecutions\tseconds\texec_per_s\tcorpus\tfindings\n' >"$LEDGER"

declare -A pass_execs
status=0
# One libFuzzer run of target $1: at most $2 seconds, or at most $3 executions when given.
fuzz_once() {
  local t=$1 max_time=$2 max_runs=${3:-}
  local corpus=$OUT/corpus/$t findings=$OUT/$t log=$WORK/$t.log rc=0 t0=$SECONDS
  mkdir -p "$corpus" "$findings"
  cp -n tests/fuzz/corpus/$t/* "$corpus/" 2>/dev/null || true
  local before
  before=$(ls "$corpus" | wc -l)
  # This run's findings are the files newer than this mark: an earlier run's finding left in
  # the folder (not yet fixed, or kept for reference) is not counted again.
  touch "$WORK/$t.start"
  local limits=(-max_total_time="$max_time")
  [[ -n $max_runs ]] && limits+=(-runs="$max_runs")
  # -max_len: 64 KiB is larger than every seed; -rss_limit_mb: ASan + a large input must stay
  # far below the machine's memory. Crashes do not stop a campaign (-fork would need more cores).
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/fuzz/fuzz_$t" "$corpus" "${limits[@]}" -max_len=65536 -rss_limit_mb=2048 \
    -timeout=25 -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1 &
  current=$!
  # A trapped signal interrupts `wait` (status > 128); wait again until libFuzzer has ended.
  while :; do
    rc=0
    wait "$current" || rc=$?
    kill -0 "$current" 2>/dev/null || break
  done
  current=""
  local execs rate found size secs
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  found=$(find "$findings" -maxdepth 1 -type f -newer "$WORK/$t.start" | grep -cE '/(crash|leak|timeout|oom|slow-unit)-[^/]*$' || true)
  size=$(ls "$corpus" | wc -l)
  secs=$((SECONDS - t0))
  pass_execs[$t]=$((${pass_execs[$t]:-0} + execs))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$commit" "$t" "$execs" "$secs" \
    "$rate" "$size" "$found" >>"$LEDGER"
  printf '%-8s %12s %9s %14s %9s %14s\n' "$t" "$execs" "$rate" "$before→$size" "$found" "${pass_execs[$t]}"
  # libFuzzer exits 72 when interrupted (-interrupt_exit_code): a stop, not a finding.
  if ((stopping)) && [[ $rc -eq 72 || $rc -gt 128 ]]; then rc=0; fi
  if [[ $rc -ne 0 || $found -ne 0 ]]; then
    status=1
    echo "  fuzz_$t exited $rc; log tail:" >&2
    tail -n 30 "$log" | sed 's/^/    /' >&2
  fi
}

header() {
  echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); commit $commit; $1"
  printf '%-8s %12s %9s %14s %9s %14s\n' target execs exec/s corpus findings "this pass"
}

if [[ $action == campaign ]]; then
  total=$(to_seconds "$budget")
  header "campaign: budget ${total}s, slices of ${slice}s${runs:+, until $runs executions per target}"
  deadline=$((SECONDS + total))
  while ((SECONDS < deadline)); do
    progressed=0
    for t in "${targets[@]}"; do
      ((SECONDS < deadline)) || break
      left=""
      if [[ -n $runs ]]; then
        left=$((runs - ${pass_execs[$t]:-0}))
        ((left > 0)) || continue
      fi
      s=$((deadline - SECONDS < slice ? deadline - SECONDS : slice))
      ((s > 0)) || break
      fuzz_once "$t" "$s" "$left"
      progressed=1
      ((stopping == 0)) || break
    done
    ((progressed)) || break  # every target reached --runs
    ((stopping == 0)) || break
  done
  if ((stopping)); then echo "campaign stopped after $SECONDS s; exit $status"; else echo "campaign done after $SECONDS s; exit $status"; fi
  totals
  exit $status
fi

if [[ -n $runs ]]; then
  header "until $runs executions per target"
  for t in "${targets[@]}"; do
    while ((${pass_execs[$t]:-0} < runs && stopping == 0)); do
      fuzz_once "$t" 86400 $((runs - ${pass_execs[$t]:-0}))
    done
  done
else
  header "${seconds}s per target"
  for t in "${targets[@]}"; do
    ((stopping == 0)) || break
    fuzz_once "$t" "$seconds"
  done
fi
exit $status
