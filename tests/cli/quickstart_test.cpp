// The README's quick start, tried as a new user would: a git repository in a temp folder with a
// dump the test generates (pg_dump's plain format: COPY … FROM stdin data), then the built
// binary's `init --from-dump`, `run` (exit 1, snapshots missing), `review` on a tmux terminal
// accepting both, `run` (exit 0) and `CI=true run`, on a real local PostgreSQL cluster.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <fmt/core.h>

#include "support/dumps.hpp"
#include "support/support.hpp"
#include "support/terminal.hpp"

namespace coldgate::testing {
namespace {

namespace fs = std::filesystem;

// A small shop's database as `pg_dump --no-owner --no-privileges` writes it.
std::string generated_dump() {
  std::string d =
      "--\n-- PostgreSQL database dump\n--\n\n"
      "-- Dumped from database version 15.8\n-- Dumped by pg_dump version 15.8\n\n"
      "SET statement_timeout = 0;\nSET client_encoding = 'UTF8';\n"
      "SET standard_conforming_strings = on;\n"
      "SELECT pg_catalog.set_config('search_path', '', false);\n\n"
      "CREATE TABLE public.customers (\n    id integer NOT NULL,\n    name text NOT NULL,\n"
      "    email text\n);\n\n"
      "CREATE TABLE public.orders (\n    id bigint NOT NULL,\n    customer_id integer NOT NULL,\n"
      "    total numeric(10,2) NOT NULL\n);\n\n"
      "COPY public.customers (id, name, email) FROM stdin;\n";
  for (int i = 1; i <= 40; ++i) {
    d += i % 5 == 0 ? fmt::format("{}\tcustomer {}\t\\N\n", i, i)
                    : fmt::format("{}\tcustomer {}\tc{}@example.org\n", i, i, i);
  }
  d += "\\.\n\nCOPY public.orders (id, customer_id, total) FROM stdin;\n";
  for (int i = 1; i <= 120; ++i) d += fmt::format("{}\t{}\t{}.{:02}\n", i, i % 40 + 1, i * 3, i % 100);
  d += "\\.\n\n"
       "ALTER TABLE ONLY public.customers ADD CONSTRAINT customers_pkey PRIMARY KEY (id);\n"
       "ALTER TABLE ONLY public.orders ADD CONSTRAINT orders_pkey PRIMARY KEY (id);\n"
       "ALTER TABLE ONLY public.orders\n"
       "    ADD CONSTRAINT orders_customer_id_fkey FOREIGN KEY (customer_id) "
       "REFERENCES public.customers(id);\n";
  return d;
}

const char* k_table_rows = "{\n  \"public.customers\": 40,\n  \"public.orders\": 120\n}\n";
const char* k_schema = R"({
  "public.customers": {
    "email": "text",
    "id": "integer",
    "name": "text"
  },
  "public.orders": {
    "customer_id": "integer",
    "id": "bigint",
    "total": "numeric"
  }
}
)";

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

TEST(QuickStart, InitRunReviewRunAndCiOnADumpOfOurOwn) {
  TempDir project;
  run_git(project.path(), {"init", "-q"});
  project.write("db/dump.sql", generated_dump());
  const std::vector<std::string> local{"CI="};  // a developer's shell, whatever runs the tests

  auto init = run_coldgate({"init", "--from-dump", "db/dump.sql"}, project.path(), {}, local);
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(init.out.substr(0, init.out.find('\n') + 1),
            "detected db/dump.sql: a psql script (line 25: COPY … FROM stdin) → setup step psql\n");

  auto first = run_coldgate({"run"}, project.path(), {}, local);
  EXPECT_EQ(first.exit_code, 1) << first.err;
  EXPECT_TRUE(ends_with(first.err, "coldgate: failed: 2 snapshots missing (table-rows, schema); "
                                   "results in coldgate-out/results.json\n"))
      << first.err;
  EXPECT_EQ(slurp(project / "snapshots/table-rows.json.new"), k_table_rows);
  EXPECT_EQ(slurp(project / "snapshots/schema.json.new"), k_schema);

  {
    TmuxSession term({COLDGATE_BINARY, "review"}, project.path());
    term.wait_for("1/2 · stage table-rows");
    term.wait_for("quit ›");
    term.keys({"a"});
    term.wait_for("2/2 · stage schema");
    term.keys({"a"});
    EXPECT_EQ(term.wait_exit(), 0);
    EXPECT_TRUE(ends_with(term.screen(), "accepted schema: snapshots/schema.json\n"
                                         "\n"
                                         "review: 2 accepted, 0 rejected, 0 skipped\n"
                                         "  accepted: table-rows, schema\n"))
        << term.screen();
    EXPECT_EQ(term.stty_after(), term.stty_before());
  }
  EXPECT_EQ(slurp(project / "snapshots/table-rows.json"), k_table_rows);
  EXPECT_EQ(slurp(project / "snapshots/schema.json"), k_schema);
  EXPECT_FALSE(fs::exists(project / "snapshots/table-rows.json.new"));
  EXPECT_FALSE(fs::exists(project / "snapshots/schema.json.new"));

  auto second = run_coldgate({"run"}, project.path(), {}, local);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(ends_with(second.err, "coldgate: passed: 2 stages, 2 snapshots match; results in "
                                    "coldgate-out/results.json\n"))
      << second.err;

  fs::remove_all(project / "coldgate-out");
  auto ci = run_coldgate({"run"}, project.path(), {}, {"CI=true"});
  EXPECT_EQ(ci.exit_code, 0) << ci.err;
  EXPECT_NE(slurp(project / "coldgate-out/report.md").find("✅ **passed: 2 stages, 2 snapshots match**"),
            std::string::npos);
  EXPECT_TRUE(fs::is_regular_file(project / "coldgate-out/results.json"));
  EXPECT_TRUE(fs::is_regular_file(project / "coldgate-out/junit.xml"));
  std::vector<std::string> snapshots;
  for (const auto& e : fs::directory_iterator(project / "snapshots")) {
    snapshots.push_back(e.path().filename().string());
  }
  std::sort(snapshots.begin(), snapshots.end());
  EXPECT_EQ(snapshots, (std::vector<std::string>{"schema.json", "table-rows.json"}));
}

// A CI run (or `ab`) writes its candidates under --out, never beside the snapshots: `accept
// --from coldgate-out` takes them, where a plain `accept` finds nothing.
TEST(QuickStart, ACiRunsCandidatesAreAcceptedFromItsOutputFolder) {
  TempDir project;
  run_git(project.path(), {"init", "-q"});
  project.write("db/dump.sql", generated_dump());
  const std::vector<std::string> local{"CI="};
  ASSERT_EQ(run_coldgate({"init", "--from-dump", "db/dump.sql"}, project.path(), {}, local)
                .exit_code,
            0);
  ASSERT_EQ(run_coldgate({"run"}, project.path(), {}, local).exit_code, 1);
  ASSERT_EQ(run_coldgate({"accept"}, project.path(), {}, local).exit_code, 0);
  EXPECT_EQ(slurp(project / "snapshots/table-rows.json"), k_table_rows);

  // The data changes: one more customer. CI sees the change and writes the candidate to --out.
  std::string dump = generated_dump();
  const std::string last = "40\tcustomer 40\t\\N\n";
  ASSERT_NE(dump.find(last), std::string::npos);
  dump.insert(dump.find(last) + last.size(), "41\tcustomer 41\tc41@example.org\n");
  project.write("db/dump.sql", dump);
  auto ci = run_coldgate({"run"}, project.path(), {}, {"CI=true"});
  EXPECT_EQ(ci.exit_code, 1) << ci.err;
  const std::string candidate = "{\n  \"public.customers\": 41,\n  \"public.orders\": 120\n}\n";
  EXPECT_EQ(slurp(project / "coldgate-out/snapshots/snapshots/table-rows.json"), candidate);
  EXPECT_FALSE(fs::exists(project / "snapshots/table-rows.json.new"));

  auto nothing = run_coldgate({"accept"}, project.path(), {}, local);
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_NE(nothing.err.find("nothing to accept"), std::string::npos) << nothing.err;
  auto from = run_coldgate({"accept", "--from", "coldgate-out"}, project.path(), {}, local);
  EXPECT_EQ(from.exit_code, 0) << from.err;
  EXPECT_EQ(from.out, "accepted table-rows: snapshots/table-rows.json\n");
  EXPECT_EQ(slurp(project / "snapshots/table-rows.json"), candidate);
  EXPECT_EQ(slurp(project / "snapshots/schema.json"), k_schema);  // it matched: nothing pending
  EXPECT_FALSE(fs::exists(project / "coldgate-out/snapshots/snapshots/table-rows.json"));

  auto again = run_coldgate({"run"}, project.path(), {}, local);
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

// A dump that creates its own database and \c's into it (as the Chinook script and pg_dump
// --create --clean --if-exists do): init writes psql: {file, database: postgres} and
// database.name, and the stages read the database the script made.
TEST(QuickStart, ADumpThatCreatesItsDatabaseRunsAsInitWroteIt) {
  TempDir project;
  run_git(project.path(), {"init", "-q"});
  project.write("db/chinook.sql", chinook_shaped_dump("chinook", 3, false));
  const std::vector<std::string> local{"CI="};

  auto init = run_coldgate({"init", "--from-dump", "db/chinook.sql"}, project.path(), {}, local);
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(init.out.substr(0, init.out.find('\n') + 1),
            "detected db/chinook.sql: a psql script that creates database chinook and connects to "
            "it (line 3) → setup step psql in database postgres; the stages use chinook\n");

  auto first = run_coldgate({"run"}, project.path(), {}, local);
  EXPECT_EQ(first.exit_code, 1) << first.err;
  EXPECT_TRUE(ends_with(first.err, "coldgate: failed: 2 snapshots missing (table-rows, schema); "
                                   "results in coldgate-out/results.json\n"))
      << first.err;
  EXPECT_EQ(slurp(project / "snapshots/table-rows.json.new"),
            "{\n  \"public.album\": 1,\n  \"public.artist\": 3\n}\n");

  auto accept = run_coldgate({"accept"}, project.path(), {}, local);
  EXPECT_EQ(accept.exit_code, 0) << accept.err;
  auto second = run_coldgate({"run"}, project.path(), {}, local);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(ends_with(second.err, "coldgate: passed: 2 stages, 2 snapshots match; results in "
                                    "coldgate-out/results.json\n"))
      << second.err;
}

}  // namespace
}  // namespace coldgate::testing
