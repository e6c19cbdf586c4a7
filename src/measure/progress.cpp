#include "measure/progress.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>

#include "results/format.hpp"
#include "results/results.hpp"

namespace coldgate::measure {
using namespace coldgate::results;

ProgressStyle detect_progress_style(bool ci) {
  const char* gha = std::getenv("GITHUB_ACTIONS");
  if (gha && std::string_view(gha) == "true") return ProgressStyle::github;
  if (!ci && ::isatty(STDERR_FILENO) == 1) return ProgressStyle::tty;
  return ProgressStyle::plain;
}

Progress::Progress(ProgressStyle style, std::ostream& out, int stage_count)
    : m_style(style), m_out(out), m_stage_count(stage_count),
      m_start(std::chrono::steady_clock::now()) {
  if (m_style != ProgressStyle::tty) return;
  m_ticker = std::thread([this] {
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
      m_wake.wait_for(lock, std::chrono::milliseconds(250));
      if (!m_stopping && !m_status.empty()) draw();
    }
  });
}

Progress::~Progress() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  if (m_ticker.joinable()) m_ticker.join();
  if (m_line_open) m_out << "\r\033[2K" << std::flush;
}

void Progress::draw() {
  m_out << "\r\033[2K" << m_status << fmt::format(" · {:.1f} s", elapsed_s()) << std::flush;
  m_line_open = true;
}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

std::string Progress::prefix() const {
  return fmt::format("[{}/{}] {}", m_stage_index, m_stage_count, m_stage);
}

void Progress::status(const std::string& text) {
  if (m_style != ProgressStyle::tty) return;
  std::lock_guard lock(m_mutex);
  m_status = text;
  draw();
}

void Progress::line(std::string_view text) {
  std::lock_guard lock(m_mutex);
  m_status.clear();
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
  status(fmt::format("{} · starting", prefix()));
}

void Progress::name_stage(int index, std::string_view name) {
  m_stage_index = index;
  m_stage = name;
}

void Progress::step(std::string_view what) {
  if (m_style == ProgressStyle::tty) {
    status(fmt::format("{} · {}", prefix(), what));
  }
}

void Progress::run_done(int run, int runs, double wall_ms, std::string_view label) {
  if (m_style == ProgressStyle::tty) return;
  const std::string which = run <= runs ? fmt::format("{}/{}", run, runs)
                                        : fmt::format("{} (extra {})", run, run - runs);
  m_out << fmt::format("coldgate: {}: {}cold run {}: {:.1f} ms\n", prefix(), label, which, wall_ms)
        << std::flush;
}

void Progress::unmeasured_run_done(double wall_ms, std::string_view label) {
  if (m_style == ProgressStyle::tty) return;
  m_out << fmt::format("coldgate: {}: {}{:.1f} ms (not measured)\n", prefix(), label, wall_ms)
        << std::flush;
}

void Progress::stage_end(const StageResult& result) {
  std::string outcome;
  if (result.failed()) {
    outcome = "failed: " + results::failure_summary(result.error);
  } else {
    const Metric* wall = result.find("wall_ms");
    outcome = fmt::format("done, median wall {:.1f} ms", wall ? median(wall->cold) : 0.0);
    if (result.snapshot) outcome += ", snapshot " + std::string(to_string(result.snapshot->status));
  }
  line(fmt::format("{}: {} ({:.1f} s elapsed)", prefix(), outcome, elapsed_s()));
  if (m_style == ProgressStyle::github) m_out << "::endgroup::\n" << std::flush;
}

}  // namespace coldgate::measure
