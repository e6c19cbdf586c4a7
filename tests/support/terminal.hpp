#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "support/support.hpp"

namespace coldgate::testing {

/// A command on a terminal as a person at the keyboard meets it: a detached tmux session of
/// 200×50 on a private server (`tmux -L <unique socket>`, no ~/.tmux.conf) whose pane stays after
/// the command exits. The command runs under a small shell that records `stty -g` of the pane's
/// terminal before and after it and its exit status. The destructor kills that tmux server,
/// whatever happened in the test.
class TmuxSession {
 public:
  /// Starts `argv` in folder `cwd`, with `env` ("K=V") added and CI unset.
  TmuxSession(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
              const std::vector<std::string>& env = {});
  ~TmuxSession();
  TmuxSession(const TmuxSession&) = delete;
  TmuxSession& operator=(const TmuxSession&) = delete;

  /// `tmux send-keys` of each key name in turn ("a", "C-c", "Escape").
  void keys(const std::vector<std::string>& names);
  /// The pane's text from its first line (`capture-pane -p -J -S -`: what scrolled off too,
  /// wrapped lines joined), without spaces at line ends, trailing blank lines and tmux's "Pane
  /// is dead" line.
  std::string screen() const;
  /// Polls screen() until it contains `text` and returns it; a bound of 60 s on the wait, not a
  /// pace: past it the test fails with the last screen. Waits on content, never a fixed sleep.
  std::string wait_for(const std::string& text);
  /// Waits (same bound) until the command and its shell have exited; the command's exit status
  /// (128 + signal when a signal ended it), or -1 when the bound passed.
  int wait_exit();
  /// The pid of the command (the shell's child), once it runs; -1 when it cannot be found.
  pid_t command_pid() const;
  /// `stty -g` of the pane's terminal before the command started and after it exited.
  std::string stty_before() const;
  std::string stty_after() const;

 private:
  std::string tmux(const std::vector<std::string>& args) const;
  std::string m_socket;
  TempDir m_dir;  // the wrapper shell and what it records
};

}  // namespace coldgate::testing
