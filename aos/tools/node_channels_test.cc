#include "aos/tools/node_channels.h"

#include "gtest/gtest.h"

namespace aos {
namespace {

// Two nodes with AOS's per-node /aos maps; /pi1/aos is forwarded to pi2,
// /pi2/aos is not forwarded.
constexpr std::string_view kMultiNode = R"({
  "channels": [
    {"name": "/pi1/aos", "type": "aos.timing.Report", "source_node": "pi1",
     "destination_nodes": [{"name": "pi2"}]},
    {"name": "/pi2/aos", "type": "aos.timing.Report", "source_node": "pi2"}
  ],
  "maps": [
    {"match": {"name": "/aos*", "source_node": "pi1"},
     "rename": {"name": "/pi1/aos"}},
    {"match": {"name": "/aos*", "source_node": "pi2"},
     "rename": {"name": "/pi2/aos"}}
  ],
  "nodes": [{"name": "pi1"}, {"name": "pi2"}]
})";

FlatbufferDetachedBuffer<Configuration> Config(std::string_view json) {
  auto config = configuration::ReadConfigFromJson(json);
  EXPECT_TRUE(config.ok()) << config.status();
  return std::move(config).value();
}

std::vector<std::string> Describe(const std::vector<NodeChannel>& channels) {
  std::vector<std::string> out;
  for (const NodeChannel& c : channels) {
    out.push_back(c.node + " " + c.channel->name()->str());
  }
  return out;
}

TEST(NodeChannelsTest, EveryNodesCopyOnce) {
  auto config = Config(kMultiNode);
  auto channels = ChannelOnEachNode(config.message(), "/aos",
                                    "aos.timing.Report", "tool", "");
  ASSERT_TRUE(channels.ok()) << channels.status();
  EXPECT_EQ(Describe(*channels),
            (std::vector<std::string>{"pi1 /pi1/aos", "pi2 /pi2/aos"}));
}

TEST(NodeChannelsTest, OnlyTheNamedNode) {
  auto config = Config(kMultiNode);
  auto channels = ChannelOnEachNode(config.message(), "/aos",
                                    "aos.timing.Report", "tool", "pi2");
  ASSERT_TRUE(channels.ok()) << channels.status();
  EXPECT_EQ(Describe(*channels), (std::vector<std::string>{"pi2 /pi2/aos"}));
}

TEST(NodeChannelsTest, UnknownNodeListsTheNodes) {
  auto config = Config(kMultiNode);
  auto channels = ChannelOnEachNode(config.message(), "/aos",
                                    "aos.timing.Report", "tool", "pi9");
  ASSERT_FALSE(channels.ok());
  EXPECT_EQ(channels.status().message(),
            "--node=pi9 is not a node of the configuration; its nodes: pi1, "
            "pi2");
}

TEST(NodeChannelsTest, SingleNodeConfigHasOneChannelAndNoNodes) {
  auto config = Config(R"({"channels": [
    {"name": "/aos", "type": "aos.timing.Report"}]})");
  auto channels = ChannelOnEachNode(config.message(), "/aos",
                                    "aos.timing.Report", "tool", "");
  ASSERT_TRUE(channels.ok()) << channels.status();
  EXPECT_EQ(Describe(*channels), (std::vector<std::string>{" /aos"}));
  auto with_node = ChannelOnEachNode(config.message(), "/aos",
                                     "aos.timing.Report", "tool", "pi1");
  ASSERT_FALSE(with_node.ok());
  EXPECT_EQ(with_node.status().message(),
            "--node=pi1: the configuration has no nodes; drop --node");
}

TEST(NodeChannelsTest, NoNodeHasItIsAnError) {
  auto config = Config(kMultiNode);
  auto channels =
      ChannelOnEachNode(config.message(), "/aos",
                        "aos.message_bridge.ClientStatistics", "tool", "");
  EXPECT_FALSE(channels.ok());
}

}  // namespace
}  // namespace aos
