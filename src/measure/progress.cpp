#include "measure/progress.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>

#include "measure/results.hpp"

namespace coldgate::measure {

ProgressStyle detect_progress_style(bool ci) {
  const char* gha = std::getenv("GITHUB_ACTIONS");
  if (gha && std::string_view(gha) == "true") return ProgressStyle::github;
  if (!ci && ::isatty(STDERR_FILENO) == 1) return ProgressStyle::tty;
  return ProgressStyle::plain;
}

Progress::Progress(ProgressStyle style, std::ostream& out, int stage_count)
    : m_style(style), m_out(out), m_stage_count(stage_count),
      m_start(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (m_line_open) m_out << "\r\033[2K" << std::flush;
}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

std::string Progress::prefix() const {
  return fmt::format("[{}/{}] {}", m_stage_index, m_stage_count, m_stage);
}

void Progress::status(const std::string& text) {
  if (m_style != ProgressStyle::tty) return;
  m_out << "\r\033[2K" << text << std::flush;
  m_line_open = true;
}

void Progress::line(std::string_view text) {
  if (m_line_open) {
    m_out << "\r\033[2K";
    m_line_open = false;
  }
  m_out << "coldgate: " << text << '\n' << std::flush;
}

void Progress::stage_start(int index, std::string_view name) {
  m_stage_index = index;
  m_stage = name;
  if (m_style == ProgressStyle::github) m_out << "::group::" << prefix() << '\n' << std::flush;
  status(fmt::format("{} · starting · {:.1f} s", prefix(), elapsed_s()));
}

void Progress::step(std::string_view what) {
  if (m_style == ProgressStyle::tty) {
    status(fmt::format("{} · {} · {:.1f} s", prefix(), what, elapsed_s()));
  }
}

void Progress::run_done(int run, int runs, double wall_ms) {
  if (m_style == ProgressStyle::tty) return;
  m_out << fmt::format("coldgate: {}: cold run {}/{}: {:.1f} ms\n", prefix(), run, runs, wall_ms)
        << std::flush;
}

void Progress::stage_end(const StageResult& result) {
  std::string outcome;
  if (result.failed()) {
    outcome = "failed: " + result.error.substr(0, result.error.find('\n'));
  } else {
    const Metric* wall = result.find("wall_ms");
    outcome = fmt::format("done, median wall {:.1f} ms", wall ? median(wall->cold) : 0.0);
    if (result.snapshot) outcome += ", snapshot " + result.snapshot->status;
  }
  line(fmt::format("{}: {} ({:.1f} s elapsed)", prefix(), outcome, elapsed_s()));
  if (m_style == ProgressStyle::github) m_out << "::endgroup::\n" << std::flush;
}

}  // namespace coldgate::measure
