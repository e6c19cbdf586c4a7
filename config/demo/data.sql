-- Hand-written rows of the demo: the realms the server hosts and a few accounts with their
-- characters. They are part of the big config document (members "realms" and "accounts"), so
-- editing one value here changes the snapshots at exactly that path, e.g. realm 2's xp rate:
--   /realms/1/rates/xp   (realm 2 is element 1 once the array is sorted by "id"), and in
--   account-lookup /realm/xp_rate (account corwin plays on realm 2).
-- `account-lookup` reads one account by login from these tables.

create table realms (
  id          integer primary key,
  name        text not null unique,
  region      text not null,
  kind        text not null,          -- pve | pvp | rp
  max_players integer not null,
  motd        text not null
);

create table realm_rates (
  realm_id    integer primary key references realms,
  xp          numeric(4,2) not null,
  loot        numeric(4,2) not null,
  gold        numeric(4,2) not null,
  reputation  numeric(4,2) not null
);

create table accounts (
  id          integer primary key,
  login       text not null unique,
  realm_id    integer not null references realms,
  role        text not null,          -- player | moderator | game_master | admin
  locale      text not null,
  banned      boolean not null default false
);

create table characters (
  id          integer primary key,
  account_id  integer not null references accounts,
  name        text not null,
  class_id    integer not null references classes,
  race_id     integer not null references races,
  level       integer not null,
  zone_id     integer not null references zones
);
create index on characters (account_id);

insert into realms (id, name, region, kind, max_players, motd) values
  (1, 'Ashvale',     'eu', 'pve', 5000, 'Welcome to Ashvale! Double reputation this weekend.'),
  (2, 'Frostreach',  'eu', 'pvp', 4000, 'Frostreach: battlegrounds open every hour.'),
  (3, 'Greyhaven',   'us', 'rp',  3000, 'Greyhaven is a roleplaying realm. Stay in character.'),
  (4, 'Ironhold',    'us', 'pve', 6000, 'Maintenance on Tuesday 06:00-08:00 UTC.'),
  (5, 'Jadecliff',   'ap', 'pvp', 2500, 'Jadecliff: new world event "Lantern Festival".');

insert into realm_rates (realm_id, xp, loot, gold, reputation) values
  (1, 1.00, 1.00, 1.00, 2.00),
  (2, 1.50, 1.00, 1.00, 1.00),
  (3, 1.00, 1.00, 1.00, 1.00),
  (4, 1.00, 1.25, 1.00, 1.00),
  (5, 2.00, 1.50, 1.50, 1.50);

insert into accounts (id, login, realm_id, role, locale, banned) values
  (1, 'ada',      1, 'admin',       'enUS', false),
  (2, 'brena',    1, 'player',      'deDE', false),
  (3, 'corwin',   2, 'player',      'enUS', false),
  (4, 'dagna',    2, 'moderator',   'frFR', false),
  (5, 'elric',    3, 'player',      'enUS', true),
  (6, 'fenna',    4, 'game_master', 'esES', false),
  (7, 'garrick',  4, 'player',      'enUS', false),
  (8, 'hilde',    5, 'player',      'koKR', false);

insert into characters (id, account_id, name, class_id, race_id, level, zone_id) values
  (1,  1, 'Adalind',   3,  1, 60, 12),
  (2,  1, 'Adamant',   7,  4, 42, 33),
  (3,  2, 'Brenhild',  1,  2, 58,  7),
  (4,  3, 'Corvax',    5,  9, 60, 81),
  (5,  3, 'Corra',    11,  3, 17,  2),
  (6,  4, 'Dagrun',    2,  6, 60, 45),
  (7,  5, 'Elvar',     9, 12, 33, 19),
  (8,  6, 'Fenwick',   4,  5, 60, 60),
  (9,  7, 'Garrow',    6,  8, 51, 27),
  (10, 7, 'Gilda',    12, 14, 12,  3),
  (11, 8, 'Hyeon',     8, 10, 60, 99),
  (12, 8, 'Haneul',   10, 16, 44, 71);
