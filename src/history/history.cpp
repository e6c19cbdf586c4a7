#include "history/history.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <tuple>

#include "util/error.hpp"

namespace coldgate::history {

Loaded read_records(const StoreSpec& spec, const std::filesystem::path& repo,
                    const std::string& remote) {
  Loaded loaded;
  for (const StoredFile& f : read_files(spec, repo, remote, loaded.warnings)) {
    try {
      Record r = from_json(f.contents, f.where);
      if (file_name(r) != f.name) {
        loaded.warnings.push_back(fmt::format(
            "skipped {}: it holds the record of commit {}, whose file is {}", f.where, r.commit,
            file_name(r)));
        continue;
      }
      loaded.records.push_back(std::move(r));
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted) throw;
      loaded.warnings.push_back(fmt::format("skipped {}", e.message()));
    }
  }
  std::sort(loaded.records.begin(), loaded.records.end(), [](const Record& a, const Record& b) {
    return std::tie(a.date, a.recorded_at, a.commit) < std::tie(b.date, b.recorded_at, b.commit);
  });
  return loaded;
}

}  // namespace coldgate::history
