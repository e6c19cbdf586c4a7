#include "migrate/catalog.hpp"

#include <fmt/core.h>

#include "db/connection.hpp"

namespace coldgate::migrate {
namespace {

constexpr const char* k_user_schema =
    "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' "
    "AND n.nspname NOT LIKE 'pg\\_temp%'";

}  // namespace

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
      "END || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), ''), ', ' ORDER BY "
      "a.attnum) FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND "
      "d.adnum = a.attnum WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') "
      "|| coalesce((SELECT '; ' || string_agg(quote_ident(k.conname) || ' ' || "
      "pg_get_constraintdef(k.oid), '; ' ORDER BY k.conname) FROM pg_constraint k WHERE "
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
