// A command stage's snapshot document nested far deeper than any real one, on the real binary
// with a real PostgreSQL (local provider), as issue 50's campaign printed it: `{"a":` 30,000
// levels around 1, 180,001 bytes. Its canonical text would be 2D² + 9D + 2 = 1.8 GB (each line
// indented 2 bytes a level), held once per cold run (4 GB of RSS with three) and written as a
// candidate; under a 3 GB cap that is `std::bad_alloc`, exit 3 and no reports. It must instead
// fail its stage at the byte that opens level 129, with every report written. No memory cap is
// imposed: an ASan build reserves terabytes of address space (no `prlimit --as`) and aborts on
// an allocation that fails instead of throwing; what must hold is checked on the outcome.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "results/json.hpp"
#include "support/faults.hpp"
#include "support/support.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

constexpr std::size_t k_levels = 30'000;
constexpr std::size_t k_document_bytes = 6 * k_levels + 1;  // 180,001

// The candidates coldgate left anywhere in the project, with their sizes.
std::vector<std::pair<fs::path, std::uintmax_t>> candidates_in(const fs::path& project) {
  std::vector<std::pair<fs::path, std::uintmax_t>> out;
  for (const auto& e : fs::recursive_directory_iterator(project)) {
    if (e.is_regular_file() && e.path().string().ends_with(".json.new")) {
      out.emplace_back(e.path(), e.file_size());
    }
  }
  return out;
}

TEST(DeepDocument, ThirtyThousandLevelsFailTheStageAtTheByteWithTheReportsWritten) {
  FaultFolder f;
  f.dir.write("deep.sh",
              "awk -v n=" + std::to_string(k_levels) +
                  " 'BEGIN { for (i = 0; i < n; i++) printf \"{\\\"a\\\":\"; printf \"1\"; "
                  "for (i = 0; i < n; i++) printf \"}\" }'\n");
  // A stage after it runs as usual: the deep document fails its own stage only.
  f.dir.write("snapshots/after.json", "{\n  \"n\": 1\n}\n");
  f.dir.write("coldgate.yaml",
              "version: 1\n"
              "database: { provider: local }\n"
              "defaults: { runs: 3, warm: 0 }\n"
              "stages:\n"
              "  - name: deep\n"
              "    command: [sh, deep.sh]\n"
              "    snapshot: true\n"
              "  - name: after\n"
              "    command: [sh, -c, 'printf \"{\\\"n\\\": 1}\"']\n"
              "    snapshot: true\n");
  Running r = f.start({"run"});
  const util::ExitStatus status = r.process->wait(std::chrono::milliseconds(600s));
  const std::string err = read_all(r.err);
  std::cout << "coldgate run: exit " << status.exit_code << ", peak RSS "
            << status.peak_rss_bytes / (1 << 20) << " MiB\n";
  ASSERT_FALSE(status.timed_out) << err;
  EXPECT_EQ(status.exit_code, 1) << err;  // a failed stage, not infrastructure

  // All three reports, the deep stage failed at the byte that opens level 129, naming the limit
  // and the key that raises it; the other stage measured and matched.
  for (const char* name : {"results.json", "report.md", "junit.xml"}) {
    EXPECT_TRUE(fs::exists(f.dir / "coldgate-out" / name)) << name << "\n" << err;
  }
  const std::string expected =
      "cold run 1/3: the snapshot document is not valid: cold run 1 document: byte 640: nesting "
      "deeper than 128 levels (limit max_depth); if it really is that deep, raise "
      "snapshot.max_depth for this stage (at most 10000)";
  const fs::path results_file = f.dir / "coldgate-out/results.json";
  if (fs::exists(results_file)) {
    const results::Results results =
        results::from_json(read_all(results_file), results_file.string());
    ASSERT_EQ(results.stages.size(), 2u);
    EXPECT_EQ(results.stages[0].name, "deep");
    EXPECT_EQ(results.stages[0].error, expected);
    EXPECT_FALSE(results.stages[0].snapshot);
    EXPECT_EQ(results.stages[1].name, "after");
    EXPECT_EQ(results.stages[1].error, "");
    ASSERT_TRUE(results.stages[1].snapshot);
    EXPECT_EQ(results.stages[1].snapshot->status, results::SnapshotStatus::match);
  }
  const std::string report = read_all(f.dir / "coldgate-out/report.md");
  EXPECT_NE(report.find("| deep | — | ❌ failed | " + expected + " |\n"), std::string::npos)
      << report;
  EXPECT_NE(read_all(f.dir / "coldgate-out/junit.xml").find("byte 640: nesting deeper than 128"),
            std::string::npos);

  // Nothing grew past linear in the input: no candidate of the deep stage at all (its whole
  // canonical text is 10,000 times the input), and coldgate's own memory stays what a small run
  // takes (holding that text is 2 GB a cold run under ASan).
  for (const auto& [path, bytes] : candidates_in(f.dir.path())) {
    ADD_FAILURE() << "a candidate was written: " << path << ", " << bytes << " bytes";
    EXPECT_LE(bytes, 64 * k_document_bytes) << path;
  }
  EXPECT_LT(status.peak_rss_bytes, std::int64_t{512} << 20);
  f.expect_nothing_left("after the run");
}

}  // namespace
}  // namespace coldgate
