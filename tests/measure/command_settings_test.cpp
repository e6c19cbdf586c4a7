#include "measure/command_settings.hpp"

#include <gtest/gtest.h>

namespace coldgate::measure {
namespace {

TEST(Pgoptions, OneDashCPerSettingWithWhitespaceAndBackslashesEscaped) {
  EXPECT_EQ(pgoptions({}), "");
  EXPECT_EQ(pgoptions({{"jit", "off"}}), "-c jit=off");
  EXPECT_EQ(pgoptions({{"search_path", "a, b"}, {"work_mem", "64MB"}}),
            "-c search_path=a,\\ b -c work_mem=64MB");
  EXPECT_EQ(pgoptions({{"x.y", "C:\\dir\tz\n"}}), "-c x.y=C:\\\\dir\\\tz\\\n");
  EXPECT_EQ(pgoptions({{"app.empty", ""}}), "-c app.empty=");
}

TEST(ListQuotedSetting, TheSettingsAlterRoleStoresAsQuotedLists) {
  EXPECT_TRUE(is_list_quoted_setting("search_path"));
  EXPECT_TRUE(is_list_quoted_setting("Search_Path"));
  EXPECT_TRUE(is_list_quoted_setting("temp_tablespaces"));
  EXPECT_FALSE(is_list_quoted_setting("jit"));
  EXPECT_FALSE(is_list_quoted_setting("log_destination"));  // a list, but not quoted
}

TEST(CommandSettings, PgoptionsGoesIntoTheEnvironmentAndNoSettingsIntoNothing) {
  config::Stage stage;
  stage.name = "app";
  stage.command = {"./app"};
  db::ConnectionInfo nowhere;  // never connected to for pgoptions
  std::vector<std::string> env{"A=1"};
  {
    CommandSettings none(stage, nowhere, env);
    none.restore();
  }
  EXPECT_EQ(env, (std::vector<std::string>{"A=1"}));
  stage.settings = {{"jit", "off"}};
  CommandSettings s(stage, nowhere, env);
  s.restore();
  EXPECT_EQ(env, (std::vector<std::string>{"A=1", "PGOPTIONS=-c jit=off"}));
}

}  // namespace
}  // namespace coldgate::measure
