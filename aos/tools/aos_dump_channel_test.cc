// aos_dump's CHANNEL [TYPE], as AOS's aos_dump reads them: the name through
// the node's maps, the type exact or, failing that, any type containing it;
// one line naming the candidates when that is not exactly one channel.
#include "aos/tools/aos_dump_channel.h"

#include <string>

#include "aos/configuration.h"
#include "aos/configuration_lookup.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

// Two nodes whose /aos* maps to /pi1/aos or /pi2/aos, as in AOS's configs.
constexpr std::string_view kMultiNode = R"({
  "nodes": [ { "name": "pi1", "hostname": "pi1" },
             { "name": "pi2", "hostname": "pi2" } ],
  "channels": [
    { "name": "/pi1/aos", "type": "aos.timing.Report", "source_node": "pi1",
      "destination_nodes": [ { "name": "pi2" } ] },
    { "name": "/pi2/aos", "type": "aos.timing.Report", "source_node": "pi2",
      "destination_nodes": [ { "name": "pi1" } ] },
    { "name": "/pi1/aos", "type": "aos.message_bridge.ServerStatistics",
      "source_node": "pi1" },
    { "name": "/pi2/stats", "type": "aos.Stats", "source_node": "pi2" },
    { "name": "/test", "type": "aos.examples.Ping", "source_node": "pi1" },
    { "name": "/test", "type": "aos.examples.PingPong", "source_node": "pi1" },
    { "name": "/test", "type": "aos.examples.Pong", "source_node": "pi1" } ],
  "maps": [
    { "match": { "name": "/aos*", "source_node": "pi1" },
      "rename": { "name": "/pi1/aos" } },
    { "match": { "name": "/aos*", "source_node": "pi2" },
      "rename": { "name": "/pi2/aos" } } ] })";

class FindDumpChannelTest : public ::testing::Test {
 protected:
  FindDumpChannelTest()
      : config_(Read(kMultiNode)),
        pi1_(configuration::GetNode(config_.message(), "pi1")),
        pi2_(configuration::GetNode(config_.message(), "pi2")) {}

  static FlatbufferDetachedBuffer<Configuration> Read(std::string_view json) {
    auto config = configuration::ReadConfigFromJson(json);
    CHECK(config.ok()) << config.status();
    return std::move(config).value();
  }

  // "/name type" of what FindDumpChannel finds, or its error.
  std::string Find(std::string_view name, std::string_view type,
                   const Node* node) const {
    return Described(FindDumpChannel(config_.message(), name, type, node));
  }

  // "/name type" of `channel`, or its error.
  static std::string Described(const absl::StatusOr<const Channel*>& channel) {
    if (!channel.ok()) return std::string(channel.status().message());
    return DescribeDumpChannel(**channel);
  }

  FlatbufferDetachedBuffer<Configuration> config_;
  const Node* const pi1_;
  const Node* const pi2_;
};

TEST_F(FindDumpChannelTest, TheNameGoesThroughTheNodesMaps) {
  EXPECT_EQ(Find("/aos", "aos.timing.Report", pi1_),
            "/pi1/aos aos.timing.Report");
  EXPECT_EQ(Find("/aos", "aos.timing.Report", pi2_),
            "/pi2/aos aos.timing.Report");
  // A real name still works, here a channel forwarded to pi1.
  EXPECT_EQ(Find("/pi2/aos", "aos.timing.Report", pi1_),
            "/pi2/aos aos.timing.Report");
}

TEST_F(FindDumpChannelTest, ATypeMayBeAnyPartOfOneTypeOnly) {
  EXPECT_EQ(Find("/aos", "Report", pi1_), "/pi1/aos aos.timing.Report");
  EXPECT_EQ(Find("/aos", "timing", pi1_), "/pi1/aos aos.timing.Report");
  EXPECT_EQ(Find("/aos", "ServerStat", pi1_),
            "/pi1/aos aos.message_bridge.ServerStatistics");
  EXPECT_EQ(Find("/test", "examples.Pong", pi1_), "/test aos.examples.Pong");
  // The exact type wins over the longer types containing it.
  EXPECT_EQ(Find("/test", "aos.examples.Ping", pi1_),
            "/test aos.examples.Ping");
}

TEST_F(FindDumpChannelTest, SeveralCandidatesAreOneLineNamingThem) {
  EXPECT_EQ(Find("/aos", "", pi1_),
            "several channels are named /aos; add the type: /pi1/aos "
            "aos.message_bridge.ServerStatistics, /pi1/aos aos.timing.Report");
  EXPECT_EQ(Find("/test", "Ping", pi1_),
            "several channels named /test have a type containing Ping; give "
            "more of the type: /test aos.examples.Ping, /test "
            "aos.examples.PingPong");
}

TEST_F(FindDumpChannelTest, NoCandidateSaysWhatThereIs) {
  EXPECT_EQ(Find("/test", "Nope", pi1_),
            "no channel /test of type Nope in the config; named /test: /test "
            "aos.examples.Ping, /test aos.examples.PingPong, /test "
            "aos.examples.Pong; no channel has that type");
  EXPECT_EQ(Find("/aos", "examples", pi1_),
            "no channel /aos of type examples in the config; named /aos: "
            "/pi1/aos aos.message_bridge.ServerStatistics, /pi1/aos "
            "aos.timing.Report; of type examples: /test aos.examples.Ping, "
            "/test aos.examples.PingPong, /test aos.examples.Pong");
  const std::string mapped = Find("/aos/extra", "", pi1_);
  EXPECT_EQ(mapped.rfind("no channel /aos/extra in the config; no channel "
                         "has that name; on node pi1 the maps make it "
                         "/pi1/aos/extra; ",
                         0),
            0u)
      << mapped;
  EXPECT_EQ(mapped.find('\n'), std::string::npos) << mapped;
}

TEST_F(FindDumpChannelTest, AChannelTheNodeCannotReadIsRefused) {
  EXPECT_EQ(Find("/pi2/stats", "", pi1_),
            "/pi2/stats aos.Stats is not readable on node pi1: it is sent on "
            "pi2 and not forwarded to pi1");
  EXPECT_EQ(Find("/pi2/stats", "Stats", pi2_), "/pi2/stats aos.Stats");
}

// Without a type, aos_dump prints every channel of the name, as AOS's and
// `ros2 topic echo` do; those the node cannot read are left out.
TEST_F(FindDumpChannelTest, WithoutATypeEveryReadableChannelOfTheName) {
  auto Describe = [](const absl::StatusOr<std::vector<const Channel*>>& found) {
    if (!found.ok()) return std::string(found.status().message());
    std::string described;
    for (const Channel* channel : *found) {
      described +=
          (described.empty() ? "" : ", ") + DescribeDumpChannel(*channel);
    }
    return described;
  };
  EXPECT_EQ(Describe(FindDumpChannels(config_.message(), "/test", "", pi1_)),
            "/test aos.examples.Ping, /test aos.examples.PingPong, /test "
            "aos.examples.Pong");
  EXPECT_EQ(Describe(FindDumpChannels(config_.message(), "/aos", "", pi1_)),
            "/pi1/aos aos.message_bridge.ServerStatistics, /pi1/aos "
            "aos.timing.Report");
  // A type still picks one, and several are still refused.
  EXPECT_EQ(Describe(FindDumpChannels(config_.message(), "/test",
                                      "aos.examples.Ping", pi1_)),
            "/test aos.examples.Ping");
  EXPECT_EQ(
      Describe(FindDumpChannels(config_.message(), "/test", "Ping", pi1_)),
      "several channels named /test have a type containing Ping; give "
      "more of the type: /test aos.examples.Ping, /test "
      "aos.examples.PingPong");
  // /test is sent on pi1 and not forwarded.
  EXPECT_EQ(Describe(FindDumpChannels(config_.message(), "/test", "", pi2_)),
            "/test aos.examples.Ping is not readable on node pi2: it is sent "
            "on pi1 and not forwarded to pi2");
  EXPECT_EQ(Describe(FindDumpChannels(config_.message(), "/tset", "", pi1_))
                .rfind("no channel /tset in the config; no channel has that "
                       "name; ",
                       0),
            0u);
}

// aos_send needs one channel, sent on its node.
TEST_F(FindDumpChannelTest, SendingNeedsOneChannelItsNodeSends) {
  auto Find = [&](std::string_view name, std::string_view type,
                  const Node* node) {
    return Described(FindSendChannel(config_.message(), name, type, node));
  };
  EXPECT_EQ(Find("/test", "aos.examples.Ping", pi1_),
            "/test aos.examples.Ping");
  EXPECT_EQ(Find("/aos", "Report", pi2_), "/pi2/aos aos.timing.Report");
  EXPECT_EQ(Find("/test", "", pi1_),
            "several channels are named /test; add the type: /test "
            "aos.examples.Ping, /test aos.examples.PingPong, /test "
            "aos.examples.Pong");
  // Forwarded to pi1, so readable there, but only pi2 sends it.
  EXPECT_EQ(Find("/pi2/aos", "aos.timing.Report", pi1_),
            "/pi2/aos aos.timing.Report is not sendable on node pi1: only its "
            "source node, pi2, sends it (aos_send there, with --node=pi2)");
}

// A channel missing from the built-in config says which config that was.
TEST(NameTheConfigTest, SaysWhichConfigWasRead) {
  EXPECT_EQ(NameTheConfig("no channel /test in the config", ""),
            "no channel /test in the config; the config is the built-in "
            "aos/aos.json (only /aos), as no --config was given: give your "
            "system's, e.g. --config=bazel-bin/examples/pingpong_config.json");
  EXPECT_EQ(NameTheConfig("no channel /test in the config", "my\x1b.json"),
            "no channel /test in the config (--config=\"my\\x1b.json\")");
}

TEST(FindDumpChannelSingleNodeTest, NoNodeNoMapsAndPartialTypes) {
  auto config = configuration::ReadConfigFromJson(R"({ "channels": [
      { "name": "/test", "type": "aos.examples.Ping" },
      { "name": "/test", "type": "aos.examples.Pong" } ] })");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<const Channel*> channel =
      FindDumpChannel(config->message(), "/test", "Ping", nullptr);
  ASSERT_TRUE(channel.ok()) << channel.status();
  EXPECT_EQ(DescribeDumpChannel(**channel), "/test aos.examples.Ping");
  EXPECT_EQ(ListDumpChannels(config->message()),
            "channels of the config: /test aos.examples.Ping, /test "
            "aos.examples.Pong");
}

}  // namespace
}  // namespace aos
