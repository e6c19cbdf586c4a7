-- The stage under test: the whole configuration as one JSON document.
-- $1: the oldest audit entry to include.
select jsonb_build_object(
  'config', (select jsonb_object_agg(key, jsonb_build_object('value', value, 'updated_at', updated_at))
             from app_config),
  'log',    (select coalesce(jsonb_agg(message order by id), '[]') from audit_log where id >= $1),
  'plugins', (select jsonb_agg(jsonb_build_object('id', plugin, 'state', state)) from plugin_state)
)
