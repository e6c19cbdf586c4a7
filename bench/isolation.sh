#!/usr/bin/env bash
# The cost of database isolation (docs/BENCHMARKS.md "database isolation"):
#  1. one copy, as a cold run under `isolation: run` makes it (DROP DATABASE … WITH (FORCE),
#     then CREATE DATABASE … TEMPLATE), on the demo's loaded database and on a ~25 MB one, with
#     STRATEGY = WAL_LOG (15's default) and FILE_COPY interleaved, N copies each; anchor: a
#     `SELECT 1` round trip on the same psql session (what a copy costs beyond a statement);
#  2. the demo's whole run under `isolation: none`, `stage` and `run`, N runs each,
#     interleaved; the run's wall time against its own measured work (every cold and warm
#     wall_ms sample plus setup, the anchor of BENCHMARKS.md's "demo coldgate run" target:
#     ≤ 1.15×) and against none's run.
# Usage: bench/isolation.sh BINARY [N [PARTS]]   (N default 5, PARTS "1 2"). Needs jq, bc, psql.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(realpath "${1:?usage: bench/isolation.sh BINARY [N [PARTS]]}")
N=${2:-5}
PARTS=${3:-1 2}
WORK=$(mktemp -d /tmp/coldgate-isolation-XXXXXX)
cd "$ROOT"
declare -A CFG
for v in none stage run; do
  CFG[$v]=$ROOT/config/.demo-isolation-$v.yaml   # beside demo.yaml: its relative paths resolve
  sed "s/^defaults: { runs: 3, warm: 2, cold: process, timeout: 2m }$/defaults: { runs: 3, warm: 2, cold: process, timeout: 2m, isolation: $v }/" \
    config/demo.yaml > "${CFG[$v]}"
  grep -q "isolation: $v }" "${CFG[$v]}" || { echo "could not edit ${CFG[$v]}" >&2; exit 2; }
done
UP=""
cleanup() {
  [[ -n $UP ]] && "$BIN" db down -c config/demo.yaml >/dev/null 2>&1 || true
  rm -rf "$WORK" "${CFG[none]}" "${CFG[stage]}" "${CFG[run]}"
}
trap cleanup EXIT

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD); $N per variant, interleaved"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

if [[ " $PARTS " == *" 1 "* ]]; then
  echo
  echo "1. one copy (DROP … WITH (FORCE) + CREATE DATABASE … TEMPLATE), ms"
  "$BIN" db up -c config/demo.yaml > "$WORK/up.out" 2> "$WORK/up.err" &
  UP=$!
  for ((i = 0; i < 600; i++)); do
    URL=$("$BIN" db url -c config/demo.yaml 2>/dev/null) && break
    sleep 0.5
  done
  [[ -n ${URL:-} ]] || { echo "db up did not come up:" >&2; cat "$WORK/up.err" >&2; exit 2; }
  ADMIN=$(echo "$URL" | sed 's|/game\([?]\)|/postgres\1|; s|/game$|/postgres|')
  PSQL=(psql -X -q -v ON_ERROR_STOP=1 "$ADMIN")
  "${PSQL[@]}" -c "CREATE DATABASE bench25" -c "SELECT 1" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 "${URL/\/game/\/bench25}" -c \
    "CREATE TABLE t (id int PRIMARY KEY, a text, b timestamptz);
     INSERT INTO t SELECT g, md5(g::text) || md5((g * 7)::text), now() FROM generate_series(1, 150000) g;
     ANALYZE t;" >/dev/null
  "${PSQL[@]}" -At -c "SELECT 'sizes: game ' || pg_size_pretty(pg_database_size('game')) || ', bench25 ' || pg_size_pretty(pg_database_size('bench25'))"
  "${PSQL[@]}" -c "ALTER DATABASE game WITH ALLOW_CONNECTIONS false" \
    -c "ALTER DATABASE bench25 WITH ALLOW_CONNECTIONS false" >/dev/null
  # One psql session per database and strategy round, \timing per statement.
  script=$WORK/copy.sql
  : > "$script"
  echo '\timing on' >> "$script"
  for ((i = 1; i <= N; i++)); do
    for db in game bench25; do
      for s in WAL_LOG FILE_COPY; do
        echo "\\echo $db $s anchor" >> "$script"; echo "SELECT 1;" >> "$script"
        echo "\\echo $db $s drop" >> "$script"; echo "DROP DATABASE IF EXISTS bench_copy WITH (FORCE);" >> "$script"
        echo "\\echo $db $s create" >> "$script"; echo "CREATE DATABASE bench_copy TEMPLATE $db STRATEGY = $s;" >> "$script"
      done
    done
  done
  "${PSQL[@]}" -f "$script" > "$WORK/copy.out" 2>&1
  awk '/^(game|bench25) /{key=$1" "$2" "$3; next} /^Time: /{print key, $2}' "$WORK/copy.out" > "$WORK/copy.tsv"
  printf '%-8s %-10s %10s %10s %10s\n' database strategy "drop" "create" "anchor"
  for db in game bench25; do
    for s in WAL_LOG FILE_COPY; do
      d=$(awk -v k="$db $s drop" '$1" "$2" "$3==k {print $4}' "$WORK/copy.tsv" | median)
      c=$(awk -v k="$db $s create" '$1" "$2" "$3==k {print $4}' "$WORK/copy.tsv" | median)
      a=$(awk -v k="$db $s anchor" '$1" "$2" "$3==k {print $4}' "$WORK/copy.tsv" | median)
      printf '%-8s %-10s %10.1f %10.1f %10.3f\n' "$db" "$s" "$d" "$c" "$a"
    done
  done
  "${PSQL[@]}" -c "DROP DATABASE IF EXISTS bench_copy" -c "DROP DATABASE bench25" \
    -c "ALTER DATABASE game WITH ALLOW_CONNECTIONS true" >/dev/null
  "$BIN" db down -c config/demo.yaml >/dev/null 2>&1 || true
  wait "$UP" 2>/dev/null || true
  UP=""
fi
[[ " $PARTS " == *" 2 "* ]] || exit 0

echo
echo "2. the demo's run under isolation none (anchor), stage and run, wall seconds"
run() {  # run NAME CONFIG: one demo run in CI mode; prints its wall seconds
  local out=$WORK/$1 t0 t1
  t0=$(date +%s.%N)
  CI= "$BIN" run -c "$2" --ci --out "$out" >/dev/null 2>"$out.err" || true
  t1=$(date +%s.%N)
  [[ -s $out/results.json ]] || { echo "$1 wrote no results:" >&2; cat "$out.err" >&2; exit 2; }
  echo "$t1 - $t0" | bc -l
}
# The run's measured work: every cold and warm wall_ms sample plus its setup, in seconds.
work() {
  jq '([.stages[].metrics.wall_ms | (.cold + .warm)[]] + [.setup[].wall_ms]) | add / 1000' "$1"
}
for ((i = 1; i <= N; i++)); do
  for v in none stage run; do
    t=$(run "$v$i" "${CFG[$v]}")
    w=$(work "$WORK/$v$i/results.json")
    iso=$(jq -r '[.stages[].isolation] | unique | join(",")' "$WORK/$v$i/results.json")
    copies=$(grep -c 'fresh copy of the database' "$WORK/$v$i.err" || true)
    printf 'round %d %-5s run %6.1f s, measured work %6.1f s, %.3f× (stages: %s; %s copies)\n' \
      "$i" "$v" "$t" "$w" "$(echo "$t / $w" | bc -l)" "$iso" "$copies"
    echo "$t" >> "$WORK/$v.s"
    echo "$t / $w" | bc -l >> "$WORK/$v.r"
  done
done
none=$(median < "$WORK/none.s")
for v in none stage run; do
  m=$(median < "$WORK/$v.s")
  printf 'median %-5s run %6.1f s (%.3f× none), run / measured work %.3f×\n' "$v" "$m" \
    "$(echo "$m / $none" | bc -l)" "$(median < "$WORK/$v.r")"
done
