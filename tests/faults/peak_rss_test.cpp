// A stage's peak_rss_bytes is its own process tree's, not coldgate's. The campaign's fault: a
// stage that made coldgate grow to 900 MB, then `python3 -c pass` read 915 MB (18 MB alone) and
// the gate called it a 50× regression, because a child coldgate starts itself begins with
// coldgate's peak RSS (util::SpawnOptions::own_peak_rss). Here `big` prints a ~200 MB snapshot
// document, which coldgate captures, canonicalizes and compares; `tiny`, `tiny-sql` (its peak
// is the probe's, from its own getrusage) and `after` then run.
// The real binary with a real PostgreSQL (local provider).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "results/json.hpp"
#include "results/results.hpp"
#include "support/faults.hpp"
#include "support/support.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

constexpr double k_mib = 1 << 20;
constexpr std::size_t k_big_bytes = std::size_t{200} << 20;

struct PeakRssFaults : ::testing::Test {
  void SetUp() override {
    f.dir.write("big.py", "import sys\nsys.stdout.write('\"' + 'x' * " + std::to_string(k_big_bytes) +
                              " + '\"\\n')\n");
    f.dir.write("coldgate.yaml",
                "version: 1\n"
                "database: { provider: local }\n"
                "defaults: { runs: 1, warm: 0 }\n"
                "stages:\n"
                "  - name: big\n"
                "    command: [/usr/bin/python3, big.py]\n"
                "    snapshot: { from: stdout, path: snapshots/big.json }\n"
                "    max_result_bytes: 512MiB\n"
                "  - name: tiny\n"
                "    command: [/usr/bin/python3, -c, pass]\n"
                "  - name: tiny-sql\n"
                "    query: select 1\n"
                "  - name: after\n"
                "    command: [/usr/bin/python3, -c, 'print(1)']\n");
    // The committed snapshot is big's document, so that the run passes.
    fs::create_directories(f.dir / "snapshots");
    f.dir.write("snapshots/big.json", "\"" + std::string(k_big_bytes, 'x') + "\"\n");
  }

  // `coldgate run` with `args`; its exit status (with its own peak RSS) and results.json.
  struct Outcome {
    util::ExitStatus status;
    std::string err;
    results::Results results;
  };
  Outcome run(const std::vector<std::string>& args) {
    Running r = f.start(args);
    Outcome o;
    o.status = r.process->wait(300s);
    o.err = read_all(r.err);
    const fs::path file = f.dir / args.at(2) / "results.json";  // run --out DIR …
    EXPECT_TRUE(fs::exists(file)) << o.err;
    if (fs::exists(file)) o.results = results::from_json(read_all(file), file.string());
    return o;
  }

  // The median of `stage`'s cold peak_rss_bytes in `r`, or 0 when it has none.
  static double peak_of(const results::Results& r, const std::string& stage) {
    for (const auto& s : r.stages) {
      if (s.name != stage) continue;
      const results::Metric* m = s.find("peak_rss_bytes");
      return m && !m->cold.empty() ? results::median(m->cold) : 0;
    }
    return 0;
  }

  FaultFolder f;
};

TEST_F(PeakRssFaults, AStageAfterOneThatMadeColdgateGrowReadsItsOwnPeak) {
  Outcome alone =
      run({"run", "--out", "alone", "--stage", "tiny", "--stage", "tiny-sql", "--stage", "after"});
  ASSERT_EQ(alone.status.exit_code, 0) << alone.err;
  Outcome together = run({"run", "--out", "together", "--stage", "big", "--stage", "tiny",
                          "--stage", "tiny-sql", "--stage", "after", "--baseline",
                          "alone/results.json"});
  EXPECT_EQ(together.status.exit_code, 0) << together.err;
  EXPECT_EQ(together.err.find("coldgate-exec not found"), std::string::npos) << together.err;

  // The fault's condition: big made coldgate itself grow past its document's size.
  const double coldgate_peak = static_cast<double>(together.status.peak_rss_bytes);
  EXPECT_GT(coldgate_peak, 2.0 * static_cast<double>(k_big_bytes));
  EXPECT_GT(peak_of(together.results, "big"), static_cast<double>(k_big_bytes));
  for (const std::string stage : {"tiny", "tiny-sql", "after"}) {
    SCOPED_TRACE(stage);
    const double a = peak_of(alone.results, stage);
    const double t = peak_of(together.results, stage);
    std::printf("[ measured ] %s: peak_rss_bytes alone %.1f MiB, after big %.1f MiB; coldgate's "
                "own peak %.1f MiB\n",
                stage.c_str(), a / k_mib, t / k_mib, coldgate_peak / k_mib);
    ASSERT_GT(a, 0);
    ASSERT_GT(t, 0);
    EXPECT_LT(t, 1.5 * a);
    EXPECT_LT(a, 1.5 * t);
    if (stage != "tiny-sql") {  // the probe is coldgate itself, sanitized in this build
      EXPECT_LT(t, 100 * k_mib);
    }
    EXPECT_LT(t, coldgate_peak / 4);
  }
  // The gate against the alone run: the same peak, no regression, no warning.
  ASSERT_TRUE(together.results.gate.has_value());
  int judged = 0;
  for (const auto& v : together.results.gate->metrics) {
    if (v.metric != "peak_rss_bytes" || v.stage == "big") continue;
    ++judged;
    EXPECT_EQ(v.verdict, results::Verdict::same) << v.stage << ": " << v.reason;
  }
  EXPECT_EQ(judged, 3);
  f.expect_nothing_left("after the runs");
}

}  // namespace
}  // namespace coldgate
