#!/usr/bin/python3
"""The demo's application stage: the game server's start-up, as its ORM-backed code does it.

  /usr/bin/python3 demo/game_server.py OUT.json

1. The configuration document: demo/config_query.sql, the one query of 168 correlated
   subqueries, with the server's settings as they are (JIT on: no SET, as an ORM sends it).
2. The characters, loaded lazily per account as an ORM loads a relation: one query for the
   account ids, then one query per account (N+1).
3. OUT.json: the configuration's members plus "characters_by_account", written atomically
   (temp file + rename: a run that fails midway leaves no half-written document behind for
   the stage's `snapshot.from`). Deterministic: no timestamps; json.dumps sorts keys.

Connects through libpq's environment (PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE, which coldgate
sets), or DATABASE_URL when given. Appends its own metrics to $COLDGATE_METRICS when set.
Any failure: one line on stderr, exit 1. Needs Debian's python3-psycopg2 (ci/setup.sh).
"""
import contextlib
import json
import os
import sys

PROG = "game_server.py"


def fail(what):
    # psycopg2's messages span lines (DETAIL, HINT, "Is the server running…"): keep one.
    print(f"{PROG}: error: {' '.join(str(what).split())}", file=sys.stderr)
    sys.exit(1)


try:
    import psycopg2
except ImportError:
    fail("psycopg2 is missing: apt-get install python3-psycopg2 (bash ci/setup.sh installs it)")


def load(out_path):
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "config_query.sql"), encoding="utf-8") as f:
        config_query = f.read()

    with psycopg2.connect(os.environ.get("DATABASE_URL", "")) as conn:
        with conn.cursor() as cur:
            cur.execute(config_query)  # no parameters: psycopg2 sends the text as it is
            row = cur.fetchone()
            config = row[0] if row else None  # psycopg2 decodes a json column to a dict
            if not isinstance(config, dict):
                fail("config_query.sql did not return a JSON object")

            cur.execute("select id from accounts order by id")
            account_ids = [row[0] for row in cur.fetchall()]
            characters = {}
            for account_id in account_ids:
                cur.execute(
                    "select id, name, class_id, race_id, level, zone_id from characters"
                    " where account_id = %s order by id",
                    (account_id,),
                )
                names = [c.name for c in cur.description]
                characters[str(account_id)] = [dict(zip(names, row)) for row in cur.fetchall()]
    conn.close()  # `with` only ends the transaction

    # The config's members at the top level, so the snapshot reads like config-load's plus one
    # member (and git stores the two as deltas of each other).
    if "characters_by_account" in config:
        fail('config_query.sql already has a member "characters_by_account"')
    doc = dict(config, characters_by_account=characters)

    os.makedirs(os.path.dirname(out_path) or ".", exist_ok=True)
    # A temp name of this process's own: two runs of the demo in one checkout write one out_path.
    tmp = f"{out_path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            # dumps, not dump: dump streams through the pure-Python encoder, ~3x slower.
            f.write(json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":")))
            f.write("\n")
        os.replace(tmp, out_path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

    metrics = os.environ.get("COLDGATE_METRICS")
    if metrics:
        with open(metrics, "a", encoding="utf-8") as f:
            for name, value, unit in (
                ("accounts_loaded", len(account_ids), "count"),
                ("characters_loaded", sum(len(c) for c in characters.values()), "count"),
                ("document_bytes", os.path.getsize(out_path), "bytes"),
            ):
                f.write(json.dumps({"metric": name, "value": value, "unit": unit}) + "\n")


def main():
    if len(sys.argv) != 2:
        fail(f"usage: {PROG} OUT.json")
    try:
        load(sys.argv[1])
    except (psycopg2.Error, OSError) as e:
        fail(e)
    except Exception as e:  # anything else too, as one line: the stage's Why shows it
        fail(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
