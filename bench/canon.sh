#!/usr/bin/env bash
# Benchmarks `coldgate canon` against `jq -S .` and Python's json on a deterministic ~20 MB
# document. Usage: bench/canon.sh [COLDGATE_BINARY [BASELINE_BINARY]]   (default:
# build-rel/coldgate, built when missing; a baseline, e.g. a build of main, is timed in the same
# run). With CANON_BENCH_FLOOR=1 also times nlohmann's SAX parser alone with a handler that does
# nothing (compiled here with c++ -O2): the floor for any canon built on it.
# Needs hyperfine, jq, python3 and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-build-rel/coldgate}
baseline=${2:-}
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
extra=()
if [[ -n $baseline ]]; then extra+=(-n baseline "$baseline canon $doc"); fi
if [[ ${CANON_BENCH_FLOOR:-0} == 1 ]]; then
  cat >"$work/floor.cpp" <<'CPP'
// nlohmann's SAX parser over the whole file with a handler that does nothing.
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
struct Null {
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(std::int64_t) { return true; }
  bool number_unsigned(std::uint64_t) { return true; }
  bool number_float(double, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool key(std::string&) { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
};
int main(int, char** argv) {
  std::ifstream in(argv[1], std::ios::binary | std::ios::ate);
  std::string text(static_cast<std::size_t>(in.tellg()), '\0');
  in.seekg(0).read(text.data(), static_cast<std::streamsize>(text.size()));
  Null sax;
  return nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &sax) ? 0 : 1;
}
CPP
  c++ -std=c++20 -O2 -DNDEBUG -o "$work/floor" "$work/floor.cpp"
  extra+=(-n nlohmann-floor "$work/floor $doc")
fi
hyperfine -N --warmup 1 --runs "${CANON_BENCH_RUNS:-5}" --export-json "$work/hyperfine.json" \
  -n coldgate "$bin canon $doc" "${extra[@]}" \
  -n jq "jq -S . $doc" \
  -n python "python3 -c '$py' $doc" >&2

rss_kb() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
rss_coldgate=$(rss_kb "$bin" canon "$doc")
rss_baseline=0
if [[ -n $baseline ]]; then rss_baseline=$(rss_kb "$baseline" canon "$doc"); fi
rss_jq=$(rss_kb jq -S . "$doc")
rss_python=$(rss_kb python3 -c "$py" "$doc")

python3 - "$work/hyperfine.json" "$bytes" "$rss_coldgate" "$rss_jq" "$rss_python" "$rss_baseline" <<'PY'
import json, statistics, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
size = int(sys.argv[2])
rss = dict(zip(["coldgate", "jq", "python", "baseline"], map(int, sys.argv[3:7])))
def med(name): return statistics.median(results[name]["times"])
def cpu(name): return results[name]["user"] + results[name]["system"]
print("| tool | mean s | median s | min s | max s | user+sys s | peak RSS MB |")
print("|---|---|---|---|---|---|---|")
for name in ["coldgate", "baseline", "nlohmann-floor", "jq", "python"]:
    if name not in results: continue
    r = results[name]
    mem = f"{rss[name] / 1024:.1f}" if rss.get(name) else "-"
    print(f"| {name} | {r['mean']:.3f} | {med(name):.3f} | {r['min']:.3f} | {r['max']:.3f} | {cpu(name):.3f} | {mem} |")
print()
for name in ["coldgate", "baseline"]:
    if name not in results: continue
    r = results[name]
    print(f"{name}: jq/{name} median {med('jq') / med(name):.2f}x, min {results['jq']['min'] / r['min']:.2f}x, "
          f"user+sys {cpu('jq') / cpu(name):.2f}x; python/{name} median {med('python') / med(name):.2f}x; "
          f"RSS / input {rss[name] * 1024 / size:.2f}x")
PY
