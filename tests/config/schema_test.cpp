#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "config/config.hpp"
#include "support/support.hpp"
#include "util/error.hpp"

namespace coldgate::config {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<fs::path> example_configs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(coldgate::testing::source_dir() / "config"))
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ConfigExamples, EveryExampleLoads) {
  auto files = example_configs();
  std::set<std::string> names;
  for (const auto& f : files) names.insert(f.filename().string());
  for (const char* expected : {"example.yaml", "container.yaml", "external.yaml"})
    EXPECT_TRUE(names.count(expected)) << expected;
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    try {
      Config c = load(f);
      EXPECT_FALSE(c.stages.empty());
    } catch (const Error& e) {
      ADD_FAILURE() << e.message();
    }
  }
}

TEST(ConfigExamples, FullExampleUsesEveryKnownKey) {
  // example.yaml documents every key: each key of the table appears in it somewhere.
  std::string text =
      coldgate::testing::slurp(coldgate::testing::source_dir() / "config/example.yaml");
  for (const auto& [table, keys] : known_keys())
    for (const auto& key : keys)
      EXPECT_NE(text.find(key + ":"), std::string::npos) << table << "." << key;
}

json schema() {
  return json::parse(
      coldgate::testing::slurp(coldgate::testing::source_dir() / "config/coldgate.schema.json"));
}

// The object schema at a schema node: follows $ref and picks the alternative with properties.
const json& object_schema(const json& root, const json& node) {
  if (node.contains("$ref")) {
    return object_schema(root,
                         root.at(json::json_pointer(node.at("$ref").get<std::string>().substr(1))));
  }
  for (const char* combinator : {"oneOf", "anyOf"})
    if (node.contains(combinator))
      for (const auto& alt : node.at(combinator))
        if (alt.contains("properties")) return alt;
  return node;
}

// Records every object schema that has properties, under a key path in the form of known_keys().
void collect(const json& root, const json& node, const std::string& path,
             std::map<std::string, std::vector<std::string>>& out) {
  const json& obj = object_schema(root, node);
  if (obj.contains("properties")) {
    EXPECT_EQ(obj.value("additionalProperties", true), false)
        << "'" << path << "' allows extra keys";
    auto& keys = out[path];
    for (const auto& [key, sub] : obj.at("properties").items()) {
      keys.push_back(key);
      EXPECT_TRUE(sub.contains("description")) << path << "." << key << " has no description";
      collect(root, sub, path.empty() ? key : path + "." + key, out);
    }
  }
  if (obj.contains("items")) collect(root, obj.at("items"), path + "[]", out);
}

TEST(ConfigSchema, ParsesAndDeclaresDraft2020) {
  json s = schema();
  EXPECT_EQ(s.at("$schema"), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(s.at("required"), json::array({"version"}));
}

TEST(ConfigSchema, PropertiesMatchTheLoaderKeyTableAtEveryLevel) {
  json s = schema();
  std::map<std::string, std::vector<std::string>> from_schema;
  collect(s, s, "", from_schema);
  // Free-form mappings (settings) have no key table and no properties.
  std::map<std::string, std::set<std::string>> a, b;
  for (const auto& [path, keys] : from_schema) a[path] = {keys.begin(), keys.end()};
  for (const auto& [path, keys] : known_keys()) b[path] = {keys.begin(), keys.end()};
  EXPECT_EQ(a, b);
  for (const auto& [path, keys] : known_keys())
    EXPECT_EQ(b[path].size(), keys.size()) << path << " repeats a key";
}

TEST(ConfigSchema, EnumsMatchTheLoader) {
  json s = schema();
  auto enum_of = [&](const json& prop) {
    for (const auto& alt : prop.at("anyOf"))
      if (alt.contains("enum")) return alt.at("enum");
    return json();
  };
  const json& db = s.at("properties").at("database").at("properties");
  EXPECT_EQ(enum_of(db.at("provider")), json::array({"local", "container", "external"}));
  EXPECT_EQ(enum_of(db.at("engine")), json::array({"docker", "podman"}));
  const json& stage = s.at("properties").at("stages").at("items").at("properties");
  EXPECT_EQ(enum_of(stage.at("cold")), json::array({"process", "restart"}));
  EXPECT_EQ(enum_of(stage.at("decode")), json::array({"json", "none"}));
  EXPECT_EQ(enum_of(stage.at("settings_via")), json::array({"pgoptions", "role"}));
}

}  // namespace
}  // namespace coldgate::config
