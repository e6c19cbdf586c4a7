#!/usr/bin/env bash
# What the migration gate's probes cost the migration they watch: `coldgate ab` of one pull
# request whose migration builds an index without CONCURRENTLY on 1,000,000 rows (writes wait
# for it; reads do not), run N times with the probes and N times without
# (COLDGATE_MIGRATION_PROBES=0), interleaved: with, without, with, … so that the machine's
# drift falls on both alike. Prints each run's migration wall time and the server time of its
# statements (pg_stat_statements), then the medians and their ratio (docs/BENCHMARKS.md,
# "Migration probes"). The lock_timeout check is off: it is a second run, not the first's cost.
# Usage: bench/migration_probes.sh [COLDGATE_BINARY] [N]   (default build/coldgate, N=5).
# Needs jq (bash ci/setup.sh --bench).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/build/coldgate}
N=${2:-5}
[[ -x $BIN ]] || "$ROOT/ci/build.sh" release coldgate
WORK=$(mktemp -d /tmp/coldgate-migration-probes-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
mkdir -p db/migrations
cat > coldgate.yaml <<'YAML'
version: 1
migrate: { sql_dir: db/migrations }
setup:
  - migrate
  - sql: db/seed.sql
defaults: { runs: 1, warm: 0 }
gate:
  migration: { lock_timeout: off }
stages:
  - name: orders
    query: SELECT count(*) AS n FROM orders WHERE amount > 90
YAML
echo "CREATE TABLE orders (id bigserial PRIMARY KEY, customer int NOT NULL, amount int NOT NULL);" \
  > db/migrations/001_schema.sql
echo "INSERT INTO orders (customer, amount) SELECT g % 1000, g % 97 FROM generate_series(1, 1000000) g;" \
  > db/seed.sql
echo "coldgate-out/" > .gitignore
git init -q -b main && git add -A && git -c user.name=b -c user.email=b@b commit -qm base
git checkout -qb pr
echo "CREATE INDEX orders_amount_idx ON orders (amount);" > db/migrations/002_index.sql
git add -A && git -c user.name=b -c user.email=b@b commit -qm "pr: index"

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binary: $BIN; $N runs each way, interleaved"
with=() without=() with_server=() without_server=()
for ((i = 1; i <= N; i++)); do
  for probes in 1 0; do
    rc=0
    CI= COLDGATE_MIGRATION_PROBES=$probes "$BIN" ab --base main --no-cache >/dev/null \
      2>"err-$i-$probes" || rc=$?
    rm -rf "out-$i-$probes" && cp -r coldgate-out "out-$i-$probes"
    r=out-$i-$probes/results.json
    if [[ ! -s $r ]] || [[ $(jq '.migration != null' "$r") != true ]]; then
      echo "run $i (probes=$probes) measured no migration (exit $rc):" >&2; tail -5 "err-$i-$probes" >&2; exit 2
    fi
    wall=$(jq '.migration.wall_ms' "$r")
    server=$(jq '[.migration.statements[].exec_ms] | add' "$r")
    stall=$(jq '[.migration.tables[].write_stall_ms] | max // 0' "$r")
    printf 'run %d probes=%s: migration %.1f ms, its statements %.1f ms on the server, writes waited %.1f ms\n' \
      "$i" "$probes" "$wall" "$server" "$stall"
    if [[ $probes == 1 ]]; then with+=("$wall"); with_server+=("$server")
    else without+=("$wall"); without_server+=("$server"); fi
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
mw=$(median "${with[@]}") mo=$(median "${without[@]}")
sw=$(median "${with_server[@]}") so=$(median "${without_server[@]}")
echo
echo "| | with probes | without | ratio |"
echo "|---|---:|---:|---:|"
printf '| migration wall time, median | %.1f ms | %.1f ms | %.3f |\n' "$mw" "$mo" "$(echo "$mw / $mo" | bc -l)"
printf '| its statements on the server, median | %.1f ms | %.1f ms | %.3f |\n' "$sw" "$so" "$(echo "$sw / $so" | bc -l)"
