#pragma once

#include <string>
#include <vector>

#include "db/connection.hpp"

namespace coldgate::db {

/// Tables (schema.name) that were never analyzed: pg_stat_user_tables with last_analyze and
/// last_autoanalyze null — their plans run on default statistics. With `relnames`, only tables
/// of those names (in any schema), e.g. the relations of a plan.
std::vector<std::string> never_analyzed_tables(Connection& conn,
                                               const std::vector<std::string>& relnames = {});

}  // namespace coldgate::db
