-- One account by login ($1) with its realm and characters, names resolved: what the login
-- server loads per request. A handful of rows, far below jit_above_cost.
select json_build_object(
  'id', a.id,
  'login', a.login,
  'role', a.role,
  'locale', a.locale,
  'banned', a.banned,
  'realm', (select json_build_object('id', r.id, 'name', r.name, 'kind', r.kind,
                                     'xp_rate', x.xp, 'loot_rate', x.loot)
            from realms r join realm_rates x on x.realm_id = r.id
            where r.id = a.realm_id),
  'characters', (select coalesce(json_agg(json_build_object(
                    'id', ch.id, 'name', ch.name, 'level', ch.level,
                    'class', cl.name, 'race', ra.name, 'zone', z.name) order by ch.id), '[]')
                 from characters ch
                 join classes cl on cl.id = ch.class_id
                 join races ra on ra.id = ch.race_id
                 join zones z on z.id = ch.zone_id
                 where ch.account_id = a.id)
)
from accounts a
where a.login = $1
