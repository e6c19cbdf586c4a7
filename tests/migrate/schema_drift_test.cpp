// migrate::schema_drift on two schema_objects() maps as the catalog query writes them: a table's
// differences each named with both sides, bounded however many there are; other objects shown
// around their first difference.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "migrate/catalog.hpp"

namespace coldgate::migrate {
namespace {

using Objects = std::map<std::string, std::string>;

TEST(SchemaDrift, ATableNamesTheColumnsAndConstraintsThatDifferAndNotTheSameOnes) {
  const Objects upgraded{{"table public.t",
                          "id integer NOT NULL\n\"My Col\" text\nextra integer\n"
                          "constraint t_pkey PRIMARY KEY (id)"}};
  const Objects fresh{{"table public.t",
                       "id integer NOT NULL\n\"My Col\" text NOT NULL\n"
                       "constraint t_check CHECK ((id > 0))\nconstraint t_pkey PRIMARY KEY (id)"}};
  const auto d = schema_drift(upgraded, fresh);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0],
            "table public.t: column `\"My Col\" text` after the upgrade, `\"My Col\" text NOT "
            "NULL` in head's fresh setup; column `extra integer` only after the upgrade; "
            "constraint `t_check CHECK ((id > 0))` only in head's fresh setup");
}

TEST(SchemaDrift, ManyDifferencesStayShortAndTheRestAreCounted) {
  std::string a, b;
  for (int i = 0; i < 60; ++i) {
    a += "column_with_a_long_name_" + std::to_string(i) + " character varying(255)\n";
    b += "column_with_a_long_name_" + std::to_string(i) + " text\n";
  }
  const auto d = schema_drift({{"table public.wide", a}}, {{"table public.wide", b}});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_LE(d[0].size(), 400u) << d[0];
  EXPECT_NE(d[0].find("column_with_a_long_name_0 character varying(255)"), std::string::npos);
  EXPECT_NE(d[0].find(" more differences"), std::string::npos) << d[0];
}

TEST(SchemaDrift, TheSameColumnsInAnotherOrderSayWhichOrder) {
  const auto d = schema_drift({{"table public.t", "a integer\nb integer"}},
                              {{"table public.t", "b integer\na integer"}});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0],
            "table public.t: the columns in another order: `a, b` after the upgrade, `b, a` in "
            "head's fresh setup");
}

TEST(SchemaDrift, ALongViewIsShownAroundItsFirstDifference) {
  const std::string head(300, 'x');
  const auto d = schema_drift({{"view public.v", " SELECT " + head + " AS old_name"}},
                              {{"view public.v", " SELECT " + head + " AS new_name"}});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].find("old_name"), std::string::npos) << d[0];
  EXPECT_NE(d[0].find("new_name"), std::string::npos) << d[0];
  EXPECT_NE(d[0].find("`…x"), std::string::npos) << "cut from the start, marked: " << d[0];
  EXPECT_LE(d[0].size(), 400u) << d[0];
}

TEST(SchemaDrift, AnObjectOnOneSideOnly) {
  const auto d = schema_drift({{"index public.i", "CREATE UNIQUE INDEX i ON public.t (slug)"}}, {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "index public.i: only after the upgrade (head's fresh setup has no such object)");
  EXPECT_TRUE(
      schema_drift({{"table public.t", "a integer"}}, {{"table public.t", "a integer"}}).empty());
}

}  // namespace
}  // namespace coldgate::migrate
