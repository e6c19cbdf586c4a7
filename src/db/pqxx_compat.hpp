#pragma once

#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace coldgate::db {

/// Values of $1, $2 … as text; nullopt binds SQL NULL.
using Params = std::vector<std::optional<std::string>>;

/// Runs `sql` in `tx` with $1… bound to `params`, through the call the libpqxx at hand does not
/// deprecate: `tx.exec(sql, pqxx::params)` from 7.10, `tx.exec_params(sql, pqxx::params)` from
/// 7.6, `make_dynamic_params` on 6.x (libpqxx's NEWS). Throws pqxx errors as the call does.
pqxx::result exec_params(pqxx::transaction_base& tx, const std::string& sql, const Params& params);

/// Runs the prepared statement `name` in `tx` with $1… bound to `params`, the same way
/// (`tx.exec(pqxx::prepped, params)` from 7.10). Throws pqxx errors as the call does.
pqxx::result exec_prepared(pqxx::transaction_base& tx, const std::string& name,
                           const Params& params);

/// Keeps server notices ("table does not exist, skipping") off stderr for the life of `conn`
/// (a notice handler from libpqxx 7.10, an errorhandler before). The returned object must not
/// outlive `conn`; destroy it first.
std::shared_ptr<void> silence_notices(pqxx::connection& conn);

}  // namespace coldgate::db
