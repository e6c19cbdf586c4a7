#!/usr/bin/env bash
# Provisioning benchmark: a throwaway PostgreSQL up-and-ready, then torn down, via coldgate's
# local provider (`db up` until it prints the URL, then `db down`) vs `pg_virtualenv true`
# (postgresql-common), with hyperfine in the same run; then server restart time (cold: restart).
#
# Usage: bench/provision.sh [RUNS]        (default 20; needs hyperfine, pg_virtualenv, g++)
# Builds a Release coldgate in build-bench/ and times `coldgate db up|down`; a 20-line driver,
# built here from the db module's library, times LocalProvider::restart() N times.
set -euo pipefail
RUNS=${1:-20}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build-bench
WORK=$(mktemp -d /tmp/coldgate-bench-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOLDGATE_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j2 --target coldgate >/dev/null

cat > "$WORK/driver.cpp" <<'CPP'
#include <chrono>
#include <iostream>
#include <string>
#include "db/local_provider.hpp"
#include "util/error.hpp"
int main(int argc, char** argv) try {
  std::string action = argc > 1 ? argv[1] : "";
  if (action == "restart") {  // restart N: time N restarts of one local cluster
    coldgate::db::LocalProvider p({});
    p.start();
    for (int i = 0, n = std::stoi(argv[2]); i < n; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      p.restart();
      std::cout << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() << "\n";
    }
    return 0;
  }
  std::cerr << "usage: cg-restart restart N\n";
  return 2;
} catch (const coldgate::Error& e) {
  std::cerr << "coldgate: error: " << e.message() << "\n";
  return static_cast<int>(e.code());
}
CPP
PQXX_FLAGS=$(pkg-config --cflags --libs libpqxx libpq)
# The db module and those below it, each through its own include root, as the build links them.
g++ -std=c++20 -O2 -I"$BUILD/modules/db" -I"$BUILD/modules/config" -I"$BUILD/modules/canon" \
  -I"$BUILD/modules/util" "$WORK/driver.cpp" "$BUILD/libcoldgate_db.a" "$BUILD/libcoldgate_config.a" \
  "$BUILD/libcoldgate_canon.a" "$BUILD/libcoldgate_util.a" -o "$WORK/cg-db" \
  $PQXX_FLAGS -lfmt -lcrypto -lyaml-cpp -pthread

DRIVER="$WORK/cg-db"
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

echo "== restart (fast shutdown + start + accepting connections), 20 times =="
"$DRIVER" restart 20 | sort -n | awk '{a[NR]=$1} END {printf "restart ms: min %.0f  median %.0f  max %.0f\n", a[1], a[int((NR+1)/2)], a[NR]}'
