#include "history/history.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <tuple>

#include "ab/git.hpp"
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
  std::error_code ec;
  if (spec.kind == StoreSpec::Kind::folder && !std::filesystem::exists(spec.dir, ec)) {
    loaded.absent = fmt::format("the history store {} does not exist (an empty store): "
                                "coldgate history record --store {} creates it",
                                spec.text, spec.text);
  } else if (spec.kind == StoreSpec::Kind::git) {
    auto has = [&](const std::string& ref) {
      return ab::git(repo, {"rev-parse", "--verify", "--quiet", ref + "^{commit}"}).has_value();
    };
    if (!has("refs/heads/" + spec.branch) &&
        !has(fmt::format("refs/remotes/{}/{}", remote, spec.branch))) {
      loaded.absent = fmt::format(
          "the history store {} does not exist here: no branch {} and no {}/{} (an empty "
          "store); fetch it (git fetch {} {}; in CI check out with fetch-depth: 0), or record "
          "with coldgate history record",
          spec.text, spec.branch, remote, spec.branch, remote, spec.branch);
    }
  }
  std::sort(loaded.records.begin(), loaded.records.end(), [](const Record& a, const Record& b) {
    return std::tie(a.date, a.recorded_at, a.commit) < std::tie(b.date, b.recorded_at, b.commit);
  });
  return loaded;
}

}  // namespace coldgate::history
