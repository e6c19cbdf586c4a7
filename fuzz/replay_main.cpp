// A main for a fuzz target without libFuzzer (as libFuzzer's StandaloneFuzzTargetMain.c): runs
// LLVMFuzzerTestOneInput once on every file named on the command line, and on every file of
// every folder named (not recursing), in name order. It is how the test build replays the
// checked-in corpora (fuzz/CMakeLists.txt, ctest FuzzCorpus.<target>) with any compiler.
//
//   fuzz_<target>_replay PATH...     exit 0: every input ran; 1: a path is unreadable or
//                                    names no input; any failure ends the process at once
//
// A target reports a broken property by std::abort() and a sanitizer by its report: either
// ends the process, so before that happens the input's path is written to stderr — from the
// SIGABRT handler, the sanitizers' death callback, or the handler of a crash signal that no
// sanitizer handles. An exception out of the target is a failure too (libFuzzer would report
// it as a crash), and an input running longer than k_timeout_seconds (a hang) is one.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// Present in a sanitizer build, null otherwise: the sanitizers call it before they end the
// process after a report.
extern "C" __attribute__((weak)) void __sanitizer_set_death_callback(void (*callback)());

namespace {

// bench/fuzz.sh gives libFuzzer -timeout=25; ASan and a loaded CI machine get more here.
constexpr unsigned k_timeout_seconds = 120;

const char* g_program = "replay";
// The input under way (its path's c_str), for the handlers; null between inputs.
const char* volatile g_current = nullptr;
volatile std::sig_atomic_t g_reported = 0;

// Async-signal-safe: write(2) only.
void say(const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

// Names the input that failed, once (a sanitizer with abort_on_error=1 reports, then aborts).
void report_failure(const char* what) {
  if (g_reported) return;
  g_reported = 1;
  say(g_program);
  say(": ");
  say(what);
  const char* current = g_current;
  if (current != nullptr) {
    say(" on input ");
    say(current);
  } else {
    say(" outside any input (a leak is reported at exit)");
  }
  say("\n");
}

void on_death() { report_failure("FAILED (sanitizer report above)"); }

void on_signal(int sig) {
  switch (sig) {
    case SIGABRT: report_failure("FAILED (abort: a property of the target broke)"); break;
    case SIGALRM: report_failure("FAILED (timeout: an input ran longer than the limit)"); break;
    default: report_failure("FAILED (crash signal)"); break;
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// Installs on_signal for sig unless a handler is there already (a sanitizer's, which prints a
// report with a stack and then calls on_death).
void handle(int sig) {
  struct sigaction old {};
  if (sigaction(sig, nullptr, &old) != 0) return;
  if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) return;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(sig, &action, nullptr);
}

bool read_file(const std::filesystem::path& path, std::vector<std::uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  g_program = argc > 0 ? argv[0] : "replay";
  if (const char* slash = std::strrchr(g_program, '/')) g_program = slash + 1;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", g_program);
    return 1;
  }
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(on_death);
  for (int sig : {SIGABRT, SIGALRM, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) handle(sig);

  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(arg, ec))
        if (entry.is_regular_file()) files.push_back(entry.path());
      if (ec) {
        std::fprintf(stderr, "%s: %s: %s\n", g_program, argv[i], ec.message().c_str());
        return 1;
      }
      if (files.empty()) {
        std::fprintf(stderr, "%s: %s: no inputs in this folder\n", g_program, argv[i]);
        return 1;
      }
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else if (std::filesystem::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "%s: %s: no such file or folder\n", g_program, argv[i]);
      return 1;
    }
  }

  std::vector<std::uint8_t> data;
  std::size_t bytes = 0;
  for (const auto& path : inputs) {
    if (!read_file(path, data)) {
      std::fprintf(stderr, "%s: %s: cannot read\n", g_program, path.c_str());
      return 1;
    }
    // A heap block of exactly the input's size, as libFuzzer passes (never null, even when
    // empty): ASan then reports a read one byte past the input.
    const std::unique_ptr<std::uint8_t[]> input(new std::uint8_t[data.size()]);
    std::copy(data.begin(), data.end(), input.get());
    g_current = path.c_str();
    ::alarm(k_timeout_seconds);
    try {
      LLVMFuzzerTestOneInput(input.get(), data.size());
    } catch (const std::exception& e) {
      report_failure("FAILED (exception out of the target)");
      std::fprintf(stderr, "  %s\n", e.what());
      return 1;
    } catch (...) {
      report_failure("FAILED (exception out of the target)");
      return 1;
    }
    ::alarm(0);
    g_current = nullptr;
    bytes += data.size();
  }
  std::printf("%s: %zu inputs (%zu bytes) ran, every property held\n", g_program, inputs.size(),
              bytes);
  return 0;
}
