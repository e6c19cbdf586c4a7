#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace coldgate::cli {

/// An ORM or migration tool that `coldgate init` recognised in a project folder: the commands
/// that build the project's database from its own migrations and seeders, and the tables the
/// tool keeps its bookkeeping in.
struct OrmRecipe {
  std::string name;                 // "Django", "Sequelize", …
  std::string evidence;             // what gave it away, for humans: "manage.py", "package.json: sequelize"
  std::vector<std::string> setup;   // shell commands, in order, run in the project's folder
  /// The command that applies the migrations a database lacks (`python3 manage.py migrate`):
  /// what `init --setup` writes as the config's `migrate:`, which `coldgate ab` runs on a copy
  /// of base's data. One of `setup` (the first), but for Rails with a committed schema, whose
  /// fresh database loads the schema instead.
  std::string migrate;
  std::vector<std::string> tables;  // its bookkeeping tables, e.g. django_migrations
  std::string note;                 // what to check in the commands, else ""
  /// The environment variables the tool reads its connection or settings from, each a name
  /// (`NODE_ENV`) or a prefix ending in `_` (`TYPEORM_`): those set where `init --setup` runs
  /// the commands become the config's `env:` (orm_environment()).
  std::vector<std::string> variables;
};

/// Every migration tool's bookkeeping table the starter stages leave out (Sequelize, Django,
/// Rails, Alembic, Knex, Flyway, EF Core, TypeORM, Prisma): a pull request that adds a migration
/// adds a row there, which is no change of the application's data.
const std::vector<std::string>& bookkeeping_tables();

/// The ORM of the project in `folder`, by its files: Django (manage.py), Rails (bin/rails),
/// Alembic (alembic.ini), EF Core (a *.csproj, in the folder or one below, that references
/// Microsoft.EntityFrameworkCore), and from package.json's dependencies Prisma, TypeORM,
/// Sequelize and Knex, in that order; nullopt when none. Never throws: a file it cannot read
/// counts as absent.
std::optional<OrmRecipe> recognise_orm(const std::filesystem::path& folder);

/// True when the shell command `command` is `orm`'s migrate command: the same words, the
/// program compared by its file name (`/usr/bin/python3 manage.py migrate` is Django's
/// `python3 manage.py migrate`). False when the recipe has none.
bool is_migrate_command(const OrmRecipe& orm, const std::string& command);

}  // namespace coldgate::cli
