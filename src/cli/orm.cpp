// `coldgate init`'s recognition of an ORM's migrations and seeders in a project folder.
#include "cli/orm.hpp"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "migrate/migrate.hpp"

namespace coldgate::cli {

namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool is_folder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// The first MiB of a file, or "" when it cannot be read.
std::string head_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  std::string text(1u << 20, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// The entries of `folder` (not recursive), sorted by name so that what init suggests does not
// depend on the file system's order; none when it cannot be read.
std::vector<fs::path> entries(const fs::path& folder) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// How deep below the project's folder a Django app is looked for: `apps/core/` is 2, a
// `src/apps/core/` layout 3.
constexpr int k_app_depth = 3;

// A folder no app of the project is in: hidden ones (.git, .venv), installed packages
// (node_modules, site-packages, a virtualenv: pyvenv.cfg), and an app's own parts.
bool not_an_app_folder(const fs::path& folder) {
  const std::string name = folder.filename().string();
  static const char* k_skipped[] = {"node_modules", "site-packages", "__pycache__", "migrations",
                                    "fixtures",     "management",    "templates",   "static"};
  return name.starts_with('.') ||
         std::any_of(std::begin(k_skipped), std::end(k_skipped),
                     [&](const char* s) { return name == s; }) ||
         is_file(folder / "pyvenv.cfg");
}

// The folders below `folder` that may be Django apps, down to `depth` levels, in name order
// depth-first (`apps`, `apps/core`, `shop`).
void app_folders(const fs::path& folder, int depth, std::vector<fs::path>& out) {
  if (depth == 0) return;
  for (const auto& e : entries(folder)) {
    if (!is_folder(e) || not_an_app_folder(e)) continue;
    out.push_back(e);
    app_folders(e, depth - 1, out);
  }
}

// Django's seed, when the project has an obvious one: the fixtures of its apps
// (<app>/fixtures/*.json, loaded by name with loaddata), then its apps' management commands
// whose name starts with "seed" — apps up to k_app_depth folders down (apps/core/).
std::vector<std::string> django_seed(const fs::path& folder) {
  std::vector<std::string> fixtures;
  std::vector<std::string> commands;
  std::vector<fs::path> apps;
  app_folders(folder, k_app_depth, apps);
  for (const auto& app : apps) {
    for (const auto& f : entries(app / "fixtures")) {
      if (f.extension() == ".json" && is_file(f)) fixtures.push_back(f.stem().string());
    }
    for (const auto& c : entries(app / "management" / "commands")) {
      if (c.extension() == ".py" && c.stem().string().starts_with("seed")) {
        commands.push_back(c.stem().string());
      }
    }
  }
  std::vector<std::string> out;
  if (!fixtures.empty()) {
    std::string line = "python3 manage.py loaddata";
    for (const auto& f : fixtures) line += " " + f;
    out.push_back(line);
  }
  for (const auto& c : commands) out.push_back("python3 manage.py " + c);
  return out;
}

std::optional<OrmRecipe> django(const fs::path& folder) {
  if (!is_file(folder / "manage.py")) return std::nullopt;
  OrmRecipe r{"Django", "manage.py", {"python3 manage.py migrate"}, "python3 manage.py migrate",
              {"django_migrations"}, ""};
  for (auto& line : django_seed(folder)) r.setup.push_back(std::move(line));
  r.note = "settings.py's DATABASES must read DATABASE_URL (or PGHOST, PGPORT, PGUSER, "
           "PGPASSWORD, PGDATABASE)";
  r.variables = {"DJANGO_SETTINGS_MODULE"};
  return r;
}

std::optional<OrmRecipe> rails(const fs::path& folder) {
  if (!is_file(folder / "bin" / "rails")) return std::nullopt;
  // A committed schema loads in one step, with the seeds; without one the migrations build it,
  // and the seeds are a step of their own, so that the migrate command migrates only.
  bool schema = is_file(folder / "db" / "schema.rb") || is_file(folder / "db" / "structure.sql");
  bool seeds = is_file(folder / "db" / "seeds.rb");
  OrmRecipe r{"Rails", "bin/rails", {}, "bin/rails db:migrate",
              {"schema_migrations", "ar_internal_metadata"}, ""};
  r.variables = {"RAILS_ENV"};
  if (schema) {
    r.setup.push_back(seeds ? "bin/rails db:schema:load db:seed" : "bin/rails db:schema:load");
  } else {
    r.setup.push_back(r.migrate);
    if (seeds) r.setup.push_back("bin/rails db:seed");
  }
  return r;
}

std::optional<OrmRecipe> alembic(const fs::path& folder) {
  if (!is_file(folder / "alembic.ini")) return std::nullopt;
  OrmRecipe r{"Alembic", "alembic.ini", {"alembic upgrade head"}, "alembic upgrade head",
              {"alembic_version"}, ""};
  if (is_file(folder / "seed.py")) r.setup.push_back("python3 seed.py");
  r.note = "the migrations' env.py must take its URL from DATABASE_URL";
  return r;
}

// A *.csproj in `folder` or one folder below that references Entity Framework Core.
std::optional<fs::path> ef_core_project(const fs::path& folder) {
  std::vector<fs::path> candidates;
  for (const auto& e : entries(folder)) {
    if (e.extension() == ".csproj") candidates.push_back(e);
    if (is_folder(e) && !e.filename().string().starts_with('.')) {
      for (const auto& inner : entries(e)) {
        if (inner.extension() == ".csproj") candidates.push_back(inner);
      }
    }
  }
  for (const auto& p : candidates) {
    if (head_of(p).find("Microsoft.EntityFrameworkCore") != std::string::npos) return p;
  }
  return std::nullopt;
}

std::optional<OrmRecipe> ef_core(const fs::path& folder) {
  auto project = ef_core_project(folder);
  if (!project) return std::nullopt;
  std::string rel = project->lexically_relative(folder).generic_string();
  std::string line = "dotnet ef database update";
  if (project->parent_path() != folder) {
    line += " --project " + project->parent_path().lexically_relative(folder).generic_string();
  }
  return OrmRecipe{"EF Core", rel + ": Microsoft.EntityFrameworkCore", {line}, line,
                   {"__EFMigrationsHistory"},
                   "the DbContext's connection string must come from the environment "
                   "(PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE)"};
}

// TypeORM's data source file, where the project keeps it by TypeORM's own examples.
std::optional<std::string> typeorm_data_source(const fs::path& folder) {
  for (const char* dir : {"", "src/", "src/db/", "src/database/"}) {
    for (const char* name : {"data-source", "datasource"}) {
      for (const char* ext : {".ts", ".js"}) {
        std::string rel = std::string(dir) + name + ext;
        if (is_file(folder / rel)) return rel;
      }
    }
  }
  return std::nullopt;
}

// True when a package.json version range asks for TypeORM before 0.3 ("^0.2.25", "~0.2.0",
// "0.2.x"): those CLIs have no `-d` and read ormconfig or the TYPEORM_* variables (TypeORM's
// 0.3.0 changelog). A range that does not parse is taken for a current one.
bool typeorm_before_0_3(const std::string& range) {
  std::size_t at = range.find_first_not_of("^~=<>v ");
  if (at == std::string::npos || range.compare(at, 2, "0.") != 0) return false;
  at += 2;
  std::size_t end = range.find_first_not_of("0123456789", at);
  if (end == at) return false;
  return std::stoi(range.substr(at, std::min<std::size_t>(end, at + 6) - at)) < 3;
}

std::optional<OrmRecipe> node(const fs::path& folder) {
  if (!is_file(folder / "package.json")) return std::nullopt;
  auto doc = nlohmann::json::parse(head_of(folder / "package.json"), nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  // The dependency's entry in either section (its version range), or null.
  auto entry = [&](const char* dependency) -> const nlohmann::json* {
    for (const char* section : {"dependencies", "devDependencies"}) {
      auto it = doc.find(section);
      if (it == doc.end() || !it->is_object()) continue;
      if (auto dep = it->find(dependency); dep != it->end()) return &*dep;
    }
    return nullptr;
  };
  auto has = [&](const char* dependency) { return entry(dependency) != nullptr; };
  auto evidence = [](const char* dependency) { return std::string("package.json: ") + dependency; };
  if (has("prisma") || has("@prisma/client")) {
    OrmRecipe r{"Prisma", evidence(has("prisma") ? "prisma" : "@prisma/client"),
                {"npx prisma migrate deploy"}, "npx prisma migrate deploy",
                {"_prisma_migrations"}, ""};
    auto prisma = doc.find("prisma");
    if (prisma != doc.end() && prisma->is_object() && prisma->contains("seed")) {
      r.setup.push_back("npx prisma db seed");
    }
    return r;
  }
  const nlohmann::json* typeorm = entry("typeorm");
  const std::string typeorm_range =
      typeorm && typeorm->is_string() ? typeorm->get<std::string>() : std::string();
  if (typeorm && typeorm_before_0_3(typeorm_range)) {
    // TypeScript entities and migrations need ts-node in front of the CLI, as 0.2's docs show.
    const bool typescript = is_file(folder / "tsconfig.json") || is_file(folder / "ormconfig.ts");
    std::string line = typescript ? "npx ts-node ./node_modules/typeorm/cli.js migration:run"
                                  : "npx typeorm migration:run";
    OrmRecipe r{"TypeORM 0.2", evidence("typeorm") + " " + typeorm_range, {line}, line,
                {"migrations"}, ""};
    r.note = "TypeORM 0.2 reads its connection from ormconfig, or from the TYPEORM_* variables "
             "when TYPEORM_URL is set: TYPEORM_CONNECTION=postgres, TYPEORM_URL=$DATABASE_URL, "
             "with TYPEORM_ENTITIES and TYPEORM_MIGRATIONS";
    r.variables = {"TYPEORM_"};
    return r;
  }
  if (typeorm) {
    auto source = typeorm_data_source(folder);
    std::string file = source.value_or("src/data-source.ts");
    // A TypeScript data source needs TypeORM's ts-node entry point; a built one the plain CLI.
    std::string cli = file.ends_with(".ts") ? "typeorm-ts-node-commonjs" : "typeorm";
    std::string line = "npx " + cli + " migration:run -d " + file;
    OrmRecipe r{"TypeORM", evidence("typeorm"), {line}, line, {"migrations"}, ""};
    r.note = source ? "the data source must read DATABASE_URL"
                    : "no data source file found: put yours after -d; it must read DATABASE_URL";
    r.variables = {"TYPEORM_"};
    return r;
  }
  if (has("sequelize") || has("sequelize-cli")) {
    OrmRecipe r{"Sequelize", evidence(has("sequelize") ? "sequelize" : "sequelize-cli"),
                {"npx sequelize-cli db:migrate"}, "npx sequelize-cli db:migrate",
                {"SequelizeMeta"}, ""};
    if (is_folder(folder / "seeders") || is_file(folder / ".sequelizerc")) {
      r.setup.push_back("npx sequelize-cli db:seed:all");
    }
    r.note = "config/config.json's environment must have \"use_env_variable\": \"DATABASE_URL\"";
    r.variables = {"NODE_ENV"};
    return r;
  }
  if (has("knex")) {
    OrmRecipe r{"Knex", evidence("knex"), {"npx knex migrate:latest"}, "npx knex migrate:latest",
                {"knex_migrations", "knex_migrations_lock"}, ""};
    if (is_folder(folder / "seeds")) r.setup.push_back("npx knex seed:run");
    r.note = "the knexfile's connection must read DATABASE_URL";
    r.variables = {"NODE_ENV"};
    return r;
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& bookkeeping_tables() { return migrate::bookkeeping_tables(); }

std::optional<OrmRecipe> recognise_orm(const fs::path& folder) {
  for (auto recognise : {django, rails, alembic, ef_core, node}) {
    if (auto r = recognise(folder)) return r;
  }
  return std::nullopt;
}

bool is_migrate_command(const OrmRecipe& orm, const std::string& command) {
  // The command's words; its program by file name.
  auto words = [](const std::string& text) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while ((at = text.find_first_not_of(" \t", at)) != std::string::npos) {
      std::size_t end = std::min(text.find_first_of(" \t", at), text.size());
      out.push_back(text.substr(at, end - at));
      at = end;
    }
    if (!out.empty()) out.front() = fs::path(out.front()).filename().string();
    return out;
  };
  return !orm.migrate.empty() && words(command) == words(orm.migrate);
}

}  // namespace coldgate::cli
