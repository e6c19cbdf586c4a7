#pragma once

#include <string>

namespace coldgate::testing {

/// A dump shaped like the Chinook PostgreSQL script: `DROP DATABASE IF EXISTS <db>; CREATE
/// DATABASE <db>; \c <db>;` (psql drops the `;` of \c's argument), then the tables artist and album and their INSERTs: `artists`
/// artists ("Artist 1" …) and one album by artist 1 — by :artist, titled :'title', when
/// `with_variables` (psql -v artist=… -v title=…).
std::string chinook_shaped_dump(const std::string& db, int artists, bool with_variables);

}  // namespace coldgate::testing
