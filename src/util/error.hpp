#pragma once

#include <string>
#include <stdexcept>

namespace coldgate {

/// Process exit codes of the command line, as in docs/architecture.md ("Exit codes").
enum class ExitCode : int {
  ok = 0,              // pass
  gate_failed = 1,     // the gate says no: snapshot, regression, failed stage
  usage = 2,           // usage or config error
  infrastructure = 3,  // server did not start, engine missing, I/O failure
  interrupted = 130,   // SIGINT / SIGTERM
};

/// The one error type every module throws; `main` prints it as
/// `coldgate: error: <where>: <what>` and exits with `code()`.
class Error : public std::runtime_error {
 public:
  /// `where` names the place (`file:line:col`, stage name, `file: byte N`); may be empty.
  Error(ExitCode code, std::string where, const std::string& what)
      : std::runtime_error(what), m_code(code), m_where(std::move(where)) {}

  /// Exit code the process should end with.
  ExitCode code() const noexcept { return m_code; }
  /// Where the error happened; empty when it has no place.
  const std::string& where() const noexcept { return m_where; }
  /// "<where>: <what>", or just "<what>" when there is no place.
  std::string message() const { return m_where.empty() ? what() : m_where + ": " + what(); }

 private:
  ExitCode m_code;
  std::string m_where;
};

/// Shorthand for a usage/config error (exit 2).
inline Error usage_error(std::string where, const std::string& what) {
  return Error(ExitCode::usage, std::move(where), what);
}

}  // namespace coldgate
