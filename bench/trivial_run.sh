#!/usr/bin/env bash
# The trivial run's fixed cost against `pg_virtualenv true`, both in one hyperfine run: one SQL
# stage `select 1` with default settings — a throwaway local cluster started, five cold runs,
# the report written, the cluster torn down. Target: the trivial run ≥ 5× faster than the anchor
# (docs/BENCHMARKS.md, "The trivial run's fixed cost").
# Usage: bench/trivial_run.sh [RUNS] [COLDGATE_BINARY]   (default 10 runs, build/coldgate, built
# when missing). Needs hyperfine, jq and pg_virtualenv (postgresql-common); run as root or as a
# user pg_virtualenv accepts.
set -euo pipefail
RUNS=${1:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${2:-$ROOT/build/coldgate}
[[ -x $BIN ]] || "$ROOT/ci/build.sh" release coldgate
WORK=$(mktemp -d /tmp/coldgate-trivial-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
cat > coldgate.yaml <<'YAML'
version: 1
database: { provider: local }
stages:
  - name: one
    query: select 1
YAML
# The template cache is built by the first run (initdb): a warm-up, as on any machine after its
# first run.
"$BIN" run --out out >/dev/null 2>&1
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); TMPDIR=${TMPDIR:-/tmp}"
hyperfine -N --warmup 1 --runs "$RUNS" --export-json hf.json \
  -n "pg_virtualenv true" "pg_virtualenv true" \
  -n "coldgate trivial run" "$BIN run --out out" >/dev/null
mean() { jq -r --arg n "$1" '.results[] | select(.command == $n) | .mean' hf.json; }
sd() { jq -r --arg n "$1" '.results[] | select(.command == $n) | .stddev' hf.json; }
anchor=$(mean "pg_virtualenv true")
run=$(mean "coldgate trivial run")
printf '| command | mean | σ |\n|---|---|---|\n'
printf '| `pg_virtualenv true` | %.3f s | %.3f s |\n' "$anchor" "$(sd "pg_virtualenv true")"
printf '| trivial run (`coldgate run`, `select 1`) | %.3f s | %.3f s |\n' "$run" "$(sd "coldgate trivial run")"
printf '\nratio pg_virtualenv / trivial run: %.2f× (target ≥ 5×)\n' "$(awk -v a="$anchor" -v b="$run" 'BEGIN{print a/b}')"
