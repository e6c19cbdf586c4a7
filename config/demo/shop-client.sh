#!/bin/sh
# The demo's command stage: a shop client that loads the vendor catalog the way the game client
# would — one psql round trip — and writes it as JSON to the file given as $1 (the stage's
# `snapshot.from`). It appends its own metrics, one JSON line each, to $COLDGATE_METRICS.
#
# Runs with cwd = the config's folder and PGHOST PGPORT PGUSER PGDATABASE DATABASE_URL set.
# Deterministic except "fetched_at", which the stage redacts.
set -eu
out=${1:?usage: shop-client.sh OUT.json}
mkdir -p "$(dirname "$out")"
# A temp name of this process's own: two runs of the demo in one checkout write the same $out.
tmp="$out.tmp-$$"
trap 'rm -f "$tmp"' EXIT

sql() { psql -XAtq -v ON_ERROR_STOP=1 ${DATABASE_URL:+"$DATABASE_URL"} -c "$1"; }

sql "select json_build_object(
  'fetched_at', to_char(now() at time zone 'utc', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
  'shops', (select json_agg(json_build_object(
      'id', s.id, 'name', s.name, 'zone', z.name, 'currency', s.currency,
      'items', (select json_agg(json_build_object(
          'item_id', i.id, 'name', i.name, 'rarity', i.rarity, 'price', si.price,
          'stock', si.stock) order by si.price, si.id)
        from shop_items si join items i on i.id = si.item_id
        where si.shop_id = s.id)) order by s.id)
    from shops s join zones z on z.id = s.zone_id))" > "$tmp"
mv "$tmp" "$out"

items=$(sql "select count(*) from shop_items")
shops=$(sql "select count(*) from shops")
bytes=$(wc -c < "$out" | tr -d ' ')
if [ -n "${COLDGATE_METRICS:-}" ]; then
  {
    printf '{"metric":"catalog_items","value":%s,"unit":"count"}\n' "$items"
    printf '{"metric":"catalog_shops","value":%s,"unit":"count"}\n' "$shops"
    printf '{"metric":"catalog_bytes","value":%s,"unit":"bytes"}\n' "$bytes"
  } >> "$COLDGATE_METRICS"
fi
