// db::image_major: which PostgreSQL a container image runs, so the container provider passes
// only settings that server knows (compute_query_id is 14+).
#include <gtest/gtest.h>

#include "db/container_provider.hpp"

namespace coldgate::db {
namespace {

TEST(ImageMajor, ThePgMajorOfTheImagesEnvironmentFirst) {
  const std::string env = "PATH=/usr/local/bin:/usr/bin\nGOSU_VERSION=1.17\nPG_MAJOR=17\n"
                          "PG_VERSION=17.2-1.pgdg120+1\n";
  EXPECT_EQ(image_major(env, "postgres:15", 15), 17);  // the image says what it is
  EXPECT_EQ(image_major(env, "my-app-db", std::nullopt), 17);
}

TEST(ImageMajor, ElseTheTagsLeadingDigitsElseTheConfiguredVersion) {
  EXPECT_EQ(image_major("PATH=/usr/bin\n", "postgres:16-alpine", std::nullopt), 16);
  EXPECT_EQ(image_major("", "postgres:18.1", 14), 18);
  EXPECT_EQ(image_major("", "registry.local:5000/team/postgres:13", std::nullopt), 13);
  // The registry's port is not a tag.
  EXPECT_EQ(image_major("", "registry.local:5000/team/postgres", 16), 16);
  EXPECT_EQ(image_major("", "postgres:latest", 17), 17);
  EXPECT_EQ(image_major("PG_MAJOR=\n", "postgres", std::nullopt), 0);  // not known
}

}  // namespace
}  // namespace coldgate::db
