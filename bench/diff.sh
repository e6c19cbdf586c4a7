#!/usr/bin/env bash
# Benchmark of `coldgate diff` on two pairs of ~20 MB canonical documents: 1% of the values
# changed, and 100% (unrelated documents, no value line in common).
#
#   bench/diff.sh [BINARY]        BINARY defaults to build-rel/coldgate, a Release build:
#   cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build-rel
#
# Needs python3, hyperfine and GNU time (/usr/bin/time; `apt-get install -y time`).
# Set BENCH_DIR to keep the generated documents (default: a temp folder, removed at exit).
set -euo pipefail

bin=${1:-build-rel/coldgate}
here=$(cd "$(dirname "$0")" && pwd)
if [[ -n "${BENCH_DIR:-}" ]]; then
  work=$BENCH_DIR
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

[[ -x "$bin" ]] || { echo "bench/diff.sh: $bin is not an executable (build it first)" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "bench/diff.sh: hyperfine is missing" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench/diff.sh: /usr/bin/time is missing (apt-get install -y time)" >&2; exit 2; }

# `coldgate diff` exits 1 when the documents differ; anything else is a failure.
"$bin" diff <(echo '{"a":1}') <(echo '{"a":2}') >/dev/null && status=0 || status=$?
if [[ $status -ne 1 ]]; then
  echo "bench/diff.sh: '$bin diff' does not work yet (exit $status)" >&2
  exit 2
fi

echo "== generating documents in $work"
python3 "$here/gen_diff.py" "$work/a1.raw.json" "$work/b1.raw.json" --mb 20 --changed 0.01 --seed 1
python3 "$here/gen_diff.py" "$work/a100.raw.json" "$work/b100.raw.json" --mb 20 --changed 1 --seed 1
for f in a1 b1 a100 b100; do
  "$bin" canon "$work/$f.raw.json" >"$work/$f.json"
done
ls -l "$work"/*.json | grep -v raw
wc -l "$work/a1.json" "$work/a100.json"

echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

echo "== time (hyperfine; exit 1 = 'they differ' is expected, hence -i)"
hyperfine --warmup 1 --runs 10 -i --export-markdown "$work/diff.md" \
  -n "diff 1% changed" "$bin diff $work/a1.json $work/b1.json" \
  -n "diff 100% changed" "$bin diff $work/a100.json $work/b100.json"

echo "== peak RSS (KiB, GNU time %M)"
for pair in 1 100; do
  rss=$( { /usr/bin/time -f %M "$bin" diff "$work/a$pair.json" "$work/b$pair.json" >/dev/null || true; } 2>&1 | tail -1)
  echo "diff ${pair}% changed: ${rss} KiB"
done
