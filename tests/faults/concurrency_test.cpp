// Concurrent commands on one machine by one user: two `coldgate run`, a `db up` … `db down` and an
// `ab`, all at once, sharing ONE $TMPDIR and ONE $XDG_CACHE_HOME as one user's commands do. The
// overlap is certain, not timed: each participant's first setup step marks its arrival and waits
// for everyone's (at most 120 s, then it fails naming who did not come), so every server is up
// while every other participant starts; the runs' last stage then waits until `db down` has
// stopped db up's server, so they are measuring while db up answers and while it goes.
//
// A round asserts: each participant ends as it does alone (fixtures: one run passes, one has a
// deliberate snapshot mismatch, exit 1; `ab` of two commits loading the same rows passes, gated
// on `rows` alone, so no timing decides it); each --out holds its own results only (title,
// config, stage names, the mismatch where it belongs); the stages of each reached its own server
// (the data folder they saw is their postmaster's) and no server was restarted or stopped by
// another; `db down` stopped exactly db up's; the leftovers of dead owners planted before the
// start (work folders, a cluster and its registry marker, a db up state file) are removed, while
// those of a live owner and of another PID namespace stay; nothing is left afterwards.
//
// COLDGATE_CONCURRENCY_ROUNDS (default 2) repeats it; COLDGATE_CONCURRENCY_DEMO=1 makes the two
// runs this tree's demo, both in one copy of the checkout with an --out each
// (bench/concurrency.sh). The lock on a shared --out (report::lock_outputs) is tested at the end.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>

#include "config/config.hpp"
#include "db/cluster_registry.hpp"
#include "db/connection.hpp"
#include "results/json.hpp"
#include "support/faults.hpp"
#include "support/support.hpp"

namespace coldgate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace coldgate::testing;

// barrier.sh MARK FILE...: the participants' meeting point, in the round's barrier/ folder.
const char* k_barrier_sh =
    "# barrier.sh MARK FILE...: creates barrier/MARK, then waits for each barrier/FILE in turn,\n"
    "# at most 120 s for each; one that never appears fails this step, naming it.\n"
    "b=$(dirname \"$0\")/barrier\n"
    "touch \"$b/$1\" || exit 1\n"
    "shift\n"
    "for f in \"$@\"; do\n"
    "  n=0\n"
    "  while [ ! -e \"$b/$f\" ]; do\n"
    "    n=$((n + 1))\n"
    "    if [ \"$n\" -gt 2400 ]; then\n"
    "      echo \"barrier: $f did not appear within 120 s\" >&2\n"
    "      exit 1\n"
    "    fi\n"
    "    sleep 0.05\n"
    "  done\n"
    "done\n";

// record.sh FILE: which server this step reached (PG* variables, as every step and stage gets).
const char* k_record_sh =
    "psql -XAt -c \"select current_setting('data_directory') || ' ' || "
    "pg_postmaster_start_time()\" "
    "> \"$(dirname \"$0\")/barrier/$1\"\n";

// last.sh WHO: a run's last stage: says it is there, waits for db down, records its server.
const char* k_last_sh =
    "here=$(dirname \"$0\")\n"
    "sh \"$here/barrier.sh\" \"stage-$1\" down && sh \"$here/record.sh\" \"$1-stage\"\n";

const std::vector<std::string> k_arrivals{"arrived-pass", "arrived-fail", "arrived-up",
                                          "arrived-ab"};

int rounds_from_env() {
  const char* v = std::getenv("COLDGATE_CONCURRENCY_ROUNDS");
  int n = v && *v ? std::atoi(v) : 2;
  return n > 0 ? n : 2;
}

bool demo_from_env() {
  const char* v = std::getenv("COLDGATE_CONCURRENCY_DEMO");
  return v && *v && std::string(v) != "0";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no '" << from << "' to replace";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::map<std::string, std::string> read_kv(const fs::path& file) {
  std::map<std::string, std::string> kv;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (auto eq = line.find('='); eq != std::string::npos)
      kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

// Every file under `dir` with its bytes (the committed snapshots before and after).
std::map<std::string, std::string> files_with_bytes(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[e.path().lexically_relative(dir).string()] = read_all(e.path());
  }
  return out;
}

// One round's folder: the shared TMPDIR and cache, the barrier, the scripts, the projects. Not
// a FaultFolder: the cache, cluster templates included, is new each round, so that the four
// participants meet an empty template cache at once (one builds it, the others wait for it).
struct Round {
  Round() {
    make_server_tmpdir(dir, tmp);
    fs::create_directories(cache);
    fs::create_directories(barrier);
    dir.write("barrier.sh", k_barrier_sh);
    dir.write("record.sh", k_record_sh);
    dir.write("last.sh", k_last_sh);
  }
  // The environment of every coldgate of the round (start_coldgate adds TMPDIR and no CI).
  std::vector<std::string> env() const {
    return {"XDG_CACHE_HOME=" + cache.string(),
            "GITHUB_BASE_REF=", "GITHUB_HEAD_REF=", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME="};
  }
  std::string script(const char* name) const { return "\"" + (dir / name).string() + "\""; }
  // A setup step: mark `mark`, then wait for every arrival and `then`.
  std::string barrier_step(const std::string& mark, const std::string& then) const {
    std::string step = "  - command: [sh, " + script("barrier.sh") + ", " + mark;
    for (const auto& a : k_arrivals) step += ", " + a;
    return step + (then.empty() ? "" : ", " + then) + "]\n";
  }
  std::string record_step(const std::string& file) const {
    return "  - command: [sh, " + script("record.sh") + ", " + file + "]\n";
  }
  bool has(const std::string& file) const { return fs::exists(barrier / file); }
  void touch(const std::string& file) const { std::ofstream(barrier / file).put('\n'); }
  std::string recorded(const std::string& file) const {
    std::string s = read_all(barrier / file);
    return s.substr(0, s.find('\n'));
  }

  TempDir dir;
  fs::path tmp = dir / "tmp";
  fs::path cache = dir / "cache";
  fs::path barrier = dir / "barrier";
};

// A `coldgate run` participant and what it must end with.
struct RunProject {
  std::string who;                   // "pass", "fail"
  fs::path root;                     // its checkout, the run's folder
  std::string config;                // relative to root
  std::string out = "coldgate-out";  // --out, relative to root
  std::string title;                 // report.title
  std::vector<std::string> stages;   // in config order
  std::string mismatched;            // the stage whose snapshot the fixture changed ("" when none)
  bool restarts = false;             // a `cold: restart` stage: its server is restarted on purpose
  int expected_exit = 0;
  std::map<std::string, std::string> committed;  // snapshots/ before the run
};

void finish_project(RunProject& p, bool mismatch) {
  for (const auto& s : config::load(p.root / p.config).stages) p.stages.push_back(s.name);
  p.expected_exit = mismatch ? 1 : 0;
  p.committed = files_with_bytes(p.root / "snapshots");
}

// A small demo-like project: setup SQL, a SQL stage with a snapshot, a command stage.
RunProject small_project(const Round& r, const std::string& who, bool mismatch) {
  RunProject p{
      .who = who, .root = r.dir / who, .config = "coldgate.yaml", .title = "concurrency " + who};
  fs::create_directories(p.root);
  std::ofstream(p.root / "schema.sql") << "CREATE TABLE item (id int, who text);\n"
                                          "INSERT INTO item VALUES (1, '"
                                       << who << "'), (2, '" << who << "');\n";
  std::ofstream(p.root / "coldgate.yaml")
      << "version: 1\n"
         "database: { provider: local, name: shop }\n"
         "setup:\n"
      << r.barrier_step("arrived-" + who, "go") << r.record_step(who + "-setup")
      << "  - sql: schema.sql\n"
         "defaults: { runs: 1, warm: 0 }\n"
         "stages:\n"
         "  - name: "
      << who
      << "-items\n"
         "    query: select json_agg(json_build_object('id', id, 'who', who)) from item\n"
         "    decode: json\n"
         "    snapshot: { path: snapshots/"
      << who
      << "-items.json }\n"
         "  - name: "
      << who
      << "-client\n"
         "    command: [sh, "
      << r.script("last.sh") << ", " << who
      << "]\n"
         "report: { title: concurrency "
      << who << " }\n";
  const std::string second = mismatch ? "stale" : who;
  fs::create_directories(p.root / "snapshots");
  std::ofstream(p.root / "snapshots" / (who + "-items.json"))
      << "[\n  {\n    \"id\": 1,\n    \"who\": \"" << who
      << "\"\n  },\n  {\n    \"id\": 2,\n    \"who\": \"" << second << "\"\n  }\n]\n";
  if (mismatch) p.mismatched = who + "-items";
  finish_project(p, mismatch);
  return p;
}

// Both runs of the demo in ONE copy of this tree's config/ and snapshots/, as two runs of one
// checkout are, each with its --out: config/demo-<who>.yaml is config/demo.yaml with the barrier
// as its first setup steps, a last stage that waits for db down and a title of its own; for
// `mismatch`, account-lookup's snapshot is a committed copy with one value changed.
RunProject demo_project(const Round& r, const std::string& who, bool mismatch) {
  RunProject p{.who = who,
               .root = r.dir / "demo",
               .config = "config/demo-" + who + ".yaml",
               .out = "out-" + who,
               .title = "coldgate demo " + who,
               .restarts = true};
  fs::create_directories(p.root);
  for (const char* part : {"config", "snapshots"}) {
    if (!fs::exists(p.root / part))
      fs::copy(source_dir() / part, p.root / part, fs::copy_options::recursive);
  }
  std::string yaml = read_all(p.root / "config/demo.yaml");
  // One scale: the barrier steps run once per scale's setup, and this test is about the runs.
  yaml = std::regex_replace(yaml, std::regex("\n *scales: \\[[^\\]]*\\][^\n]*"), "");
  yaml = replaced(
      yaml, "\nsetup:\n",
      "\nsetup:\n" + r.barrier_step("arrived-" + who, "go") + r.record_step(who + "-setup"));
  yaml = replaced(yaml, "\nreport: { title: coldgate demo }",
                  "  - name: wait-down\n    command: [sh, " + r.script("last.sh") + ", " + who +
                      "]\n    runs: 1\n    warm: 0\n\nreport: { title: " + p.title + " }");
  if (mismatch) {
    yaml = replaced(yaml, "path: ../snapshots/account-lookup.json",
                    "path: ../snapshots/account-lookup-stale.json");
    std::string text = replaced(read_all(p.root / "snapshots/account-lookup.json"),
                                "\"level\": 60,", "\"level\": 61,");
    std::ofstream(p.root / "snapshots/account-lookup-stale.json") << text;
    p.mismatched = "account-lookup";
  }
  std::ofstream(p.root / p.config) << yaml;
  finish_project(p, mismatch);
  return p;
}

// db up's project: setup SQL, then the barrier (db up prints its URL once setup is done).
fs::path up_project(const Round& r) {
  fs::path root = r.dir / "up";
  fs::create_directories(root);
  std::ofstream(root / "schema.sql")
      << "CREATE TABLE item (who text);\nINSERT INTO item VALUES ('up');\n";
  std::ofstream(root / "coldgate.yaml")
      << "version: 1\n"
         "database: { provider: local, name: updb }\n"
         "setup:\n"
         "  - sql: schema.sql\n"
      << r.barrier_step("arrived-up", "") << "stages: [ { name: up-none, command: [\"true\"] } ]\n";
  return root;
}

// ab's repository: branch base, then branch head on it with one more row (count(*) still
// returns one row: the gate, on `rows` only, says same).
fs::path ab_project(const Round& r, std::string& base_sha, std::string& head_sha) {
  fs::path root = r.dir / "ab";
  fs::create_directories(root);
  std::ofstream(root / ".gitignore") << "coldgate-out/\nstdout-*.txt\nstderr-*.txt\n";
  std::ofstream(root / "coldgate.yaml")
      << "version: 1\n"
         "database: { provider: local, name: abdb }\n"
         "setup:\n"
      << r.barrier_step("arrived-ab", "go") << r.record_step("ab-setup")
      << "  - sql: schema.sql\n"
         "defaults: { runs: 1, warm: 0 }\n"
         "stages:\n"
         "  - name: ab-count\n"
         "    query: select count(*) from item\n"
         "  - name: ab-client\n"
         "    command: [psql, -XAtc, 'select count(*) from item']\n"
         "gate: { metrics: [rows] }\n"
         "report: { title: concurrency ab }\n";
  std::ofstream(root / "schema.sql")
      << "CREATE TABLE item (id int);\nINSERT INTO item VALUES (1), (2);\n";
  run_git(root, {"init", "-q"});
  run_git(root, {"add", "-A"});
  run_git(root, {"commit", "-q", "-m", "base"});
  base_sha = run_git(root, {"rev-parse", "HEAD"});
  run_git(root, {"checkout", "-q", "-b", "head"});
  std::ofstream(root / "schema.sql")
      << "CREATE TABLE item (id int);\nINSERT INTO item VALUES (1), (2), (3);\n";
  run_git(root, {"commit", "-q", "-am", "head: one more row"});
  head_sha = run_git(root, {"rev-parse", "HEAD"});
  return root;
}

// What a killed run (dead owner) left, and what a live owner or another PID namespace has,
// planted in the round's TMPDIR and cache before anyone starts.
struct Leftovers {
  std::vector<fs::path> dead;  // must be gone once the participants have started
  std::vector<fs::path> kept;  // must still be there at the end

  explicit Leftovers(const Round& r) {
    const pid_t gone = dead_pid();
    const pid_t self = ::getpid();
    const long long self_start = db::process_start_time(self);
    const std::string ns = db::pid_namespace();
    const std::string other_ns = "pid:[1]";  // no namespace of ours is called that
    for (const char* prefix : {"coldgate-run-", "coldgate-up-", "coldgate-ab-"}) {
      dead.push_back(plant_owned_dir(r.tmp, std::string(prefix) + "deadXX", gone, 1, ns));
    }
    kept.push_back(plant_owned_dir(r.tmp, "coldgate-run-liveXX", self, self_start, ns));
    kept.push_back(plant_owned_dir(r.tmp, "coldgate-run-otherX", gone, 1, other_ns));
    fs::path runs = r.cache / "coldgate/runs";
    fs::create_directories(runs);
    auto cluster = [&](const std::string& name, pid_t owner, long long start,
                       const std::string& in_ns, std::vector<fs::path>& into) {
      fs::path run_dir = r.tmp / name;
      fs::create_directories(run_dir / "data");
      std::ofstream(run_dir / "data/PG_VERSION") << "15\n";
      fs::path marker = runs / (name + ".run");
      std::ofstream(marker) << "owner_pid=" << owner << "\nowner_start=" << start
                            << "\npid_ns=" << in_ns
                            << "\npostmaster_pid=0\nrun_dir=" << run_dir.string()
                            << "\ndata_dir=" << (run_dir / "data").string() << "\n";
      into.push_back(run_dir);
      into.push_back(marker);
    };
    cluster("coldgate-pg-deadXX", gone, 1, ns, dead);
    cluster("coldgate-pg-liveXX", self, self_start, ns, kept);
    cluster("coldgate-pg-otherX", gone, 1, other_ns, kept);
    fs::path state = r.cache / "coldgate/up/0123456789abcdef.state";
    fs::create_directories(state.parent_path());
    std::ofstream(state) << "pid=" << gone << "\nstart=1\npid_ns=" << ns
                         << "\nurl=postgresql://gone\n";
    dead.push_back(state);
  }
  bool planted(const fs::path& p) const {
    return std::find(dead.begin(), dead.end(), p) != dead.end() ||
           std::find(kept.begin(), kept.end(), p) != kept.end();
  }
};

// The participants of a round while they run. The destructor lets a round that failed half-way
// end in order: the barrier files appear, each coldgate still running gets SIGTERM (it stops its
// server and removes its folders), and is waited for.
struct Participants {
  const Round& round;
  std::map<std::string, Running> running;  // by name: pass, fail, up, ab

  explicit Participants(const Round& r) : round(r) {}
  ~Participants() {
    for (const char* f : {"arrived-pass", "arrived-fail", "arrived-up", "arrived-ab", "go", "down"})
      round.touch(f);
    for (auto& [name, r] : running) {
      if (r.process && !r.process->wait_exited(0ms)) {
        ::kill(r.process->pid(), SIGTERM);
        r.finish(nullptr, 120s);
      }
    }
  }
  pid_t pid(const std::string& name) const { return running.at(name).process->pid(); }
  // True when one of `names` (all when empty) has ended.
  bool someone_ended(const std::set<std::string>& names = {}) const {
    for (const auto& [name, r] : running) {
      if ((names.empty() || names.count(name)) && r.process->wait_exited(0ms)) return true;
    }
    return false;
  }
  // Who runs and who ended, with the tail of each one's stderr: the message of a failed wait.
  std::string status() const {
    std::string s;
    for (const auto& [name, r] : running) {
      std::string err = read_all(r.err);
      s += "\n--- " + name + (r.process->wait_exited(0ms) ? " (ended)" : " (running)") + ":\n" +
           util::tail_lines(err, 15);
    }
    return s;
  }
};

// The postmaster a participant runs, as its command line and /proc show it.
struct Server {
  pid_t pid = 0;
  long long start = -1;
  std::string data_dir;
  std::string port;
};

Server server_of_participant(pid_t coldgate) {
  Server s;
  s.pid = server_of(coldgate);
  if (s.pid == 0) return s;
  s.start = db::process_start_time(s.pid);
  s.data_dir = option_of(s.pid, "-D");
  s.port = option_of(s.pid, "-p");
  return s;
}

std::string query_one(const std::string& url, const std::string& sql) {
  db::Connection c(db::ConnectionInfo::parse(url, "db up's URL"));
  return c.exec(sql)[0][0].as<std::string>();
}

void expect_own_results(const RunProject& p, const std::string& exit_text) {
  SCOPED_TRACE("run " + p.who);
  fs::path file = p.root / p.out / "results.json";
  ASSERT_TRUE(fs::exists(file)) << exit_text;
  results::Results res = results::from_json(read_all(file), file.string());
  EXPECT_EQ(res.title, p.title);
  EXPECT_EQ(res.config, p.config);
  EXPECT_FALSE(res.stopped) << res.stopped->error;
  std::vector<std::string> names;
  for (const auto& s : res.stages) {
    names.push_back(s.name);
    EXPECT_FALSE(s.failed()) << s.name << ": " << s.error;
    if (!s.snapshot) continue;
    if (s.name == p.mismatched) {
      EXPECT_EQ(s.snapshot->status, results::SnapshotStatus::changed) << s.name;
      // The difference is the fixture's own: this run read its own server's rows.
      if (p.mismatched == p.who + "-items") {
        EXPECT_NE(s.snapshot->diff.find("\"who\": \"" + p.who + "\""), std::string::npos)
            << s.snapshot->diff;
        EXPECT_NE(s.snapshot->diff.find("stale"), std::string::npos) << s.snapshot->diff;
      }
    } else {
      EXPECT_EQ(s.snapshot->status, results::SnapshotStatus::match) << s.name << "\n"
                                                                    << s.snapshot->diff;
    }
  }
  EXPECT_EQ(names, p.stages);
  // The committed snapshots are as they were; a mismatch only adds its .new candidates.
  auto now = files_with_bytes(p.root / "snapshots");
  for (const auto& [name, bytes] : p.committed) EXPECT_EQ(now[name], bytes) << name;
}

// Failures recorded so far in the running test: a round failed when it added some.
int failures_so_far() {
  return ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
}

// A round's one line, printed however the round ends (an ASSERT returns early): each
// participant's exit code, ok or MISMATCH (and the step it stopped at), the seconds it took.
struct RoundLine {
  int number = 0;
  int rounds = 0;
  int failures_before = failures_so_far();
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, int>> exits;  // "run pass" → its exit code
  std::string step = "making the fixtures";        // what the round was doing
  std::string seen;                                // what the round saw at the meeting point
  ~RoundLine() {
    std::string codes;
    for (const auto& [who, code] : exits)
      codes += (codes.empty() ? "" : ", ") + who + " exit " + std::to_string(code);
    const bool failed = failures_so_far() > failures_before;
    const auto s =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0);
    std::cout << "[ round    ] " << number << "/" << rounds << ": "
              << (codes.empty() ? "no exit yet" : codes) << (seen.empty() ? "" : "; " + seen)
              << "; " << (failed ? "MISMATCH" : "ok")
              << (step.empty() ? "" : " (stopped while " + step + ")") << "; " << s.count() << " s"
              << std::endl;
  }
};

// One round: plant, start everyone, meet, check, db down, let the runs end, check again.
void run_round(int number, int rounds, bool demo) {
  SCOPED_TRACE("round " + std::to_string(number) + " of " + std::to_string(rounds));
  RoundLine line{.number = number, .rounds = rounds};
  const int failures_before = line.failures_before;
  Round r;
  RunProject pass = demo ? demo_project(r, "pass", false) : small_project(r, "pass", false);
  RunProject fail = demo ? demo_project(r, "fail", true) : small_project(r, "fail", true);
  fs::path up = up_project(r);
  std::string base_sha, head_sha;
  fs::path ab = ab_project(r, base_sha, head_sha);
  ASSERT_EQ(failures_so_far(), failures_before) << "the fixtures could not be made";
  Leftovers leftovers(r);
  line.step = "waiting for everyone to arrive";

  Participants all(r);
  for (const RunProject* p : {&pass, &fail}) {
    all.running.emplace(
        p->who, start_coldgate(p->root, r.tmp, {"run", "-c", p->config, "--out", p->out}, r.env()));
  }
  all.running.emplace("up",
                      start_coldgate(up, r.tmp, {"db", "up", "-c", "coldgate.yaml"}, r.env()));
  all.running.emplace("ab",
                      start_coldgate(ab, r.tmp, {"ab", "--base", "base", "--no-trend"}, r.env()));

  // 1. Everyone has arrived: four servers up at once, each participant past its start-up clean-up.
  auto arrived = [&] {
    for (const auto& a : k_arrivals) {
      if (!r.has(a)) return false;
    }
    return true;
  };
  ASSERT_TRUE(wait_for([&] { return arrived() || all.someone_ended(); }, 240s))
      << "not everyone arrived within 240 s:" << all.status();
  ASSERT_TRUE(arrived()) << "a participant ended before everyone had arrived:" << all.status();
  std::string url;
  ASSERT_TRUE(wait_for(
      [&] {
        std::string out = read_all(all.running.at("up").out);
        url = out.substr(0, out.find('\n'));
        return url.rfind("postgresql://", 0) == 0 || all.running.at("up").process->wait_exited(0ms);
      },
      60s))
      << "db up printed no URL:" << all.status();
  ASSERT_EQ(url.rfind("postgresql://", 0), 0u) << all.status();

  // The dead owners' leftovers are gone, the live and foreign ones are not, and every live
  // participant has its own work folder and cluster, marked with its own PID.
  for (const auto& p : leftovers.dead)
    EXPECT_FALSE(fs::exists(p)) << "a dead owner's leftover is still there: " << p;
  for (const auto& p : leftovers.kept)
    EXPECT_TRUE(fs::exists(p)) << "removed though its owner is not dead: " << p;
  std::map<std::string, std::multiset<pid_t>> owners;  // prefix → owner PIDs of the live folders
  for (const auto& e : fs::directory_iterator(r.tmp)) {
    if (leftovers.planted(e.path())) continue;
    std::string name = e.path().filename().string();
    // coldgate-<kind>-<maker's PID>-XXXXXX (db::work_dir_prefix)
    std::string prefix = name.substr(0, name.find('-', std::string("coldgate-").size()) + 1);
    owners[prefix].insert(
        static_cast<pid_t>(std::atol(read_kv(e.path() / "owner")["owner_pid"].c_str())));
  }
  EXPECT_EQ(owners["coldgate-run-"], (std::multiset<pid_t>{all.pid("pass"), all.pid("fail")}));
  EXPECT_EQ(owners["coldgate-up-"], std::multiset<pid_t>{all.pid("up")});
  EXPECT_EQ(owners["coldgate-ab-"], std::multiset<pid_t>{all.pid("ab")});
  std::multiset<pid_t> marked;  // the registry's markers of the live clusters
  for (const auto& e : fs::directory_iterator(r.cache / "coldgate/runs")) {
    if (e.path().extension() == ".run" && !leftovers.planted(e.path())) {
      marked.insert(static_cast<pid_t>(std::atol(read_kv(e.path())["owner_pid"].c_str())));
      EXPECT_TRUE(fs::exists(read_kv(e.path())["run_dir"])) << e.path();
    }
  }
  EXPECT_EQ(marked,
            (std::multiset<pid_t>{all.pid("pass"), all.pid("fail"), all.pid("up"), all.pid("ab")}));
  EXPECT_EQ(owners["coldgate-pg-"].size(), 4u);

  // Four servers of their own: distinct data folders in the shared TMPDIR, distinct ports.
  std::map<std::string, Server> servers;
  std::set<std::string> data_dirs, ports;
  for (const char* name : {"pass", "fail", "up", "ab"}) {
    Server s = server_of_participant(all.pid(name));
    ASSERT_GT(s.pid, 0) << name << " has no server:" << all.status();
    EXPECT_TRUE(under(s.data_dir, r.tmp)) << s.data_dir;
    data_dirs.insert(s.data_dir);
    ports.insert(s.port);
    servers[name] = s;
  }
  EXPECT_EQ(data_dirs.size(), 4u);
  EXPECT_EQ(ports.size(), 4u);

  line.seen = std::to_string(servers.size()) + " servers at once, " +
              std::to_string(leftovers.dead.size()) + " leftovers of dead owners removed, " +
              std::to_string(leftovers.kept.size()) + " of live or foreign ones kept";

  // db up's URL reaches db up's server and its data.
  const std::string who_sql =
      "select current_setting('data_directory') || ' ' || (select who from item)";
  EXPECT_EQ(query_one(url, who_sql), servers["up"].data_dir + " up");
  const std::string up_started = query_one(url, "select pg_postmaster_start_time()::text");

  // 2. Go: the runs measure and reach their last stage, which waits for db down.
  r.touch("go");
  line.step = "waiting for the runs' last stage";
  // ab has no such stage: it may end at any time from now on.
  ASSERT_TRUE(wait_for(
      [&] {
        return (r.has("stage-pass") && r.has("stage-fail")) ||
               all.someone_ended({"pass", "fail", "up"});
      },
      demo ? 600s : 240s))
      << "the runs did not reach their last stage:" << all.status();
  ASSERT_TRUE(r.has("stage-pass") && r.has("stage-fail"))
      << "a run ended before its last stage:" << all.status();
  // db up answers while the runs measure, from the same server as before.
  EXPECT_EQ(query_one(url, who_sql), servers["up"].data_dir + " up");
  EXPECT_EQ(query_one(url, "select pg_postmaster_start_time()::text"), up_started);
  for (const char* name : {"pass", "fail"}) {
    Server now = server_of_participant(all.pid(name));
    ASSERT_GT(now.pid, 0) << name << ":" << all.status();
    EXPECT_EQ(now.data_dir, servers[name].data_dir) << name;
    servers[name] = now;  // a demo run restarted it itself (cold: restart)
  }

  // 3. db down stops exactly db up's server; the runs' servers keep running.
  std::vector<std::string> env = r.env();
  env.push_back("TMPDIR=" + r.tmp.string());
  env.insert(env.end(), {"CI=", "GITHUB_ACTIONS="});
  line.step = "stopping db up";
  RunResult down = run_coldgate({"db", "down", "-c", "coldgate.yaml"}, up, "", env);
  EXPECT_EQ(down.exit_code, 0) << down.err;
  EXPECT_EQ(down.err, "coldgate: stopped\n");
  std::string up_err;
  int up_code = all.running.at("up").finish(&up_err);
  line.exits.emplace_back("db up", up_code);
  line.exits.emplace_back("db down", down.exit_code);
  EXPECT_EQ(up_code, 0) << up_err;
  EXPECT_NE(up_err.find("coldgate: database stopped"), std::string::npos) << up_err;
  EXPECT_NE(db::process_start_time(servers["up"].pid), servers["up"].start)
      << "db up's server still runs";
  EXPECT_FALSE(fs::exists(fs::path(servers["up"].data_dir).parent_path()))
      << servers["up"].data_dir;
  for (const char* name : {"pass", "fail"}) {
    EXPECT_EQ(db::process_start_time(servers[name].pid), servers[name].start)
        << "db down stopped " << name << "'s server";
  }

  // 4. The runs finish; everyone ends as alone.
  r.touch("down");
  std::map<std::string, int> code;
  std::map<std::string, std::string> err;
  line.step = "waiting for the runs and ab to end";
  for (const char* name : {"pass", "fail", "ab"}) {
    code[name] = all.running.at(name).finish(&err[name], demo ? 900s : 240s);
    line.exits.emplace_back(std::string(name) == "ab" ? "ab" : "run " + std::string(name),
                            code[name]);
  }
  line.step = "checking the outputs";
  EXPECT_EQ(code["pass"], pass.expected_exit) << err["pass"];
  EXPECT_EQ(code["fail"], fail.expected_exit) << err["fail"];
  EXPECT_EQ(code["ab"], 0) << err["ab"];
  expect_own_results(pass, err["pass"]);
  expect_own_results(fail, err["fail"]);
  for (const fs::path& out : {pass.root / pass.out, fail.root / fail.out, ab / "coldgate-out"}) {
    SCOPED_TRACE(out.string());
    expect_whole_files(out, false);
  }
  for (RunProject* p : {&pass, &fail}) {
    // Setup and last stage reached the same server: this run's own, never restarted by another.
    std::string at_setup = r.recorded(p->who + "-setup"), at_end = r.recorded(p->who + "-stage");
    EXPECT_EQ(at_setup.substr(0, at_setup.find(' ')), servers[p->who].data_dir) << p->who;
    EXPECT_EQ(at_end.substr(0, at_end.find(' ')), servers[p->who].data_dir) << p->who;
    if (!p->restarts) {
      EXPECT_EQ(at_setup, at_end) << p->who << "'s server was restarted";
    }
  }
  std::string ab_setup = r.recorded("ab-setup");
  EXPECT_EQ(ab_setup.substr(0, ab_setup.find(' ')), servers["ab"].data_dir);
  {
    SCOPED_TRACE("ab");
    fs::path out = ab / "coldgate-out";
    results::Results head = results::from_json(read_all(out / "results.json"), "ab results.json");
    results::Results base =
        results::from_json(read_all(out / "base/results.json"), "ab base/results.json");
    EXPECT_EQ(head.title, "concurrency ab");
    EXPECT_EQ(head.git.commit, head_sha);
    EXPECT_EQ(base.git.commit, base_sha);
    for (const auto* res : {&head, &base}) {
      ASSERT_EQ(res->stages.size(), 2u);
      EXPECT_EQ(res->stages[0].name, "ab-count");
      EXPECT_EQ(res->stages[1].name, "ab-client");
    }
    ASSERT_TRUE(head.gate);
    EXPECT_EQ(head.gate->base_source, results::BaseSource::interleaved);
  }

  // 5. Nothing is left but what was not the participants' to remove.
  line.step = "checking for leftovers";
  wait_for([&] { return processes_under(r.dir.path()).empty(); }, 15s);
  EXPECT_EQ(list(processes_under(r.dir.path())), " none") << "processes left";
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(r.tmp)) {
    if (!leftovers.planted(e.path())) left.push_back(e.path().string());
  }
  for (const auto& e : fs::directory_iterator(r.cache / "coldgate/runs")) {
    if (e.path().extension() == ".run" && !leftovers.planted(e.path()))
      left.push_back(e.path().string());
  }
  for (const auto& e : fs::directory_iterator(r.cache / "coldgate/up"))
    left.push_back(e.path().string());
  EXPECT_EQ(list(left), " none") << "temp folders, markers or state files left";
  for (const auto& p : leftovers.kept) EXPECT_TRUE(fs::exists(p)) << "removed at the end: " << p;

  line.step.clear();
}

TEST(Concurrency, TwoRunsDbUpDownAndAbAtOnceShareTmpdirAndCacheWithoutInterfering) {
  const int rounds = rounds_from_env();
  const bool demo = demo_from_env();
  int failed = 0;
  for (int i = 1; i <= rounds; ++i) {
    const int before = failures_so_far();
    run_round(i, rounds, demo);
    if (failures_so_far() > before) ++failed;
  }
  std::cout << "[ summary  ] " << rounds << " rounds" << (demo ? " of the demo" : "") << ": "
            << rounds - failed << " ok, " << failed << " with a mismatch or leak" << std::endl;
}

// ---------------------------------------------------------------------------------------------
// One --out for two commands: both `coldgate-out` in one checkout

// The project is the FaultFolder's own folder (its TMPDIR and cache private to the test).
struct SharedOut : ::testing::Test {
  void SetUp() override {
    fs::create_directories(f.dir / "barrier");
    f.dir.write("barrier.sh", k_barrier_sh);
    const std::string head =
        "version: 1\ndatabase: { provider: local }\ndefaults: { runs: 1, warm: 0 }\n";
    // Holds its --out while its setup command waits for barrier/release.
    f.dir.write("held.yaml", head +
                                 "setup: [ { command: [sh, barrier.sh, held, release] } ]\n"
                                 "stages: [ { name: held, command: [\"true\"] } ]\n");
    f.dir.write("quick.yaml", head + "stages: [ { name: quick, command: [\"true\"] } ]\n");
  }
  // Runs coldgate to its end; its exit code, stderr in `err`.
  int now(const std::vector<std::string>& args, std::string& err) {
    Running r = f.start(args);
    return r.finish(&err);
  }
  // Starts `run -c held.yaml` and waits until its setup command waits.
  Running start_holder() {
    Running r = f.start({"run", "-c", "held.yaml"});
    EXPECT_TRUE(wait_for(
        [&] { return fs::exists(f.dir / "barrier/held") || r.process->wait_exited(0ms); }, 120s));
    EXPECT_FALSE(r.process->wait_exited(0ms)) << read_all(r.err);
    return r;
  }
  std::vector<std::string> stages_in(const std::string& out) {
    const fs::path file = f.dir / out / "results.json";
    std::vector<std::string> names;
    for (const auto& s : results::from_json(read_all(file), file.string()).stages) {
      names.push_back(s.name);
    }
    return names;
  }

  FaultFolder f;
};

TEST_F(SharedOut, ASecondCommandOnTheSameOutStopsAtOnceAndLeavesTheFirstsFilesAlone) {
  Running first = start_holder();
  ASSERT_FALSE(HasFailure());
  // The holder's unfinished atomic write, as write_file_atomic has it while it writes.
  const fs::path unfinished = f.dir / "coldgate-out/results.json.tmp-Ab12Cd";
  std::ofstream(unfinished) << "{ \"half\":";
  const std::regex refused(
      "coldgate: error: coldgate-out: in use by another coldgate \\(coldgate run, pid " +
      std::to_string(first.process->pid()) +
      ", started \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\); wait for it to end "
      "or pass --out DIR\n");
  const std::string fixtures = (source_dir() / "tests/gate/fixtures").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "-c", "quick.yaml"},
        {"ab", "-c", "quick.yaml", "--base", "main"},
        {"stack", "-c", "quick.yaml", "main", "feature"},
        {"compare", fixtures + "/base.json", fixtures + "/head.json"}}) {
    SCOPED_TRACE(args.front());
    std::string err;
    EXPECT_EQ(now(args, err), 3) << err;
    EXPECT_TRUE(std::regex_match(err, refused)) << err;
    EXPECT_EQ(read_all(unfinished), "{ \"half\":");
    EXPECT_FALSE(fs::exists(f.dir / "coldgate-out/results.json"));
    EXPECT_FALSE(first.process->wait_exited(0ms)) << read_all(first.err);
  }
  // Another --out is another folder: no wait.
  std::string err;
  EXPECT_EQ(now({"run", "-c", "quick.yaml", "--out", "other-out"}, err), 0) << err;
  EXPECT_EQ(stages_in("other-out"), std::vector<std::string>{"quick"});

  // The first carries on to its end; then the next run has the folder (and clears the
  // unfinished file, whose writer has gone).
  std::ofstream(f.dir / "barrier/release").put('\n');
  EXPECT_EQ(first.finish(&err), 0) << err;
  EXPECT_EQ(stages_in("coldgate-out"), std::vector<std::string>{"held"});
  EXPECT_EQ(now({"run", "-c", "quick.yaml"}, err), 0) << err;
  EXPECT_EQ(stages_in("coldgate-out"), std::vector<std::string>{"quick"});
  EXPECT_FALSE(fs::exists(unfinished));
  f.expect_nothing_left("after the runs");
}

TEST_F(SharedOut, TheLockOfASigkilledRunIsGoneAtOnceEvenWhileItsSetupCommandLivesOn) {
  Running first = start_holder();
  ASSERT_FALSE(HasFailure());
  ::kill(first.process->pid(), SIGKILL);
  EXPECT_EQ(first.finish(), 128 + SIGKILL);
  // No code runs in a SIGKILLed process: its setup command still waits, holding no lock.
  std::vector<std::string> orphans = processes_under(f.dir.path());
  EXPECT_TRUE(std::any_of(orphans.begin(), orphans.end(), [](const std::string& p) {
    return p.find("barrier.sh held release") != std::string::npos;
  })) << list(orphans);
  std::string err;
  EXPECT_EQ(now({"run", "-c", "quick.yaml"}, err), 0) << err;
  EXPECT_EQ(stages_in("coldgate-out"), std::vector<std::string>{"quick"});
  // The next run removed the killed one's server and folders (and ended its setup command).
  std::ofstream(f.dir / "barrier/release").put('\n');
  wait_for([&] { return processes_under(f.dir.path()).empty(); }, 15s);
  f.expect_nothing_left("after the next run");
  expect_whole_files(f.dir / "coldgate-out");
}

// ---------------------------------------------------------------------------------------------
// Two runs of one config in one checkout, an --out each: a command stage's `snapshot.from` file

TEST(SharedCheckout, TwoRunsOfOneConfigTakeTurnsAtTheFileTheirCommandStageWrites) {
  FaultFolder f;
  // The first run to get here waits until the other coldgate says it waits for doc.json: it
  // would instead be in here too, removing and writing the same file, without the lock.
  f.dir.write(
      "doc.sh",
      "if mkdir first 2>/dev/null; then\n"
      "  n=0\n"
      "  until grep -qs 'waiting for another coldgate' stderr-*.txt; do\n"
      "    n=$((n + 1))\n"
      "    if [ \"$n\" -gt 2400 ]; then echo 'doc.sh: the other run never waited' >&2; exit 1; fi\n"
      "    sleep 0.05\n"
      "  done\n"
      "fi\n"
      "if ! mkdir inside 2>/dev/null; then echo 'doc.sh: two runs at once' >&2; exit 1; fi\n"
      "printf '{\"n\": 1}\\n' > out/doc.json\n"
      "rmdir inside\n");
  f.dir.write("coldgate.yaml",
              "version: 1\ndatabase: { provider: local }\n"
              "defaults: { runs: 1, warm: 0 }\n"
              "stages:\n"
              "  - name: doc\n"
              "    command: [sh, doc.sh]\n"
              "    snapshot: { from: out/doc.json, path: snapshots/doc.json }\n");
  f.dir.write("snapshots/doc.json", "{\n  \"n\": 1\n}\n");
  fs::create_directories(f.dir / "out");
  Running a = f.start({"run", "--out", "out-a"});
  Running b = f.start({"run", "--out", "out-b"});
  std::string err_a, err_b;
  EXPECT_EQ(a.finish(&err_a), 0) << err_a;
  EXPECT_EQ(b.finish(&err_b), 0) << err_b;
  // Exactly one of them waited, once, naming the file.
  const std::string waited =
      "doc: waiting for another coldgate to finish a run that writes out/doc.json (snapshot.from)";
  EXPECT_EQ((err_a.find(waited) != std::string::npos) + (err_b.find(waited) != std::string::npos),
            1)
      << err_a << "\n---\n"
      << err_b;
  for (const char* out : {"out-a", "out-b"}) {
    results::Results r = results::from_json(read_all(f.dir / out / "results.json"), out);
    ASSERT_EQ(r.stages.size(), 1u) << out;
    EXPECT_FALSE(r.stages[0].failed()) << out << ": " << r.stages[0].error;
    ASSERT_TRUE(r.stages[0].snapshot) << out;
    EXPECT_EQ(r.stages[0].snapshot->status, results::SnapshotStatus::match) << out;
  }
  f.expect_nothing_left("after both runs");
}

}  // namespace
}  // namespace coldgate
