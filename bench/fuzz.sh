#!/usr/bin/env bash
# Runs every libFuzzer target in fuzz/ for a bounded time on a copy of its seed corpus
# (tests/fuzz/corpus/<name>/), and prints per target: executions, exec/s, corpus growth, and
# findings (crash-/leak-/timeout-/oom- files). The checked-in corpus never changes here; grow it
# on purpose with `build-fuzz/fuzz/fuzz_X -merge=1 tests/fuzz/corpus/X <dir>`.
# Usage: bench/fuzz.sh [SECONDS_PER_TARGET [TARGET...]]   (default 60 s; all five targets)
# Builds build-fuzz/ (clang, -DCOLDGATE_FUZZ=ON) when a target is missing. Findings are kept in
# bench/out/fuzz/<target>/ (reproduce: build-fuzz/fuzz/fuzz_X bench/out/fuzz/X/crash-…). Exit 1 on
# any finding.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(canon config results explain history)

for t in "${targets[@]}"; do
  [[ -x build-fuzz/fuzz/fuzz_$t ]] || { bash ci/build.sh fuzz; break; }
done

WORK=$(mktemp -d /tmp/coldgate-fuzz-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD 2>/dev/null || echo none); ${seconds}s per target"
printf '%-8s %12s %9s %14s %9s\n' target execs exec/s corpus findings
status=0
for t in "${targets[@]}"; do
  corpus=$WORK/$t
  findings=bench/out/fuzz/$t
  mkdir -p "$corpus" "$findings"
  cp tests/fuzz/corpus/$t/* "$corpus/"
  seeds=$(ls "$corpus" | wc -l)
  log=$WORK/$t.log
  # -max_len: 64 KiB is larger than every seed; -rss_limit_mb: ASan + a large input must stay
  # far below the machine's memory. Crashes do not stop the run (-fork would need more cores).
  rc=0
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/fuzz/fuzz_$t" "$corpus" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
    -timeout=25 -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  found=$(ls "$findings" | grep -cE '^(crash|leak|timeout|oom|slow-unit)-' || true)
  size=$(ls "$corpus" | wc -l)
  printf '%-8s %12s %9s %14s %9s\n' "$t" "$execs" "$rate" "$seeds→$size" "$found"
  if [[ $rc -ne 0 || $found -ne 0 ]]; then
    status=1
    echo "  fuzz_$t exited $rc; log tail:" >&2
    tail -n 30 "$log" | sed 's/^/    /' >&2
  fi
done
exit $status
