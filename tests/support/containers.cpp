#include "support/containers.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "util/error.hpp"
#include "util/process.hpp"

namespace coldgate::testing {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

constexpr const char* k_setup_hint = "; run ci/setup-podman.sh as root first";

}  // namespace

std::vector<std::string> engine_env(const std::string& engine) {
  if (engine != "docker") return {};
  const char* host = std::getenv("DOCKER_HOST");
  return {std::string("DOCKER_HOST=") + (host && *host ? host : k_podman_service)};
}

std::string container_setup_problem(const std::string& engine) {
  if (!util::find_program(engine)) return engine + " is not on PATH" + k_setup_hint;
  try {
    auto env = engine_env(engine);
    auto r = util::run(
        {.argv = {engine, "image", "inspect", "--format", "{{.Id}}", "postgres:15"}, .env = env},
        std::chrono::seconds(30));
    if (!r.status.ok()) {
      return fmt::format("`{} image inspect postgres:15` failed{}{}: {}", engine,
                         env.empty() ? "" : " with " + env[0], k_setup_hint,
                         util::tail_lines(r.err, 5));
    }
  } catch (const Error& e) {
    return e.message() + k_setup_hint;
  }
  return "";
}

db::ContainerOptions container_options(const std::string& engine) {
  db::ContainerOptions o;
  o.engine = engine;
  o.image = "postgres:15";
  o.dbname = "coldgate_test";
  o.engine_env = engine_env(engine);
  return o;
}

std::string engine_call(const std::string& engine, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {engine};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = util::run({.argv = argv, .env = engine_env(engine)}, std::chrono::seconds(60));
  if (!r.status.ok()) {
    throw std::runtime_error(fmt::format("{} {} failed ({}): {}", engine,
                                         args.empty() ? "" : args[0], r.status.describe(),
                                         util::tail_lines(r.err, 5)));
  }
  return trim(r.out);
}

bool engine_ok(const std::string& engine, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {engine};
  argv.insert(argv.end(), args.begin(), args.end());
  return util::run({.argv = argv, .env = engine_env(engine)}, std::chrono::seconds(60)).status.ok();
}

std::vector<std::string> containers_of_run(const std::string& engine, const std::string& run_id) {
  std::istringstream in(engine_call(
      engine, {"ps", "-a", "-q", "--no-trunc", "--filter", "label=coldgate.run=" + run_id}));
  std::vector<std::string> ids;
  for (std::string id; in >> id;) ids.push_back(id);
  return ids;
}

}  // namespace coldgate::testing
