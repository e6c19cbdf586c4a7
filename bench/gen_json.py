#!/usr/bin/env python3
"""Writes a deterministic ~20 MB JSON document for bench/canon.sh.

Shape: many nested objects and arrays (about 1M array elements in total), member names out of
order, strings with non-ASCII text and escapes, integers, decimals and exponents.
Usage: gen_json.py OUT [TARGET_MB]
"""
import json
import random
import sys

WORDS = ["alpha", "beta", "gamma", "delta", "überprüfung", "naïve", "日本語", "中文字",
         "emoji 😀", "ñandú", "quote \" and \\ slash", "tab\tand\nnewline", "Ωμέγα", "zeta"]


def number(rng):
    kind = rng.randrange(6)
    if kind == 0:
        return rng.randrange(-10**6, 10**6)
    if kind == 1:
        return rng.randrange(10**15, 10**18)
    if kind == 2:
        return round(rng.uniform(-1000, 1000), rng.randrange(1, 6))
    if kind == 3:
        return rng.uniform(1e-9, 1e-6)
    if kind == 4:
        return rng.uniform(1e20, 1e30)
    return rng.random()


def text(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 4)))


def user(rng, i):
    return {
        "name": text(rng),
        "id": rng.randrange(10**9),
        "scores": [number(rng) for _ in range(rng.randrange(5, 20))],
        "tags": [rng.choice(WORDS) for _ in range(rng.randrange(1, 8))],
        "settings": {"theme": rng.choice(["dark", "light"]), "level": rng.randrange(10),
                     "flags": {"a": rng.random() < 0.5, "b": None, "ratio": number(rng)}},
        "history": [{"at": rng.randrange(10**9), "v": number(rng), "note": text(rng)}
                    for _ in range(rng.randrange(0, 4))],
        "matrix": [[rng.randrange(100) for _ in range(4)] for _ in range(rng.randrange(0, 3))],
    }


def main():
    out = sys.argv[1]
    target = int(float(sys.argv[2] if len(sys.argv) > 2 else 20) * 1_000_000)
    rng = random.Random(20240601)
    users, size, i = [], 0, 0
    while size < target:
        u = user(rng, i)
        users.append(u)
        size += len(json.dumps(u, ensure_ascii=False)) + 1
        i += 1
    doc = {"version": 3, "users": users, "meta": {"count": len(users), "generator": "bench/gen_json.py"}}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
