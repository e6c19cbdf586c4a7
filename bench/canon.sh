#!/usr/bin/env bash
# Benchmarks `coldgate canon` against `jq -S .` and Python's json on a deterministic ~20 MB
# document. Usage: bench/canon.sh [COLDGATE_BINARY]   (default: build-rel/coldgate, built when
# missing). Needs hyperfine, jq, python3 and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-build-rel/coldgate}
if [[ ! -x $bin ]]; then
  cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-rel --target coldgate
fi
"$bin" canon - <<<'{"ok":[2,1]}' >/dev/null || { echo "error: $bin has no working 'canon' subcommand" >&2; exit 3; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
doc=$work/doc.json
python3 bench/gen_json.py "$doc" 20
bytes=$(stat -c %s "$doc")
echo "input: $bytes bytes ($(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'))"

py='import json,sys; json.dump(json.load(open(sys.argv[1])), sys.stdout, sort_keys=True, indent=2)'
hyperfine -N --warmup 1 --runs 5 --export-json "$work/hyperfine.json" \
  -n coldgate "$bin canon $doc" \
  -n jq "jq -S . $doc" \
  -n python "python3 -c '$py' $doc" >&2

rss_kb() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
rss_coldgate=$(rss_kb "$bin" canon "$doc")
rss_jq=$(rss_kb jq -S . "$doc")
rss_python=$(rss_kb python3 -c "$py" "$doc")

python3 - "$work/hyperfine.json" "$bytes" "$rss_coldgate" "$rss_jq" "$rss_python" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
size = int(sys.argv[2]); rss = dict(zip(["coldgate", "jq", "python"], map(int, sys.argv[3:6])))
def m(name): return results[name]["mean"]
print(f"| tool | mean s | min s | max s | peak RSS MB |")
print(f"|---|---|---|---|---|")
for name in ["coldgate", "jq", "python"]:
    r = results[name]
    print(f"| {name} | {r['mean']:.3f} | {r['min']:.3f} | {r['max']:.3f} | {rss[name] / 1024:.1f} |")
print()
print(f"jq/coldgate: {m('jq') / m('coldgate'):.2f}x   python/coldgate: {m('python') / m('coldgate'):.2f}x   "
      f"coldgate RSS / input: {rss['coldgate'] * 1024 / size:.2f}x")
PY
