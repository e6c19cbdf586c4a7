#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>

namespace coldgate::results {
struct StageResult;
}  // namespace coldgate::results

namespace coldgate::measure {

/// How progress is shown on stderr: one line rewritten in place on a terminal; plain lines
/// elsewhere (CI logs), wrapped in `::group::`/`::endgroup::` under GitHub Actions.
enum class ProgressStyle { tty, plain, github };

/// The style for stderr: github when GITHUB_ACTIONS=true, tty when stderr is a terminal and
/// not in CI, else plain.
ProgressStyle detect_progress_style(bool ci);

/// Progress of `coldgate run`: stage i/N, cold run j/M, elapsed seconds since construction. On
/// a terminal a background thread refreshes the elapsed time while a run is in progress.
class Progress {
 public:
  Progress(ProgressStyle style, std::ostream& out, int stage_count);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// A free-standing line (setup steps, server start), ending any in-place line first.
  void line(std::string_view text);
  /// Stage `index` (1-based) named `name` begins.
  void stage_start(int index, std::string_view name);
  /// The stage later lines name, without a start of its own (no group, no status): its runs
  /// at another data scale, after the stages' own ends.
  void name_stage(int index, std::string_view name);
  /// Something within the current stage begins: "cold run 2/5", "restart", "EXPLAIN".
  void step(std::string_view what);
  /// A cold run finished after `wall_ms` milliseconds; `label` names the side ("base: "). A
  /// run past the stage's `runs` (an extra run of ab or stack) is "cold run 4 (extra 1)".
  void run_done(int run, int runs, double wall_ms, std::string_view label = {});
  /// A run that is no sample (the plan run, under auto_explain) finished after `wall_ms`
  /// milliseconds: "<label><wall> ms (not measured)".
  void unmeasured_run_done(double wall_ms, std::string_view label);
  /// The current stage ended with `result`.
  void stage_end(const results::StageResult& result);

 private:
  void status(const std::string& text);  // tty: rewrite the line; else nothing
  void draw();                            // tty: print m_status with the elapsed time (locked)
  std::string prefix() const;
  double elapsed_s() const;

  std::mutex m_mutex;              // guards the stream and m_status against the ticker
  std::condition_variable m_wake;  // ends the ticker's wait early at destruction
  bool m_stopping = false;
  std::string m_status;            // tty: the current status line without the elapsed time
  std::thread m_ticker;            // tty only: redraws every 250 ms

  ProgressStyle m_style;
  std::ostream& m_out;
  int m_stage_count;
  int m_stage_index = 0;
  std::string m_stage;
  bool m_line_open = false;  // tty: an unterminated status line is on screen
  std::chrono::steady_clock::time_point m_start;
};

}  // namespace coldgate::measure
