// `coldgate ab --try`: a migration finding's fix measured the way the finding was — the
// statement alone and the statements the field uses instead, each on a fresh copy of base's
// data with the probes beside it — so the reviewer sees the stall before → after, not a rule.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>

#include "migrate/migrate.hpp"
#include "results/format.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/text.hpp"

namespace coldgate::migrate {
namespace {

using results::MigrationFindingKind;

// `s` without leading and trailing white space and trailing semicolons.
std::string trimmed(const std::string& s) {
  std::size_t start = s.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return "";
  std::size_t end = s.find_last_not_of(" \t\r\n;");
  return s.substr(start, end + 1 - start);
}

// The positions of `text` outside quotes ('…', "…") and at parenthesis depth 0 where `pred` holds.
template <typename Pred>
bool any_top_level(const std::string& text, Pred pred) {
  int depth = 0;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quote) {
      if (ch == quote) quote = 0;
      continue;
    }
    if (ch == '\'' || ch == '"') {
      quote = ch;
    } else if (ch == '(') {
      ++depth;
    } else if (ch == ')') {
      --depth;
    } else if (depth == 0 && pred(text, i)) {
      return true;
    }
  }
  return false;
}

// pg_stat_statements replaces constants by $1, $2, … in the statements it normalizes (PostgreSQL
// 16 also in some utility statements): such a text cannot run again.
bool normalized(const std::string& text) {
  return any_top_level(text, [](const std::string& t, std::size_t i) {
    return t[i] == '$' && i + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[i + 1]));
  });
}

// One ALTER TABLE sub-command: no comma outside parentheses and quotes.
bool single_command(const std::string& text) {
  return !any_top_level(text, [](const std::string& t, std::size_t i) { return t[i] == ','; });
}

// `name` (as quote_ident gives it) with `suffix` appended, quoted.
std::string suffixed_name(std::string name, const std::string& suffix) {
  name.erase(std::remove(name.begin(), name.end(), '"'), name.end());
  std::string out = name + suffix;
  if (out.size() > 63) out = out.substr(out.size() - 63);
  return "\"" + out + "\"";
}

}  // namespace

FixStatements fix_statements(const results::MigrationFinding& finding, const std::string& text) {
  FixStatements out;
  const std::string statement = trimmed(text);
  if (statement.empty()) {
    out.not_tried = "the statement that did it is not known (pg_stat_statements did not see it)";
    return out;
  }
  if (normalized(statement)) {
    out.not_tried = "pg_stat_statements keeps the statement with its constants as $n: it cannot "
                    "run again";
    return out;
  }
  const std::string p = util::lower(statement);
  switch (finding.kind) {
    case MigrationFindingKind::index_build: {
      const bool unique = p.starts_with("create unique index ");
      const std::string head = unique ? "create unique index " : "create index ";
      if (!p.starts_with(head)) {
        out.not_tried = "the index comes from a constraint (`" + statement +
                        "`): build a unique index CONCURRENTLY and add the constraint USING INDEX";
        return out;
      }
      out.statements = {statement.substr(0, head.size()) + "CONCURRENTLY " + statement.substr(head.size())};
      return out;
    }
    case MigrationFindingKind::validation: {
      if (!p.starts_with("alter table ") || !single_command(statement)) {
        out.not_tried = "the statement does more than add the constraint: split it first";
        return out;
      }
      if (p.find(" set not null") != std::string::npos) {
        const std::string check = suffixed_name(finding.index, "_not_null");
        out.statements = {
            fmt::format("ALTER TABLE {} ADD CONSTRAINT {} CHECK ({} IS NOT NULL) NOT VALID",
                        finding.table, check, finding.index),
            fmt::format("ALTER TABLE {} VALIDATE CONSTRAINT {}", finding.table, check), statement,
            fmt::format("ALTER TABLE {} DROP CONSTRAINT {}", finding.table, check)};
        return out;
      }
      if (p.find(" add ") == std::string::npos || p.find(" not valid") != std::string::npos) {
        out.not_tried = "not an ADD CONSTRAINT that NOT VALID can follow";
        return out;
      }
      out.statements = {statement + " NOT VALID",
                        fmt::format("ALTER TABLE {} VALIDATE CONSTRAINT {}", finding.table, finding.index)};
      return out;
    }
    case MigrationFindingKind::rewrite:
      out.not_tried = "the fix is a change of the schema's design (a new column filled in batches), "
                      "not one statement to run instead";
      return out;
    case MigrationFindingKind::stall:
      out.not_tried = "the stall's fix depends on what held the lock that long";
      return out;
    case MigrationFindingKind::lock_without_timeout:
      out.not_tried = "the lock_timeout check measures the fix: add SET lock_timeout and run ab again";
      return out;
  }
  return out;
}

std::vector<results::MigrationTrial> try_fixes(const db::Provider& provider,
                                               const db::ConnectionInfo& base,
                                               const results::Migration& measured, const Plan& plan,
                                               const std::function<void(const std::string&)>& progress) {
  std::vector<results::MigrationTrial> trials;
  const double max_stall_ms = static_cast<double>(plan.gate.max_stall.count());
  for (const auto& f : measured.findings) {
    if (f.severity != results::MigrationSeverity::regression) continue;
    results::MigrationTrial trial;
    trial.kind = f.kind;
    trial.table = f.table;
    trial.statement = f.statement;
    FixStatements fix = fix_statements(f, f.statement);
    trial.fix = fix.statements;
    trial.not_tried = fix.not_tried;
    if (trial.fix.empty()) {
      trials.push_back(std::move(trial));
      continue;
    }
    // Each side alone on a fresh copy of base's data, with no lock check and no drift: the
    // statement as it was run, then the fix. Both copies start from the same database.
    util::TempDir folder("coldgate-migrate-try-");
    auto side = [&](const std::string& name, const std::vector<std::string>& statements)
        -> std::optional<results::MigrationTrialSide> {
      std::string sql;
      for (const auto& s : statements) sql += s + ";\n";
      const auto file = folder.path() / (name + ".sql");
      util::write_file_atomic(file, sql);
      Plan alone = plan;
      alone.migrate = config::Migrate{};
      alone.migrate.sql_dir = folder.path();
      alone.migrate.sql_dir_given = name + ".sql";
      alone.migrate.where = plan.migrate.where;
      alone.migrate.key = "migrate.sql_dir";
      alone.files = {file};
      alone.env = {};
      alone.lock_check = false;
      alone.who = plan.who + ", --try " + name;
      auto m = measure(provider, base, std::nullopt, alone, [](const std::string&) {});
      results::MigrationTrialSide out;
      if (!m) return out;  // it changed nothing
      out.wall_ms = m->wall_ms;
      for (const auto& t : m->tables) {
        if (t.name != f.table) continue;
        out.read_stall_ms = t.read_stall_ms;
        out.write_stall_ms = t.write_stall_ms;
        out.lock = t.lock;
      }
      out.regressions = static_cast<std::size_t>(
          std::count_if(m->findings.begin(), m->findings.end(), [&](const auto& x) {
            return x.table == f.table && x.severity == results::MigrationSeverity::regression;
          }));
      return out;
    };
    progress(fmt::format("migrate --try: {} on {}: the statement alone, then the fix ({} "
                         "statement{}), each on a copy of base's data",
                         to_string(f.kind), f.table, trial.fix.size(), trial.fix.size() == 1 ? "" : "s"));
    try {
      trial.before = side("as-is", {f.statement});
      trial.after = side("fix", trial.fix);
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted || e.code() == ExitCode::infrastructure) throw;
      trial.error = e.message();
    }
    if (trial.after) {
      trial.fixed = trial.after->regressions == 0 &&
                    std::max(trial.after->read_stall_ms, trial.after->write_stall_ms) <= max_stall_ms;
      auto ms = [](double v) { return results::format_value(v, "ms"); };
      progress(fmt::format("migrate --try: {} on {}: writes waited {} → {}, reads {} → {}: {}",
                           to_string(f.kind), f.table, ms(trial.before ? trial.before->write_stall_ms : 0),
                           ms(trial.after->write_stall_ms), ms(trial.before ? trial.before->read_stall_ms : 0),
                           ms(trial.after->read_stall_ms), trial.fixed ? "fixed" : "not fixed"));
    }
    trials.push_back(std::move(trial));
  }
  return trials;
}

}  // namespace coldgate::migrate
