// `migrate:` and `gate.migration`: how a commit reaches its schema on an existing database and
// how that migration, measured on base's data, is judged.
#include <fmt/core.h>

#include "config/migrate_keys.hpp"

namespace coldgate::config::detail {

Migrate read_migrate(const Reader& r, const YAML::Node& node) {
  Fields f = r.fields(node, "migrate", "migrate");
  const Entry* command = f.find("command");
  const Entry* dir = f.find("sql_dir");
  if (command && dir) {
    r.fail(dir->key_node, "migrate",
           "has both 'command' and 'sql_dir'; a commit reaches its schema one way (keep the "
           "application's migrate command, or the folder of SQL files it applies)");
  }
  if (!command && !dir) {
    r.fail(node, "migrate",
           "needs 'command' (the application's migrate command, e.g. [python3, manage.py, "
           "migrate]) or 'sql_dir' (a folder of *.sql files applied in name order)");
  }
  Migrate m;
  m.where = r.location(node);
  if (command) {
    m.key = "migrate.command";
    r.command(command->value, m.key, m.argv, m.shell);
    if (!m.argv.empty()) m.where = r.location(command->value[0]);
  } else {
    m.key = "migrate.sql_dir";
    m.sql_dir_given = r.nonempty_text(dir->value, m.key);
    m.sql_dir = r.file_path(dir->value, m.key);  // whether it is there: check_setup()
    m.where = r.location(dir->value);
  }
  return m;
}

MigrationGate read_migration_gate(const Reader& r, const YAML::Node& node) {
  Fields f = r.fields(node, "gate.migration", "gate.migration");
  MigrationGate g;
  if (auto* e = f.find("max_rewrite_rows"))
    g.max_rewrite_rows = static_cast<std::uint64_t>(r.integer(e->value, f.path("max_rewrite_rows"), 0));
  if (auto* e = f.find("max_stall")) g.max_stall = r.duration(e->value, f.path("max_stall"));
  if (auto* e = f.find("max_lock_wait"))
    g.max_lock_wait = r.duration(e->value, f.path("max_lock_wait"));
  if (auto* e = f.find("lock_timeout")) {
    auto v = r.choice(e->value, f.path("lock_timeout"), {"fail", "warn", "off"});
    g.lock_timeout = v == "fail" ? GrowthGate::fail : v == "warn" ? GrowthGate::warn : GrowthGate::off;
  }
  return g;
}

}  // namespace coldgate::config::detail
