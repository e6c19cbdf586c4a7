#!/usr/bin/env bash
# Measurement overhead of `coldgate run`, against anchors timed in the same run:
#   1. a `command` stage running `true` (cold wall_ms from wait4)  vs  `hyperfine -N true`
#      target: coldgate's median within 2× of hyperfine's median;
#   2. a `select 1` SQL stage (cold wall_ms: a fresh `coldgate probe` process that connects,
#      queries and exits)  vs  `hyperfine -N "psql -XAtq -c 'select 1'"` on the same server.
# Usage: bench/run_overhead.sh [RUNS] [COLDGATE_BINARY]   (default 50 runs, build/coldgate,
# built when missing). Needs hyperfine, jq, psql.
set -euo pipefail
RUNS=${1:-50}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${2:-$ROOT/build/coldgate}
[[ -x $BIN ]] || "$ROOT/ci/build.sh" release coldgate
WORK=$(mktemp -d /tmp/coldgate-bench-XXXXXX)
dbpid=
cleanup() {
  [[ -n $dbpid ]] && kill -INT "$dbpid" 2>/dev/null && wait "$dbpid" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

cat > coldgate.yaml <<YAML
version: 1
database: { provider: local }
defaults: { runs: $RUNS, warm: 0 }
stages:
  - name: "true"
    command: ["true"]
  - name: select-1
    query: select 1
YAML

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN" run --out out >/dev/null 2>&1 || true
med() { jq -r --arg s "$1" --arg m "$2" \
  '.stages[] | select(.name == $s) | .metrics[$m].cold | sort | if length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end' out/results.json; }
cg_true=$(med true wall_ms)
cg_sel=$(med select-1 wall_ms)
cg_conn=$(med select-1 connect_ms)
cg_query=$(med select-1 query_ms)

# The same kind of server for psql: `coldgate db up` prints its URL once ready.
"$BIN" db up -c coldgate.yaml > url 2>/dev/null &
dbpid=$!
until [[ -s url ]]; do sleep 0.05; done
URL=$(head -1 url)

# Debian's /usr/bin/psql is a Perl wrapper (pg_wrapper) that picks a version: time the real
# binary next to the server's, as coldgate's command stages get it first on PATH.
PSQL=$(ls -d /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -1)
PSQL=${PSQL:-psql}
echo "psql: $PSQL"
hyperfine -N --warmup 3 --runs "$RUNS" --export-json hf.json -n "true" "true" \
  -n "psql select 1" "$PSQL -XAtq $URL -c 'select 1'" >/dev/null
hf() { jq -r --arg n "$1" '.results[] | select(.command == $n) | .median * 1000' hf.json; }
hf_true=$(hf true)
hf_psql=$(hf "psql select 1")

printf '\n| what | coldgate (median cold wall_ms) | anchor (hyperfine median) | ratio coldgate/anchor |\n|---|---|---|---|\n'
printf '| command stage `true` vs `hyperfine -N true` | %.2f ms | %.2f ms | %.2f× |\n' "$cg_true" "$hf_true" "$(awk -v a="$cg_true" -v b="$hf_true" 'BEGIN{print a/b}')"
printf '| SQL stage `select 1` vs `psql -c '"'"'select 1'"'"'` | %.2f ms | %.2f ms | %.2f× |\n' "$cg_sel" "$hf_psql" "$(awk -v a="$cg_sel" -v b="$hf_psql" 'BEGIN{print a/b}')"
printf '\nselect-1 split (medians): connect_ms %.2f, query_ms %.2f\n' "$cg_conn" "$cg_query"
