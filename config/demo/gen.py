#!/usr/bin/env python3
"""Generates the demo workload's schema.sql and config_query.sql from one catalog, and
players.psql, which makes the accounts of each data scale (psql's :scale).

The demo is shaped like the case that inspired coldgate: a game server's configuration kept in
well over a hundred tables and loaded by ONE query built from hundreds of correlated subqueries
(json_build_object / json_agg, nested two levels). Big enough that PostgreSQL's planner crosses
every JIT threshold and compiles over a thousand functions, small enough that without JIT the
load takes a fraction of a second.

Both outputs are committed; python is only needed to change the catalog:

    python3 config/demo/gen.py          # rewrites config/demo/schema.sql, config_query.sql
                                        # and players.psql (the players of each data scale)

Every value is a deterministic function of the row's id (no random()), so every load of the demo
yields the same document, byte for byte.

Why the planner's estimate (~690k) is far above what the query costs to run (~0.6 s): the
"sparse" child tables (`every=N`: only every Nth parent row has rows, but then many) are
physically scattered (loaded in child order, as if edited for years) with fillfactor 10. Per
correlated call the planner expects average-many rows, each on its own page at
random_page_cost; the executor mostly finds none. The dense child tables stay clustered by
parent, so their index scans are cheap in both estimate and reality.
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))

# Word pools for readable names. A `name:POOL` column is "<adjective> <noun>" from these pools.
POOLS = {
    "adj": "Iron Steel Mithril Ancient Cursed Blessed Runed Shadow Ember Frost Storm Gilded "
           "Hollow Verdant Obsidian Radiant Savage Silent".split(),
    "gear": "Sword Axe Bow Staff Dagger Mace Shield Helm Gauntlets Boots Cloak Ring Amulet Tome "
            "Lantern Spear".split(),
    "quest": "Lost Caravan,Broken Seal,Wolf Problem,Missing Miner,Drowned Bell,Last Ember,"
             "Silent Choir,Goblin Tax,Sunken Crown,Burning Orchard,Rat King,Pale Rider".split(","),
    "person": "Aldric Brena Corwin Dagna Elric Fenna Garrick Hilde Isolde Joran Kael Lyra Maren "
              "Nils Orla Perrin".split(),
    "trade": "Smith Innkeeper Guard Fisher Alchemist Scholar Hunter Priest Merchant Farmer "
             "Miner Bard".split(),
    "beast": "Wolf Boar Spider Wraith Golem Drake Troll Harpy Ghoul Basilisk Kobold Wyvern".split(),
    "place": "Ashvale Brightwater Coldmoor Duskwood Emberfall Frostreach Greyhaven Highmarsh "
             "Ironhold Jadecliff Kingsbarrow Lowmere".split(),
    "magic": "Fire Frost Arcane Holy Nature Shadow Lightning Earth Blood Spirit".split(),
    "verb": "Strike Bolt Nova Ward Surge Veil Brand Lance Pulse Aura Shout Rend".split(),
    "thing": "Banner Crest Lantern Totem Relic Sigil Chalice Idol Horn Crown".split(),
}


@dataclass
class Col:
    name: str
    sqltype: str
    expr: str  # SQL expression of `g` (this row's id) and, in child tables, `p` and `k`


@dataclass
class Table:
    name: str
    key: str           # JSON member name in the document
    cols: list[Col]
    rows: int = 0      # parents: row count
    per_parent: int = 0  # children: 1..per_parent rows per parent row (deterministic)
    every: int = 1     # children: only every Nth parent row has any (the rest get [])
    fk: str = ""       # children: the column that points at the parent
    order_by: str = ""  # children whose order matters: json_agg(... order by <this>)
    children: list["Table"] = field(default_factory=list)


_salt = 0


def _next():
    global _salt
    _salt += 1
    primes = [7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83]
    return primes[_salt % len(primes)], (_salt * 7919) % 1009


def sql_list(words):
    return "array[" + ",".join("'" + w.replace("'", "''") + "'" for w in words) + "]"


def pick(words, p, s):
    return f"({sql_list(words)})[1 + (g * {p} + {s}) % {len(words)}]"


PARENTS: dict[str, Table] = {}


def col(spec: str) -> Col:
    """`name kind[:arg]` → a column with a deterministic generator expression."""
    name, kind = spec.split(" ", 1)
    kind, _, arg = kind.partition(":")
    p, s = _next()
    if kind == "int":
        lo, hi = (int(x) for x in re.fullmatch(r"(-?\d+)-(-?\d+)", arg).groups())
        return Col(name, "integer", f"{lo} + (g * {p} + {s}) % {hi - lo + 1}")
    if kind == "num":  # one decimal
        lo, hi = (int(x) for x in re.fullmatch(r"(-?\d+)-(-?\d+)", arg).groups())
        return Col(name, "numeric(8,1)", f"{lo} + ((g * {p} + {s}) % {(hi - lo) * 10 + 1}) / 10.0")
    if kind == "pct":  # a chance with three decimals
        return Col(name, "numeric(6,3)", f"((g * {p} + {s}) % 1001) / 1000.0")
    if kind == "bool":
        return Col(name, "boolean", f"(g * {p} + {s}) % {int(arg or 3)} = 0")
    if kind == "enum":
        return Col(name, "text", pick(arg.split("|"), p, s))
    if kind == "name":  # two pools: "adj+gear"
        a, b = arg.split("+")
        p2, s2 = _next()
        return Col(name, "text", f"{pick(POOLS[a], p, s)} || ' ' || {pick(POOLS[b], p2, s2)}")
    if kind == "text":  # a template with %s = id
        return Col(name, "text", "format(" + "'" + arg.replace("'", "''") + "', g)")
    if kind == "ref":  # a reference to another family's parent table
        target = PARENTS[arg]
        return Col(name, "integer", f"1 + (g * {p} + {s}) % {target.rows}")
    if kind == "step":  # position among siblings
        return Col(name, "integer", "k")
    raise SystemExit(f"gen.py: unknown column kind {kind!r} in {spec!r}")


def cols(*specs):
    return [col(s) for s in specs]


def parent(name, rows, *specs, key=None):
    t = Table(name, key or name, [Col("id", "integer", "g")] + cols(*specs), rows=rows)
    PARENTS[name] = t
    return t


def child(t: Table, name, key, per_parent, *specs, order_by="", every=1):
    fk = re.sub(r"ies$", "y", re.sub(r"sses$", "ss", t.name))
    fk = (fk[:-1] if fk.endswith("s") and not fk.endswith("ss") else fk) + "_id"
    c = Table(name, key, [Col("id", "integer", "g")] + cols(*specs), per_parent=per_parent,
              fk=fk, order_by=order_by, every=every)
    t.children.append(c)
    return c


# ---------------------------------------------------------------------------------------------
# The catalog. Families are listed in dependency order (ref: needs the target declared first).
# ---------------------------------------------------------------------------------------------

def catalog():
    z = parent("zones", 120, "name name:adj+place", "min_level int:1-60", "max_level int:5-70",
               "climate enum:temperate|arid|arctic|swamp|volcanic|coastal", "pvp bool:4",
               "map_file text:maps/zone_%s.map")
    child(z, "zone_subareas", "subareas", 6, "name name:adj+place", "x int:0-4096", "y int:0-4096",
          "radius int:16-512", "safe bool:5")
    child(z, "zone_portals", "portals", 3, "target_zone_id ref:zones", "x int:0-4096",
          "y int:0-4096", "min_level int:1-60", "requires_key bool:6")
    child(z, "zone_weather", "weather", 4, "kind enum:clear|rain|storm|fog|snow|ash|sandstorm",
          "chance pct", "min_duration_s int:60-1800", "max_duration_s int:600-7200")
    child(z, "zone_music_tracks", "music", 4, "track text:music/zone_theme_%s.ogg",
          "mood enum:calm|tense|combat|night|festive", "volume num:0-1", "loop bool:2")
    child(z, "zone_flight_paths", "flight_paths", 3, "to_zone_id ref:zones", "cost int:10-500",
          "duration_s int:20-240", "unlocked_by_quest bool:3")
    child(z, "zone_fishing_pools", "fishing", 3, "fish name:adj+beast", "skill int:1-450")
    child(z, "zone_gathering_nodes", "gathering", 4,
          "node enum:copper|tin|iron|mithril|thorium|herb|timber", "respawn_s int:60-1800")
    child(z, "zone_graveyards", "graveyards", 2, "x int:0-4096", "y int:0-4096")

    f = parent("factions", 40, "name name:adj+thing", "alignment enum:lawful|neutral|chaotic",
               "home_zone_id ref:zones", "hidden bool:7", "banner text:icons/faction_%s.png")
    child(f, "faction_reputation_tiers", "tiers", 8, "tier step",
          "label enum:Hated|Hostile|Unfriendly|Neutral|Friendly|Honored|Revered|Exalted",
          "threshold int:-42000-42000", order_by="tier")
    child(f, "faction_rewards", "rewards", 6, "tier int:1-8", "item_name name:adj+gear",
          "price int:10-5000", "account_wide bool:4")
    child(f, "faction_relations", "relations", 5, "other_faction_id ref:factions",
          "stance enum:allied|friendly|neutral|wary|hostile|at_war", "spillover pct")
    child(f, "faction_quartermasters", "quartermasters", 2, "npc_name name:person+trade")

    r = parent("races", 16,
               "name enum:Human|Dwarf|High Elf|Wood Elf|Orc|Gnome|Troll|Goblin|Halfling|Minotaur|Lizardfolk|Dragonborn|Tiefling|Centaur|Satyr|Golemkin",
               "playable bool:2", "faction_id ref:factions", "base_speed num:4-9",
               "lore text:lore/race_%s.md")
    child(r, "race_traits", "traits", 5, "trait name:adj+verb", "stat enum:str|agi|int|spi|sta",
          "bonus int:1-25", "passive bool:2")
    child(r, "race_starting_zones", "starting_zones", 3, "zone_id ref:zones", "is_default bool:3")
    child(r, "race_name_parts", "name_parts", 24, "part enum:prefix|root|suffix",
          "text enum:ar|bel|cor|dun|eth|fal|gor|hil|ith|kor|lun|mor|nor|quel|rath|syl|thar|ul|vor|zan",
          "gender enum:any|female|male")
    child(r, "race_appearance_options", "appearance", 20,
          "slot enum:skin|hair|eyes|face|horns|tattoo|ears", "variant int:1-40",
          "unlock_level int:1-60", "color text:#%s")
    child(r, "race_languages", "languages", 3,
          "language enum:common|dwarvish|elvish|orcish|draconic|gnomish", "fluent bool:2")

    c = parent("classes", 12,
               "name enum:Warrior|Paladin|Hunter|Rogue|Priest|Shaman|Mage|Warlock|Monk|Druid|Knight|Bard",
               "role enum:tank|healer|melee|ranged|support", "primary_stat enum:str|agi|int|spi",
               "resource enum:mana|rage|energy|focus|runes", "armor enum:cloth|leather|mail|plate")
    child(c, "class_base_stats", "base_stats", 60, "level step", "health int:50-9000",
          "mana int:0-6000", "strength int:5-400", "agility int:5-400", "intellect int:5-400",
          order_by="level")
    child(c, "class_starting_items", "starting_items", 8, "item_name name:adj+gear",
          "slot enum:head|chest|legs|feet|hands|main_hand|off_hand|back", "count int:1-5")
    child(c, "class_armor_proficiencies", "proficiencies", 6,
          "armor enum:cloth|leather|mail|plate|shield|relic", "from_level int:1-40")
    child(c, "class_specializations", "specializations", 3, "name name:adj+trade",
          "role enum:tank|healer|damage")

    it = parent("items", 1200, "name name:adj+gear", "item_level int:1-400",
                "rarity enum:poor|common|uncommon|rare|epic|legendary",
                "slot enum:head|neck|shoulders|chest|waist|legs|feet|wrists|hands|finger|trinket|main_hand|off_hand",
                "weight num:0-40", "sell_price int:1-250000", "stack_size int:1-200",
                "bind enum:none|on_pickup|on_equip|on_use|account", "tradable bool:3",
                "icon text:icons/item_%s.png",
                "flavor text:Forged in the old wars, it still hums faintly whenever danger is near. (item %s)")
    child(it, "item_stats", "stats", 6,
          "stat enum:strength|agility|intellect|stamina|spirit|crit|haste|mastery|versatility|armor",
          "value int:1-500", "scales_with_level bool:2")
    child(it, "item_effects", "effects", 30, "trigger enum:on_equip|on_use|on_hit|on_crit|on_kill",
          "spell name:magic+verb", "chance pct", "cooldown_ms int:0-120000", every=12)
    child(it, "item_sockets", "sockets", 30, "color enum:red|blue|yellow|meta|prismatic",
          "bonus_stat enum:strength|agility|intellect|stamina", "bonus_value int:1-40", every=12)
    child(it, "item_requirements", "requirements", 30,
          "kind enum:level|class|race|skill|reputation", "value int:1-80", "note text:req-%s",
          every=12)
    child(it, "item_sources", "sources", 3, "kind enum:drop|vendor|quest|craft|achievement|event",
          "zone_id ref:zones", "weight int:1-100")

    sets = parent("item_sets", 160, "name name:adj+thing", "tier int:1-12", "class_id ref:classes")
    child(sets, "item_set_pieces", "pieces", 8, "item_id ref:items",
          "slot enum:head|chest|legs|hands|shoulders|feet")
    child(sets, "item_set_bonuses", "bonuses", 4, "pieces_required step", "spell name:magic+verb",
          "description text:Wearing enough pieces of this set grants its bearer the bonus below. (bonus %s)",
          order_by="pieces_required")
    child(sets, "item_set_localizations", "localizations", 7,
          "locale enum:enUS|deDE|frFR|esES|ruRU|koKR|zhCN", "text text:Set name %s")

    n = parent("npcs", 800, "name name:person+trade", "level int:1-70", "zone_id ref:zones",
               "faction_id ref:factions", "hostile bool:5", "health int:100-250000",
               "model text:models/npc_%s.m2", "respawn_s int:30-3600")
    child(n, "npc_dialogue_lines", "dialogue", 6, "line_no step",
          "text text:Greetings, traveller. The roads east of here are not safe since the old bridge fell; speak to the captain if you are looking for work. (line %s)",
          "emote enum:talk|wave|bow|laugh|point|none", order_by="line_no")
    child(n, "npc_spawn_points", "spawns", 3, "zone_id ref:zones", "x num:0-4096", "y num:0-4096",
          "facing num:0-360")
    child(n, "npc_schedules", "schedule", 4, "hour int:0-23",
          "activity enum:sleep|work|eat|patrol|trade|pray|drink", "subarea int:1-6")
    child(n, "npc_gossip_options", "gossip", 30, "option_no step",
          "label text:Tell me more about the trouble in the hills, and about the reward you mentioned. (%s)",
          "action enum:none|vendor|trainer|quest|bank|taxi", order_by="option_no", every=12)
    child(n, "npc_equipment", "equipment", 30, "slot enum:main_hand|off_hand|ranged",
          "item_id ref:items", every=12)

    q = parent("quests", 900, "title name:quest+place", "min_level int:1-60", "zone_id ref:zones",
               "giver_npc_id ref:npcs", "repeatable enum:no|daily|weekly", "xp int:50-25000",
               "gold int:0-5000",
               "summary text:The villagers have asked for help: strange lights were seen in the hills, and the patrol that went to look has not come back. (quest %s)")
    child(q, "quest_objectives", "objectives", 5, "step step",
          "kind enum:kill|collect|talk|escort|explore|use|deliver", "target name:adj+beast",
          "count int:1-20", "optional bool:6",
          "hint text:Look for them near the old mill and bring back proof of the deed. (objective %s)",
          order_by="step")
    child(q, "quest_rewards", "rewards", 4, "item_id ref:items", "count int:1-5", "choice bool:2")
    child(q, "quest_prerequisites", "prerequisites", 30, "required_quest_id ref:quests",
          "must_be_active bool:5", every=12)
    child(q, "quest_dialogue_lines", "dialogue", 5, "line_no step",
          "phase enum:offer|progress|complete",
          "text text:You have done well so far, but the hardest part is still ahead of you. Gather your companions and meet me at the edge of the forest at dusk. (text %s)",
          order_by="line_no")
    child(q, "quest_points_of_interest", "poi", 30, "x int:0-4096", "y int:0-4096", every=12)

    qc = parent("quest_chains", 150, "name name:quest+place", "zone_id ref:zones", "story bool:2")
    child(qc, "quest_chain_steps", "steps", 8, "step step", "quest_id ref:quests", order_by="step")
    child(qc, "quest_chain_rewards", "rewards", 2, "item_id ref:items")

    m = parent("monsters", 700, "name name:adj+beast", "level int:1-70", "zone_id ref:zones",
               "family enum:beast|undead|elemental|demon|dragonkin|humanoid|construct",
               "health int:100-500000", "damage_min int:1-900", "damage_max int:10-2000",
               "elite bool:6", "xp int:1-9000")
    child(m, "monster_abilities", "abilities", 4, "name name:magic+verb", "cooldown_ms int:0-60000",
          "range int:0-40", "weight int:1-100")
    child(m, "monster_drops", "drops", 4, "item_id ref:items", "chance pct", "min_count int:1-3",
          "max_count int:1-9")
    child(m, "monster_resistances", "resistances", 4,
          "school enum:fire|frost|arcane|holy|nature|shadow", "value int:0-300")
    child(m, "monster_phrases", "phrases", 30, "trigger enum:aggro|death|flee|kill|low_health",
          "text text:You will not leave this place alive, little adventurer! (phrase %s)", every=12)
    child(m, "monster_immunities", "immunities", 30,
          "effect enum:stun|root|slow|silence|fear|poison", every=12)

    b = parent("bosses", 120, "name name:adj+beast", "monster_id ref:monsters",
               "enrage_s int:180-900", "raid bool:2")
    child(b, "boss_phases", "phases", 4, "phase step", "health_below pct",
          "music text:music/boss_%s.ogg", order_by="phase")
    child(b, "boss_mechanics", "mechanics", 6, "name name:magic+verb", "every_ms int:2000-60000",
          "targets enum:tank|random|farthest|all|healer", "damage int:100-90000")
    child(b, "boss_loot", "loot", 8, "item_id ref:items", "chance pct", "heroic_only bool:3")
    child(b, "boss_voice_lines", "voice_lines", 5, "trigger enum:pull|phase|kill|wipe|enrage",
          "text text:You dare challenge me in my own hall? Your bones will decorate these walls! (line %s)")
    child(b, "boss_adds", "adds", 3, "monster_id ref:monsters", "count int:1-8")

    d = parent("dungeons", 60, "name name:adj+place", "zone_id ref:zones", "min_level int:10-70",
               "players int:5-40", "lockout_h int:12-168")
    child(d, "dungeon_encounters", "encounters", 8, "position step", "boss_id ref:bosses",
          "optional bool:5", order_by="position")
    child(d, "dungeon_entrances", "entrances", 2, "zone_id ref:zones", "x int:0-4096",
          "y int:0-4096")
    child(d, "dungeon_difficulties", "difficulties", 4,
          "label enum:normal|heroic|mythic|timewalking", "health_mult num:1-12",
          "damage_mult num:1-8")
    child(d, "dungeon_lockout_rules", "lockouts", 3, "difficulty enum:normal|heroic|mythic",
          "hours int:12-168")
    child(d, "dungeon_keystone_affixes", "affixes", 4,
          "affix enum:fortified|tyrannical|bolstering|raging|sanguine|bursting",
          "from_level int:2-15")
    child(d, "dungeon_achievements", "achievements", 3, "name name:adj+thing", "points int:5-25")

    s = parent("skills", 500, "name name:magic+verb",
               "school enum:fire|frost|arcane|holy|nature|shadow|physical", "class_id ref:classes",
               "cast_ms int:0-3500", "cooldown_ms int:0-180000", "range int:0-40",
               "icon text:icons/skill_%s.png")
    child(s, "skill_ranks", "ranks", 5, "rank step", "required_level int:1-70",
          "damage int:10-9000", "cost int:5-900", order_by="rank")
    child(s, "skill_effects", "effects", 3,
          "kind enum:damage|heal|stun|slow|root|silence|dot|hot|shield", "amount int:1-5000",
          "duration_ms int:0-30000")
    child(s, "skill_costs", "costs", 2, "resource enum:mana|rage|energy|focus|health|runes",
          "amount int:1-300", "per_second bool:6")
    child(s, "skill_prerequisites", "prerequisites", 30, "required_skill_id ref:skills",
          "rank int:1-5", every=12)

    t = parent("talents", 200, "name name:adj+verb", "class_id ref:classes", "tier int:1-7",
               "column_no int:1-4", "max_rank int:1-5")
    child(t, "talent_ranks", "ranks", 5, "rank step", "description text:Rank %s bonus",
          "value int:1-50", order_by="rank")
    child(t, "talent_modifiers", "modifiers", 3, "skill_id ref:skills",
          "property enum:damage|cost|cooldown|range|duration|crit", "percent int:1-60")
    child(t, "talent_requirements", "requirements", 6, "required_talent_id ref:talents",
          "points int:1-5", every=3)

    lt = parent("loot_tables", 350, "name name:adj+beast", "rolls int:1-4", "gold_min int:0-50",
                "gold_max int:50-900")
    child(lt, "loot_entries", "entries", 8, "item_id ref:items", "chance pct", "min_count int:1-3",
          "max_count int:1-10", "quest_only bool:9")
    child(lt, "loot_conditions", "conditions", 30, "kind enum:level|quest|faction|event|class",
          "value int:1-80", every=12)
    child(lt, "loot_currency_rewards", "currency", 2, "currency enum:gold|honor|tokens|gems",
          "amount int:1-500")

    sh = parent("shops", 220, "name name:person+trade", "npc_id ref:npcs", "zone_id ref:zones",
                "currency enum:gold|honor|tokens|gems", "faction_id ref:factions")
    child(sh, "shop_items", "items", 24, "item_id ref:items", "price int:1-100000",
          "stock int:0-99", "restock_s int:0-86400")
    child(sh, "shop_hours", "hours", 3, "weekday int:0-6", "open_hour int:0-11",
          "close_hour int:12-23")
    child(sh, "shop_discounts", "discounts", 3, "reputation_tier int:4-8", "percent int:1-25")
    child(sh, "shop_restock_rules", "restock", 3, "weekday int:0-6", "amount int:1-50")

    rc = parent("recipes", 600, "name name:adj+gear",
                "profession enum:smithing|tailoring|alchemy|cooking|enchanting|jewelcrafting|engineering",
                "skill_required int:1-450", "craft_ms int:500-10000", "output_item_id ref:items")
    child(rc, "recipe_ingredients", "ingredients", 5, "item_id ref:items", "count int:1-20")
    child(rc, "recipe_tools", "tools", 30,
          "tool enum:anvil|forge|loom|cauldron|campfire|workbench|kiln", every=12)
    child(rc, "recipe_skill_ups", "skill_ups", 3, "color enum:orange|yellow|green|grey",
          "until_skill int:1-450", "points int:1-3")
    child(rc, "recipe_outputs", "outputs", 2, "item_id ref:items", "count int:1-5")
    child(rc, "recipe_discovery", "discovery", 30, "kind enum:trainer|drop|quest|vendor|discovery",
          "chance pct", every=12)

    pr = parent("professions", 14, "name name:adj+trade", "kind enum:gathering|crafting|secondary",
                "max_skill int:75-450")
    child(pr, "profession_ranks", "ranks", 8, "rank step",
          "title enum:Apprentice|Journeyman|Expert|Artisan|Master|Grand Master|Illustrious|Zen Master",
          "max_skill int:75-600", "trainer_cost int:10-50000", order_by="rank")
    child(pr, "profession_trainers", "trainers", 12, "npc_id ref:npcs", "zone_id ref:zones")
    child(pr, "profession_specializations", "specializations", 4, "name name:adj+thing",
          "required_skill int:200-450")
    child(pr, "profession_tools", "tools", 4,
          "tool enum:pick|sickle|skinning_knife|hammer|needle|mortar")

    a = parent("achievements", 600, "name name:adj+thing",
               "category enum:quests|exploration|pvp|dungeons|professions|reputation|feats",
               "points int:0-50", "hidden bool:8", "account_wide bool:3",
               "description text:Complete every feat listed below, in any order, to earn this achievement and its reward. (achievement %s)")
    child(a, "achievement_criteria", "criteria", 5, "step step",
          "kind enum:kill|complete_quest|explore|reach_level|earn_gold|obtain_item",
          "target int:1-5000", "amount int:1-1000", order_by="step")
    child(a, "achievement_rewards", "rewards", 30, "kind enum:title|mount|pet|item|tabard|gold",
          "value int:1-5000", every=12)

    ti = parent("titles", 140, "name name:adj+thing", "pattern text:%%s the Titled (%s)",
                "achievement_id ref:achievements")
    child(ti, "title_localizations", "localizations", 6,
          "locale enum:enUS|deDE|frFR|esES|ruRU|koKR|zhCN", "text text:Title %s")
    child(ti, "title_requirements", "requirements", 3,
          "kind enum:achievement|rank|reputation|event", "value int:1-5000")

    mo = parent("mounts", 200, "name name:adj+beast", "speed int:60-310", "flying bool:2",
                "aquatic bool:7", "model text:models/mount_%s.m2")
    child(mo, "mount_sources", "sources", 2, "kind enum:vendor|drop|achievement|quest|event|store",
          "value int:1-5000")
    child(mo, "mount_appearances", "appearances", 4, "variant int:1-12", "color text:#%s",
          "unlock enum:default|achievement|reputation|event")
    child(mo, "mount_speeds", "speeds", 3, "terrain enum:ground|air|water", "speed int:60-410")

    pe = parent("pets", 160, "name name:adj+beast",
                "family enum:critter|beast|mechanical|undead|dragonkin|aquatic|magic",
                "tradable bool:3", "battle_pet bool:2")
    child(pe, "pet_abilities", "abilities", 6, "slot step", "name name:magic+verb",
          "power int:1-60", order_by="slot")
    child(pe, "pet_evolutions", "evolutions", 2, "at_level int:5-25", "into_pet_id ref:pets")
    child(pe, "pet_food_preferences", "food", 3, "food enum:meat|fish|bread|cheese|fruit|fungus",
          "likes bool:2")
    child(pe, "pet_breeds", "breeds", 4, "breed enum:P/P|S/S|H/H|P/S|P/B|S/B|H/P|H/S|B/B",
          "health int:100-2000", "power int:10-350")

    bu = parent("buffs", 300, "name name:magic+verb", "duration_ms int:0-3600000",
                "dispellable bool:2", "max_stacks int:1-20", "icon text:icons/buff_%s.png")
    child(bu, "buff_modifiers", "modifiers", 4,
          "stat enum:strength|agility|intellect|stamina|speed|haste|crit|armor",
          "amount int:-50-300", "percent bool:2")
    child(bu, "buff_immunities", "immunities", 30,
          "school enum:fire|frost|arcane|holy|nature|shadow|physical", every=12)
    child(bu, "buff_stacking_rules", "stacking", 2, "rule enum:refresh|stack|replace|ignore",
          "group_no int:1-40")

    ev = parent("world_events", 60, "name name:adj+thing", "starts_month int:1-12",
                "starts_day int:1-28", "length_days int:1-21", "zone_id ref:zones")
    child(ev, "event_phases", "phases", 4, "phase step", "starts_after_h int:0-240",
          "banner text:event_phase_%s", order_by="phase")
    child(ev, "event_rewards", "rewards", 8, "item_id ref:items", "cost int:1-500")
    child(ev, "event_npc_overrides", "npc_overrides", 10, "npc_id ref:npcs",
          "outfit text:festive_%s")
    child(ev, "event_schedules", "schedules", 3, "year int:2024-2027", "starts_day int:1-28",
          "length_days int:1-21")
    child(ev, "event_quests", "quests", 6, "quest_id ref:quests")

    cu = parent("currencies", 30, "name name:adj+thing", "cap int:0-100000",
                "weekly_cap int:0-5000", "account_wide bool:3")
    child(cu, "currency_sources", "sources", 5, "kind enum:quest|dungeon|pvp|event|vendor",
          "amount int:1-500")
    child(cu, "currency_exchange_rates", "exchange", 3, "to_currency_id ref:currencies",
          "rate num:0-20")
    child(cu, "currency_caps", "caps", 4, "season step", "cap int:500-5000", order_by="season")

    bg = parent("battlegrounds", 12, "name name:adj+place", "players int:10-80",
                "min_level int:10-70", "max_score int:500-2000")
    child(bg, "battleground_objectives", "objectives", 6, "kind enum:flag|base|cart|orb|tower",
          "points int:5-100", "x int:0-4096", "y int:0-4096")
    child(bg, "battleground_rewards", "rewards", 4, "result enum:win|loss|draw", "honor int:10-800",
          "currency_id ref:currencies")
    child(bg, "battleground_spawn_points", "spawns", 6, "team enum:red|blue", "x int:0-4096",
          "y int:0-4096")
    child(bg, "battleground_buffs", "buffs", 4, "buff_id ref:buffs", "respawn_s int:30-180")

    gp = parent("guild_perks", 40, "name name:adj+thing", "guild_level int:1-25",
                "cost int:100-90000")
    child(gp, "guild_perk_effects", "effects", 3,
          "stat enum:xp|reputation|gold|mount_speed|repair_cost", "percent int:1-50")
    child(gp, "guild_perk_levels", "levels", 5, "level step", "cost int:100-50000",
          order_by="level")

    cs = parent("crafting_stations", 40, "name name:adj+thing", "zone_id ref:zones",
                "profession enum:smithing|tailoring|alchemy|cooking|enchanting|jewelcrafting|engineering")
    child(cs, "station_upgrades", "upgrades", 4, "level step", "cost int:100-20000",
          "speed_bonus pct", order_by="level")
    child(cs, "station_fuel_types", "fuel", 3, "item_id ref:items", "burn_s int:30-1800")
    child(cs, "station_recipes", "recipes", 8, "recipe_id ref:recipes")

    ho = parent("housing_furniture", 250, "name name:adj+thing",
                "category enum:chair|table|bed|lamp|rug|trophy|plant|shelf", "price int:10-20000",
                "placeable_outdoors bool:3")
    child(ho, "housing_furniture_colors", "colors", 4, "color text:#%s",
          "dye enum:red|blue|green|black|white|gold")
    child(ho, "housing_furniture_sources", "sources", 2,
          "kind enum:vendor|craft|drop|achievement|store")

    co = parent("cosmetics", 250, "name name:adj+gear",
                "slot enum:head|chest|back|weapon|tabard|shoulders", "store_price int:0-2500")
    child(co, "cosmetic_variants", "variants", 4, "variant step", "color text:#%s",
          order_by="variant")
    child(co, "cosmetic_dyes", "dyes", 3, "channel int:1-3",
          "dye enum:red|blue|green|black|white|gold|purple")
    child(co, "cosmetic_sources", "sources", 6, "kind enum:store|achievement|event|drop|vendor",
          every=3)

    em = parent("emotes", 80, "command text:/emote%s", "animation text:anim_emote_%s",
                "targeted bool:2")
    child(em, "emote_localizations", "localizations", 7,
          "locale enum:enUS|deDE|frFR|esES|ruRU|koKR|zhCN", "text text:%%s waves at you (%s)")
    child(em, "emote_animations", "animations", 4, "race_id ref:races",
          "anim text:anim_emote_race_%s")

    tu = parent("tutorials", 40, "name name:adj+thing",
                "trigger enum:login|level_up|first_kill|first_quest|enter_zone", "skippable bool:2")
    child(tu, "tutorial_steps", "steps", 6, "step step",
          "text text:Open your spellbook and drag a skill onto the action bar; press its key to use it in combat. (step %s)",
          "highlight enum:minimap|bags|spellbook|quest_log|chat|none", order_by="step")
    child(tu, "tutorial_triggers", "triggers", 2, "kind enum:level|zone|item|quest",
          "value int:1-120")
    child(tu, "tutorial_rewards", "rewards", 2, "item_id ref:items", "count int:1-3")

    wp = parent("weather_patterns", 24, "name name:adj+thing",
                "climate enum:temperate|arid|arctic|swamp|volcanic|coastal")
    child(wp, "weather_transitions", "transitions", 5, "to_pattern_id ref:weather_patterns",
          "chance pct", "blend_s int:5-120")
    child(wp, "weather_effects", "effects", 3,
          "effect enum:visibility|movement|fire_damage|frost_damage|fishing", "percent int:-50-50")
    child(wp, "weather_sounds", "sounds", 3, "sound text:sound/weather_%s.ogg", "volume num:0-1")

    ve = parent("vehicles", 50, "name name:adj+thing", "seat_count int:1-8", "speed int:60-300",
                "health int:1000-90000")
    child(ve, "vehicle_seats", "seats", 6, "seat step", "can_attack bool:2", "can_drive bool:4",
          order_by="seat")
    child(ve, "vehicle_abilities", "abilities", 4, "name name:magic+verb",
          "cooldown_ms int:0-60000")
    child(ve, "vehicle_upgrades", "upgrades", 4, "level step", "cost int:100-20000",
          order_by="level")

    dr = parent("daily_rewards", 12, "month int:1-12", "theme name:adj+thing")
    child(dr, "daily_reward_days", "days", 28, "day step", "item_id ref:items", "count int:1-10",
          order_by="day")
    child(dr, "daily_reward_streak_bonuses", "streak_bonuses", 4, "streak int:3-28",
          "bonus_item_id ref:items")

    return list(PARENTS.values())


# ---------------------------------------------------------------------------------------------

def schema_sql(families):
    out = [
        "-- GENERATED by config/demo/gen.py — edit the catalog there, not this file.",
        "-- The demo game server's configuration: families of a parent table (one JSON array in",
        "-- the document) and child tables (nested arrays). Deterministic data from generate_series:",
        "-- every value is a function of the row id, so every load yields the same document.",
        "",
    ]
    for f in families:
        out.append(f"-- {f.name}: {f.rows} rows; " + ", ".join(c.name for c in f.children))
        out.append(f"create table {f.name} (")
        out.append(",\n".join(
            f"  {c.name} {c.sqltype}" + (" primary key" if c.name == "id" else " not null")
            for c in f.cols) + "\n);")
        out.append(f"insert into {f.name} ({', '.join(c.name for c in f.cols)})")
        out.append("select " + ",\n       ".join(c.expr for c in f.cols))
        out.append(f"from generate_series(1, {f.rows}) g;")
        for c in f.children:
            out.append(f"create table {c.name} (")
            defs = [f"  id integer primary key",
                    f"  {c.fk} integer not null references {f.name}"]
            defs += [f"  {x.name} {x.sqltype} not null" for x in c.cols if x.name != "id"]
            # Sparse tables are the ones live ops edits in place all day: a low fillfactor
            # leaves room on each page for HOT updates.
            out.append(",\n".join(defs) + "\n)" + (" with (fillfactor = 10);" if c.every > 1 else ";"))
            names = ["id", c.fk] + [x.name for x in c.cols if x.name != "id"]
            exprs = ["g", "p"] + [x.expr for x in c.cols if x.name != "id"]
            pp, ss = _next()
            out.append(f"insert into {c.name} ({', '.join(names)})")
            out.append("select " + ",\n       ".join(exprs))
            if c.every > 1:
                out.append(f"from generate_series({c.every}, {f.rows}, {c.every}) p,")
            else:
                out.append(f"from generate_series(1, {f.rows}) p,")
            out.append(f"     generate_series(1, 1 + (p * {pp} + {ss}) % {c.per_parent}) k,")
            out.append(f"     lateral (select (p - 1) * {c.per_parent} + k as g) id")
            if c.every > 1:
                # Rows of one parent land on different pages, as in a table edited for years.
                out.append("order by k, p;")
            else:
                out.append("order by p, k;")
            out.append(f"create index on {c.name} ({c.fk});")
        out.append("")
    return "\n".join(out) + "\n"


def members(alias, table):
    return ", ".join(f"'{c.name}', {alias}.{c.name}" for c in table.cols)


def query_sql(families, hand_written):
    out = [
        "-- GENERATED by config/demo/gen.py — edit the catalog there, not this file.",
        "-- The whole game configuration as ONE JSON document: one member per table family, each a",
        "-- correlated subquery whose rows nest their child tables as further correlated subqueries.",
        "select json_build_object(",
    ]
    parts = [f"  '{key}', {sql}" for key, sql in hand_written]
    for f in families:
        keys = [c.name for c in f.cols] + [c.key for c in f.children]
        if len(keys) != len(set(keys)):
            raise SystemExit(f"gen.py: {f.name}: duplicate member in {keys}")
        lines = [f"  '{f.key}', (select coalesce(json_agg(json_build_object(",
                 f"      {members('t', f)}"]
        for c in f.children:
            order = f" order by c.{c.order_by}" if c.order_by else ""
            lines[-1] += ","
            lines.append(f"      '{c.key}', (select coalesce(json_agg(json_build_object("
                         f"{members('c', c)}){order}), '[]')")
            lines.append(f"        from {c.name} c where c.{c.fk} = t.id)")
        lines.append(f"    ) order by t.id), '[]') from {f.name} t)")
        parts.append("\n".join(lines))
    out.append(",\n".join(parts))
    out.append(")")
    return "\n".join(out) + "\n"


# The hand-written rows of data.sql, nested the same way.
HAND_WRITTEN = [
    ("realms", """(select coalesce(json_agg(json_build_object(
      'id', r.id, 'name', r.name, 'region', r.region, 'kind', r.kind,
      'max_players', r.max_players, 'motd', r.motd,
      'rates', (select json_build_object('xp', x.xp, 'loot', x.loot, 'gold', x.gold,
                                         'reputation', x.reputation)
        from realm_rates x where x.realm_id = r.id)
    ) order by r.id), '[]') from realms r)"""),
    ("accounts", """(select coalesce(json_agg(json_build_object(
      'id', a.id, 'login', a.login, 'realm_id', a.realm_id, 'role', a.role,
      'locale', a.locale, 'banned', a.banned,
      'characters', (select coalesce(json_agg(json_build_object('id', ch.id, 'name', ch.name,
          'class_id', ch.class_id, 'race_id', ch.race_id, 'level', ch.level,
          'zone_id', ch.zone_id) order by ch.id), '[]')
        from characters ch where ch.account_id = a.id)
    ) order by a.id), '[]') from accounts a)"""),
]


# The players beyond the 24 hand-written accounts of data.sql, for the data scales
# (`scales:` in demo.yaml): psql runs this with `-v scale=N`, and at scale N the realms hold
# 24 × N accounts. Scale 1 adds none, so the snapshots, taken at scale 1, stay as they are;
# the game server's one query per account (an N+1) grows with the accounts, its config query
# does not. Deterministic, like the rest: every value is a function of the row's id.
PLAYERS_PSQL = """-- Generated by gen.py: the players of the data scales (psql -v scale=N, coldgate sets it).
-- 24 x :scale accounts in all, the first 24 hand-written in data.sql; one character each.
insert into accounts (id, login, realm_id, role, locale, banned)
select g, 'player' || g, 1 + g % 5, 'player',
       (array['enUS','deDE','frFR','esES','koKR','nbNO'])[1 + g % 6], false
from generate_series(25, 24 * :scale) g;

insert into characters (id, account_id, name, class_id, race_id, level, zone_id)
select 6 + g, g, 'Hero' || g, 1 + g % 12, 1 + g % 16, 1 + g % 60, 1 + g % 120
from generate_series(25, 24 * :scale) g;
"""


def main():
    families = catalog()
    tables = len(families) + sum(len(f.children) for f in families)
    with open(os.path.join(HERE, "schema.sql"), "w") as fh:
        fh.write(schema_sql(families))
    with open(os.path.join(HERE, "config_query.sql"), "w") as fh:
        fh.write(query_sql(families, HAND_WRITTEN))
    with open(os.path.join(HERE, "players.psql"), "w") as fh:
        fh.write(PLAYERS_PSQL)
    subqueries = len(families) + sum(len(f.children) for f in families)
    print(f"gen.py: {tables} generated tables, {subqueries} correlated subqueries", file=sys.stderr)
    # The arrays whose order matters (json_agg … order by): `snapshot.ordered` in demo.yaml.
    ordered = [f"/{f.key}/*/{c.key}" for f in families for c in f.children if c.order_by]
    print("ordered: [" + ", ".join(ordered) + "]")


if __name__ == "__main__":
    main()
