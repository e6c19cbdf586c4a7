#!/usr/bin/env python3
"""Deterministic pair of JSON documents for bench/diff.sh.

gen_diff.py A.json B.json [--mb 20] [--changed 0.01] [--seed 1]

A holds `items`, an array of records sorted by id, until it is about --mb megabytes in
canonical form. B is A with a fraction --changed of its scalar values altered (the same
records, so the diff is sparse); with --changed 1 B is generated from another seed and other
ids instead, so the two documents are unrelated (no value line in common: the worst case). Output is already canonical (sorted keys, two-space
indent, integer and string values only); bench/diff.sh still runs it through coldgate canon.
"""
import argparse
import json
import random

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]


def record(rng, i):
    return {
        "active": rng.random() < 0.5,
        "id": i,
        "name": f"{rng.choice(WORDS)}-{rng.randrange(1_000_000)}",
        "owner": {"email": f"user{rng.randrange(100_000)}@example.com",
                  "team": rng.choice(WORDS)},
        "score": rng.randrange(1_000_000),
        "tags": sorted(rng.sample(WORDS, 3)),
        "weight": rng.randrange(10_000),
    }


def document(seed, target_bytes, first_id=0):
    rng = random.Random(seed)
    items, size, i = [], 0, 0
    while size < target_bytes:
        r = record(rng, first_id + i)
        items.append(r)
        size += 296  # canonical size of one record, near enough
        i += 1
    return {"generated": "coldgate bench/gen_diff.py", "items": items}


def mutate(doc, fraction, seed):
    rng = random.Random(seed)
    for r in doc["items"]:
        for key in ("active", "name", "score", "weight"):
            if rng.random() < fraction:
                v = r[key]
                r[key] = (not v) if isinstance(v, bool) else (v + "-x" if isinstance(v, str) else v + 1)
        if rng.random() < fraction:
            r["owner"]["team"] = r["owner"]["team"] + "-x"
    return doc


def write(doc, path):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(doc, f, sort_keys=True, indent=2, ensure_ascii=False, separators=(",", ": "))
        f.write("\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--mb", type=float, default=20)
    p.add_argument("--changed", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    target = int(args.mb * 1_000_000)
    write(document(args.seed, target), args.a)
    if args.changed >= 1:
        b = document(args.seed + 1000, target, first_id=10_000_000)
    else:
        b = mutate(document(args.seed, target), args.changed, args.seed + 7)
    write(b, args.b)


if __name__ == "__main__":
    main()
