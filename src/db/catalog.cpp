#include "db/catalog.hpp"

#include <algorithm>

namespace coldgate::db {

std::vector<std::string> never_analyzed_tables(Connection& conn,
                                               const std::vector<std::string>& relnames) {
  auto rows = conn.exec(
      "SELECT schemaname || '.' || relname, relname FROM pg_stat_user_tables "
      "WHERE last_analyze IS NULL AND last_autoanalyze IS NULL ORDER BY 1");
  std::vector<std::string> out;
  for (const auto& r : rows) {
    if (!relnames.empty() &&
        std::find(relnames.begin(), relnames.end(), r[1].c_str()) == relnames.end()) {
      continue;
    }
    out.emplace_back(r[0].c_str());
  }
  return out;
}

}  // namespace coldgate::db
