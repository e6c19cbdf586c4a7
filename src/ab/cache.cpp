#include "ab/cache.hpp"

#include <fmt/core.h>

#include "results/json.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::ab {
namespace fs = std::filesystem;

std::string fingerprint(const results::Environment& e, const std::string& config_text) {
  std::string key = fmt::format(
      "coldgate {}\nprovider {}\npostgres major {}\ncpu {}\ncpus {}\n"
      "kernel {}\nconfig {}\n",
      COLDGATE_VERSION, e.provider, e.postgres_version_num / 10000, e.cpu_model, e.cpus, e.kernel,
      util::sha256_hex(config_text));
  for (const auto& [name, value] : e.postgres_settings)
    key += "setting " + name + "=" + value + "\n";
  return util::sha256_hex(key).substr(0, 16);
}

fs::path cache_file(const fs::path& dir, const std::string& commit,
                    const std::string& fingerprint) {
  return dir / (commit + "-" + fingerprint + ".json");
}

std::optional<results::Results> load_cached(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  try {
    return results::from_json(util::read_file(file), file.string());
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    return std::nullopt;
  }
}

void store_cached(const fs::path& file, const results::Results& results) {
  util::write_file_atomic(file, results::to_json(results));
}

}  // namespace coldgate::ab
