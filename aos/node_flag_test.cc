#include "aos/node_flag.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kTwoNodes = R"({
  "nodes": [
    {"name": "pi1", "hostname": "robot-pi1"},
    {"name": "pi2", "hostname": "robot-pi2"}
  ]
})";

FlatbufferDetachedBuffer<Configuration> Config(std::string_view json) {
  auto config = configuration::ReadConfigFromJson(json);
  EXPECT_TRUE(config.ok()) << config.status();
  return std::move(config).value();
}

TEST(NodeFlagTest, SingleNodeConfigRunsWithoutANode) {
  auto config = Config("{}");
  auto node = ResolveNode(config.message(), "", "anyhost");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(*node, nullptr);
}

TEST(NodeFlagTest, SingleNodeConfigRefusesANode) {
  auto config = Config("{}");
  auto node = ResolveNode(config.message(), "pi1", "anyhost");
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().message(),
            "--node=pi1: the configuration has no nodes; drop --node");
}

TEST(NodeFlagTest, NamedNodeWinsOverTheHostname) {
  auto config = Config(kTwoNodes);
  auto node = ResolveNode(config.message(), "pi2", "robot-pi1");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ((*node)->name()->string_view(), "pi2");
}

TEST(NodeFlagTest, UnknownNodeListsTheChoices) {
  auto config = Config(kTwoNodes);
  auto node = ResolveNode(config.message(), "pi3", "robot-pi1");
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().message(),
            "--node=pi3 is not a node of the configuration; its nodes: pi1, "
            "pi2");
}

TEST(NodeFlagTest, DefaultIsTheNodeWithThisHostname) {
  auto config = Config(kTwoNodes);
  auto node = ResolveNode(config.message(), "", "robot-pi2");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ((*node)->name()->string_view(), "pi2");
}

TEST(NodeFlagTest, NoMatchingHostnameNamesItAndTheChoices) {
  auto config = Config(kTwoNodes);
  auto node = ResolveNode(config.message(), "", "laptop");
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(node.status().message(), HasSubstr("hostname \"laptop\""));
  EXPECT_THAT(node.status().message(), HasSubstr("one of: pi1, pi2"));
}

TEST(NodeFlagTest, TwoNodesOnThisHostnameNeedAName) {
  auto config = Config(R"({
    "nodes": [
      {"name": "pi1", "hostname": "box", "port": 1},
      {"name": "pi2", "hostname": "box", "port": 2}
    ]
  })");
  auto node = ResolveNode(config.message(), "", "box");
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(node.status().message(),
              HasSubstr("nodes pi1 and pi2 both have this machine's hostname"));
}

}  // namespace
}  // namespace aos
