// `coldgate init --from-dump`: which kind of pg_dump output a file or folder is, and so which
// setup step loads it.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "cli/init_command.hpp"
#include "setup/setup.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace coldgate::cli {

namespace {

namespace fs = std::filesystem;

using util::lower;
using util::starts_with_word;
using util::trim;

// psql's arguments of a meta-command line: whitespace-separated, 'single' or "double" quoted.
// With `strip_semicolons`, an argument's unquoted trailing `;` are dropped, as psql does for
// \connect's (psqlscanslash.l, psql_scan_slash_option: `\c chinook;` connects to chinook).
std::vector<std::string> meta_arguments(std::string_view rest, bool strip_semicolons = false) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && std::isspace(static_cast<unsigned char>(rest[i]))) ++i;
    if (i >= rest.size()) break;
    std::string arg;
    std::size_t quoted_end = 0;  // arg's length after its last quoted part
    while (i < rest.size() && !std::isspace(static_cast<unsigned char>(rest[i]))) {
      char q = rest[i];
      if (q == '\'' || q == '"') {
        for (++i; i < rest.size() && rest[i] != q; ++i) {
          if (q == '\'' && rest[i] == '\\' && i + 1 < rest.size()) ++i;
          arg.push_back(rest[i]);
        }
        ++i;
        quoted_end = arg.size();
      } else {
        arg.push_back(rest[i++]);
      }
    }
    while (strip_semicolons && arg.size() > quoted_end && arg.back() == ';') arg.pop_back();
    out.push_back(std::move(arg));
  }
  return out;
}

// The database of `\c` / `\connect`: its first argument after `-reuse-previous=…`, or the
// dbname of a connection string (pg_dump writes `\connect -reuse-previous=on "dbname='x'"`
// for a name that needs quoting); "" for `-` (the current one) or none.
std::string connect_target(std::string_view rest) {
  std::vector<std::string> args = meta_arguments(rest, true);
  auto it = args.begin();
  if (it != args.end() && it->rfind("-reuse-previous", 0) == 0) ++it;
  if (it == args.end() || *it == "-") return {};
  if (it->find('=') != std::string::npos) {
    for (const auto& arg : meta_arguments(*it)) {
      if (arg.rfind("dbname=", 0) == 0) return arg.substr(7);
    }
    return {};
  }
  return *it;
}

DumpKind detect_archive_folder(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path / "toc.dat", ec)) {
    throw usage_error(path.string(),
                      "is a folder without toc.dat, so not a directory-format pg_dump archive; "
                      "pass a dump file or the folder `pg_dump -Fd` wrote");
  }
  DumpKind kind;
  kind.step = DumpKind::Step::restore;
  kind.what = "a directory-format archive (pg_dump -Fd: toc.dat)";
  return kind;
}

}  // namespace

DumpKind detect_dump(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw usage_error(path.string(), "not found; pass the path of a pg_dump file or folder");
  }
  if (fs::is_directory(path, ec)) return detect_archive_folder(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error(path.string(), "cannot be read");
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  if (head.empty()) {
    throw usage_error(path.string(), "is empty; pass the output of pg_dump");
  }
  DumpKind kind;
  if (head.rfind("PGDMP", 0) == 0) {
    kind.step = DumpKind::Step::restore;
    kind.what = "a custom-format archive (pg_dump -Fc: starts with PGDMP)";
    return kind;
  }
  if (head.size() >= 262 && head.compare(257, 5, "ustar") == 0) {
    kind.step = DumpKind::Step::restore;
    kind.what = "a tar-format archive (pg_dump -Ft)";
    return kind;
  }
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    throw usage_error(path.string(), fmt::format("is gzip-compressed; unpack it first (gunzip -k "
                                                 "{}) and pass the uncompressed file",
                                                 path.string()));
  }
  if (head.find('\0') != std::string::npos) {
    throw usage_error(path.string(),
                      "is neither SQL text nor a pg_dump archive (a custom-format one starts "
                      "with PGDMP); pass the output of pg_dump");
  }

  in.clear();
  in.seekg(0);
  std::string line;
  std::size_t number = 0;
  bool in_copy = false;             // inside COPY … FROM stdin data, up to `\.`
  std::string psql_reason;          // the first line that needs psql
  std::vector<std::string> created;
  std::string connected;            // the first \connect target
  std::size_t connected_line = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (in_copy) {
      if (line == "\\.") in_copy = false;
      continue;
    }
    std::string_view l = line;
    if (!l.empty() && l.front() == '\\') {
      std::string_view command = l.substr(1, l.find_first_of(" \t") - 1);
      if (psql_reason.empty()) psql_reason = fmt::format("line {}: \\{}", number, command);
      if ((command == "c" || command == "connect") && connected.empty()) {
        std::string target = connect_target(l.substr(1 + command.size()));
        bool created_here = std::find(created.begin(), created.end(), target) != created.end();
        if (!target.empty() && (created_here || (target != "postgres" && target != "template1"))) {
          connected = target;
          connected_line = number;
        }
      }
      continue;
    }
    if (starts_with_word(l, "copy") && lower(trim(l)).ends_with("from stdin;")) {
      in_copy = true;
      if (psql_reason.empty()) psql_reason = fmt::format("line {}: COPY … FROM stdin", number);
      continue;
    }
    if (auto db = setup::database_statement(l, "create")) {
      if (std::find(created.begin(), created.end(), *db) == created.end()) created.push_back(*db);
      continue;
    }
    if (setup::database_statement(l, "drop")) continue;
    constexpr std::string_view k_dumped_from = "-- Dumped from database version ";
    if (kind.server_version.empty() && l.rfind(k_dumped_from, 0) == 0) {
      std::string_view v = l.substr(k_dumped_from.size());
      kind.server_version = std::string(v.substr(0, v.find(' ')));
    }
  }

  if (psql_reason.empty()) {
    kind.step = DumpKind::Step::sql;
    kind.what = "plain SQL without psql meta-commands";
    return kind;
  }
  kind.step = DumpKind::Step::psql;
  bool creates = std::find(created.begin(), created.end(), connected) != created.end();
  if (creates) {
    kind.database = connected;
    for (const auto& db : created) {
      if (db != connected) kind.also_created.push_back(db);
    }
    kind.what = fmt::format("a psql script that creates database {} and connects to it (line {})",
                            connected, connected_line);
  } else {
    kind.connects = connected;
    kind.what = fmt::format("a psql script ({})", psql_reason);
  }
  return kind;
}

}  // namespace coldgate::cli
