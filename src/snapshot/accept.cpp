// `coldgate accept`: promotes pending candidates (`<path>.new`, or a run's under `--from DIR`)
// over the committed snapshots.
#include <fmt/core.h>

#include <algorithm>
#include <system_error>
#include <utility>
#include <vector>

#include "snapshot/snapshot.hpp"
#include "util/error.hpp"
#include "util/suggest.hpp"
#include "util/fs.hpp"

namespace coldgate::snapshot {

namespace fs = std::filesystem;

namespace {

// " (did you mean 'x'?)" for a stage name close to `word`, else "".
std::string did_you_mean(std::string_view word, const std::vector<Claim>& claims) {
  std::vector<std::string> names;
  for (const Claim& claim : claims) names.push_back(claim.stage);
  return util::did_you_mean(word, names);
}

}  // namespace

std::vector<Claim> pending_claims(const std::vector<Claim>& claims,
                                  const std::vector<std::string>& stages, const std::string& command,
                                  const Source& source) {
  for (const std::string& stage : stages) {
    bool known =
        std::any_of(claims.begin(), claims.end(), [&](const Claim& c) { return c.stage == stage; });
    if (!known) {
      throw usage_error(command,
                        fmt::format("unknown stage '{}'{}", stage, did_you_mean(stage, claims)));
    }
  }
  std::vector<Claim> pending;
  for (const Claim& claim : claims) {
    if (!stages.empty() && std::find(stages.begin(), stages.end(), claim.stage) == stages.end()) {
      continue;
    }
    if (!candidate_path(claim, source).empty()) pending.push_back(claim);
  }
  return pending;
}

std::vector<Accepted> accept(const std::vector<Claim>& claims,
                             const std::vector<std::string>& stages, Mode mode,
                             const Source& source) {
  if (mode == Mode::ci) {
    throw usage_error("accept",
                      "refusing to write snapshots in CI mode (CI=true); download the candidates "
                      "from the job's artifacts and commit them, or run with --no-ci");
  }
  const std::vector<Claim> pending = pending_claims(claims, stages, "accept", source);
  // First check every pending candidate, then promote them: a refusal changes nothing.
  std::vector<std::pair<fs::path, std::string>> candidates;  // each file and its text
  for (const Claim& claim : pending) {
    fs::path file = candidate_path(claim, source);
    std::string text = util::read_file(file);
    if (!canon::is_canonical(text, claim.canon)) {
      std::string reason = malformed_reason(text, claim.canon);
      throw usage_error(
          "accept",
          fmt::format("refusing {} (stage '{}'): it {}; nothing was changed", file.string(),
                      claim.stage, reason.empty() ? "is not in canonical form" : reason));
    }
    candidates.emplace_back(std::move(file), std::move(text));
  }
  if (pending.empty()) {
    throw usage_error(
        "accept", source.from.empty()
                      ? "nothing to accept: no pending .new snapshots (run coldgate run first)"
                      : fmt::format("nothing to accept: no candidate of the config's snapshots "
                                    "under {} (coldgate run --ci and coldgate ab write them "
                                    "there)",
                                    (source.from / "snapshots").string()));
  }

  std::vector<Accepted> accepted;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const Claim& claim = pending[i];
    const auto& [file, text] = candidates[i];
    std::error_code ec;
    if (source.from.empty()) {
      util::rename_atomic(file, claim.path);
    } else {
      // Another folder, maybe another file system: the text checked above, written beside the
      // snapshot under a temp name and renamed over it; then the candidate goes.
      util::write_file_atomic(claim.path, text);
      fs::remove(file, ec);
    }
    fs::remove(fs::path(file.string() + ".diff"), ec);  // the review aid is stale now
    accepted.push_back(Accepted{claim.stage, claim.path, file});
  }
  return accepted;
}

}  // namespace coldgate::snapshot
