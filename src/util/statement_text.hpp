#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace coldgate::util {

/// A statement's text (on one line, runs of white space as one space) with its long lists
/// elided: a SELECT's select list becomes "…" ("SELECT … FROM t WHERE …", as Django Debug
/// Toolbar shows a query: "SELECT ••• FROM") and an INSERT's column and value lists "(…)". An
/// ORM's statements on one table share a select list of every column, so two of them cut to
/// a width look alike; what tells them apart is FROM, WHERE and ORDER BY. Quoted names,
/// literals and parenthesised subqueries are skipped when looking for FROM; text without a
/// top-level FROM is returned as it is. A select list of at most k_short_select_list bytes
/// stays: it is what tells `SELECT COUNT(*) AS "__count" FROM t …` from the page's `SELECT …
/// FROM t …` over the same joins.
std::string elide_statement_lists(const std::string& text);

/// The longest select list elide_statement_lists() keeps, in bytes: an aggregate with its alias.
inline constexpr std::size_t k_short_select_list = 40;

/// How a normalized statement (pg_stat_statements' text: every constant written `$n`) uses its
/// parameters: what tells a lookup by key, an N+1's statement, from one repeated as it is.
enum class ParameterUse {
  none,    // no `$n`: every call ran the same text
  lookup,  // a `$n` compared for equality or in a list (`= $1`, `IN ($1, $2)`, `= ANY($1)`)
  other,   // `$n` only elsewhere (`LIMIT $1 OFFSET $2`, `> $1`)
};

/// The ParameterUse of `text`. Read it from the whole text: a shortened one may have lost its
/// WHERE (an ORM's select list of every column runs past any cut).
ParameterUse parameter_use(std::string_view text);

}  // namespace coldgate::util
