#pragma once

#include <string>
#include <vector>

#include "db/profile.hpp"
#include "results/results.hpp"

namespace coldgate::measure {

/// Characters of a statement's normalized text kept in the statement table and diagnoses.
inline constexpr std::size_t k_statement_text_chars = 200;

/// The normalized texts (as pg_stat_statements shows them) of the probe's own statements — its
/// transaction and its settings — which a SQL stage's profile leaves out: the stage's figures
/// are its query's.
const std::vector<std::string>& probe_statements();

/// Adds one run's db_* samples to `result` (cold, or warm for a warm repetition): db_queries
/// (sum of calls), db_plan_ms, db_exec_ms, db_jit_ms (generation + inlining + optimization +
/// emission), db_jit_functions, db_rows, db_shared_hit_blocks, db_shared_read_blocks.
void add_profile_metrics(results::StageResult& result,
                         const std::vector<db::StatementStats>& statements, bool warm);

/// A stage's statement table from its cold runs' statements (one list per run): per queryid
/// the medians per run of calls, rows, plan, execution and JIT (a run that did not execute a
/// statement counts 0), the text cut to k_statement_text_chars, the text_id and parameters of
/// the whole text (the statement's own when it was shortened before); by time, biggest first.
std::vector<results::QueryStats> statement_table(
    const std::vector<std::vector<db::StatementStats>>& cold_runs);

/// True for a statement that reads or writes data — SELECT, WITH, VALUES, TABLE, INSERT,
/// UPDATE, DELETE, MERGE, after leading comments and parentheses —, not BEGIN, SET or other
/// utility statements: what can repeat as an N+1, and what a plan-only EXPLAIN accepts
/// (PostgreSQL docs, "EXPLAIN": the statements it takes).
bool reads_or_writes_data(const std::string& query);

/// `query` without its leading comments, whitespace runs folded to one space, cut to at most
/// `chars` code points (UTF-8) with " …" when cut; when too long, a select list or an INSERT's
/// lists are elided first (util::elide_statement_lists), so that FROM and WHERE are kept.
std::string shortened(const std::string& query, std::size_t chars = k_statement_text_chars);

/// A statement's text_id: the first 16 hex digits of the SHA-256 of its whole normalized text.
std::string text_id_of(const std::string& whole_query);

/// Sets `s.text_id` and `s.parameters` from the whole text, then shortens `s.query`: statements
/// that differ only past the cut (`LIMIT $1` against `LIMIT $1 OFFSET $2`) or in an elided select
/// list keep apart ids, so they are neither summed in a stage nor paired across branches, and a
/// lookup whose `= $1` is past the cut is still known as one.
void shorten_keeping_id(db::StatementStats& s);

}  // namespace coldgate::measure
