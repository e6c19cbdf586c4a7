// `coldgate review`: the pending snapshots one at a time on a terminal, one key each.
#include "cli/review_command.hpp"

#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string_view>

#include <fmt/core.h>

#include "cli/commands.hpp"
#include "snapshot/snapshot.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate::cli {

namespace {

namespace fs = std::filesystem;

// The terminal in cbreak mode while it lives: each key arrives alone, without Enter and without
// echo (as `cargo insta review` reads them). Ctrl-C still signals (the interrupt handlers turn it
// into Error(interrupted)); Ctrl-Z and Ctrl-\ become plain keys, so no stop or core dump can
// leave the terminal in this mode. The destructor puts the saved mode back, on every exit path
// that unwinds (quit, the end of input, an exception, SIGINT/SIGTERM).
class KeyReader {
 public:
  KeyReader() {
    util::install_interrupt_handlers();  // before the mode changes: a signal then unwinds
    if (::tcgetattr(STDIN_FILENO, &m_saved) != 0) {
      throw Error(ExitCode::infrastructure, "stdin",
                  fmt::format("cannot read the terminal's mode: {}", std::strerror(errno)));
    }
    termios keys = m_saved;
    keys.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    keys.c_cc[VMIN] = 1;
    keys.c_cc[VTIME] = 0;
    keys.c_cc[VSUSP] = _POSIX_VDISABLE;
    keys.c_cc[VQUIT] = _POSIX_VDISABLE;
    if (::tcsetattr(STDIN_FILENO, TCSANOW, &keys) != 0) {
      throw Error(ExitCode::infrastructure, "stdin",
                  fmt::format("cannot set the terminal's mode: {}", std::strerror(errno)));
    }
  }
  KeyReader(const KeyReader&) = delete;
  KeyReader& operator=(const KeyReader&) = delete;
  ~KeyReader() { ::tcsetattr(STDIN_FILENO, TCSANOW, &m_saved); }

  // The next key's byte; '\0' at the end of input. Throws Error(interrupted) on SIGINT/SIGTERM.
  char next() {
    for (;;) {
      util::throw_if_interrupted();
      pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {util::interrupt_fd(), POLLIN, 0}};
      int n = ::poll(fds, fds[1].fd >= 0 ? 2 : 1, -1);
      if (n < 0 && errno != EINTR) {
        throw Error(ExitCode::infrastructure, "stdin",
                    fmt::format("cannot wait for a key: {}", std::strerror(errno)));
      }
      util::throw_if_interrupted();
      if (n <= 0 || fds[0].revents == 0) continue;
      char c = 0;
      ssize_t r = ::read(STDIN_FILENO, &c, 1);
      if (r == 1) return c;
      if (r == 0) return '\0';
      if (errno != EINTR && errno != EAGAIN) {
        throw Error(ExitCode::infrastructure, "stdin",
                    fmt::format("cannot read a key: {}", std::strerror(errno)));
      }
    }
  }

 private:
  termios m_saved{};
};

enum class Choice { accept, reject, skip, quit };

// What one key means; nullopt for a key that means nothing here.
std::optional<Choice> choice_of(char key) {
  switch (key) {
    case 'a':
    case 'A':
      return Choice::accept;
    case 'r':
    case 'R':
      return Choice::reject;
    case 's':
    case 'S':
      return Choice::skip;
    case 'q':
    case 'Q':
    case '\x1b':  // Esc
    case '\x04':  // Ctrl-D: in cbreak mode a byte, not the end of input
    case '\0':    // the end of input
      return Choice::quit;
    default:
      return std::nullopt;
  }
}

// The stages of each outcome, for the summary.
struct Tally {
  std::vector<std::string> accepted;
  std::vector<std::string> rejected;
  std::vector<std::string> skipped;
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// `accept` is how to take the rest: "coldgate accept" with the run's -c.
void print_summary(const Tally& t, const std::string& accept) {
  std::cout << fmt::format("review: {} accepted, {} rejected, {} skipped\n", t.accepted.size(),
                           t.rejected.size(), t.skipped.size());
  if (!t.accepted.empty()) std::cout << "  accepted: " << joined(t.accepted) << '\n';
  if (!t.rejected.empty()) std::cout << "  rejected: " << joined(t.rejected) << '\n';
  if (!t.skipped.empty()) {
    std::string options = accept.substr(std::string_view("coldgate accept").size());
    std::cout << "  skipped:  " << joined(t.skipped) << " (still pending: coldgate review"
              << options << ", or " << accept << ")\n";
  }
  std::cout.flush();
}

constexpr const char* k_prompt =
    "  a accept · r reject (delete the candidate) · s skip · q quit › ";

// Shows one candidate and acts on the keys until one decides it; the choice made.
Choice review_one(const snapshot::Claim& claim, const snapshot::Source& source, std::size_t index,
                  std::size_t count, KeyReader& keys) {
  snapshot::PendingView view = snapshot::view_pending(claim, use_color("auto"), source);
  std::cout << fmt::format("\n── {}/{} · stage {} · {}\n", index + 1, count, claim.stage,
                           util::display_path(claim.path));
  std::cout << view.message << '\n';
  if (!view.diff.empty()) {
    std::cout << '\n' << view.diff;
    if (view.diff.back() != '\n') std::cout << '\n';
  }
  for (;;) {
    std::cout << '\n' << k_prompt << std::flush;
    char key = keys.next();
    std::optional<Choice> choice = choice_of(key);
    while (!choice) {
      key = keys.next();
      choice = choice_of(key);
    }
    switch (*choice) {
      case Choice::accept:
        std::cout << "a\n";
        try {
          // Exactly `coldgate accept STAGE` for this one claim.
          for (const auto& a : snapshot::accept({claim}, {}, snapshot::Mode::local, source)) {
            std::cout << "accepted " << a.stage << ": " << util::display_path(a.path) << '\n';
          }
          return Choice::accept;
        } catch (const Error& e) {
          if (e.code() != ExitCode::usage) throw;
          std::cout << "not accepted: " << e.message() << '\n';  // reject or skip it instead
        }
        break;
      case Choice::reject:
        std::cout << "r\nrejected " << claim.stage << ": removed "
                  << util::display_path(snapshot::reject(claim, source)) << '\n';
        return Choice::reject;
      case Choice::skip:
        std::cout << "s\nskipped " << claim.stage << '\n';
        return Choice::skip;
      case Choice::quit:
        std::cout << (key == 'q' || key == 'Q' ? "q" : "") << '\n';
        return Choice::quit;
    }
  }
}

}  // namespace

int run_review(const ReviewArgs& args) {
  const std::string accept =
      accept_command(args.config) + (args.from.empty() ? "" : " --from " + args.from);
  if (ci_mode(args.ci)) {
    throw usage_error("", "review is interactive and CI mode (--ci, CI=true) never writes "
                          "under snapshots/: run it locally with --no-ci, or take the candidates "
                          "from the job's artifacts (--from DIR)");
  }
  for (auto [fd, name] : {std::pair{STDIN_FILENO, "stdin"}, std::pair{STDOUT_FILENO, "stdout"}}) {
    if (::isatty(fd) != 1) {
      throw usage_error("", fmt::format("review needs a terminal ({} is not one): run `{}` to "
                                        "take every pending snapshot",
                                        name, accept));
    }
  }
  auto cfg = load_snapshot_config(args.config, args.allow_outside);
  const snapshot::Source source = candidate_source(args, cfg);
  const auto pending =
      snapshot::pending_claims(snapshot_claims(cfg), args.stages, "review", source);
  if (pending.empty()) {
    if (args.from.empty()) {
      std::cout << "review: no pending snapshots (coldgate run writes a .new candidate beside "
                   "each snapshot that does not match)\n";
    } else {
      std::cout << fmt::format("review: no pending snapshots under {} (coldgate run --ci and "
                               "coldgate ab write a candidate there for each snapshot that "
                               "does not match)\n",
                               (fs::path(args.from) / "snapshots").string());
    }
    return 0;
  }

  std::cout << fmt::format("review: {} pending snapshot{}\n", pending.size(),
                           pending.size() == 1 ? "" : "s");
  KeyReader keys;
  Tally tally;
  try {
    for (std::size_t i = 0; i < pending.size(); ++i) {
      Choice c = review_one(pending[i], source, i, pending.size(), keys);
      if (c == Choice::quit) {
        for (std::size_t j = i; j < pending.size(); ++j) tally.skipped.push_back(pending[j].stage);
        break;
      }
      auto& list = c == Choice::accept ? tally.accepted
                   : c == Choice::reject ? tally.rejected
                                         : tally.skipped;
      list.push_back(pending[i].stage);
    }
  } catch (const Error&) {
    // What was decided before the error or interrupt stays decided: say so, then end.
    std::cout << '\n';
    print_summary(tally, accept);
    throw;
  }
  std::cout << '\n';
  print_summary(tally, accept);
  return 0;
}

}  // namespace coldgate::cli
