// The stack summary (coldgate-out/stack/summary.md): one table across the pull requests of a
// stack, who introduced each regression and who fixed it, who changed a snapshot and who
// accepted it.
#include <gtest/gtest.h>

#include "report/stack.hpp"
#include "support/golden.hpp"
#include "support/support.hpp"

namespace coldgate::report {
namespace {

using results::MetricVerdict;
using results::Results;
using results::SnapshotStatus;
using results::Verdict;

std::string sha(char c) { return std::string(40, c); }

// Pull request results: stage load's query_ms from `before` to `after` with `verdict`, and
// stage items' snapshot in `status` with the candidate's `digest`.
Results pull(char commit, char base, double before, double after, Verdict verdict,
             SnapshotStatus status, const std::string& digest) {
  Results r;
  r.git.commit = sha(commit);
  r.git.branch = std::string("s") + commit;
  r.gate.emplace();
  r.gate->base_git.commit = sha(base);
  r.gate->base_git.branch = "main";
  r.gate->metrics.push_back({"load", "query_ms", "ms", verdict, before, after, after / before,
                             "reason"});
  r.gate->metrics.push_back({"items", "query_ms", "ms", Verdict::same, 3, 3, 1, "reason"});
  for (const char* name : {"load", "items"}) {
    results::StageResult s;
    s.name = name;
    r.stages.push_back(s);
  }
  r.stages[1].snapshot = results::SnapshotResult{status, "snapshots/items.json", "", digest, "", ""};
  return r;
}

struct StackSummary : ::testing::Test {
  StackSummary() {
    // The stack of issue 18: 10× slower, fixed, a snapshot changed, that snapshot accepted.
    results = {pull('1', '0', 20, 410, Verdict::regression, SnapshotStatus::match, "aaa"),
               pull('2', '1', 410, 21, Verdict::faster, SnapshotStatus::match, "aaa"),
               pull('3', '2', 21, 21, Verdict::same, SnapshotStatus::changed, "bbb"),
               pull('4', '3', 21, 20, Verdict::same, SnapshotStatus::match, "bbb")};
    for (int k = 0; k < 4; ++k) {
      StackEntry e;
      e.index = k + 1;
      e.ref = "s" + std::to_string(k + 1);
      e.report = std::to_string(k + 1) + "-" + e.ref + "/report.md";
      e.results = &results[static_cast<std::size_t>(k)];
      entries.push_back(e);
    }
  }
  std::vector<Results> results;
  std::vector<StackEntry> entries;
};

TEST_F(StackSummary, OneTableWithWhoIntroducedAndWhoFixedEachChange) {
  const std::string md = stack_summary(entries, "shop");
  testing::expect_golden(testing::source_dir() / "tests/report/golden/stack.md", md);
  EXPECT_NE(md.find("| # | Pull request | Stage | Before | After | Change | Snapshot |"),
            std::string::npos);
  EXPECT_NE(md.find("❌ **2 of 4 pull requests fail the gate**"), std::string::npos) << md;
  EXPECT_NE(md.find("| **[1](<1-s1/report.md>)** | **s1 `1111111`** | **load · query_ms** |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- 🔴 load query_ms: introduced by 1 (s1) (20.5×), fixed by 2 (s2)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- 📸 items: changed by 3 (s3), accepted in 4 (s4)"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| [4](<4-s4/report.md>) | s4 `4444444` | 2 stages | — | — | same | 1 match |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("(stack on main `0000000`)"), std::string::npos) << md;
}

TEST_F(StackSummary, DiscoveredPullRequestsAreLinkedAndDataIsEscaped) {
  entries[0].number = 12;
  entries[0].title = "<img src=x onerror=alert(1)> *bold* | pipe";
  entries[0].url = "https://github.com/o/r/pull/12";
  entries[1].number = 13;
  entries[1].url = "javascript:alert(1)";
  results[2].stages[1].snapshot->status = SnapshotStatus::changed;
  results[3].stages[1].snapshot->sha256 = "ccc";  // matching again, but not what s3 loaded
  const std::string md = stack_summary(entries, "shop <b>");
  EXPECT_NE(md.find("[#12](<https://github.com/o/r/pull/12>) &lt;img src=x onerror=alert(1)&gt; "
                    "\\*bold\\* \\| pipe"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("<img"), std::string::npos);
  EXPECT_EQ(md.find("javascript:"), std::string::npos) << md;  // no link but to a web address
  EXPECT_NE(md.find("## shop &lt;b&gt; · stack"), std::string::npos);
  EXPECT_NE(md.find("introduced by #12 (s1)"), std::string::npos) << md;
  EXPECT_NE(md.find("fixed by #13 (s2)"), std::string::npos) << md;
  EXPECT_NE(md.find("matching again (another document) in 4 (s4)"), std::string::npos) << md;
}

TEST_F(StackSummary, ARegressionNobodyFixesIsSaid) {
  results[1].gate->metrics[0].verdict = Verdict::same;
  results[1].gate->metrics[0].head_median = 400;
  for (auto& r : {&results[2], &results[3]}) {
    r->gate->metrics[0].base_median = 400;
    r->gate->metrics[0].head_median = 405;
  }
  const std::string md = stack_summary(entries, "shop");
  EXPECT_NE(md.find("introduced by 1 (s1) (20.5×), not fixed in this stack"), std::string::npos)
      << md;
}


// A pull request whose only regression is a statement's (a new N+1) fails in the summary as
// in its own verdict, with a row and who introduced and who fixed it.
TEST_F(StackSummary, AStatementRegressionFailsThePullRequestAndIsTraced) {
  for (auto& r : results) {
    if (!r.gate) continue;
    for (auto& m : r.gate->metrics) m.verdict = Verdict::same;
    for (auto& st : r.stages) {
      if (st.snapshot) st.snapshot->status = results::SnapshotStatus::match;
    }
  }
  const std::string q = "select count(*) from review where book_id = $1";
  results[0].gate->statements.push_back(
      {"checkout", q, std::nullopt, results::StatementSide{"7", 40, 1, 3, 0.01, 0.02}, Verdict::regression,
       "new statement: runs 40 times per run (≥ min_query_delta 10)"});
  results[1].gate->statements.push_back({"checkout", q, results::StatementSide{"7", 40, 1, 3, 0.01, 0.02},
                                         std::nullopt, Verdict::faster,
                                         "no longer run (base ran it 40 times per run)"});
  const std::string md = stack_summary(entries, "shop");
  EXPECT_NE(md.find("1 of 4 pull requests fails the gate"), std::string::npos) << md;
  EXPECT_NE(md.find("| **[1](<1-s1/report.md>)** | **s1 `"), std::string::npos) << md;
  EXPECT_NE(md.find("**checkout · statement `" + q + "`** | — | **40 calls · 3 blocks/call** | "
                    "**🔴 regression** |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- 🔴 checkout statement `" + q + "`: introduced by 1 (s1) (new statement: "
                    "runs 40 times per run (≥ min_query_delta 10)), fixed by 2 (s2)"),
            std::string::npos)
      << md;
}

// Where each side came from: a base (the commit below) from the cache and a head (the pull
// request's own commit) from the cache are counted apart, and neither is called the other.
TEST_F(StackSummary, CachedBasesAndCachedHeadsAreCountedApart) {
  EXPECT_NE(stack_summary(entries, "shop")
                .find("each measured against the commit below it, all interleaved on one server"),
            std::string::npos);
  // Commit 2 from the cache, commits 1, 3 and 4 measured: pull request 2's head, 3's base.
  results[1].gate->head_cached = true;
  results[2].gate->base_source = results::BaseSource::cache;
  std::string md = stack_summary(entries, "shop");
  EXPECT_NE(md.find("each measured against the commit below it; 1 of 4 bases and 1 of 4 heads "
                    "from the cache (measured by an earlier run, not interleaved)."),
            std::string::npos)
      << md;
  // Only a head from the cache: no base is said to be.
  results[2].gate->base_source = results::BaseSource::interleaved;
  md = stack_summary(entries, "shop");
  EXPECT_NE(md.find("; 1 of 4 heads from the cache (measured by an earlier run, not "
                    "interleaved)."),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("bases"), std::string::npos) << md;
}

}  // namespace
}  // namespace coldgate::report
