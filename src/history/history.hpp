#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "history/record.hpp"
#include "history/store.hpp"

namespace coldgate::history {

/// A store's records, read and validated.
struct Loaded {
  std::vector<Record> records;        // oldest first: by commit date, then recorded_at, commit
  std::vector<std::string> warnings;  // "skipped git:coldgate-history:x.json: stages[0]…: …"
  /// Why the store is empty because it is not there at all — no such folder, or the branch
  /// neither local nor fetched from the remote — with what to do; "" when it exists.
  std::string absent;
};

/// Every record of `spec` (read_files, then from_json each): a file that does not validate —
/// corrupt, foreign, of another schema version, or named unlike its commit — is skipped with
/// a warning naming it, never an error; a store that does not exist is empty, and `absent`
/// says so. Throws like read_files.
Loaded read_records(const StoreSpec& spec, const std::filesystem::path& repo,
                    const std::string& remote);

}  // namespace coldgate::history
