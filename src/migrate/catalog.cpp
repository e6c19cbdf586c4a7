#include "migrate/catalog.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <sstream>

#include "db/connection.hpp"
#include "util/text.hpp"

namespace coldgate::migrate {
namespace {

constexpr const char* k_user_schema =
    "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' "
    "AND n.nspname NOT LIKE 'pg\\_temp%'";

// An item of a table's definition from schema_objects() (one a line: "col type …" or
// "constraint name def"): its key, the column's quoted name or "constraint name", and its text
// without the "constraint " prefix.
struct SchemaItem {
  std::string key;
  std::string text;
};

std::vector<SchemaItem> schema_items(const std::string& definition) {
  std::vector<SchemaItem> out;
  std::istringstream in(definition);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const bool constraint = line.starts_with("constraint ");
    const std::size_t from = constraint ? 11 : 0;
    std::size_t end = from;
    if (end < line.size() && line[end] == '"') {
      // A quoted identifier ends at a quote not doubled.
      for (++end; end < line.size(); ++end) {
        if (line[end] != '"') continue;
        if (end + 1 < line.size() && line[end + 1] == '"') {
          ++end;
        } else {
          ++end;
          break;
        }
      }
    } else {
      end = std::min(line.find(' ', from), line.size());
    }
    out.push_back({line.substr(0, end), line.substr(from)});
  }
  return out;
}

// `text` at most `max_bytes` long: from the start, or cut to a window around byte `at` (where it
// differs from the other side) with "…" where something was left off.
std::string drift_excerpt(const std::string& text, std::size_t at, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t start = at > max_bytes / 3 ? at - max_bytes / 3 : 0;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  std::string out = start > 0 ? "…" : "";
  const std::string_view rest = std::string_view(text).substr(start);
  const std::string_view kept = util::utf8_prefix(rest, max_bytes);
  out += kept;
  if (kept.size() < rest.size()) out += "…";
  return out;
}

std::size_t first_difference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

// One table's differences, each item named: only after the upgrade, only in head's fresh setup,
// or both sides of a changed one; at most ~`budget` bytes, the rest counted.
std::string table_drift(const std::string& upgraded, const std::string& fresh, std::size_t budget) {
  const auto a = schema_items(upgraded);
  const auto b = schema_items(fresh);
  auto find = [](const std::vector<SchemaItem>& items, const std::string& key) {
    return std::find_if(items.begin(), items.end(),
                        [&](const SchemaItem& i) { return i.key == key; });
  };
  auto kind = [](const SchemaItem& i) {
    return i.key.starts_with("constraint ") ? "constraint " : "column ";
  };
  constexpr std::size_t k_item_bytes = 120;
  std::vector<std::string> parts;
  for (const auto& i : a) {
    auto other = find(b, i.key);
    if (other == b.end()) {
      parts.push_back(fmt::format("{}`{}` only after the upgrade", kind(i),
                                  drift_excerpt(i.text, 0, k_item_bytes)));
    } else if (other->text != i.text) {
      const std::size_t at = first_difference(i.text, other->text);
      parts.push_back(fmt::format("{}`{}` after the upgrade, `{}` in head's fresh setup", kind(i),
                                  drift_excerpt(i.text, at, k_item_bytes),
                                  drift_excerpt(other->text, at, k_item_bytes)));
    }
  }
  for (const auto& i : b) {
    if (find(a, i.key) == a.end()) {
      parts.push_back(fmt::format("{}`{}` only in head's fresh setup", kind(i),
                                  drift_excerpt(i.text, 0, k_item_bytes)));
    }
  }
  if (parts.empty()) {
    // The same columns and constraints, in another order: the columns' names in each.
    std::string order_a, order_b;
    for (const auto& i : a) order_a += (order_a.empty() ? "" : ", ") + i.key;
    for (const auto& i : b) order_b += (order_b.empty() ? "" : ", ") + i.key;
    const std::size_t at = first_difference(order_a, order_b);
    return fmt::format(
        "the columns in another order: `{}` after the upgrade, `{}` in head's fresh setup",
        drift_excerpt(order_a, at, k_item_bytes), drift_excerpt(order_b, at, k_item_bytes));
  }
  std::string out;
  std::size_t shown = 0;
  for (const auto& p : parts) {
    if (shown > 0 && out.size() + p.size() > budget) break;
    out += (shown++ ? "; " : "") + p;
  }
  if (shown < parts.size()) {
    out += fmt::format("; and {} more difference{}", parts.size() - shown,
                       parts.size() - shown == 1 ? "" : "s");
  }
  return out;
}

}  // namespace

std::vector<std::string> schema_drift(const std::map<std::string, std::string>& upgraded,
                                      const std::map<std::string, std::string>& fresh) {
  constexpr std::size_t k_side_bytes = 160;
  std::vector<std::string> out;
  for (const auto& [name, def] : upgraded) {
    auto it = fresh.find(name);
    if (it == fresh.end()) {
      out.push_back(name + ": only after the upgrade (head's fresh setup has no such object)");
    } else if (it->second != def) {
      if (name.starts_with("table ")) {
        out.push_back(fmt::format("{}: {}", name, table_drift(def, it->second, 280)));
      } else {
        const std::size_t at = first_difference(def, it->second);
        out.push_back(fmt::format("{}: after the upgrade `{}`; head's fresh setup `{}`", name,
                                  drift_excerpt(def, at, k_side_bytes),
                                  drift_excerpt(it->second, at, k_side_bytes)));
      }
    }
  }
  for (const auto& [name, def] : fresh) {
    if (!upgraded.count(name)) {
      out.push_back(name + ": only in head's fresh setup (the migrations do not make it)");
    }
  }
  return out;
}

Catalog read_catalog(db::Connection& conn, bool count_rows) {
  Catalog out;
  const std::string sql = fmt::format(
      "SELECT c.oid::bigint, quote_ident(n.nspname) || '.' || quote_ident(c.relname), c.relkind, "
      "c.relfilenode::bigint, c.reltuples::float8, pg_total_relation_size(c.oid)::bigint, "
      "coalesce(i.indrelid, 0)::bigint, "
      "CASE WHEN c.relkind IN ('r', 'p', 'm') THEN "
      "coalesce((SELECT string_agg(quote_ident(a.attname) || ' ' || "
      "format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' "
      "END || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), ''), ', ' ORDER BY "
      "a.attnum) FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND "
      "d.adnum = a.attnum WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') "
      "|| ' | ' || coalesce((SELECT string_agg(quote_ident(k.conname) || ' ' || "
      "pg_get_constraintdef(k.oid) || CASE WHEN k.convalidated THEN '' ELSE ' NOT VALID' END, "
      "', ' ORDER BY k.conname) FROM pg_constraint k WHERE k.conrelid = c.oid), '') "
      "|| ' | ' || coalesce((SELECT string_agg(x.indexrelid::regclass::text, ', ' ORDER BY "
      "x.indexrelid::regclass::text) FROM pg_index x WHERE x.indrelid = c.oid), '') "
      "ELSE '' END, c.relpages "
      "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "LEFT JOIN pg_index i ON i.indexrelid = c.oid "
      "WHERE c.relkind IN ('r', 'p', 'm', 'i') AND {}",
      k_user_schema);
  for (const auto& row : conn.exec(sql, "migration: catalog")) {
    Relation r;
    r.name = row[1].as<std::string>();
    r.kind = row[2].as<std::string>().front();
    r.relfilenode = row[3].as<std::int64_t>();
    r.rows = row[4].as<double>();
    r.bytes = row[5].as<std::uint64_t>();
    r.table = row[6].as<std::int64_t>();
    r.definition = row[7].is_null() ? "" : row[7].as<std::string>();
    // reltuples is -1 for a table never analyzed (0 before PostgreSQL 14, with pages on disk).
    const bool unknown = r.rows < 0 || (r.rows == 0 && row[8].as<std::int64_t>() > 0);
    if (r.kind != 'i' && unknown) {
      r.rows = 0;
      if (count_rows) {
        r.rows = conn.exec("SELECT count(*)::float8 FROM " + r.name, "migration: catalog")[0][0]
                     .as<double>();
      }
    }
    out.relations.emplace(row[0].as<std::int64_t>(), std::move(r));
  }
  const std::string constraints = fmt::format(
      "SELECT k.oid::bigint, k.conrelid::bigint, quote_ident(k.conname), k.contype::text, k.convalidated, "
      "pg_get_constraintdef(k.oid) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
      "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE k.contype IN ('c', 'f') AND {}",
      k_user_schema);
  for (const auto& row : conn.exec(constraints, "migration: catalog")) {
    out.constraints.push_back({row[0].as<std::int64_t>(), row[1].as<std::int64_t>(),
                               row[2].as<std::string>(), row[3].as<std::string>().front(),
                               row[4].as<bool>(), row[5].as<std::string>()});
  }
  const std::string not_null = fmt::format(
      "SELECT a.attrelid::bigint, quote_ident(a.attname) FROM pg_attribute a JOIN pg_class c ON "
      "c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', "
      "'p') AND a.attnum > 0 AND NOT a.attisdropped AND a.attnotnull AND {}",
      k_user_schema);
  for (const auto& row : conn.exec(not_null, "migration: catalog")) {
    out.not_null.emplace_back(row[0].as<std::int64_t>(), row[1].as<std::string>());
  }
  auto facts = conn.exec(
      "SELECT pg_database_size(current_database())::bigint, pg_current_wal_lsn()::text",
      "migration: catalog");
  out.database_bytes = facts[0][0].as<std::uint64_t>();
  out.wal_lsn = facts[0][1].as<std::string>();
  return out;
}

std::map<std::string, std::string> schema_objects(db::Connection& conn) {
  std::map<std::string, std::string> out;
  const std::string sql = fmt::format(
      "SELECT CASE c.relkind WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 'v' THEN 'view' "
      "WHEN 'm' THEN 'materialized view' ELSE 'table' END || ' ' || quote_ident(n.nspname) || "
      "'.' || quote_ident(c.relname), "
      "CASE WHEN c.relkind = 'i' THEN pg_get_indexdef(c.oid) "
      "WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) "
      "WHEN c.relkind = 'S' THEN 'sequence' ELSE "
      "coalesce((SELECT string_agg(quote_ident(a.attname) || ' ' || "
      "format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' "
      "END || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), ''), E'\\n' ORDER BY "
      "a.attnum) FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND "
      "d.adnum = a.attnum WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') "
      "|| coalesce((SELECT E'\\n' || string_agg('constraint ' || quote_ident(k.conname) || ' ' || "
      "pg_get_constraintdef(k.oid), E'\\n' ORDER BY k.conname) FROM pg_constraint k WHERE "
      "k.conrelid = c.oid), '') END "
      "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE c.relkind IN ('r', 'p', 'm', 'v', 'i', 'S') AND {} "
      "AND NOT EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.classid = 'pg_class'::regclass "
      "AND dep.objid = c.oid AND dep.deptype = 'e') "
      "UNION ALL SELECT 'type ' || quote_ident(n.nspname) || '.' || quote_ident(t.typname), "
      "string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder) "
      "FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace JOIN pg_enum e ON "
      "e.enumtypid = t.oid WHERE {} GROUP BY 1",
      k_user_schema, k_user_schema);
  for (const auto& row : conn.exec(sql, "migration: schema")) {
    out[row[0].as<std::string>()] = row[1].is_null() ? "" : row[1].as<std::string>();
  }
  return out;
}

}  // namespace coldgate::migrate
