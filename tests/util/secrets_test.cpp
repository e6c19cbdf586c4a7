// Secrets never leave coldgate: a database password (raw or percent-encoded, as in a URL) and
// token values from the environment are masked in stdout, stderr and every file of --out,
// even when a stage's own stderr or a server message quotes them. The real binary, a real
// server (the suite's cluster) with a role whose password is known.
#include <gtest/gtest.h>

#include <filesystem>

#include "db/connection.hpp"
#include "results/json.hpp"
#include "support/cluster.hpp"
#include "support/support.hpp"
#include "util/secrets.hpp"

namespace coldgate::measure {
namespace {

namespace fs = std::filesystem;
using testing::run_coldgate;
using testing::slurp;
using testing::TempDir;

constexpr const char* k_password = "pw-Xq9!s3cret/@:word";
constexpr const char* k_password_in_url = "pw-Xq9%21s3cret%2F%40%3Aword";
constexpr const char* k_token = "ghp_TestToken0123456789abcdef";

// Every place the run's output went: stdout, stderr, each file under `out`.
std::vector<std::pair<std::string, std::string>> outputs(const testing::RunResult& r,
                                                         const fs::path& out) {
  std::vector<std::pair<std::string, std::string>> all{{"stdout", r.out}, {"stderr", r.err}};
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(out, ec)) {
    if (e.is_regular_file()) all.emplace_back(e.path().string(), slurp(e.path()));
  }
  return all;
}

void expect_no_secret(const std::vector<std::pair<std::string, std::string>>& outputs) {
  for (const auto& [name, text] : outputs) {
    for (const char* secret : {k_password, k_password_in_url, "s3cret", k_token}) {
      EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in " << name << ":\n" << text;
    }
  }
}

// A URL for a role with password k_password on a fresh database of the suite's cluster.
std::string url_with_password() {
  db::ConnectionInfo info = testing::fresh_database("coldgate_secrets");
  db::Connection admin(testing::shared_cluster().socket_info("postgres"));
  admin.exec("DROP ROLE IF EXISTS coldgate_secret_user");
  admin.exec(std::string("CREATE ROLE coldgate_secret_user LOGIN PASSWORD '") + k_password + "'");
  info.user = "coldgate_secret_user";
  info.password = k_password;
  const std::string url = info.url();
  EXPECT_NE(url.find(k_password_in_url), std::string::npos) << url;
  return url;
}

TEST(Secrets, PasswordsAndTokensQuotedByStagesAreMaskedInEveryOutput) {
  TempDir dir;
  dir.write("coldgate.yaml",
            "version: 1\n"
            "database: { provider: external, url: \"${TEST_DB_URL}\" }\n"
            "defaults: { runs: 1, warm: 0 }\n"
            "stages:\n"
            "  - name: fine\n"
            "    query: select 1\n"
            "  - name: leaky-command\n"
            "    command: 'echo \"url=$DATABASE_URL pw=$PGPASSWORD token=$GITHUB_TOKEN\" >&2; exit 3'\n"
            "  - name: leaky-sql\n"
            "    query: select ('x' || $1 || $2)::int\n"
            "    params: [\"${GITHUB_TOKEN}\", \"" + std::string(k_password) + "\"]\n");
  const fs::path out = dir / "out";
  auto r = run_coldgate({"run", "--no-ci", "--out", out.string()}, dir.path(), "",
                        {"TEST_DB_URL=" + url_with_password(), std::string("GITHUB_TOKEN=") + k_token});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string results = slurp(out / "results.json");
  // The leaks happened and were masked (a test that cannot fail would find no "***").
  EXPECT_NE(results.find("pw=*** token=***"), std::string::npos) << results;
  EXPECT_NE(results.find("invalid input syntax for type integer: \\\"x******\\\""),
            std::string::npos)
      << results;
  expect_no_secret(outputs(r, out));
}

TEST(Secrets, AFailedConnectionNamesTheServerWithoutItsPassword) {
  TempDir dir;
  dir.write("coldgate.yaml",
            "version: 1\n"
            "database: { provider: external, url: \"postgresql://someone:" +
                std::string(k_password_in_url) + "@127.0.0.1:1/app?connect_timeout=2\" }\n"
            "stages:\n"
            "  - name: q\n"
            "    query: select 1\n");
  const fs::path out = dir / "out";
  auto r = run_coldgate({"run", "--no-ci", "--out", out.string()}, dir.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("cannot connect to postgresql://someone:***@127.0.0.1:1/app"),
            std::string::npos)
      << r.err;
  expect_no_secret(outputs(r, out));
}

TEST(Secrets, MaskSecretsReplacesRegisteredValuesAndTheirUrlForm) {
  util::add_secret("abc");  // too short to mask: it would eat ordinary words
  util::add_secret("hunter2/x");
  EXPECT_EQ(util::mask_secrets("abc hunter2/x u:hunter2%2Fx@h hunter2/xhunter2/x"),
            "abc *** u:***@h ******");
}

TEST(Secrets, APasswordMappedThroughEnvIsMaskedInEveryOutputAndStoredDocument) {
  // Setup and stages print what env: gives them, raw and percent-encoded (the JDBC and libpq
  // URLs), to stdout — a stored snapshot document — and to stderr — a failed stage's error.
  TempDir dir;
  dir.write("show.sh",
            "echo \"setup sees $DB_PASSWORD $DB_URL $APP_DSN\"; echo \"$DB_PASSWORD\" >&2\n");
  dir.write("doc.sh",
            "printf '{\"password\": \"%s\", \"jdbc\": \"%s\", \"url\": \"%s\", \"dsn\": \"%s\"}\\n' "
            "\"$DB_PASSWORD\" \"$DB_URL\" \"$DATABASE_URL\" \"$APP_DSN\"\n"
            "echo \"stderr: $DB_PASSWORD $DB_URL $APP_DSN\" >&2\n");
  dir.write("coldgate.yaml",
            "version: 1\n"
            "database: { provider: external, url: \"${TEST_DB_URL}\" }\n"
            "env: { DB_PASSWORD: '${PGPASSWORD}', DB_URL: '${JDBC_DATABASE_URL}', "
            "APP_DSN: 'dsn(${PGUSER}/${PGPASSWORD})' }\n"
            "setup: [ { command: [sh, show.sh] } ]\n"
            "defaults: { runs: 1, warm: 0 }\n"
            "stages:\n"
            "  - name: doc\n"
            "    command: [sh, doc.sh]\n"
            "    snapshot: true\n"
            "  - name: leaky\n"
            "    command: 'sh doc.sh; exit 4'\n");
  const fs::path out = dir / "coldgate-out";
  const std::string url = url_with_password();
  auto r = run_coldgate({"run", "--ci", "--out", out.string()}, dir.path(), "",
                        {"TEST_DB_URL=" + url});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // The leaks happened and were masked: the stored document and the stage's stderr tail.
  const db::ConnectionInfo info = db::ConnectionInfo::parse(url, "test");
  const std::string jdbc = "jdbc:postgresql://" + info.host + ":" + std::to_string(info.port) +
                           "/coldgate_secrets?user=coldgate_secret_user&password=***";
  std::string masked_url = url;
  masked_url.replace(masked_url.find(k_password_in_url), std::string(k_password_in_url).size(),
                     "***");
  const results::Results res = results::from_json(slurp(out / "results.json"), "results.json");
  ASSERT_EQ(res.stages.size(), 2u);
  ASSERT_TRUE(res.stages[0].snapshot);
  EXPECT_EQ(slurp(dir / res.stages[0].snapshot->pending),
            "{\n  \"dsn\": \"dsn(coldgate_secret_user/***)\",\n  \"jdbc\": \"" + jdbc +
                "\",\n  \"password\": \"***\",\n  \"url\": \"" + masked_url + "\"\n}\n");
  const std::string results = slurp(out / "results.json");
  EXPECT_NE(results.find("stderr: *** " + jdbc + " dsn(coldgate_secret_user/***)"),
            std::string::npos)
      << results;
  expect_no_secret(outputs(r, out));
}

}  // namespace
}  // namespace coldgate::measure
