#include "setup/setup.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "db/connection.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate::setup {

namespace fs = std::filesystem;

namespace {

using Kind = config::SetupStep::Kind;

// A path as the user wrote it: relative to the config's folder when inside it.
std::string shown(const fs::path& file, const fs::path& base_dir) {
  if (base_dir.empty()) return file.string();
  auto rel = file.lexically_relative(base_dir);
  if (rel.empty() || *rel.begin() == "..") return file.string();
  return rel.string();
}

std::string where_of(const config::SetupStep& step, const std::string& fallback) {
  return step.where.file.empty() ? fallback : step.where.str();
}

std::string client_program(const Context& c, const std::string& name) {
  if (c.client_bindir) {
    auto p = *c.client_bindir / name;
    if (util::find_program(p.string())) return p.string();
  }
  return name;
}

// Runs a client program with the PG* environment; throws with its stderr tail when it fails.
void run_tool(const std::vector<std::string>& argv, const Context& c, const std::string& where,
              const std::string& what) {
  util::SpawnOptions opts{.argv = argv,
                          .cwd = c.base_dir,
                          .env = c.database.env(),
                          .env_unset = db::ConnectionInfo::env_names()};
  util::RunOutput r;
  try {
    r = util::run(opts);
  } catch (const Error& e) {  // could not start: say which step
    throw Error(e.code(), where, fmt::format("{} cannot start: {}", what, e.message()));
  }
  if (!r.status.ok()) {
    std::string tail = util::tail_lines(r.err.empty() ? r.out : r.err, 20);
    throw Error(ExitCode::gate_failed, where,
                fmt::format("{} failed ({}){}{}", what, r.status.describe(),
                            tail.empty() ? "" : ":\n", tail));
  }
}

std::string command_text(const config::SetupStep& step) {
  if (!step.shell.empty()) return step.shell;
  std::string out;
  for (const auto& a : step.argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

StepResult run_step(const config::SetupStep& step, const Context& c) {
  util::throw_if_interrupted();
  auto t0 = std::chrono::steady_clock::now();
  StepResult result;
  std::string file = shown(step.file, c.base_dir);
  switch (step.kind) {
    case Kind::sql: {
      result = {"sql", "sql " + file};
      db::run_script(c.database, util::read_file(step.file), file);
      break;
    }
    case Kind::psql: {
      result = {"psql", "psql " + file};
      run_tool({client_program(c, "psql"), "-v", "ON_ERROR_STOP=1", "-X", "-q", "-f",
                step.file.string()},
               c, where_of(step, file), "psql -f " + file);
      break;
    }
    case Kind::restore: {
      result = {"restore", "restore " + file};
      run_tool({client_program(c, "pg_restore"), "--no-owner", "--no-privileges", "--exit-on-error",
                "-d", c.database.dbname, step.file.string()},
               c, where_of(step, file), "pg_restore " + file);
      break;
    }
    case Kind::command: {
      std::string text = command_text(step);
      result = {"command", "command " + text};
      std::vector<std::string> argv =
          step.shell.empty() ? step.argv : std::vector<std::string>{"/bin/sh", "-c", step.shell};
      run_tool(argv, c, where_of(step, "setup command"), "setup command `" + text + "`");
      break;
    }
    case Kind::analyze: {
      result = {"analyze", "analyze"};
      db::Connection conn(c.database);
      conn.exec("ANALYZE", where_of(step, "analyze"));
      break;
    }
  }
  result.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

std::vector<StepResult> run_setup(const std::vector<config::SetupStep>& steps, const Context& c,
                                  const std::function<void(const StepResult&)>& on_step) {
  std::vector<StepResult> out;
  for (const auto& step : steps) {
    util::throw_if_interrupted();
    out.push_back(run_step(step, c));
    if (on_step) on_step(out.back());
  }
  return out;
}

}  // namespace coldgate::setup
