#!/usr/bin/env bash
# Reproducibility of the statement verdicts (docs/BENCHMARKS.md, "statement verdicts"): two
# pull requests of a small psycopg2 application on 100,000 books — one adds a per-row statement
# (an N+1: 40 calls on a page of 101), one drops the index a lookup needs — each measured N
# times through `coldgate ab --no-cache` and through `coldgate stack --no-cache`, once with the
# extra interleaved runs of time verdicts near their threshold (gate.max_extra_runs, default 10)
# and once without them (max_extra_runs: 0). Prints, per pair, command and mode: the distinct
# statement verdict sets (the target is one), the exit codes, and per gated time metric how
# many runs gave each verdict (a flip is a run whose verdict is not the most common one).
# Usage: bench/statement_verdicts.sh [COLDGATE_BINARY] [N]   (default build/coldgate; N=10)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/build/coldgate}
N=${2:-10}
[[ -x $BIN ]] || "$ROOT/ci/build.sh" release coldgate
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
WORK=$(mktemp -d /tmp/coldgate-stmt-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
chmod 755 "$WORK"

make_repo() {  # $1: folder, $2: max_extra_runs
  mkdir -p "$1"
  cd "$1"
  git init -q -b main
  git config user.email bench@localhost
  git config user.name bench
  cat >coldgate.yaml <<EOF
version: 1
database: { provider: local }
setup: [ { sql: schema.sql }, { analyze: true } ]
defaults: { runs: 3, warm: 0 }
stages:
  - name: page
    command: [/usr/bin/python3, app.py]
gate: { max_extra_runs: $2 }
EOF
  cat >schema.sql <<'EOF'
CREATE TABLE author (id int PRIMARY KEY, name text);
INSERT INTO author SELECT g, 'author ' || g FROM generate_series(1, 100) g;
CREATE TABLE book (id int PRIMARY KEY, isbn text NOT NULL, author_id int, title text);
INSERT INTO book SELECT g, 'isbn-' || g, 1 + g % 100, 'title ' || g FROM generate_series(1, 100000) g;
CREATE TABLE review (id int PRIMARY KEY, book_id int, stars int);
INSERT INTO review SELECT g, 1 + g % 40, 1 + g % 5 FROM generate_series(1, 2000) g;
CREATE INDEX review_book ON review (book_id);
CREATE INDEX book_isbn ON book (isbn);
EOF
  printf 'coldgate-out/\n' >.gitignore
  app 0 >app.py
  git add -A && git commit -qm base
  git checkout -qb n1 && app 1 >app.py && git commit -qam "n+1" && git checkout -q main
  git checkout -qb noindex && sed -i '/book_isbn/d' schema.sql && git commit -qam "drop index"
  git checkout -q main
}
app() {  # $1: 1 to count the reviews of each of 40 books
  cat <<'EOF'
import os, psycopg2
conn = psycopg2.connect(os.environ['DATABASE_URL'])
cur = conn.cursor()
for i in range(1, 101):
    cur.execute('select name from author where id = %s', (i,))
    cur.fetchall()
cur.execute('select title from book where isbn = %s', ('isbn-4242',))
print(cur.fetchall())
EOF
  if [[ $1 == 1 ]]; then
    printf '%s\n' "for b in range(1, 41):" \
      "    cur.execute('select count(*) from review where book_id = %s', (b,))" \
      "    cur.fetchall()"
  fi
  echo "conn.close()"
}
make_repo "$WORK/extra" 10
make_repo "$WORK/none" 0

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "coldgate commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo none); N=$N"

# One measurement: $1 pair (n1|noindex), $2 command (ab|stack), $3 mode (extra|none), $4 index.
measure() {
  local pair=$1 how=$2 mode=$3 i=$4 out=$WORK/res/$1-$2-$3-$4 rc=0
  mkdir -p "$out"
  cd "$WORK/$mode"
  if [[ $how == ab ]]; then
    git checkout -q "$pair"
    CI= "$BIN" ab --base main --no-cache --no-trend --out "$out/o" >/dev/null 2>"$out/err" || rc=$?
    cp "$out/o/results.json" "$out/results.json"
    git checkout -q main
  else
    CI= "$BIN" stack main "$pair" --no-cache --out "$out/o" >/dev/null 2>"$out/err" || rc=$?
    cp "$out/o/stack/1-$pair/results.json" "$out/results.json"
  fi
  echo "$rc" >"$out/rc"
}
for pair in n1 noindex; do
  for how in ab stack; do
    for mode in extra none; do
      start=$SECONDS
      for ((i = 1; i <= N; i++)); do measure "$pair" "$how" "$mode" "$i"; done
      echo "$pair $how $mode: $N runs in $((SECONDS - start)) s" >&2
    done
  done
done

python3 - "$WORK/res" "$N" <<'EOF'
import collections, json, os, sys
res, n = sys.argv[1], int(sys.argv[2])
print("\n| pair | command | extra runs | exit codes | statement verdict sets | time verdicts per metric (runs) | runs with extra runs |")
print("|---|---|---|---|---:|---|---:|")
for pair in ("n1", "noindex"):
    for how in ("ab", "stack"):
        for mode in ("extra", "none"):
            sets, codes, times, extra = collections.Counter(), collections.Counter(), {}, 0
            for i in range(1, n + 1):
                d = os.path.join(res, f"{pair}-{how}-{mode}-{i}")
                codes[open(os.path.join(d, "rc")).read().strip()] += 1
                r = json.load(open(os.path.join(d, "results.json")))
                g = r.get("gate") or {}
                sets[tuple(sorted((s["query"], s["verdict"]) for s in g.get("statements", [])))] += 1
                had = False
                for m in g.get("metrics", []):
                    if m["metric"].endswith("_ms"):
                        times.setdefault(m["metric"], collections.Counter())[m["verdict"]] += 1
                    had |= bool(m.get("extra_runs"))
                extra += had
            flips = sum(sum(c.values()) - max(c.values()) for c in times.values())
            tv = "; ".join(f"{k} " + ", ".join(f"{v} {c}" for v, c in sorted(cnt.items()))
                           for k, cnt in sorted(times.items()) if len(cnt) > 1 or "same" not in cnt)
            codes_text = ", ".join(f"{c}× {k}" for k, c in sorted(codes.items()))
            print(f"| {pair} | {how} | {mode} | {codes_text} | {len(sets)} | {tv or 'all same'} (flips: {flips}) | {extra} |")
            if len(sets) > 1:
                for s, c in sets.items():
                    print(f"    {c}×: {s}", file=sys.stderr)
for pair in ("n1", "noindex"):
    for how in ("ab", "stack"):
        r = json.load(open(os.path.join(res, f"{pair}-{how}-extra-1", "results.json")))
        for s in r["gate"]["statements"]:
            if s["verdict"] != "same":
                print(f"{pair} {how}: {s['verdict']}: {s['query']}: {s['reason']}")
EOF
