#!/bin/sh
# A command stage: loads the plugin states the way the application would and writes them as JSON
# to the file given as $1 (the stage's `snapshot.from`).
set -eu
out=${1:?usage: measure-plugins.sh OUT.json}
mkdir -p "$(dirname "$out")"
psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -qAtc \
  "select coalesce(jsonb_agg(jsonb_build_object('id', plugin, 'state', state)), '[]') from plugin_state" > "$out"
