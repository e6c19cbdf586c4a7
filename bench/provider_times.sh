#!/usr/bin/env bash
# Provider and cold-run times, each against an anchor measured in the same run
# (docs/BENCHMARKS.md, "provider times"):
#   1. restart: LocalProvider::restart() (what `cold: restart` costs before each cold run) vs
#      `pg_ctl restart -m fast -w` on a second cluster of the same template, binaries and
#      server settings;
#   2. connect: the external provider's start() and db::Connection vs libpq's own PQconnectdb
#      on the same string: a live server, a refused port, a silent listener (connect_timeout=2);
#   3. cold run: a SQL stage `select pg_sleep(1)` with 2 warm repetitions — its cold wall_ms,
#      and what it adds to its query (wall_ms − query_ms) — vs psql running the same query on
#      the same kind of server (its wall time, and that minus psql's own \timing of the query);
#   4. --container: ContainerProvider::start() to a login vs `podman run` of the same image and
#      server arguments to a login; a missing image's failure vs `podman pull` of it (root, and
#      `export "$(bash ci/setup-podman.sh)"` first);
#   5. --remedy: `coldgate run --try` on 2,000,000 rows that miss an index: the index's cold
#      wall_ms vs as is's, 5 runs each interleaved in one trial, and the gap between the ranges.
# Parts 1, 2 and 4 run in one driver process (bench/provider_times.cpp, built here against the
# Release build's libraries) that interleaves the two sides run by run.
#
# Usage: bench/provider_times.sh [--container] [--remedy] [RUNS]   (RUNS default 10)
# Builds Release first (ci/build.sh release coldgate; with BUILD_LOCK=FILE under flock FILE).
# Needs g++, jq, python3. Writes bench/out/provider_times/samples.txt (every sample, "FIGURE
# SIDE MS") and summary.md (medians, each side over its figure's anchor).
set -euo pipefail
CONTAINER=0
REMEDY=0
RUNS=10
for arg in "$@"; do
  case "$arg" in
    --container) CONTAINER=1 ;;
    --remedy) REMEDY=1 ;;
    *) RUNS=$arg ;;
  esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build
BIN=$BUILD/coldgate
OUT=$ROOT/bench/out/provider_times
WORK=$(mktemp -d /tmp/coldgate-provider-times-XXXXXX)
dbpid=
cleanup() {
  [[ -n $dbpid ]] && kill -INT "$dbpid" 2>/dev/null && wait "$dbpid" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$OUT"
SAMPLES=$OUT/samples.txt
: > "$SAMPLES"

if [[ -n ${BUILD_LOCK:-} ]]; then
  flock "$BUILD_LOCK" bash "$ROOT/ci/build.sh" release coldgate >/dev/null
else
  bash "$ROOT/ci/build.sh" release coldgate >/dev/null
fi
# The db module and those below it, each through its own include root, as the build links them.
read -ra PQXX <<<"$(pkg-config --cflags --libs libpqxx libpq)"
g++ -std=c++20 -O2 -I"$BUILD/modules/db" -I"$BUILD/modules/config" -I"$BUILD/modules/canon" \
  -I"$BUILD/modules/util" "$ROOT/bench/provider_times.cpp" "$BUILD/libcoldgate_db.a" \
  "$BUILD/libcoldgate_config.a" "$BUILD/libcoldgate_canon.a" "$BUILD/libcoldgate_util.a" \
  -o "$WORK/provider_times" "${PQXX[@]}" -lfmt -lcrypto -lyaml-cpp -pthread

{
  echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- src || echo ' + uncommitted src'); RUNS $RUNS"
} | tee "$OUT/machine.txt"
load() { echo "load $(cut -d' ' -f1-3 /proc/loadavg)"; }

echo "== 1-2. restart and connect ($(load)) =="
"$WORK/provider_times" local "$RUNS" | tee -a "$SAMPLES" | awk '{printf "."} END {print ""}'

echo "== 3. cold run of select pg_sleep(1), warm: 2 ($(load)) =="
mkdir "$WORK/cold"
cat > "$WORK/cold/coldgate.yaml" <<YAML
version: 1
database: { provider: local }
stages:
  - name: sleep-1
    query: select pg_sleep(1)
    runs: $RUNS
    warm: 2
YAML
(cd "$WORK/cold" && "$BIN" run --out out >/dev/null 2>"$WORK/cold/err") ||
  { cat "$WORK/cold/err" >&2; exit 1; }
jq -r '.stages[0].metrics as $m | range($m.wall_ms.cold | length) as $i |
  "coldrun coldgate \($m.wall_ms.cold[$i])",
  "coldrun-overhead coldgate \($m.wall_ms.cold[$i] - $m.query_ms.cold[$i])"' \
  "$WORK/cold/out/results.json" >> "$SAMPLES"
# The same kind of server for psql: `coldgate db up` prints its URL once ready. Debian's
# /usr/bin/psql is a Perl wrapper that picks a version: the real binary is timed, as in
# bench/run_overhead.sh.
(cd "$WORK/cold" && exec "$BIN" db up -c coldgate.yaml > url 2>/dev/null) &
dbpid=$!
until [[ -s $WORK/cold/url ]]; do
  kill -0 "$dbpid" 2>/dev/null || { echo "coldgate db up failed" >&2; exit 1; }
  sleep 0.05
done
URL=$(head -1 "$WORK/cold/url")
PSQL=$(printf '%s\n' /usr/lib/postgresql/*/bin/psql | sort -V | tail -1)
[[ -x $PSQL ]] || PSQL=psql
for ((i = 0; i < RUNS; i++)); do
  t0=$EPOCHREALTIME
  timing=$("$PSQL" -XAtq "$URL" -c '\timing on' -c 'select pg_sleep(1)')
  t1=$EPOCHREALTIME
  query_ms=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$timing")
  [[ -n $query_ms ]] || { printf 'no \\timing line from psql: %s\n' "$timing" >&2; exit 1; }
  awk -v a="$t0" -v b="$t1" -v q="$query_ms" 'BEGIN {
    printf "coldrun psql %.3f\ncoldrun-overhead psql %.3f\n", (b - a) * 1000, (b - a) * 1000 - q }' \
    >> "$SAMPLES"
done
kill -INT "$dbpid"; wait "$dbpid" 2>/dev/null || true; dbpid=

if ((CONTAINER)); then
  echo "== 4. container ($(load)) =="
  "$WORK/provider_times" container "$RUNS" | tee -a "$SAMPLES" | awk '{printf "."} END {print ""}'
fi

if ((REMEDY)); then
  echo "== 5. remedy trial: an index on 2,000,000 rows ($(load)) =="
  mkdir "$WORK/remedy"
  cat > "$WORK/remedy/schema.sql" <<'SQL'
CREATE TABLE "Comments" (id int PRIMARY KEY, "articleId" int NOT NULL, body text);
INSERT INTO "Comments" SELECT g, 1 + g % 4000, 'comment ' || g FROM generate_series(1, 2000000) g;
SQL
  cat > "$WORK/remedy/coldgate.yaml" <<'YAML'
version: 1
database:
  provider: local
  settings: { max_parallel_workers_per_gather: 0 }
setup: [ { sql: schema.sql }, { analyze: true } ]
defaults: { runs: 1, warm: 0 }
stages:
  - name: comments-sql
    query: select json_agg(c.body order by c.id) from "Comments" c where c."articleId" = 42
    decode: json
    snapshot: true
    try_runs: 5
YAML
  (cd "$WORK/remedy" && "$BIN" run --update-snapshots --out out >/dev/null 2>err &&
     "$BIN" run --try --out out >/dev/null 2>>err) || { cat "$WORK/remedy/err" >&2; exit 1; }
  jq -r '.remedies | (.[0].metrics.wall_ms.cold[] | "remedy as-is \(.)"),
    (.[] | select(.remedy | startswith("CREATE INDEX")) | .metrics.wall_ms.cold[] | "remedy index \(.)")' \
    "$WORK/remedy/out/results.json" >> "$SAMPLES"
fi
echo "($(load) at the end)"

python3 - "$SAMPLES" "$OUT/summary.md" <<'PY'
import statistics, sys
anchors = {"restart": "pg_ctl", "connect-live": "libpq", "connect-refused": "libpq",
           "connect-silent": "libpq", "coldrun": "psql", "coldrun-overhead": "psql",
           "container-start": "podman-run", "container-missing-image": "podman-pull",
           "remedy": "as-is"}
samples = {}
for line in open(sys.argv[1]):
    figure, side, ms = line.split()
    samples.setdefault(figure, {}).setdefault(side, []).append(float(ms))
rows = ["| figure | side | n | median ms | min … max ms | over the anchor (medians) |",
        "|---|---|--:|--:|--:|--:|"]
for figure, sides in samples.items():
    anchor = statistics.median(sides[anchors[figure]]) if anchors[figure] in sides else None
    for side, v in sides.items():
        ratio = "anchor" if side == anchors[figure] else (
            f"{statistics.median(v) / anchor:.2f}×" if anchor else "—")
        rows.append(f"| {figure} | {side} | {len(v)} | {statistics.median(v):.2f} | "
                    f"{min(v):.2f} … {max(v):.2f} | {ratio} |")
if "remedy" in samples and {"as-is", "index"} <= samples["remedy"].keys():
    r = samples["remedy"]
    rows.append(f"\nremedy: fastest as is / slowest with the index = "
                f"{min(r['as-is']) / max(r['index']):.2f}× (> 1: every run apart)")
text = "\n".join(rows) + "\n"
open(sys.argv[2], "w").write(text)
print(text, end="")
PY
echo "samples: $SAMPLES; table: $OUT/summary.md"
