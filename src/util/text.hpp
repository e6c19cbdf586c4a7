#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace coldgate::util {

/// `s` without leading and trailing ASCII whitespace.
std::string_view trim(std::string_view s);

/// `s` with ASCII letters in lower case (SQL keywords, unquoted identifiers as PostgreSQL folds them).
std::string lower(std::string_view s);

/// Whether `line` starts with the lower-case `word` in any letter case, followed by whitespace
/// or the end (`CREATE DATABASE` → word "create").
bool starts_with_word(std::string_view line, std::string_view word);

/// Length in bytes of the well-formed UTF-8 sequence starting at text[i], or 0 when none starts
/// there (RFC 3629 §4: no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

/// `text` cut to at most `max_bytes` bytes at a UTF-8 character boundary (no partial sequence).
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

/// Byte offset of the first byte of `text` that is not part of well-formed UTF-8 (RFC 3629),
/// or nullopt when all of it is.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

/// Whether `line` states why a program failed: one of PostgreSQL's error severities (ERROR,
/// FATAL, PANIC: PostgreSQL docs, "Message Severity Levels") as the server logs it and psql and
/// the drivers repeat it, or an exception's heading as the runtimes print it — a name ending in
/// Error or Exception at the start ("ValueError: …", "sqlalchemy.exc.ProgrammingError: …",
/// Node.js's "TypeError [ERR_X]: …", "Uncaught Error: …"), Ruby's frame ending "(NameError)",
/// Java's "Exception in thread …", .NET's "Unhandled exception. …", and "error: "/"fatal: " at
/// the start (git, compilers, node-postgres). An indented line only for a severity.
bool cause_line(std::string_view line);

/// `err`'s last `max_lines` lines (tail_lines) and, when its last cause_line — or the exception
/// line that ends a Python traceback — comes before them, that line first, then a line
/// "[… N lines …]" for the N lines left out: an exception followed by a long list or stack
/// keeps its heading. "" for an empty `err`.
std::string stderr_excerpt(const std::string& err, std::size_t max_lines);

/// The line of a failed build's log that says why, when it comes before the log's last
/// `tail` lines (which a message quotes anyway): its last cause_line or compiler error ("file:
/// line: error: …", TypeScript's "file(l,c): error TS…"), else npm's own message — the first
/// "npm ERR! …"/"npm error …" line after its code lines, not the usage text npm prints after
/// it. Trimmed, cut to 240 bytes of whole UTF-8 characters (then "…"); "" when there is none.
std::string build_log_cause(std::string_view log, std::size_t tail);

/// Whether a failure's text says that a disk filled: strerror(ENOSPC) or (EDQUOT) as C's
/// messages spell them ("No space left on device", "Disk quota exceeded"), or SQLSTATE 53100
/// (disk_full, PostgreSQL's "Appendix A. Error Codes") as coldgate and psql's verbose form
/// write it ("SQLSTATE 53100", "53100:"). A full disk is the machine's fault, never the change's.
bool says_disk_full(std::string_view text);

/// Whether `line` is the "[… N lines …]" that stderr_excerpt puts after the cause it kept.
bool omission_line(std::string_view line);

}  // namespace coldgate::util
