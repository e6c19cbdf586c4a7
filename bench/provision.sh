#!/usr/bin/env bash
# Provisioning benchmark: a throwaway PostgreSQL up-and-ready, then torn down, via coldgate's
# local provider (`db up` until it prints the URL, then `db down`) vs `pg_virtualenv true`
# (postgresql-common), with hyperfine in the same run. bench/provider_times.sh times a restart
# of the server (cold: restart), against `pg_ctl restart`.
#
# Usage: bench/provision.sh [RUNS]        (default 20; needs hyperfine, pg_virtualenv)
# Builds a Release coldgate in build-bench/ and times `coldgate db up|down`.
set -euo pipefail
RUNS=${1:-20}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build-bench
WORK=$(mktemp -d /tmp/coldgate-bench-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOLDGATE_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j2 --target coldgate >/dev/null

UP="$BUILD/coldgate db up -c"; DOWN="$BUILD/coldgate db down -c"
echo "db commands: $UP … / $DOWN …"

cat > "$WORK/coldgate.yaml" <<'YAML'
version: 1
database: { provider: local, name: app }
stages:
  - name: noop
    query: SELECT 1
YAML
cat > "$WORK/cycle.sh" <<SH
#!/usr/bin/env bash
# db up in the background until it printed the URL (= ready), then db down (= torn down).
set -e
rm -f "$WORK/url"
$UP "$WORK/coldgate.yaml" > "$WORK/url" 2>/dev/null &
pid=\$!
until [ -s "$WORK/url" ]; do sleep 0.002; done
$DOWN "$WORK/coldgate.yaml" 2>/dev/null
wait \$pid
SH
chmod +x "$WORK/cycle.sh"

echo "== up-and-ready + teardown ($RUNS runs each) =="
"$WORK/cycle.sh"  # warms the template cache (initdb once per version)
hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$WORK/hf.json" \
  -n "coldgate local provider (db up → ready → db down)" "$WORK/cycle.sh" \
  -n "pg_virtualenv true" "pg_virtualenv true"
python3 - "$WORK/hf.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
cg, pv = r[0], r[1]
print(f"median coldgate {cg['median']*1000:.0f} ms, pg_virtualenv {pv['median']*1000:.0f} ms, "
      f"ratio {pv['median']/cg['median']:.1f}x")
PY
