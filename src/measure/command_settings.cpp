#include "measure/command_settings.hpp"

#include <fmt/core.h>

#include <cctype>
#include <iostream>
#include <pqxx/pqxx>
#include <set>

#include "db/connection.hpp"
#include "db/pqxx_compat.hpp"
#include "util/error.hpp"

namespace coldgate::measure {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The role's own settings in the current database, one "name=value" per row.
const char* const k_role_settings =
    "SELECT unnest(s.setconfig) FROM pg_db_role_setting s "
    "WHERE s.setrole = (SELECT oid FROM pg_roles WHERE rolname = current_user) "
    "AND s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())";

// "ALTER ROLE CURRENT_USER IN DATABASE <db> SET name = value", with `value` taken as
// set_config() takes it (the text PGOPTIONS would pass): as a literal, which the server stores as
// written, except for the list settings, where it would store one quoted element — those are
// set in the transaction first and stored FROM CURRENT, as the setting shows itself.
void set_for_role(pqxx::work& tx, const std::string& target, const std::string& name,
                  const std::string& value) {
  if (is_list_quoted_setting(name)) {
    db::exec_params(tx, "SELECT set_config($1, $2, true)", {name, value});
    tx.exec(target + "SET " + tx.quote_name(name) + " FROM CURRENT");
  } else {
    tx.exec(target + "SET " + tx.quote_name(name) + " = " + tx.quote(value));
  }
}

// For messages: an identifier and a literal as SQL writes them (standard_conforming_strings).
std::string ident(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}
std::string literal(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string pgoptions(const std::map<std::string, std::string>& settings) {
  std::string out;
  for (const auto& [name, value] : settings) {
    if (!out.empty()) out += ' ';
    out += "-c " + name + "=";
    for (char c : value) {
      if (c == '\\' || std::isspace(static_cast<unsigned char>(c))) out += '\\';
      out += c;
    }
  }
  return out;
}

bool is_list_quoted_setting(const std::string& name) {
  static const std::set<std::string> k_names = {
      "local_preload_libraries",  "search_path",      "session_preload_libraries",
      "shared_preload_libraries", "temp_tablespaces", "unix_socket_directories"};
  return k_names.count(lower(name)) > 0;
}

void put_back_role_settings(const db::ConnectionInfo& database, const RoleSettings& before) {
  db::Connection conn(database);
  pqxx::work tx(conn.raw());
  const std::string target =
      "ALTER ROLE CURRENT_USER IN DATABASE " + tx.quote_name(database.dbname) + " ";
  for (const auto& [name, stored] : before) {
    if (stored) {
      set_for_role(tx, target, stored->first, stored->second);
    } else {
      tx.exec(target + "RESET " + tx.quote_name(name));
    }
  }
  tx.commit();
}

CommandSettings::CommandSettings(const config::Stage& stage, const db::ConnectionInfo& database,
                                 std::vector<std::string>& env,
                                 const std::filesystem::path& journal_dir)
    : m_where(fmt::format("stage {}: settings_via: role", stage.name)), m_database(database) {
  if (stage.settings.empty()) return;
  if (stage.settings_via == config::SettingsVia::pgoptions) {
    env.push_back("PGOPTIONS=" + pgoptions(stage.settings));
    return;
  }
  // A command undoing a killed run's journal of this role must not run between our reading of
  // the settings and the change: it would put back what we are about to journal as "before".
  JournalLock lock(journal_dir);
  db::Connection conn(database);
  try {
    pqxx::work tx(conn.raw());
    pqxx::result who = tx.exec("SELECT current_user, current_database()");
    m_role = who[0][0].c_str();
    m_dbname = who[0][1].c_str();
    std::map<std::string, std::pair<std::string, std::string>> stored;  // lower name → entry
    for (const auto& row : tx.exec(k_role_settings)) {
      std::string entry = row[0].c_str();
      auto eq = entry.find('=');
      if (eq == std::string::npos) continue;
      stored[lower(entry.substr(0, eq))] = {entry.substr(0, eq), entry.substr(eq + 1)};
    }
    for (const auto& [name, value] : stage.settings) {
      auto it = stored.find(lower(name));
      m_before[name] = it == stored.end() ? std::nullopt : std::optional(it->second);
    }
    db::ConnectionInfo here = m_database;
    here.dbname = m_dbname;
    m_journal = Journal::role_settings(journal_dir, here, m_role, m_before);
    const std::string target =
        "ALTER ROLE CURRENT_USER IN DATABASE " + tx.quote_name(m_dbname) + " ";
    for (const auto& [name, value] : stage.settings) set_for_role(tx, target, name, value);
    tx.commit();
  } catch (const pqxx::sql_error& e) {
    m_journal.done();  // rolled back: nothing changed
    throw db::translate(e, m_where);
  } catch (const pqxx::broken_connection& e) {
    // Whether the commit reached the server is unknown: the journal stays for the next command.
    throw Error(ExitCode::infrastructure, m_where,
                std::string("lost connection to the server: ") + e.what());
  }
  m_applied = true;
}

CommandSettings::~CommandSettings() {
  try {
    restore();
  } catch (const Error& e) {
    std::cerr << "coldgate: warning: " << e.message() << '\n';
  } catch (const std::exception& e) {
    std::cerr << "coldgate: warning: " << m_where << ": " << e.what() << '\n';
  }
}

void CommandSettings::restore() {
  if (!m_applied) return;
  m_applied = false;
  std::string why;
  try {
    db::ConnectionInfo here = m_database;
    here.dbname = m_dbname;
    put_back_role_settings(here, m_before);
    m_journal.done();
    return;
  } catch (const pqxx::sql_error& e) {
    why = db::translate(e, "").what();
  } catch (const Error& e) {
    why = e.message();
  } catch (const std::exception& e) {
    why = e.what();
  }
  std::string by_hand;
  for (const auto& [name, stored] : m_before) {
    std::string target =
        fmt::format("ALTER ROLE {} IN DATABASE {} ", ident(m_role), ident(m_dbname));
    by_hand += (by_hand.empty() ? "" : "; ") + target +
               (!stored ? "RESET " + name
                : is_list_quoted_setting(name)
                    ? "SET " + stored->first + " = " + stored->second  // stored quoted
                    : "SET " + stored->first + " = " + literal(stored->second));
  }
  throw Error(
      ExitCode::gate_failed, m_where,
      fmt::format("could not put the role's settings back ({}); run {} yourself", why, by_hand));
}

}  // namespace coldgate::measure
