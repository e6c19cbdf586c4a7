#include "migrate/findings.hpp"

#include <algorithm>

namespace coldgate::migrate {

using results::MigrationFindingKind;

bool explains_stall(const results::MigrationFinding& f, const std::string& table) {
  return f.table == table &&
         (f.kind == MigrationFindingKind::rewrite || f.kind == MigrationFindingKind::index_build ||
          f.kind == MigrationFindingKind::validation);
}

const char* const k_stall_fix =
    "make the statement that holds the lock short: batches, CONCURRENTLY, NOT VALID then VALIDATE";

void regressions_first(std::vector<results::MigrationFinding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const auto& a, const auto& b) {
    return a.severity == results::MigrationSeverity::regression &&
           b.severity != results::MigrationSeverity::regression;
  });
}

}  // namespace coldgate::migrate
