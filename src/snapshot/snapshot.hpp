#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "canon/canon.hpp"

namespace coldgate::snapshot {

/// State of one stage's snapshot after a run (docs/architecture.md "Snapshot statuses");
/// `rearranged`: the committed file holds the candidate's content arranged under other rules
/// (ordered, identity, redact changed since it was written).
enum class Status { match, changed, missing, obsolete, malformed, nondeterministic, rearranged };

/// "match", "changed", … as written in results and reports.
std::string_view to_string(Status status);

/// Local runs write pending files beside the snapshots; CI runs never write under snapshots/.
enum class Mode { local, ci };

/// One snapshot a stage claims: its committed path and how its documents are canonicalized.
struct Claim {
  std::string stage;
  std::filesystem::path path;  // committed snapshot file, e.g. snapshots/config-load.json
  canon::Options canon;
};

/// Where pending candidates go and whether snapshots/ may be written.
struct Settings {
  Mode mode = Mode::local;
  std::filesystem::path out_dir = "coldgate-out";  // CI candidates: <out_dir>/snapshots/<file>
  bool update = false;  // --update-snapshots: write the candidate over the committed file (local only)
  /// How messages tell the user to accept: "coldgate accept", plus "-c FILE" when the run used
  /// a config other than ./coldgate.yaml.
  std::string accept_command = "coldgate accept";
  /// Diff headers (and the full diff's name) give files relative to this folder, the
  /// repository (config::label_root), so no runner's absolute path shows; files outside it as
  /// util::display_path shows them. Empty: as the claim and settings give them.
  std::filesystem::path label_root;
  /// Mode::ci: the candidates are the CI job's artifacts, and messages say so. False for `ab`
  /// and `stack` outside CI, whose candidates go under out_dir all the same: messages then say
  /// where the file is on this machine and how to accept it from there (`--from`).
  bool artifacts = true;
};

/// Result of checking one candidate against its committed snapshot.
struct Verdict {
  Status status = Status::missing;
  std::string stage;
  std::filesystem::path committed;  // the snapshot path
  std::filesystem::path pending;    // where the candidate was written; empty for match
  std::string candidate_sha256;     // hex SHA-256 of the candidate bytes
  std::string message;              // one line for humans: why it is not a match
  std::string diff;                 // diff::render of committed vs candidate (changed/malformed)
};

/// Compares a candidate (already canonical text) byte-for-byte with the committed file and
/// records a pending file when they differ: `<path>.new` beside it locally, or
/// `<out_dir>/snapshots/<path relative to the repo>` in CI. A committed file that is canonical
/// JSON under no arrangement (CRLF, BOM, unsorted keys, re-indented, invalid JSON) is
/// `malformed`; one written under other rules is arranged under the claim's first: the same
/// content is `rearranged` (no diff), another is `changed` with the diff of the contents. A
/// match removes a stale `<path>.new`. Throws Error(infrastructure) when a file cannot be written.
Verdict check(const Claim& claim, std::string_view candidate, const Settings& settings);

/// A committed snapshot read under a claim's rules.
struct Committed {
  /// Its canonical text under the rules: the file itself when it was written under them, the
  /// same content re-arranged when it was written under others; "" when malformed.
  std::string arranged;
  /// Why it is canonical JSON under no arrangement ("has CRLF line endings", "starts with a
  /// UTF-8 BOM", "is not valid JSON (…: byte N: …)", "is not in canonical form from line N …");
  /// "" otherwise.
  std::string malformed;
};

/// Reads the text of a committed snapshot under `options` (see Committed); never throws.
Committed read_committed(std::string_view text, const canon::Options& options);

/// Why `text` is not a canonical snapshot under `options`: Committed::malformed, or "is
/// arranged under other snapshot rules …"; "" when it is canonical under them.
std::string malformed_reason(std::string_view text, const canon::Options& options);

/// Where check() writes the pending candidate for `committed`: `<path>.new` locally; in CI
/// `<out_dir>/snapshots/<path relative to the current folder>` (the file name when it lies
/// outside), so the artifact folder mirrors the checkout. Throws Error(usage) when that would
/// fall under the snapshot's own folder in CI.
std::filesystem::path pending_path(const std::filesystem::path& committed, const Settings& settings);

/// Files with a `.json` name under `dir` (recursively) that no claim names: status obsolete.
std::vector<std::filesystem::path> find_obsolete(const std::filesystem::path& dir,
                                                 const std::vector<Claim>& claims);

/// What `accept` did for one stage.
struct Accepted {
  std::string stage;
  std::filesystem::path path;     // the committed snapshot now holding the candidate
  std::filesystem::path pending;  // the promoted candidate file (now gone)
};

/// Where `accept` and `review` take the pending candidates from: beside each snapshot (the
/// `<path>.new` a local run writes), or from a run's output folder (`--from DIR`: the
/// `<DIR>/snapshots/…` that `run --ci` and `ab` write, a stack's pull request's
/// `<out>/stack/<k>-<ref>`).
struct Source {
  std::filesystem::path from;  // the output folder; "" = beside the snapshots
  /// The repository holding the config (config::repository_root): `ab` and `stack` name their
  /// candidates by the path in it.
  std::filesystem::path root;
};

/// The file holding `claim`'s pending candidate under `source`, "" when there is none: locally
/// `<path>.new`; under `<from>/snapshots/` the snapshot's path relative to the current folder
/// (where `run --ci` put it, as pending_path() does), else relative to `source.root` (`ab`,
/// `stack`), else its file name (a run from a folder the snapshot was not in).
std::filesystem::path candidate_path(const Claim& claim, const Source& source);

/// The claims with a pending candidate (candidate_path()), in the order of `claims`; only those
/// of `stages` when it is not empty. Throws Error(usage) at `command` ("accept", "review") for
/// a stage name no claim has, with a "did you mean".
std::vector<Claim> pending_claims(const std::vector<Claim>& claims,
                                  const std::vector<std::string>& stages, const std::string& command,
                                  const Source& source = {});

/// What `coldgate review` shows of one pending candidate.
struct PendingView {
  Status status = Status::missing;  // the committed file against the candidate; match when equal
  std::string message;  // one line in check()'s words: "snapshot changed: 1 path differs (…)",
                        // plus why accept would refuse a candidate that is not canonical
  std::string diff;     // diff::render of committed (arranged under the current rules when
                        // written under others) vs candidate: path summary, hunks capped at 200
                        // lines naming `<path>.new.diff`; a missing snapshot's candidate as added
                        // lines against /dev/null, capped likewise; "" for match and rearranged
};

/// Compares `claim`'s pending candidate (`<path>.new`, or under `source.from`) with the
/// committed file as check() does; `color` paints the diff (ANSI). Throws Error(usage) when a
/// file cannot be read.
PendingView view_pending(const Claim& claim, bool color, const Source& source = {});

/// Deletes `claim`'s pending candidate and its `.diff` beside it (what review's "reject" does);
/// returns the candidate's path. Throws Error(infrastructure) when one cannot be removed.
std::filesystem::path reject(const Claim& claim, const Source& source = {});

/// Promotes the pending candidates of the given claims (all claims when `stages` is empty) over
/// their snapshots, each atomically (temp + rename in the snapshot's folder), and removes each
/// candidate and its `.diff`; a candidate that is not canonical is refused before anything is
/// written. Throws Error(usage) under Mode::ci ("accept refuses to write snapshots in CI"), for
/// a stage name no claim has (with a "did you mean"), and when nothing is pending.
std::vector<Accepted> accept(const std::vector<Claim>& claims, const std::vector<std::string>& stages,
                             Mode mode, const Source& source = {});

}  // namespace coldgate::snapshot
