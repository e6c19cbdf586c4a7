#!/bin/sh
# A `command:` setup step: any program, given PG* variables and DATABASE_URL.
set -eu
psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -qc "insert into app_config (key, value) values ('feature.search', '{\"enabled\": true}')"
