// PeerLink's discovery on a simulated loop (no DDS: the constructor opens
// nothing): its peers are BridgeStatistics::PeersOf's, in that order, with
// the roles and node indices the configuration gives them.
#include "aos/network/bridge_peer_link.h"

#include <memory>
#include <string>
#include <vector>

#include "aos/configuration.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/network/bridge_statistics.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

// Five nodes. A read configuration has its channels sorted by name, so
// they name b's peers in the order a, d, c, not in the order written: a
// forwards to b (/a_out, and to e, which is no peer of b's: nothing goes
// between b and e); b forwards to d and a (/b_out) and to c (/b_to_c); c
// forwards to b (/c_to_b).
constexpr char kConfig[] = R"({
  "nodes": [ { "name": "a", "hostname": "a" }, { "name": "b", "hostname": "b" },
             { "name": "c", "hostname": "c" }, { "name": "d", "hostname": "d" },
             { "name": "e", "hostname": "e" } ],
  "channels": [
    { "name": "/c_to_b", "type": "aos.examples.Ping", "source_node": "c",
      "destination_nodes": [ { "name": "b" } ] },
    { "name": "/b_out", "type": "aos.examples.Ping", "source_node": "b",
      "destination_nodes": [ { "name": "d" }, { "name": "a" } ] },
    { "name": "/a_out", "type": "aos.examples.Ping", "source_node": "a",
      "destination_nodes": [ { "name": "b" }, { "name": "e" } ] },
    { "name": "/b_to_c", "type": "aos.examples.Ping", "source_node": "b",
      "destination_nodes": [ { "name": "c" } ] },
    { "name": "/e_local", "type": "aos.examples.Ping", "source_node": "e" }
  ] })";

class PeerLinkDiscoveryTest : public ::testing::Test {
 protected:
  PeerLinkDiscoveryTest()
      : config_(configuration::ReadConfigFromJson(kConfig).value()),
        b_(configuration::GetNode(config_.message(), "b")),
        factory_(&config_.message()),
        loop_(factory_.MakeEventLoop("message_bridge", b_)),
        link_(loop_.get(), /*my_index=*/1, PeerLink::Options{}) {}

  FlatbufferDetachedBuffer<Configuration> config_;
  const Node* const b_;
  SimulatedEventLoopFactory factory_;
  std::unique_ptr<EventLoop> loop_;
  PeerLink link_;
};

TEST_F(PeerLinkDiscoveryTest, PeersAreTheStatisticsPeersInTheirOrder) {
  const std::vector<BridgeStatistics::PeerSpec> specs =
      BridgeStatistics::PeersOf(config_.message(), *b_);
  const std::vector<BridgeStatistics::PeerSpec> statistics_peers =
      link_.StatisticsPeers();
  ASSERT_EQ(link_.peers().size(), specs.size());
  ASSERT_EQ(statistics_peers.size(), specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const PeerLink::Peer& peer = *link_.peers()[i];
    EXPECT_EQ(peer.name(), specs[i].name) << i;
    EXPECT_EQ(peer.slot(), i);
    EXPECT_EQ(peer.is_destination(), specs[i].is_destination) << specs[i].name;
    EXPECT_EQ(peer.is_source(), specs[i].is_source) << specs[i].name;
    EXPECT_EQ(statistics_peers[i].name, specs[i].name) << i;
    EXPECT_EQ(statistics_peers[i].is_destination, specs[i].is_destination);
    EXPECT_EQ(statistics_peers[i].is_source, specs[i].is_source);
  }
}

TEST_F(PeerLinkDiscoveryTest, PeersComeInTheOrderChannelsFirstNameThem) {
  struct Expected {
    std::string name;
    uint32_t index;
    bool is_destination;
    bool is_source;
  };
  const std::vector<Expected> expected = {
      {"a", 0, true, true}, {"d", 3, true, false}, {"c", 2, true, true}};
  ASSERT_EQ(link_.peers().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const PeerLink::Peer& peer = *link_.peers()[i];
    EXPECT_EQ(peer.name(), expected[i].name) << i;
    EXPECT_EQ(peer.index(), expected[i].index) << expected[i].name;
    EXPECT_EQ(peer.node(), config_.message().nodes()->Get(expected[i].index));
    EXPECT_EQ(peer.is_destination(), expected[i].is_destination)
        << expected[i].name;
    EXPECT_EQ(peer.is_source(), expected[i].is_source) << expected[i].name;
    EXPECT_EQ(link_.PeerAt(expected[i].index), &peer) << expected[i].name;
  }
  EXPECT_EQ(link_.PeerAt(1), nullptr) << "b itself is no peer";
  EXPECT_EQ(link_.PeerAt(4), nullptr) << "nothing goes between b and e";
  EXPECT_EQ(link_.PeerAt(5), nullptr) << "no such node";
}

}  // namespace
}  // namespace aos::message_bridge
