-- Hand-written rows of the demo: the realms the server hosts and 24 accounts with their
-- characters. They are part of the big config document (members "realms" and "accounts"), so
-- editing one value here changes the snapshots at exactly that path, e.g. realm 2's xp rate:
--   /realms/1/rates/xp   (realm 2 is element 1 once the array is sorted by "id"), and in
--   account-lookup /realm/xp_rate (account corwin plays on realm 2).
-- At least 20 accounts: the game-server stage loads characters with one query per account, and
-- 20 or more calls of one statement in one run is what makes that N+1 stand out.
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
  (1,  'ada',     1, 'admin',       'enUS', false),
  (2,  'brena',   1, 'player',      'deDE', false),
  (3,  'corwin',  2, 'player',      'enUS', false),
  (4,  'dagna',   2, 'moderator',   'frFR', false),
  (5,  'elric',   3, 'player',      'enUS', true),
  (6,  'fenna',   4, 'game_master', 'esES', false),
  (7,  'garrick', 4, 'player',      'enUS', false),
  (8,  'hilde',   5, 'player',      'koKR', false),
  (9,  'ivo',     1, 'player',      'itIT', false),
  (10, 'jorunn',  1, 'player',      'nbNO', false),
  (11, 'kael',    2, 'player',      'enGB', false),
  (12, 'liora',   2, 'player',      'ptBR', false),
  (13, 'magnus',  3, 'moderator',   'svSE', false),
  (14, 'nessa',   3, 'player',      'enUS', false),
  (15, 'osric',   4, 'player',      'enUS', true),
  (16, 'perrin',  4, 'player',      'frFR', false),
  (17, 'quilla',  5, 'player',      'zhTW', false),
  (18, 'rurik',   5, 'player',      'ruRU', false),
  (19, 'sigrun',  1, 'player',      'deDE', false),
  (20, 'tamsin',  2, 'game_master', 'enGB', false),
  (21, 'ulric',   3, 'player',      'plPL', false),
  (22, 'vesna',   4, 'player',      'ruRU', false),
  (23, 'wulf',    5, 'player',      'deDE', false),
  (24, 'yrsa',    1, 'player',      'nbNO', false);

insert into characters (id, account_id, name, class_id, race_id, level, zone_id) values
  (1,   1, 'Adalind',   3,  1, 60,  12),
  (2,   1, 'Adamant',   7,  4, 42,  33),
  (3,   2, 'Brenhild',  1,  2, 58,   7),
  (4,   3, 'Corvax',    5,  9, 60,  81),
  (5,   3, 'Corra',    11,  3, 17,   2),
  (6,   4, 'Dagrun',    2,  6, 60,  45),
  (7,   5, 'Elvar',     9, 12, 33,  19),
  (8,   6, 'Fenwick',   4,  5, 60,  60),
  (9,   7, 'Garrow',    6,  8, 51,  27),
  (10,  7, 'Gilda',    12, 14, 12,   3),
  (11,  8, 'Hyeon',     8, 10, 60,  99),
  (12,  8, 'Haneul',   10, 16, 44,  71),
  (13,  9, 'Ivara',     6,  2, 38,  14),
  (14, 10, 'Jorvik',    1,  7, 60,  88),
  (15, 10, 'Juna',      5,  4, 21,   9),
  (16, 11, 'Kaelthas',  7,  3, 60,  52),
  (17, 12, 'Lior',     10, 11, 47,  36),
  (18, 13, 'Magna',     2,  2, 60,  64),
  (19, 14, 'Nesryn',    3, 13, 29,  21),
  (20, 15, 'Oswin',     4,  5,  9,   1),
  (21, 16, 'Perrault', 11,  1, 55,  77),
  (22, 16, 'Pip',       9,  9, 14,   5),
  (23, 17, 'Qin',       8, 15, 60, 103),
  (24, 18, 'Rurika',    1, 10, 36,  40),
  (25, 19, 'Sigrid',   12,  2, 60,  58),
  (26, 20, 'Tamber',    5,  6, 60, 116),
  (27, 21, 'Ulla',      6, 12, 25,  17),
  (28, 22, 'Vesper',    8, 14, 52,  91),
  (29, 23, 'Wulfgar',   1,  5, 60,  70),
  (30, 23, 'Wren',      3,  4, 18,  11);
