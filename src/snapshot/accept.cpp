// `coldgate accept`: promotes pending `<path>.new` candidates over the committed snapshots.
#include <fmt/core.h>

#include <algorithm>
#include <system_error>

#include "snapshot/snapshot.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace coldgate::snapshot {

namespace fs = std::filesystem;

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// " (did you mean 'x'?)" for a stage name close to `word`, else "".
std::string did_you_mean(std::string_view word, const std::vector<Claim>& claims) {
  const Claim* best = nullptr;
  std::size_t best_distance = 0;
  for (const Claim& claim : claims) {
    std::size_t d = edit_distance(word, claim.stage);
    if (claim.stage.rfind(word, 0) == 0 && !word.empty()) d = 0;
    if (best == nullptr || d < best_distance) {
      best = &claim;
      best_distance = d;
    }
  }
  if (best == nullptr || best_distance > std::max<std::size_t>(1, word.size() / 3)) return {};
  return fmt::format(" (did you mean '{}'?)", best->stage);
}

}  // namespace

std::vector<Accepted> accept(const std::vector<Claim>& claims,
                             const std::vector<std::string>& stages, Mode mode) {
  if (mode == Mode::ci) {
    throw usage_error("accept",
                      "refusing to write snapshots in CI mode (CI=true); download the candidates "
                      "from the job's artifacts and commit them, or run with --no-ci");
  }
  for (const std::string& stage : stages) {
    bool known =
        std::any_of(claims.begin(), claims.end(), [&](const Claim& c) { return c.stage == stage; });
    if (!known) {
      throw usage_error("accept",
                        fmt::format("unknown stage '{}'{}", stage, did_you_mean(stage, claims)));
    }
  }

  // First check every pending candidate, then promote them: a refusal changes nothing.
  struct Pending {
    const Claim* claim;
    fs::path file;
  };
  std::vector<Pending> pending;
  for (const Claim& claim : claims) {
    if (!stages.empty() && std::find(stages.begin(), stages.end(), claim.stage) == stages.end()) {
      continue;
    }
    fs::path file(claim.path.string() + ".new");
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    std::string text = util::read_file(file);
    if (!canon::is_canonical(text, claim.canon)) {
      std::string reason = malformed_reason(text, claim.canon);
      throw usage_error(
          "accept",
          fmt::format("refusing {} (stage '{}'): it {}; nothing was changed", file.string(),
                      claim.stage, reason.empty() ? "is not in canonical form" : reason));
    }
    pending.push_back(Pending{&claim, std::move(file)});
  }
  if (pending.empty()) {
    throw usage_error("accept",
                      "nothing to accept: no pending .new snapshots (run coldgate run first)");
  }

  std::vector<Accepted> accepted;
  for (const Pending& p : pending) {
    util::rename_atomic(p.file, p.claim->path);
    std::error_code ec;
    fs::remove(fs::path(p.file.string() + ".diff"), ec);  // the review aid is stale now
    accepted.push_back(Accepted{p.claim->stage, p.claim->path, p.file});
  }
  return accepted;
}

}  // namespace coldgate::snapshot
