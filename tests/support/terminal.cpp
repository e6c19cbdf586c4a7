#include "support/terminal.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "util/process.hpp"

namespace coldgate::testing {

namespace {

namespace fs = std::filesystem;

constexpr auto k_bound = std::chrono::seconds(60);

// Records the terminal's mode around the command. Job control (set -m) runs the command as an
// interactive shell does: in a process group of its own in the terminal's foreground, so Ctrl-C
// and Ctrl-Z reach it as they reach a command typed at a prompt (a process group without job
// control would be orphaned, and the kernel discards Ctrl-Z for those).
constexpr const char* k_wrapper = R"(set -m
trap : INT TERM
unset CI
dir=$1
shift
stty -g > "$dir/stty.before"
"$@"
echo $? > "$dir/exit.tmp"
stty -g > "$dir/stty.after"
mv "$dir/exit.tmp" "$dir/exit"
)";

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TmuxSession::TmuxSession(const std::vector<std::string>& argv, const fs::path& cwd,
                         const std::vector<std::string>& env) {
  // The server's socket in the session's own folder, removed with it: tmux's kill-server leaves
  // a named socket (-L) behind in /tmp/tmux-<uid>/.
  m_socket = (m_dir / "tmux.sock").string();
  m_dir.write("wrapper.sh", k_wrapper);
  m_dir.write("tmux.conf", "set -g remain-on-exit on\nset -g history-limit 10000\n");
  std::vector<std::string> cmd{"tmux", "-S", m_socket, "-f", (m_dir / "tmux.conf").string(),
                               "new-session", "-d", "-x", "200", "-y", "50", "-s", "t",
                               "-c", cwd.string(), "--", "/bin/sh", (m_dir / "wrapper.sh").string(),
                               m_dir.path().string()};
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  auto r = util::run({.argv = cmd, .env = env, .env_unset = {"CI", "TMUX"}});
  if (!r.status.ok()) ADD_FAILURE() << "tmux new-session failed: " << r.err;
}

TmuxSession::~TmuxSession() {
  util::run({.argv = {"tmux", "-S", m_socket, "kill-server"}});
}

std::string TmuxSession::tmux(const std::vector<std::string>& args) const {
  std::vector<std::string> cmd{"tmux", "-S", m_socket};
  cmd.insert(cmd.end(), args.begin(), args.end());
  auto r = util::run({.argv = cmd});
  if (!r.status.ok()) ADD_FAILURE() << "tmux " << args.front() << " failed: " << r.err;
  return r.out;
}

void TmuxSession::keys(const std::vector<std::string>& names) {
  for (const auto& name : names) tmux({"send-keys", "-t", "t", name});
}

std::string TmuxSession::screen() const {
  std::istringstream in(tmux({"capture-pane", "-p", "-J", "-S", "-", "-t", "t"}));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Pane is dead", 0) == 0) continue;
    line.erase(line.find_last_not_of(' ') + 1);  // -J keeps the spaces a line ends with
    lines.push_back(line);
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

std::string TmuxSession::wait_for(const std::string& text) {
  auto until = std::chrono::steady_clock::now() + k_bound;
  std::string last;
  while (std::chrono::steady_clock::now() < until) {
    last = screen();
    if (last.find(text) != std::string::npos) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "the screen never showed '" << text << "'; it shows:\n" << last;
  return last;
}

int TmuxSession::wait_exit() {
  auto until = std::chrono::steady_clock::now() + k_bound;
  while (std::chrono::steady_clock::now() < until) {
    std::error_code ec;
    if (fs::exists(m_dir / "exit", ec)) return std::stoi(read_all(m_dir / "exit"));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "the command did not exit; the screen shows:\n" << screen();
  return -1;
}

pid_t TmuxSession::command_pid() const {
  std::string shell = tmux({"display-message", "-p", "-t", "t", "#{pane_pid}"});
  while (!shell.empty() && shell.back() == '\n') shell.pop_back();
  std::istringstream children(read_all("/proc/" + shell + "/task/" + shell + "/children"));
  pid_t pid = -1;
  if (!(children >> pid)) return -1;
  return pid;
}

std::string TmuxSession::stty_before() const { return read_all(m_dir / "stty.before"); }
std::string TmuxSession::stty_after() const { return read_all(m_dir / "stty.after"); }

}  // namespace coldgate::testing
