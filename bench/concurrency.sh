#!/usr/bin/env bash
# Concurrent commands on one machine with the real demo: N rounds of two `coldgate run` of
# config/demo.yaml (one copy of the checkout, an --out each; one of them with a committed
# snapshot changed, so exit 1), a `db up` … `db down` and an `ab` of a small repository, all at
# once, by one user with one shared TMPDIR and XDG_CACHE_HOME. It is the scenario of
# tests/faults/concurrency_test.cpp (Concurrency.*) run with COLDGATE_CONCURRENCY_DEMO=1, which
# asserts every exit code, every --out's contents, which server each participant reached, that
# db down stopped db up's server alone, the stale clean-up (dead owners' leftovers removed, live
# and foreign ones kept) and that nothing is left.
#
# Usage: bench/concurrency.sh [N=10] [BUILD_DIR=build]   (a build with tests; build/ is built
# with ci/build.sh release when it has no test binary). Prints one line per round and a summary;
# exit 1 on any mismatch or leak. The whole output, with what differed, goes to
# bench/out/concurrency.log.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-10}
BUILD=$(realpath -m "${2:-$ROOT/build}")
TESTS=$BUILD/tests/coldgate_faults_tests
if [[ ! -x $TESTS ]]; then
  if [[ $BUILD != "$ROOT/build" ]]; then
    echo "concurrency.sh: $TESTS is not there: build $BUILD first" >&2
    exit 2
  fi
  bash "$ROOT/ci/build.sh" release coldgate_faults_tests
fi
mkdir -p "$ROOT/bench/out"
LOG=$ROOT/bench/out/concurrency.log

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo none)"
echo "rounds: $N with the demo; $TESTS; log $LOG"
started=$SECONDS
set +e
COLDGATE_CONCURRENCY_DEMO=1 COLDGATE_CONCURRENCY_ROUNDS=$N "$TESTS" --gtest_filter='Concurrency.*' 2>&1 |
  tee "$LOG" | grep --line-buffered -E '^\[ (round|summary) +\]'
rc=${PIPESTATUS[0]}
set -e
echo "total: $((SECONDS - started)) s; test exit $rc"
if [[ $rc -ne 0 ]]; then
  echo "what differed (first lines; all of it in $LOG):"
  grep -E -A3 'Failure$' "$LOG" | head -40
  exit 1
fi
