// db::with_profile_settings: what a server coldgate starts gets for the profile, around what the
// user configured.
#include <gtest/gtest.h>

#include "db/profile.hpp"

namespace coldgate::db {
namespace {

using Settings = std::map<std::string, std::string>;

TEST(ProfileSettings, AddPgStatStatementsAfterTheUsersOwnLibraries) {
  EXPECT_EQ(with_profile_settings({})["shared_preload_libraries"], "pg_stat_statements");
  EXPECT_EQ(with_profile_settings({{"shared_preload_libraries", "auto_explain"}})
                ["shared_preload_libraries"],
            "auto_explain,pg_stat_statements");
  // A list as postgresql.conf writes it (spaces, quotes) keeps its libraries, in their order.
  EXPECT_EQ(with_profile_settings({{"shared_preload_libraries", " \"auto_explain\", pg_prewarm "}})
                ["shared_preload_libraries"],
            "auto_explain,pg_prewarm,pg_stat_statements");
  // Named already: not twice, and where the user put it.
  EXPECT_EQ(with_profile_settings({{"shared_preload_libraries", "pg_stat_statements,auto_explain"}})
                ["shared_preload_libraries"],
            "pg_stat_statements,auto_explain");
}

TEST(ProfileSettings, TheUsersValuesWin) {
  Settings s = with_profile_settings({{"compute_query_id", "auto"},
                                      {"pg_stat_statements.max", "500"},
                                      {"track_io_timing", "off"}});
  EXPECT_EQ(s["compute_query_id"], "auto");
  EXPECT_EQ(s["pg_stat_statements.max"], "500");
  EXPECT_EQ(s["track_io_timing"], "off");
  EXPECT_EQ(s["pg_stat_statements.track_planning"], "on");
  Settings defaults = with_profile_settings({});
  EXPECT_EQ(defaults["compute_query_id"], "on");
  EXPECT_EQ(defaults["pg_stat_statements.max"], std::to_string(k_profile_max_statements));
  EXPECT_EQ(defaults["track_io_timing"], "on");
}

TEST(ProfileSettings, FollowTheServersMajor) {
  const Settings user = {{"shared_buffers", "16MB"}};
  // 13 refuses compute_query_id at start-up, and its profile is off anyway: nothing added.
  EXPECT_EQ(with_profile_settings(user, 13), user);
  EXPECT_EQ(with_profile_settings(user, 10), user);
  // 14 and later, and a major not known yet (0), get the whole set.
  for (int major : {0, 14, 15, 17, 18}) {
    Settings s = with_profile_settings(user, major);
    EXPECT_EQ(s["compute_query_id"], "on") << major;
    EXPECT_EQ(s["shared_preload_libraries"], "pg_stat_statements") << major;
    EXPECT_EQ(s["shared_buffers"], "16MB") << major;
    EXPECT_EQ(s.size(), 6u) << major;
  }
}

}  // namespace
}  // namespace coldgate::db
