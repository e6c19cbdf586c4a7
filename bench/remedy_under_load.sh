#!/usr/bin/env bash
# The remedy verdict on a loaded machine (issue 52): a store's dashboard page that takes ~1 s
# (the application's own second around one coupon lookup by code and 20 lookups by id), whose
# lookup by code has no index on 200,000 coupons. `coldgate explain dashboard --try` measures
# the index in a copy, interleaved with the stage as is, 5 cold runs each, while another process
# keeps every core busy; each trial's verdict line and the deciding figures are printed.
# The project is the one IndexRemedyTest.AnIndexForOneStatementOfASlowPageIsRecommendedOn…
# (tests/measure/index_remedy_test.cpp) writes: keep the two alike.
#
#   bench/remedy_under_load.sh [--runs N] [--load 'COMMAND'] [--bin PATH]
#     --runs N         trials, one after the other (default 5)
#     --load COMMAND   what keeps the cores busy, started before the first trial and ended after
#                      the last (default: stress-ng --cpu <nproc>, every core at 100%)
#     --bin PATH       the coldgate binary (default build-asan/coldgate)
#
# Logs: bench/out/remedy-under-load/<start>/trial-<k>.txt (explain's whole output); a line per
# trial (its verdict) on stdout and in verdicts.txt; the last line says "R of N trials
# recommended the index on its statement's figures". Exit 0 when all did, 1 otherwise, 2 on a
# usage error. Needs python3 with psycopg2, PostgreSQL 14 or newer for the local provider, and
# stress-ng for the default load (apt-get install stress-ng).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

runs=5 load="" bin=build-asan/coldgate
while (($#)); do
  case "$1" in
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --load) load=${2:?--load needs a command}; shift 2 ;;
    --bin) bin=${2:?--bin needs a path}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/remedy_under_load.sh: unknown argument '$1' (--runs N, --load CMD, --bin PATH)" >&2; exit 2 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench/remedy_under_load.sh: --runs '$runs' is not a positive number" >&2; exit 2; }
[[ -x $bin ]] || { echo "bench/remedy_under_load.sh: $bin is not an executable (build it: cmake --build build-asan --target coldgate, or give --bin)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
cores=$(nproc)
if [[ -z $load ]]; then
  command -v stress-ng >/dev/null || { echo "bench/remedy_under_load.sh: stress-ng is missing (apt-get install stress-ng), or give --load" >&2; exit 2; }
  load="stress-ng --cpu $cores --quiet"
fi
# The sanitized binary's options, as the tests run it.
source ci/sanitizer-env.sh

out=$ROOT/bench/out/remedy-under-load/$(date -u +%Y%m%dT%H%M%SZ)
work=$(mktemp -d "${TMPDIR:-/tmp}/remedy-under-load.XXXXXX")
chmod 755 "$work"
mkdir -p "$out"
cleanup=("rm -rf '$work'")
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT

cat >"$work/schema.sql" <<'SQL'
CREATE TABLE coupon (id int PRIMARY KEY, code text NOT NULL, discount int NOT NULL);
INSERT INTO coupon SELECT g, 'C' || lpad(g::text, 7, '0'), g % 50
  FROM generate_series(1, 200000) g;
SQL
cat >"$work/dashboard.py" <<'PY'
import json, os, time, psycopg2
conn = psycopg2.connect(os.environ['DATABASE_URL'])
cur = conn.cursor()
cur.execute('select id, discount from coupon where code = %s', ('C0123456',))
page = {'coupon': cur.fetchone(), 'items': []}
for item in range(1, 21):
    cur.execute('select discount from coupon where id = %s', (item,))
    page['items'].append(cur.fetchone()[0])
time.sleep(1)  # the rest of the page: rendering, other services
print(json.dumps(page))
conn.close()
PY
cat >"$work/coldgate.yaml" <<'YAML'
version: 1
database:
  provider: local
  settings: { max_parallel_workers_per_gather: 0 }
setup: [ { sql: schema.sql }, { analyze: true } ]
defaults: { runs: 1, warm: 0 }
stages:
  - name: dashboard
    command: [/usr/bin/python3, dashboard.py]
    snapshot: true
    try_runs: 5
YAML

setsid bash -c "exec $load" >"$out/load.log" 2>&1 &
load_pid=$!
cleanup=("kill -TERM -- -$load_pid 2>/dev/null || true; wait $load_pid 2>/dev/null || true" "${cleanup[@]}")
sleep 1
kill -0 "$load_pid" 2>/dev/null || { echo "bench/remedy_under_load.sh: the load '$load' ended at once: $(tail -3 "$out/load.log")" >&2; exit 2; }

echo "commit $(git rev-parse --short HEAD), $cores cores, load: $load, binary: $bin" | tee "$out/about.txt"
recommended=0
: >"$out/verdicts.txt"
for ((k = 1; k <= runs; k++)); do
  t0=$(date +%s)
  set +e
  (cd "$work" && CI= GITHUB_ACTIONS= "$bin" explain dashboard --try) >"$out/trial-$k.txt" 2>"$out/trial-$k.err"
  status=$?
  set -e
  seconds=$(($(date +%s) - t0))
  # The verdict: the line after the trial's notes naming a remedy or saying none is.
  verdict=$(grep -m1 -E '^(`CREATE INDEX|No remedy)' "$out/trial-$k.txt" || echo "no verdict (exit $status: $(tail -1 "$out/trial-$k.err"))")
  rows=$(grep -E '^\| (as is|CREATE INDEX)' "$out/trial-$k.txt" | cut -d'|' -f2-4 | paste -sd';' - || true)
  [[ $status -eq 0 && $verdict == '`CREATE INDEX ON public.coupon (code)`: recommended: blocks per call '* ]] &&
    recommended=$((recommended + 1))
  printf 'trial %d (%d s): %s\n    rows:%s\n' "$k" "$seconds" "$verdict" "$rows" | tee -a "$out/verdicts.txt"
done
echo "$recommended of $runs trials recommended the index on its statement's figures (logs: $out)" | tee -a "$out/about.txt"
((recommended == runs))
