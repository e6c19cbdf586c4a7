#pragma once
// The catalog facts of a database that a migration can change, read before and after it.
// Internal to the migrate module.

#include <cstdint>
#include <map>
#include <utility>
#include <string>
#include <vector>

namespace coldgate::db {
class Connection;
}

namespace coldgate::migrate {

/// A table, materialized view or index of a user schema.
struct Relation {
  std::string name;         // schema.name, each part quoted as quote_ident does
  char kind = 'r';          // pg_class.relkind: r, p, m, i
  std::int64_t relfilenode = 0;  // changes when the relation is written anew (a rewrite)
  double rows = 0;          // tables: reltuples when the table has been analyzed, else counted
  std::uint64_t bytes = 0;  // pg_total_relation_size: heap, indexes, TOAST
  std::int64_t table = 0;   // indexes: the oid of their table; 0 otherwise
  /// Tables: their columns (name, type, NOT NULL, default), constraints (with whether each is
  /// validated) and indexes, one text; a change of it means the migration altered the table.
  std::string definition;
};

/// A CHECK or FOREIGN KEY constraint of a table.
struct Constraint {
  std::int64_t oid = 0;    // pg_constraint.oid: a constraint dropped and added again gets a new one
  std::int64_t table = 0;  // its table's oid
  std::string name;        // quoted as quote_ident does
  char type = 'c';         // pg_constraint.contype: c (CHECK), f (FOREIGN KEY)
  bool validated = true;   // false while NOT VALID
  std::string definition;  // pg_get_constraintdef
};

/// What read_catalog() found: relations by oid, the database's size and the WAL position.
struct Catalog {
  std::map<std::int64_t, Relation> relations;
  std::vector<Constraint> constraints;  // CHECK and FOREIGN KEY constraints of user tables
  /// The NOT NULL columns of user tables, as (table oid, column name quoted).
  std::vector<std::pair<std::int64_t, std::string>> not_null;
  std::uint64_t database_bytes = 0;
  std::string wal_lsn;  // pg_current_wal_lsn()
};

/// Reads the user schemas' relations (not pg_catalog, information_schema, TOAST) of the
/// database `conn` is connected to; `count_rows` counts the rows of tables that were never
/// analyzed (reltuples < 0). Throws Error(infrastructure) when the server is lost.
Catalog read_catalog(db::Connection& conn, bool count_rows);

/// Each object of the user schemas as "kind name" → its definition (tables: columns with their
/// types, NOT NULL and defaults, then "constraint name def", one a line; indexes: pg_get_indexdef;
/// views: their query; sequences; enum types with their labels), for comparing two databases'
/// schemas. Throws Error(infrastructure) when the server is lost.
std::map<std::string, std::string> schema_objects(db::Connection& conn);

/// The schema drift between two schema_objects() maps, one line per object that differs: only
/// on one side, or (a table) each column and constraint that differs, named, with both sides;
/// any other object's two definitions around their first difference. Each line stays within a
/// few hundred bytes however wide the table; the differences left off are counted.
std::vector<std::string> schema_drift(const std::map<std::string, std::string>& upgraded,
                                      const std::map<std::string, std::string>& fresh);

}  // namespace coldgate::migrate
